// The same mistake in a string literal: rustc cannot point inside it, so
// the message draws one frame at the real file, line and column.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = "
        @group(0) @binding(0) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let x: u32 = 1.5;
            if id.x < arrayLength(&dst) { dst[id.x] = x; }
        }
    ";

    output y[n];

    node k(dst: y) over n;
}

fn main() {}
