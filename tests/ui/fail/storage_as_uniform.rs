// An `input` buffer bound to a `var<uniform>` binding.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        struct Params { scale: u32 }
        @group(0) @binding(0) var<uniform> params: Params;
        @group(0) @binding(1) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x * params.scale; }
        }
    };

    input p[1];
    output y[n];

    node k(params: p, out: y) over n;
}

fn main() {}
