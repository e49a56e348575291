// A kernel that no node runs has an override-sized workgroup without a
// default: nothing can give the size the spec records.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel fill = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };
    kernel spare = wgsl {
        override WG: u32;
        @compute @workgroup_size(WG)
        fn main() {}
    };

    output y[n];

    node fill(out: y) over n;
}

fn main() {}
