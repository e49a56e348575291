// A `let` annotated `u32` initialized with a float: the error is on the
// initializer `1.5`, not on the name.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let x: u32 = 1.5;
            if id.x < arrayLength(&dst) { dst[id.x] = x; }
        }
    };

    output y[n];

    node k(dst: y) over n;
}

fn main() {}
