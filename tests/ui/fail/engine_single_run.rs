// Only batches and streams go through an engine: a single run is one
// `Graph`'s (`Affine`, that is `Affine<Graph>`, made by `Affine::new`), so
// `run` on a graph given another engine is one error that says where the
// method is.
use vyre_graph::{DispatchConfig, Gpu, Graph, Result, graph};

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

// An engine of the user's own, its insides private as a device set's are:
// one `Graph`, passed through.
mod mine {
    use vyre_graph::spec::GraphSpec;
    use vyre_graph::{BatchReport, DispatchConfig, Engine, Feed, Graph, Instance, Result, RunReport};

    pub struct Mine(Graph);

    impl Mine {
        pub fn new(graph: Graph) -> Self {
            Mine(graph)
        }
    }

    impl Engine for Mine {
        fn spec(&self) -> &GraphSpec {
            self.0.spec()
        }
        fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> Result<u64> {
            self.0.instance_size(index, feeds)
        }
        fn run_batch(&self, config: &DispatchConfig, instances: &mut [Instance<'_>]) -> Result<BatchReport> {
            self.0.run_batch(config, instances)
        }
        async fn run_batch_async(&self, config: &DispatchConfig, instances: &mut [Instance<'_>]) -> Result<BatchReport> {
            self.0.run_batch_async(config, instances).await
        }
        fn run_many(&self, config: &DispatchConfig, depth: usize, instances: &mut [Instance<'_>]) -> Vec<Result<RunReport>> {
            self.0.run_many(config, depth, instances)
        }
        async fn run_many_async(&self, config: &DispatchConfig, depth: usize, instances: &mut [Instance<'_>]) -> Vec<Result<RunReport>> {
            self.0.run_many_async(config, depth, instances).await
        }
    }
}
use mine::Mine;

fn use_it(gpu: &Gpu, x: &[u32]) -> Result<()> {
    let set = Affine::with_engine(Mine::new(Graph::new(gpu, Affine::SPEC)?))?;
    // Fine on every engine.
    set.run_batch(&DispatchConfig::default(), &[x, x])?;
    // Not: a single run.
    set.run(x)?;
    Ok(())
}

fn main() {
    let _ = use_it;
}
