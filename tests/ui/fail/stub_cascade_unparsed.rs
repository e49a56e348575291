// A kernel whose function does not parse: its globals still give the
// outputs their element types (iteration and indexing type-check).
use vyre_graph::graph;

graph! {
    pub struct K;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            dst[id.x] = id.x +;
        }
    };

    output dst[n];

    node k(dst: dst) over n;
}

fn f(o: KOutputs) -> Vec<u32> {
    o.dst
}

fn g(o: &KOutputs) -> u32 {
    let mut s = 0;
    for v in &o.dst {
        s += *v;
    }
    s + o.dst[0]
}

fn main() {
    let _ = (f, g);
}
