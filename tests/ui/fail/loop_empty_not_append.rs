// `until empty(y)` where `y` is not an append buffer.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
        }
    };

    input x[n];
    output y[n];

    repeat up to 4 as i until empty(y) {
        node copy(src: x, dst: y) over n;
    }
}

fn main() {}
