//! The launch-plan cache on the web: a steady-state run (a size already
//! planned) creates no buffer and no bind group and submits once
//! (`gpu.counters()`, as `tests/batches/batch.rs` checks natively); a new
//! size plans once, then is steady too.

use crate::common::{assert_same, own_gpu};

use vyre_graph::{DispatchConfig, graph};
use wasm_bindgen_test::wasm_bindgen_test;

graph! {
    /// Two dependent element-wise steps.
    pub struct Twice;

    kernel step = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2654435761u + 7u; }
        }
    };

    input x[n];
    intermediate t[n];
    output y[n];

    node a = step(src: x, dst: t) over n;
    node b = step(src: t, dst: y) over n;
}

fn cpu(x: &[u32]) -> Vec<u32> {
    let step = |v: u32| v.wrapping_mul(2_654_435_761).wrapping_add(7);
    x.iter().map(|&v| step(step(v))).collect()
}

#[wasm_bindgen_test]
async fn a_steady_state_run_creates_no_buffer_and_no_bind_group() {
    // A device of its own: no other test's work in its counters.
    let gpu = own_gpu().await;
    let graph = Twice::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    for n in [1000usize, 65_537] {
        let x: Vec<u32> = (0..n as u32).collect();
        let before = gpu.counters();
        let (out, first) = graph
            .run_reported_async(&config, &x)
            .await
            .expect("first run");
        let planned = gpu.counters().since(&before);
        assert!(!first.cache_hit, "n = {n}: the first run at a size plans");
        assert!(planned.buffers_created > 0, "n = {n}: {planned:?}");
        assert_same(&out.y, &cpu(&x), &format!("first run, n = {n}"));

        let x: Vec<u32> = x.iter().map(|v| v ^ 0xffff).collect();
        let before = gpu.counters();
        let (out, steady) = graph
            .run_reported_async(&config, &x)
            .await
            .expect("second run");
        let spent = gpu.counters().since(&before);
        assert!(steady.cache_hit, "n = {n}: the second run reuses the plan");
        assert_eq!(spent.buffers_created, 0, "n = {n}: {spent:?}");
        assert_eq!(spent.bind_groups_created, 0, "n = {n}: {spent:?}");
        assert_eq!(spent.submissions, 1, "n = {n}: {spent:?}");
        assert_same(&out.y, &cpu(&x), &format!("steady run, n = {n}"));
    }
    assert_eq!(graph.graph().cached_plans(), 2);
}
