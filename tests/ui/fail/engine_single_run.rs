// Only batches and streams go through an engine: a single run is one
// `Graph`'s (`Affine<Graph>`, made by `Affine::new`), so `run` on a graph
// given another engine is one error that says where the method is.
use vyre_graph::{DispatchConfig, Engine, graph};

graph! {
    pub struct Affine;

    kernel step = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] * 3u + 1u; }
        }
    };

    input x[n];
    output y[n];
    node step(x: x, y: y) over n;
}

fn on_any_engine<E: Engine>(set: &Affine<E>, x: &[u32]) {
    // Fine on every engine.
    let _ = set.run_batch(&DispatchConfig::default(), &[x, x]);
    // Not: a single run.
    let _ = set.run(x);
}

fn main() {
    let _ = on_any_engine::<vyre_graph::Graph>;
}
