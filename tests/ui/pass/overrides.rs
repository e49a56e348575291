//! `with { }` sets `override` constants per node, including the workgroup
//! size.

use vyre_graph::graph;

graph! {
    pub struct Overrides;

    kernel scale = wgsl {
        override FACTOR: f32 = 1.0;
        override OFFSET: i32;
        @id(7) override WG: u32 = 64;
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * FACTOR + f32(OFFSET); }
        }
    };

    input x[n];
    intermediate t[n];
    output y[n];

    node first = scale(src: x, dst: t) over n with { OFFSET = -1 };
    node second = scale(src: t, dst: y) over n with { FACTOR = 0.5, OFFSET = 2 * 3 - 1, WG = 128 };
}

fn main() {
    assert_eq!(Overrides::SPEC.nodes[1].workgroup_size, Some([128, 1, 1]));
}
