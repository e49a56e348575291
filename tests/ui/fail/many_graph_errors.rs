// Independent graph mistakes in one invocation are all reported in one
// build: an unknown buffer, an unknown binding, an unknown kernel, an
// unknown override and a duplicate label.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel copy = wgsl {
        override SCALE: f32 = 1.0;
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * SCALE; }
        }
    };

    input x[n];
    intermediate t[n];
    output y[n];

    node a = copy(src: x, dst: nope) over n;
    node b = copy(source: x, dst: t) over n;
    node c = cpy(src: x, dst: t) over n;
    node d = copy(src: x, dst: t) over n with { SCALAR = 2.0 };
    node d = copy(src: t, dst: y) over n;
}

fn main() {}
