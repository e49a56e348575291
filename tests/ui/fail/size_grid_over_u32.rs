// A grid dimension no dispatch can hold, even under `limits native;`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    limits native;
    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };

    output y[n];

    node k(out: y) grid [4294967296, n, 1];
}

fn main() {}
