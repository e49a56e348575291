// The workgroup size comes from an override that has no default, and the
// node does not set it: the size cannot be known.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        override WG: u32;
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };

    output y[n];

    node k(out: y) over n;
}

fn main() {}
