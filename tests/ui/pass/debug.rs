// The graph type is `Debug` (it prints its runtime graph), and a user's own
// `#[derive(Debug)]` on it is taken instead of the generated impl, not a
// conflicting second one.
use vyre_graph::graph;

graph! {
    pub struct Generated;
    kernel double = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2.0; }
        }
    ";
    input x[n];
    output y[n];
    node double(src: x, dst: y) over n;
}

graph! {
    #[derive(Debug)]
    pub struct Derived;
    kernel double = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2.0; }
        }
    ";
    input x[n];
    output y[n];
    node double(src: x, dst: y) over n;
}

fn needs_debug<T: std::fmt::Debug>() {}

fn main() {
    needs_debug::<Generated>();
    needs_debug::<Derived>();
}
