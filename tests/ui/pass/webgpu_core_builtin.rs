//! `pack2x16float` is WebGPU core (wgpu grants SHADER_FLOAT16_IN_FLOAT32 to
//! every compliant adapter): accepted without `limits native;`.

use vyre_graph::graph;

graph! {
    pub struct Pack;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = pack2x16float(x[g.x]); }
        }
    };

    input x[n];
    output y[n];

    node k(x: x, y: y) over n;
}

fn main() {
    assert!(Pack::SPEC.features.is_empty());
}
