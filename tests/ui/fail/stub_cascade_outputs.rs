// A kernel that parses but fails validation: the error stub's outputs keep
// their real element types, so user code reading them gets no second error.
use vyre_graph::graph;

graph! {
    pub struct K;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            src[id.x] = 1.0;
            if id.x < arrayLength(&dst) { dst[id.x] = src[id.x]; }
        }
    };

    input x[n];
    output dst[n];

    node k(src: x, dst: dst) over n;
}

fn f(o: KOutputs) -> Vec<f32> {
    o.dst
}

fn g(o: &KOutputs) -> f32 {
    o.dst.iter().sum::<f32>() + o.dst[0]
}

fn main() {
    let _ = (f, g);
}
