//! The page's device: the adapter's name that the summary gives (what the
//! browser tells of its adapter, which wgpu leaves out), and a device lost
//! mid-life (`GPUDevice.destroy()`, which resolves its `lost` promise): the
//! next runs are `BackendError::DeviceLost` saying to open a new `Gpu`,
//! never a hang or a panic; a new `Gpu` and graph in the same page run
//! right. The native suite has the same test (`tests/errors/device_lost.rs`).

use crate::common::{assert_same, gpu, lcg, own_gpu};
use crate::shared::pair::{Pair, pair_cpu};

use vyre_graph::{BackendError, DispatchConfig};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
async fn the_adapter_summary_names_the_browsers_adapter() {
    let gpu = gpu().await;
    let adapter = gpu.adapter();
    web_sys::console::log_1(&format!("adapter: {adapter}").into());
    assert_eq!(adapter.backend, wgpu::Backend::BrowserWebGpu);
    assert!(
        !adapter.name.trim().is_empty(),
        "the browser tells vendor and architecture; the summary's name is empty: {adapter:?}"
    );
    assert!(
        adapter.to_string().starts_with(&adapter.name),
        "the summary line starts with the name: {adapter}"
    );
}

fn assert_lost<T>(result: Result<T, BackendError>, what: &str) {
    match result {
        Ok(_) => panic!("{what}: a run on a destroyed device must fail"),
        Err(e) => {
            assert!(
                matches!(e, BackendError::DeviceLost { .. }),
                "{what}: {e:?}"
            );
            let message = e.to_string();
            assert!(
                message.contains("the device was lost") && message.contains("open a new Gpu"),
                "{what}: {message}"
            );
        }
    }
}

#[wasm_bindgen_test]
async fn a_destroyed_device_fails_the_next_runs_with_device_lost_and_a_new_gpu_runs() {
    let config = DispatchConfig::default();
    let x = lcg(7, 10_000);
    let z = lcg(8, 10_000);
    let want = pair_cpu(&x, &z);

    // Devices of the test's own: the suite's shared one stays alive.
    let lost = own_gpu().await;
    let beside = own_gpu().await;
    let graph = Pair::new_async(&lost).await.expect("graph");
    let other = Pair::new_async(&beside).await.expect("graph beside");
    let out = graph
        .run_async(&config, &x, &z)
        .await
        .expect("before the loss");
    assert_same(&out.y, &want, "before the loss");

    lost.device().destroy();

    // The cached plan, then a new size: each is DeviceLost.
    assert_lost(graph.run_async(&config, &x, &z).await, "the next run");
    assert_lost(
        graph.run_async(&config, &x[..5], &z[..5]).await,
        "a run of a new size",
    );
    // A graph built on the lost device: no panic, and its run says so.
    match Pair::new_async(&lost).await {
        Ok(late) => assert_lost(
            late.run_async(&config, &x, &z).await,
            "a graph built after the loss",
        ),
        Err(e) => assert_lost(Err::<(), _>(e), "a graph built on the lost device"),
    }

    // The device opened beside it is untouched.
    let out = other
        .run_async(&config, &x, &z)
        .await
        .expect("the other device");
    assert_same(&out.y, &want, "the device beside the lost one");

    // A new Gpu, the graph built again, in the same page: right.
    let fresh = own_gpu().await;
    let graph = Pair::new_async(&fresh).await.expect("graph on a new Gpu");
    let out = graph
        .run_async(&config, &x, &z)
        .await
        .expect("on a new Gpu");
    assert_same(&out.y, &want, "on a new Gpu");
}
