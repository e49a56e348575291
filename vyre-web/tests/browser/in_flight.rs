//! Two runs of one graph in flight at once (`tests/runtime/integration.rs`):
//! both futures are polled, so both are submitted, before either is read
//! back; each has its own plan and both results are right. And two graphs
//! on one device at once.

use crate::common::{assert_same, gpu, join, lcg};

use vyre_graph::{DispatchConfig, graph};
use wasm_bindgen_test::wasm_bindgen_test;

graph! {
    /// Three dependent element-wise steps.
    pub struct Steps;

    kernel step = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 69069u + 1u; }
        }
    };

    input x[n];
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node a = step(src: x, dst: t) over n;
    node b = step(src: t, dst: u) over n;
    node c = step(src: u, dst: y) over n;
}

graph! {
    /// `y = x ^ 0x5a5a5a5a`.
    pub struct Flip;

    kernel flip = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] ^ 0x5a5a5a5au; }
        }
    };

    input x[n];
    output y[n];

    node flip(x: x, y: y) over n;
}

fn steps(x: &[u32]) -> Vec<u32> {
    let step = |v: u32| v.wrapping_mul(69069).wrapping_add(1);
    x.iter().map(|&v| step(step(step(v)))).collect()
}

#[wasm_bindgen_test]
async fn two_runs_of_one_graph_in_flight_are_both_right() {
    let graph = Steps::new_async(&gpu().await).await.expect("graph");
    let config = DispatchConfig::default();
    for n in [1000usize, 200_000] {
        let (x1, x2) = (lcg(1, n), lcg(2, n));
        // The same size: one plan each while both are in flight.
        let (a, b) = join(graph.run_async(&config, &x1), graph.run_async(&config, &x2)).await;
        assert_same(
            &a.expect("first").y,
            &steps(&x1),
            &format!("first, n = {n}"),
        );
        assert_same(
            &b.expect("second").y,
            &steps(&x2),
            &format!("second, n = {n}"),
        );
    }
    // Different sizes at once.
    let (x1, x2) = (lcg(3, 777), lcg(4, 65_537));
    let (a, b) = join(graph.run_async(&config, &x1), graph.run_async(&config, &x2)).await;
    assert_same(&a.expect("first").y, &steps(&x1), "first, n = 777");
    assert_same(&b.expect("second").y, &steps(&x2), "second, n = 65537");
}

#[wasm_bindgen_test]
async fn two_graphs_on_one_device_in_flight_are_both_right() {
    let gpu = gpu().await;
    let (steps_graph, flip) = (
        Steps::new_async(&gpu).await.expect("steps"),
        Flip::new_async(&gpu).await.expect("flip"),
    );
    let config = DispatchConfig::default();
    let (x1, x2) = (lcg(5, 100_000), lcg(6, 300_000));
    let (a, b) = join(
        steps_graph.run_async(&config, &x1),
        flip.run_async(&config, &x2),
    )
    .await;
    assert_same(&a.expect("steps").y, &steps(&x1), "steps");
    let want: Vec<u32> = x2.iter().map(|v| v ^ 0x5a5a_5a5a).collect();
    assert_same(&b.expect("flip").y, &want, "flip");
}
