// One buffer bound twice in a node, read-only and writable: wgpu would reject the dispatch.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
        }
    };

    inout x[n];

    node copy(src: x, dst: x) over n;
}

fn main() {}
