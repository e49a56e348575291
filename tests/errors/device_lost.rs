//! A device lost mid-life (`wgpu::Device::destroy`, which is how a browser
//! reclaims a page's device as well): the next runs, blocking and async,
//! are `BackendError::DeviceLost` saying to open a new `Gpu`, never a hang
//! or a panic; another `Gpu` opened beside it keeps running, and a new
//! `Gpu` with the graph built again runs right. The browser suite has the
//! same test (`vyre-web/tests/browser/device_lost.rs`).

use crate::common;
use crate::shared::pair::{Pair, pair_cpu};

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use vyre_graph::{BackendError, DispatchConfig, Gpu};

fn own_gpu() -> Gpu {
    Gpu::new().unwrap_or_else(|e| panic!("no GPU for the device-lost test: {e}"))
}

fn assert_lost(result: Result<impl Sized, BackendError>, what: &str) {
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

#[test]
fn a_destroyed_device_fails_every_later_run_with_device_lost_and_a_new_gpu_runs() {
    let config = DispatchConfig::default();
    let x = data(10_000, 7);
    let z = data(10_000, 8);
    let want = pair_cpu(&x, &z);

    let gpu = own_gpu();
    let beside = own_gpu();
    let graph = Pair::new(&gpu).expect("graph");
    let other = Pair::new(&beside).expect("graph beside");
    let out = graph
        .run_with(&config, &x, &z)
        .expect("a run before the loss");
    assert_same(&out.y, &want, "before the loss");

    gpu.device().destroy();

    // Blocking, twice (the cached plan, then a new size), then async: each
    // is DeviceLost, and none hangs (a run that never returned would stop
    // this thread's receive after a minute).
    assert_lost(graph.run_with(&config, &x, &z), "the next run");
    assert_lost(
        graph.run_with(&config, &x[..5], &z[..5]),
        "a run of a new size",
    );
    let (send, receive) = mpsc::channel();
    let graph = std::sync::Arc::new(graph);
    let runner = std::sync::Arc::clone(&graph);
    let (xs, zs) = (x.clone(), z.clone());
    std::thread::spawn(move || {
        let result = vyre_graph::block_on(runner.run_async(&DispatchConfig::default(), &xs, &zs));
        let _ = send.send(result.map(|_| ()));
    });
    match receive.recv_timeout(Duration::from_secs(60)) {
        Ok(result) => assert_lost(result, "an async run"),
        Err(_) => panic!("an async run on a destroyed device did not return within 60 s"),
    }
    // A graph built on the lost device: no panic; its pipelines are made
    // without the device checking them, so its first run says the device
    // was lost.
    match Pair::new(&gpu) {
        Ok(late) => assert_lost(
            late.run_with(&config, &x, &z),
            "a graph built after the loss",
        ),
        Err(e) => assert_lost(Err::<(), _>(e), "Graph::new on the lost device"),
    }

    // The device opened beside it is untouched.
    let out = other.run_with(&config, &x, &z).expect("the other device");
    assert_same(&out.y, &want, "the device beside the lost one");

    // A new Gpu, the graph built again: right.
    let fresh = own_gpu();
    let graph = Pair::new(&fresh).expect("graph on a new Gpu");
    let out = graph.run_with(&config, &x, &z).expect("a run on a new Gpu");
    assert_same(&out.y, &want, "on a new Gpu");
}
