//! The twin of fail/workgroup_too_large.rs: `limits native;` defers the
//! limit checks to the device at run time.

use vyre_graph::graph;

graph! {
    pub struct Wide;

    limits native;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(512)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };

    output y[n];

    node k(out: y) over n;
}

fn main() {
    assert_eq!(Wide::SPEC.kernels[0].workgroup_size, [512, 1, 1]);
}
