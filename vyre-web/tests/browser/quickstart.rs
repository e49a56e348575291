//! The quickstart graph (`examples/quickstart.rs`): three kernels in the
//! three forms (tokens, a string, a file), `affine` and `square` fused,
//! against the CPU at sizes around the workgroup size and large, through
//! every single-run async method.

use crate::common::{assert_close, gpu};

use vyre_graph::{DispatchConfig, graph};
use wasm_bindgen_test::wasm_bindgen_test;

graph! {
    /// `y[i] = u[i] + u[i + 1]` where `u = (a * x + b)²`, in three nodes.
    pub struct Quickstart;

    kernel affine = wgsl {
        struct Params { a: f32, b: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> t: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) {
                t[g.x] = params.a * x[g.x] + params.b;
            }
        }
    };
    kernel square = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) {
                dst[g.x] = src[g.x] * src[g.x];
            }
        }
    ";
    kernel smooth = file "../examples/kernels/smooth.wgsl";

    input x[n];
    uniform params;
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node affine(x: x, params: params, t: t) over n;
    node square(src: t, dst: u) over n;
    node smooth(src: u, dst: y) over n;
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1000) as f32 / 100.0).collect()
}

fn cpu(x: &[f32], p: &Params) -> Vec<f32> {
    let u: Vec<f32> = x
        .iter()
        .map(|&v| (p.a * v + p.b) * (p.a * v + p.b))
        .collect();
    (0..x.len())
        .map(|i| u[i] + u.get(i + 1).copied().unwrap_or(0.0))
        .collect()
}

#[wasm_bindgen_test]
async fn the_quickstart_graph_matches_the_cpu() {
    let gpu = gpu().await;
    let graph = Quickstart::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let params = Params { a: 0.5, b: -2.0 };
    for n in [1usize, 63, 64, 65, 1000, 100_003] {
        let x = input(n);
        let out = graph.run_async(&config, &x, &params).await.expect("run");
        assert_close(&out.y, &cpu(&x, &params), 1e-5, &format!("n = {n}"));
    }
}

#[wasm_bindgen_test]
async fn reported_and_into_runs_reuse_the_plan() {
    let gpu = gpu().await;
    let graph = Quickstart::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let params = Params { a: -1.5, b: 0.25 };
    let x = input(4096);
    let want = cpu(&x, &params);
    let (out, first) = graph
        .run_reported_async(&config, &x, &params)
        .await
        .expect("reported run");
    assert_close(&out.y, &want, 1e-5, "reported");
    assert_eq!(first.n, 4096);
    assert_eq!(first.submissions, 1, "{first:?}");
    // `affine` and `square` are one dispatch: two in all.
    assert_eq!(first.dispatches, 2, "{first:?}");
    let mut outputs = out.clone();
    outputs.y.iter_mut().for_each(|v| *v = f32::NAN);
    let again = graph
        .run_into_async(&config, &mut outputs, &x, &params)
        .await
        .expect("run into");
    assert!(
        again.cache_hit,
        "the second run at one size reuses its plan"
    );
    assert_close(&outputs.y, &want, 1e-5, "into");
}

/// Milliseconds since the page opened (`performance.now()`).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The quickstart at 1M elements, timed for the record (printed with
/// `-- --nocapture`; judged only for its result): the median of 10 runs
/// after a first that plans, as `examples/quickstart.rs` times it natively.
#[wasm_bindgen_test]
async fn the_quickstart_at_1m_elements_timed() {
    let gpu = gpu().await;
    let graph = Quickstart::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let params = Params { a: 0.5, b: -2.0 };
    let x = input(1 << 20);
    let start = now_ms();
    let out = graph.run_async(&config, &x, &params).await.expect("run");
    let first = now_ms() - start;
    assert_close(&out.y, &cpu(&x, &params), 1e-5, "n = 1M");
    let mut times = Vec::new();
    for _ in 0..10 {
        let start = now_ms();
        graph.run_async(&config, &x, &params).await.expect("run");
        times.push(now_ms() - start);
    }
    times.sort_by(f64::total_cmp);
    wasm_bindgen_test::console_log!(
        "quickstart, 1,048,576 elements, {}: first run {first:.2} ms, median of 10 {:.2} ms",
        gpu.adapter(),
        times[5]
    );
}
