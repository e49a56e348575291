//! A kernel as a plain string literal, `input` and `output`, `over n`.

use vyre_graph::graph;

graph! {
    /// Doubles every element.
    pub struct Double;

    kernel double = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * 2.0; }
        }
    ";

    input x[n];
    output y[n];

    node double(src: x, dst: y) over n;
}

fn main() {
    assert_eq!(Double::SPEC.kernels.len(), 1);
}
