//! `repeat ... as i` unrolls its nodes; `ping`/`pong` alternate two
//! buffers and override values may use `i`.

use vyre_graph::graph;

graph! {
    pub struct Radix;

    kernel pass = wgsl {
        override SHIFT: u32 = 0;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = (src[g.x] >> SHIFT) & 0xffu; }
        }
    };
    kernel seed = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
        }
    };

    input keys[n];
    intermediate a[n];
    output b[n];

    node seed(src: keys, dst: a) over n;
    repeat 4 as i {
        /// One digit per iteration.
        node pass(src: ping(a, b), dst: pong(a, b)) over n with { SHIFT = i * 8 };
    }
    node last = seed(src: a, dst: b) over n;
}

fn main() {
    assert_eq!(Radix::SPEC.nodes.len(), 6);
    assert_eq!(Radix::SPEC.nodes[1].label, "pass[0]");
}
