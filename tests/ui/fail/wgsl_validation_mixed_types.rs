// `u32 + f32` parses; only naga's validator rejects it.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let scale: f32 = 2.0;
            let scaled = src[g.x] + scale;
            if g.x < arrayLength(&dst) { dst[g.x] = 0.0; }
        }
    };

    input x[n];
    output y[n];

    node k(src: x, dst: y) over n;
}

fn main() {}
