//! A device that fails in the middle of a batch (lost: its wgpu device
//! destroyed by the test hook, as a driver reset leaves it): its unfinished
//! instances run on the others, every result checked against the CPU; it
//! is left out of later batches until `retry` replaces it; every device
//! failing is one error naming each.

use vyre_graph::__private::inject_device_loss;
use vyre_graph::{BackendError, DeviceStatus, DispatchConfig, Engine};

use crate::cases::{Chain, cases, instances, set_of};

/// Three instances of 1,000 per chunk: a share of a batch is several
/// submissions, so a loss after one of them is in the middle of it.
fn chunked() -> DispatchConfig {
    DispatchConfig::default().with_max_output_bytes(3 * 8 * 1000)
}

#[test]
fn a_device_lost_mid_batch_has_its_instances_run_on_the_others_and_stays_out_until_retry() {
    let set = set_of(3, Chain::SPEC);
    let config = chunked();
    let lost = set.gpus().get(1).expect("device 1").clone();
    inject_device_loss(&lost, 2);
    let mut batch_cases = cases(&[1000; 37], 1);
    let mut batch = instances(&mut batch_cases);
    let report = set.run_batch(&config, &mut batch).expect("batch");
    drop(batch);
    let mut ran_on = [0usize; 3];
    for (i, run) in report.runs.iter().enumerate() {
        let run = run.as_ref().unwrap_or_else(|e| panic!("instance {i}: {e}"));
        ran_on[run.device] += 1;
    }
    for (i, c) in batch_cases.iter().enumerate() {
        c.check(&format!("instance {i}"));
    }
    // Device 1 finished its first chunk (3 instances) before it was lost.
    assert_eq!(ran_on[1], 3, "{ran_on:?}");
    assert_eq!(ran_on.iter().sum::<usize>(), 37);
    match set.status(1) {
        Some(DeviceStatus::LeftOut(e)) => {
            assert!(matches!(*e, BackendError::DeviceLost { .. }), "{e}")
        }
        other => panic!("device 1 is {other:?}"),
    }
    assert_eq!(set.healthy(), [0, 2]);

    // The next batch leaves it out.
    let mut next_cases = cases(&[500; 10], 100);
    let mut next = instances(&mut next_cases);
    let report = set.run_batch(&config, &mut next).expect("batch");
    drop(next);
    assert!(
        report
            .runs
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.device != 1))
    );
    next_cases.iter().for_each(|c| c.check("after the loss"));

    // `retry` replaces the lost device: a new Gpu of the same adapter.
    set.retry(1).expect("retry");
    let fresh = set.gpus().get(1).expect("device 1").clone();
    assert_ne!(fresh.id(), lost.id());
    assert!(set.status(1).is_some_and(|s| s.is_healthy()));
    let mut again_cases = cases(&[1000; 30], 200);
    let mut again = instances(&mut again_cases);
    let report = set.run_batch(&config, &mut again).expect("batch");
    drop(again);
    assert!(
        report
            .runs
            .iter()
            .any(|r| r.as_ref().is_ok_and(|r| r.device == 1))
    );
    again_cases.iter().for_each(|c| c.check("after retry"));
}

#[test]
fn every_device_failing_is_one_error_naming_each_and_retry_all_brings_them_back() {
    let set = set_of(2, Chain::SPEC);
    let config = chunked();
    for gpu in set.gpus().iter() {
        inject_device_loss(gpu, 1);
    }
    let mut batch_cases = cases(&[1000; 20], 7);
    let mut batch = instances(&mut batch_cases);
    let error = set
        .run_batch(&config, &mut batch)
        .expect_err("no device left");
    drop(batch);
    let message = error.to_string();
    match &error {
        BackendError::AllDevicesFailed {
            devices,
            unfinished,
        } => {
            assert_eq!(devices.len(), 2, "{message}");
            assert!(*unfinished > 0, "{message}");
            assert!(devices[0].starts_with("device 0 ("), "{message}");
            assert!(devices[1].starts_with("device 1 ("), "{message}");
            assert!(devices.iter().all(|d| d.contains("lost")), "{message}");
        }
        other => panic!("expected AllDevicesFailed, got {other}"),
    }
    assert!(message.contains("GraphSet::retry"), "{message}");
    // Later batches fail at once, before anything runs.
    let mut later_cases = cases(&[10; 3], 9);
    let mut later = instances(&mut later_cases);
    let error = set.run_batch(&config, &mut later).expect_err("still none");
    drop(later);
    assert!(
        matches!(error, BackendError::AllDevicesFailed { unfinished: 3, .. }),
        "{error}"
    );
    assert!(
        later_cases.iter().all(|c| c.y_out.is_empty()),
        "nothing ran"
    );
    // An empty batch needs no device.
    assert!(
        set.run_batch(&config, &mut [])
            .expect("empty")
            .runs
            .is_empty()
    );

    set.retry_all().expect("retry_all");
    assert_eq!(set.healthy(), [0, 1]);
    let mut batch = instances(&mut batch_cases);
    let report = set.run_batch(&config, &mut batch).expect("batch");
    drop(batch);
    assert!(report.runs.iter().all(|r| r.is_ok()));
    batch_cases.iter().for_each(|c| c.check("after retry_all"));
}

#[test]
fn a_set_of_one_lost_device_fails_the_batch_and_retry_replaces_it() {
    let set = set_of(1, Chain::SPEC);
    let config = DispatchConfig::default();
    inject_device_loss(&set.gpus().get(0).expect("device").clone(), 0);
    let mut batch_cases = cases(&[100; 4], 3);
    let mut batch = instances(&mut batch_cases);
    let error = set.run_batch(&config, &mut batch).expect_err("lost");
    drop(batch);
    assert!(
        matches!(error, BackendError::AllDevicesFailed { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("lost"), "{error}");
    assert!(!set.status(0).expect("status").is_healthy());
    set.retry(0).expect("retry");
    let mut batch = instances(&mut batch_cases);
    let report = set.run_batch(&config, &mut batch).expect("batch");
    drop(batch);
    assert!(
        report
            .runs
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.device == 0))
    );
    batch_cases.iter().for_each(|c| c.check("after retry"));
}

#[test]
fn a_stream_moves_a_lost_device_s_runs_to_the_others() {
    let set = set_of(2, Chain::SPEC);
    let config = DispatchConfig::default();
    inject_device_loss(&set.gpus().get(0).expect("device 0").clone(), 3);
    let mut stream_cases = cases(&[777; 16], 40);
    let mut stream = instances(&mut stream_cases);
    let results = set.run_many(&config, 2, &mut stream);
    drop(stream);
    assert_eq!(results.len(), 16);
    for (i, r) in results.iter().enumerate() {
        assert!(r.is_ok(), "run {i}: {r:?}");
    }
    stream_cases.iter().for_each(|c| c.check("stream"));
    assert!(!set.status(0).expect("status").is_healthy());
    // The runs after the loss all ran on device 1.
    let on_zero = results
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|r| r.device == 0))
        .count();
    assert!(on_zero <= 3, "{on_zero} runs on device 0");
}
