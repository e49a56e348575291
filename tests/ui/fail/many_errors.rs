// Independent mistakes in one invocation are all reported in one build: a
// bad size, an unknown item keyword, a missing `;` and a WGSL error. (Graph checks wait
// for the syntax to be right: see many_graph_errors.rs.)
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
        }
    };
    kernel bad = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            out[g.x] = g.x
        }
    };

    input x[n];
    output y[n];
    output z[n / 0];
    buffer w[n];

    node copy(src: x, dst: y) over n
    node bad(out: z) over n;
}

fn main() {}
