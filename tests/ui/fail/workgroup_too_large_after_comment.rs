// A workgroup size over WebGPU's default limit in a kernel whose comments
// mention `fn main` and another `@workgroup_size`: the error points at the
// real entry point's attribute (line 14), not at the comments.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = "
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        // fn main is below
        /* @compute @workgroup_size(64) fn main() {} */
        @compute
        @workgroup_size(512)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    ";

    output y[n];

    node k(out: y) over n;
}

fn main() {}
