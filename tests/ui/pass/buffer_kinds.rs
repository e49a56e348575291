//! Every buffer kind: `input`, `inout`, `intermediate`, `output` and
//! `uniform`; the `run` arguments are the host inputs in declaration order.

use vyre_graph::graph;

graph! {
    pub struct Kinds;

    kernel scale = wgsl {
        struct Params { factor: f32, offset: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> t: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&t) { t[g.x] = x[g.x] * params.factor + params.offset; }
        }
    };
    kernel accumulate = wgsl {
        @group(0) @binding(0) var<storage, read> t: array<f32>;
        @group(0) @binding(1) var<storage, read_write> acc: array<f32>;
        @group(0) @binding(2) var<storage, read_write> last: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&acc) {
                acc[g.x] += t[g.x];
                last[g.x] = t[g.x];
            }
        }
    };

    input x[n];
    uniform params;
    inout acc[n];
    intermediate t[n];
    output last[n];

    node scale(x: x, params: params, t: t) over n;
    node accumulate(t: t, acc: acc, last: last) over n;
}

fn _typed(g: &Kinds) -> Result<(), vyre_graph::BackendError> {
    let params = Params {
        factor: 2.0,
        offset: 1.0,
    };
    let x = vec![1.0f32, 2.0];
    let out: KindsOutputs = g.run(&x, &params, &[0.0f32, 0.0][..])?;
    let (acc, last): (Vec<f32>, Vec<f32>) = (out.acc, out.last);
    let _ = (acc, last);
    let resident: KindsResident = g.run_resident(&x, &params, &[0.0f32, 0.0][..])?;
    let _: vyre_graph::GpuBufferHandle = resident.acc;
    let _ = g.run_with(&vyre_graph::DispatchConfig::default(), &x, &params, &x)?;
    Ok(())
}

fn main() {
    assert_eq!(Kinds::SPEC.buffers.len(), 5);
}
