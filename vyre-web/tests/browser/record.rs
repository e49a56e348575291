//! Recording into the application's own encoder (`docs/existing-device.md`):
//! the untyped `Graph::record` with host sinks, the application's submit,
//! then `RecordedRun::read_async`; and the typed `record` into resident
//! outputs, read back from the handle and by a run that binds it in place.

use crate::common::{assert_same, gpu};

use vyre_graph::{DispatchConfig, Feed, Sink, graph};
use wasm_bindgen_test::wasm_bindgen_test;

graph! {
    /// `y = 3x + 1`, element-wise.
    pub struct Affine;
    kernel affine = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = 3u * x[g.x] + 1u; }
        }
    };
    input x[n];
    output y[n];
    node affine(x: x, y: y) over n;
}

fn affine(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|v| v.wrapping_mul(3).wrapping_add(1))
        .collect()
}

#[wasm_bindgen_test]
async fn a_run_recorded_into_an_own_encoder_is_read_back() {
    let gpu = gpu().await;
    let graph = Affine::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let mut x: Vec<u32> = (0..1000).collect();
    let n = x.len() as u64;
    // The sinks are built once, for every frame.
    let mut y: Vec<u32> = Vec::new();
    {
        let mut sinks = [Sink::from(&mut y)];
        for frame in 0..3 {
            x.iter_mut().for_each(|v| *v += 1);
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            let feeds = [Feed::Host(bytemuck::cast_slice(&x))];
            let recorded = graph
                .graph()
                .record(&mut encoder, &config, n, &feeds, &sinks)
                .expect("record");
            gpu.queue().submit([encoder.finish()]);
            let report = recorded.read_async(&mut sinks).await.expect("read");
            assert_eq!(
                report.submissions, 0,
                "frame {frame}: the one submission was ours"
            );
        }
    } // the sinks' borrow of `y` ends
    assert_same(&y, &affine(&x), "recorded, untyped");
}

#[wasm_bindgen_test]
async fn a_typed_recorded_run_writes_resident_outputs_another_run_reads() {
    let gpu = gpu().await;
    let graph = Affine::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let x: Vec<u32> = (0..4097).map(|i| i * 5).collect();
    let resident = graph
        .resident_outputs(&config, x.len() as u64)
        .expect("resident outputs");
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = graph
        .record(&mut encoder, &config, &resident, &x)
        .expect("record");
    let submission = gpu.queue().submit([encoder.finish()]);
    // In a browser the run's status comes later: `finish_async` waits for it.
    recorded.finish_async(&submission).await.expect("finish");
    let y = resident
        .y
        .read_as_async::<u32>(&gpu)
        .await
        .expect("read the handle");
    assert_same(&y, &affine(&x), "recorded, typed, read from the handle");
    // The resident `y` is the next run's input, bound in place.
    let out = graph
        .run_async(&config, &resident.y)
        .await
        .expect("a run on the resident output");
    assert_same(&out.y, &affine(&affine(&x)), "recorded, typed, then run");
}
