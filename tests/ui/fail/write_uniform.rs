// A node binds a `uniform` buffer to a writable storage binding.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> params: array<u32>;
        @group(0) @binding(1) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            params[0] = 1u;
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };

    uniform p;
    output y[n];

    node k(params: p, out: y) over n;
}

fn main() {}
