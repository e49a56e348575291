// Every method and field the typed API generates, used as
// `tests/ui/fail/stub_every_method.rs` uses them on a graph with a
// mistake: the same code compiles against the real API.
use vyre_graph::{
    BackendError, DispatchConfig, Engine, GpuBufferHandle, Gpu, Graph, RunReport, graph,
};

graph! {
    pub struct Scaled;

    kernel scale = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2.0; }
        }
    };

    input x[n];
    output y[n];
    node scale(src: x, dst: y) over n;
}

fn use_it(gpu: &Gpu) -> Result<(), BackendError> {
    let g = Scaled::new(gpu)?;
    let config = DispatchConfig::default();
    let x = [1.0f32, 2.0];
    let out: ScaledOutputs = g.run(&x[..])?;
    let y: Vec<f32> = out.y.clone();
    println!("{y:?} {out:?}");
    let _: ScaledOutputs = g.run_with(&config, &x[..])?;
    let (mut again, _): (ScaledOutputs, RunReport) = g.run_reported(&config, &x[..])?;
    let _: RunReport = g.run_into(&config, &mut again, &x[..])?;
    let resident: ScaledResident = g.run_resident(&x[..])?;
    let handle: GpuBufferHandle = resident.y.clone();
    println!("{handle:?} {resident:?}");
    let _: ScaledResident = g.run_resident_with(&config, &x[..])?;
    let outputs: ScaledResident = g.resident_outputs(&config, 2)?;
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = g.record(&mut encoder, &config, &outputs, &x[..])?;
    let submission = gpu.queue().submit([encoder.finish()]);
    let _: RunReport = recorded.finish(&submission);
    let _: ScaledOutputs = pollster::block_on(g.run_async(&config, &x[..]))?;
    let batch: Vec<ScaledOutputs> = g.run_batch(&config, &[&x[..], &x[..1]])?;
    let many: Vec<Result<ScaledOutputs, BackendError>> = g.run_many(&config, 2, &[&x[..]]);
    println!("{} {}", batch.len(), many.len());
    let _: &Graph = g.graph();
    let on_engine: Scaled = Scaled::with_engine(Graph::new(gpu, Scaled::SPEC)?)?;
    let _: &Graph = on_engine.engine();
    println!("{}", on_any_engine(&on_engine, &x[..])?.len());
    println!("{}\n{}", g.describe(), g.to_dot());
    println!("{} {g:?} {}", Scaled::SPEC.name, SPEC.name);
    Ok(())
}

// `SPEC` in const contexts: `Scaled` alone is `Scaled<Graph>`.
const SPEC: vyre_graph::spec::GraphSpec = Scaled::SPEC;

// Batches and streams of any engine, written once.
fn on_any_engine<E: Engine>(g: &Scaled<E>, x: &[f32]) -> Result<Vec<ScaledOutputs>, BackendError> {
    let config = DispatchConfig::default();
    let _: Vec<Result<ScaledOutputs, BackendError>> = pollster::block_on(g.run_many_async(&config, 2, &[x]));
    let _: Vec<ScaledOutputs> = pollster::block_on(g.run_batch_async(&config, &[x]))?;
    let _: &E = g.engine();
    g.run_batch(&config, &[x])
}

fn main() {
    let _ = use_it;
}
