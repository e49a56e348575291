// After a failing graph!, code using the generated type still type-checks
// against a stub: the only error is the graph's own (no "no field", "no
// method" or "cannot find type" errors in `use_it`).
use vyre_graph::graph;

graph! {
    /// A graph with one mistake.
    pub struct Broken;

    kernel scale = wgsl {
        struct Params { factor: f32 }
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * params.factor; }
        }
    };

    input x[n];
    uniform params;
    output y[n];

    node scale(src: xs, params: params, dst: y) over n;
}

fn use_it(gpu: &vyre_graph::Gpu) -> Result<Vec<f32>, vyre_graph::BackendError> {
    let g = Broken::new(gpu)?;
    let params = Params { factor: 2.0 };
    let out: BrokenOutputs = g.run(&[1.0f32, 2.0][..], &params)?;
    let resident: BrokenResident = g.run_resident(&[1.0f32][..], &params)?;
    let _: vyre_graph::GpuBufferHandle = resident.y;
    // The methods for a graph inside an application resolve too.
    let config = vyre_graph::DispatchConfig::default();
    let outputs: BrokenResident = g.resident_outputs(&config, 2)?;
    let _: BrokenResident = g.run_resident_with(&config, &[1.0f32][..], &params)?;
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = g.record(&mut encoder, &config, &outputs, &[1.0f32][..], &params)?;
    let submission = gpu.queue().submit([encoder.finish()]);
    let _: vyre_graph::RunReport = recorded.finish(&submission);
    let _: BrokenOutputs = pollster::block_on(g.run_async(&config, &[1.0f32][..], &params))?;
    println!("{}", g.describe());
    println!("{}", g.to_dot());
    let _ = g.graph();
    Ok(out.y)
}

fn main() {
    let _ = use_it;
}
