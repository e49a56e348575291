// A run's argument passed as `&mut`: one error naming the graph, the buffer and its type.
use vyre_graph::graph;

graph! {
    pub struct Scale;

    kernel scale = wgsl {
        struct Params { factor: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> y: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * params.factor; }
        }
    };

    input x[n];
    uniform params;
    output y[n];

    node scale(x: x, params: params, y: y) over n;
}

fn _run(g: &Scale) -> Result<ScaleOutputs, vyre_graph::BackendError> {
    let mut x: Vec<f32> = vec![1.0, 2.0, 3.0];
    g.run(&mut x, &Params { factor: 2.0 })
}

fn main() {}
