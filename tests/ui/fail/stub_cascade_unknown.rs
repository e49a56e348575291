// A kernel where not even the globals parse: the outputs' types are
// unknown; returning one as a `Vec` still type-checks (no second error).
use vyre_graph::graph;

graph! {
    pub struct K;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> dst: array<u32;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            dst[id.x] = id.x;
        }
    };

    output dst[n];

    node k(dst: dst) over n;
}

fn f(o: KOutputs) -> Vec<f32> {
    o.dst
}

fn main() {
    let _ = f;
}
