//! Batches and streams spread over 2 and 3 devices of one lavapipe
//! adapter: 1, 2, 37 and 1,000 instances, mixed sizes, a graph that is not
//! stackable, the async twins; every instance checked against the CPU and
//! every report saying which device ran it.

use vyre_graph::{DispatchConfig, Engine, Feed, Instance, Sink, block_on};

use crate::cases::{Chain, Evens, assert_same, cases, instances, lcg, set_of};

/// How many instances each device ran.
fn per_device(runs: &[vyre_graph::Result<vyre_graph::RunReport>], devices: usize) -> Vec<usize> {
    let mut count = vec![0; devices];
    for (i, run) in runs.iter().enumerate() {
        let run = run.as_ref().unwrap_or_else(|e| panic!("instance {i}: {e}"));
        count[run.device] += 1;
    }
    count
}

#[test]
fn batches_of_1_2_37_and_1000_on_2_and_3_devices_are_right_and_spread() {
    let config = DispatchConfig::default();
    for devices in [2usize, 3] {
        let set = set_of(devices, Chain::SPEC);
        for (b, n) in [(1usize, 1000usize), (2, 1000), (37, 1000), (1000, 64)] {
            let mut batch_cases = cases(&vec![n; b], b as u32);
            let mut batch = instances(&mut batch_cases);
            let report = set.run_batch(&config, &mut batch).expect("batch");
            drop(batch);
            assert_eq!(report.runs.len(), b);
            let count = per_device(&report.runs, devices);
            for (i, c) in batch_cases.iter().enumerate() {
                c.check(&format!("{devices} devices, B = {b}, instance {i}"));
            }
            if b >= 37 {
                let used = count.iter().filter(|&&c| c > 0).count();
                assert!(
                    used >= 2,
                    "{devices} devices, B = {b}: {count:?}, learned {:?}",
                    set.learned()
                );
            }
            // Every instance stacked on its device: one run per share.
            assert_eq!(report.stacked, b);
        }
        for d in 0..devices {
            assert!(
                set.throughput(d, 1000).is_some(),
                "device {d}: {:?}",
                set.learned()
            );
        }
    }
}

#[test]
fn mixed_sizes_come_back_in_order_with_their_own_sizes() {
    let set = set_of(3, Chain::SPEC);
    let sizes = [1usize, 64, 1000, 0, 64, 4097, 1000, 1, 20_000, 3];
    let mut batch_cases = cases(&sizes, 5);
    let mut batch = instances(&mut batch_cases);
    let report = set
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    for (run, &n) in report.runs.iter().zip(&sizes) {
        assert_eq!(run.as_ref().expect("run").n, n as u64);
    }
    for (i, c) in batch_cases.iter().enumerate() {
        c.check(&format!("instance {i} (n = {})", sizes[i]));
    }
}

#[test]
fn a_graph_that_is_not_stackable_runs_as_copies_on_each_device() {
    let set = set_of(2, Evens::SPEC);
    let sizes: Vec<usize> = (0..37).map(|k| [1000, 64, 3, 4097][k % 4]).collect();
    let xs: Vec<Vec<u32>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (0..n as u32)
                .map(|i| lcg(i + k as u32 * 31) >> (k % 5))
                .collect()
        })
        .collect();
    let mut hits: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut batch: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut hits)
        .map(|(x, h)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(h)],
            )
        })
        .collect();
    let report = set
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    assert_eq!(report.stacked, 0);
    let count = per_device(&report.runs, 2);
    assert!(count.iter().all(|&c| c > 0), "{count:?}");
    for (k, (x, got)) in xs.iter().zip(&mut hits).enumerate() {
        let mut want: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_same(got, &want, &format!("instance {k}"));
    }
}

#[test]
fn a_stream_spreads_over_the_devices_in_order() {
    let set = set_of(2, Chain::SPEC);
    let sizes: Vec<usize> = (0..37).map(|k| 100 + 37 * k).collect();
    let mut stream_cases = cases(&sizes, 60);
    let mut stream = instances(&mut stream_cases);
    let results = set.run_many(&DispatchConfig::default(), 2, &mut stream);
    drop(stream);
    let count = per_device(&results, 2);
    assert!(count.iter().all(|&c| c > 0), "{count:?}");
    for (r, &n) in results.iter().zip(&sizes) {
        assert_eq!(r.as_ref().expect("run").n, n as u64);
    }
    stream_cases.iter().for_each(|c| c.check("stream"));
}

#[test]
fn the_async_twins_spread_without_threads_and_agree() {
    let set = set_of(2, Chain::SPEC);
    let config = DispatchConfig::default();
    let mut batch_cases = cases(&[500; 37], 70);
    let mut batch = instances(&mut batch_cases);
    let report = block_on(set.run_batch_async(&config, &mut batch)).expect("batch");
    drop(batch);
    let count = per_device(&report.runs, 2);
    assert!(count.iter().all(|&c| c > 0), "{count:?}");
    batch_cases.iter().for_each(|c| c.check("async batch"));
    let mut stream_cases = cases(&[300; 9], 80);
    let mut stream = instances(&mut stream_cases);
    let results = block_on(set.run_many_async(&config, 3, &mut stream));
    drop(stream);
    per_device(&results, 2);
    stream_cases.iter().for_each(|c| c.check("async stream"));
}

#[test]
fn an_instance_that_fails_its_checks_fails_the_batch_before_anything_runs() {
    let set = set_of(2, Chain::SPEC);
    let mut batch_cases = cases(&[100; 6], 90);
    batch_cases[4].z.pop();
    let mut batch = instances(&mut batch_cases);
    let error = set
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect_err("checks");
    drop(batch);
    assert!(
        matches!(
            error,
            vyre_graph::BackendError::BatchInstance { index: 4, .. }
        ),
        "{error}"
    );
    assert!(
        batch_cases.iter().all(|c| c.y_out.is_empty()),
        "nothing ran"
    );
    // The same set runs the next batch.
    let mut batch_cases = cases(&[100; 6], 91);
    let mut batch = instances(&mut batch_cases);
    set.run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    batch_cases.iter().for_each(|c| c.check("after the error"));
}
