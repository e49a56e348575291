// `with { }` sets an override the kernel does not declare.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        override SCALE: u32 = 1;
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x * SCALE; }
        }
    };

    output y[n];

    node k(out: y) over n with { SCALAR = 2 };
}

fn main() {}
