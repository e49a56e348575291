// A type error in a kernel whose binding is a struct ending in a runtime-
// sized array: the type error at its token, no internal error.
use vyre_graph::graph;

graph! {
    pub struct Headed;

    kernel k = wgsl {
        struct Buf { len: u32, data: array<f32> }
        @group(0) @binding(0) var<storage, read_write> b: Buf;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < b.len { b.data[g.x] = b.len; }
        }
    };

    inout b[n];

    node k(b: b) over n;
}

fn main() {}
