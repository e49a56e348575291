//! Streams of runs (`Graph::run_many` and the typed `run_many`): several
//! runs in flight, results in order, a failing run in the middle reported
//! for that run while the stream goes on, and a steady stream allocating
//! nothing; every output checked element by element against the CPU.

use crate::common;

use common::{gpu, serial};
use vyre_graph::{BackendError, DispatchConfig, Feed, Instance, Sink, StreamDepth, graph};

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

fn step(v: u32) -> u32 {
    v.wrapping_mul(69069).wrapping_add(1)
}

fn want(x: &[u32]) -> Vec<u32> {
    x.iter().map(|&v| step(step(step(v)))).collect()
}

fn assert_same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: element {i} is {}, the CPU says {}",
            got[i], want[i]
        );
    }
}

fn inputs(count: usize, n: usize, seed: u32) -> Vec<Vec<u32>> {
    (0..count)
        .map(|k| {
            (0..n as u32)
                .map(|i| step(i ^ (k as u32 + seed).wrapping_mul(2_654_435_761)))
                .collect()
        })
        .collect()
}

/// Streams with their runs really in flight together, whatever the
/// adapter (on a CPU adapter the default depth is 1).
fn overlapped() -> DispatchConfig {
    DispatchConfig::default().with_stream_depth(StreamDepth::Asked)
}

/// A stream of the runs of `xs` at `depth`; each result and output.
fn stream(
    graph: &Steps,
    xs: &[Vec<u32>],
    depth: usize,
) -> (
    Vec<vyre_graph::Result<vyre_graph::RunReport>>,
    Vec<Vec<u32>>,
) {
    let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut runs: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut ys)
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let results = graph.graph().run_many(&overlapped(), depth, &mut runs);
    drop(runs);
    (results, ys)
}

#[test]
fn streams_at_depths_1_to_3_deliver_every_run_in_order() {
    let _serial = serial();
    let graph = Steps::new(&gpu()).expect("graph");
    for depth in [1usize, 2, 3] {
        let xs = inputs(9, 3000, depth as u32);
        let (results, ys) = stream(&graph, &xs, depth);
        assert_eq!(results.len(), xs.len());
        for (k, (r, (x, y))) in results.iter().zip(xs.iter().zip(&ys)).enumerate() {
            assert!(r.is_ok(), "depth {depth}, run {k}: {r:?}");
            assert_same(y, &want(x), &format!("depth {depth}, run {k}"));
        }
    }
}

#[test]
fn a_steady_stream_allocates_nothing() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Steps::new(&gpu).expect("graph");
    // Warm: three plans of one size in flight.
    let xs = inputs(6, 1024, 1);
    let (results, _) = stream(&graph, &xs, 3);
    assert!(results.iter().all(Result::is_ok));
    let xs = inputs(12, 1024, 2);
    let before = gpu.counters();
    let (results, ys) = stream(&graph, &xs, 3);
    let spent = gpu.counters().since(&before);
    for (k, (r, (x, y))) in results.iter().zip(xs.iter().zip(&ys)).enumerate() {
        assert!(r.is_ok(), "run {k}: {r:?}");
        assert_same(y, &want(x), &format!("run {k}"));
    }
    assert_eq!(spent.buffers_created, 0, "{spent:?}");
    assert_eq!(spent.bind_groups_created, 0, "{spent:?}");
    assert_eq!(spent.submissions, 12);
}

#[test]
fn a_failing_run_in_the_middle_is_its_own_and_the_stream_goes_on() {
    let _serial = serial();
    let graph = Steps::new(&gpu()).expect("graph");
    let xs = inputs(7, 500, 3);
    let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut runs: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut ys)
        .enumerate()
        .map(|(k, (x, y))| {
            // Run 3 claims 600 elements but feeds 500: a wrong length.
            let n = if k == 3 { 600 } else { x.len() as u64 };
            Instance::new(
                n,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let results = graph.graph().run_many(&overlapped(), 2, &mut runs);
    drop(runs);
    for (k, r) in results.iter().enumerate() {
        if k == 3 {
            let err = r.as_ref().expect_err("run 3 has a wrong length");
            assert!(
                matches!(err, BackendError::BatchInstance { index: 3, source } if matches!(**source, BackendError::LengthMismatch { .. })),
                "{err:?}"
            );
            assert!(err.to_string().contains("instance 3"), "{err}");
        } else {
            assert!(r.is_ok(), "run {k}: {r:?}");
            assert_same(&ys[k], &want(&xs[k]), &format!("run {k}"));
        }
    }
    // The same graph streams correctly again.
    let (results, ys) = stream(&graph, &xs, 3);
    for (k, (r, (x, y))) in results.iter().zip(xs.iter().zip(&ys)).enumerate() {
        assert!(r.is_ok(), "again, run {k}: {r:?}");
        assert_same(y, &want(x), &format!("again, run {k}"));
    }
}

#[test]
fn the_typed_stream_returns_outputs_or_the_run_s_error() {
    let _serial = serial();
    let graph = Steps::new(&gpu()).expect("graph");
    let xs = inputs(5, 200, 4);
    let long = inputs(1, 201, 9).remove(0);
    let mut args: Vec<&[u32]> = xs.iter().map(Vec::as_slice).collect();
    // Run 2 reads back more than the config allows; run 3 is empty (an
    // empty output, no GPU work).
    args[2] = &long;
    args[3] = &[];
    let config = overlapped().with_max_output_bytes(800);
    let results = graph.run_many(&config, 3, &args);
    assert_eq!(results.len(), 5);
    for (k, r) in results.iter().enumerate() {
        if k == 2 {
            let err = r.as_ref().expect_err("over the output budget");
            assert!(
                matches!(err, BackendError::BatchInstance { index: 2, source } if matches!(**source, BackendError::OutputTooLarge { .. })),
                "{err:?}"
            );
        } else if k == 3 {
            assert!(r.as_ref().expect("an empty run").y.is_empty());
        } else {
            let out = r.as_ref().expect("run");
            assert_same(&out.y, &want(&xs[k]), &format!("typed run {k}"));
        }
    }
}

/// The depth a stream keeps is the adapter's (`StreamDepth::Auto`): one
/// run at a time on a CPU adapter, where overlapping runs lost to
/// sequential ones, the depth asked for elsewhere; `StreamDepth::Asked`
/// keeps the depth asked for. Seen in what a fresh graph allocates: one
/// launch plan per run in flight.
#[test]
fn a_stream_keeps_the_adapter_s_depth_in_flight() {
    let _serial = serial();
    let gpu = gpu();
    let cpu = gpu.adapter().device_type == vyre_graph::wgpu::DeviceType::Cpu;
    let auto = DispatchConfig::default();
    let probe = Steps::new(&gpu).expect("graph");
    assert_eq!(
        probe.graph().stream_depth(3, &auto),
        if cpu { 1 } else { 3 }
    );
    assert_eq!(probe.graph().stream_depth(3, &overlapped()), 3);
    assert_eq!(probe.graph().stream_depth(0, &overlapped()), 1);
    // Buffers a fresh graph creates for a stream of 6 runs of one size.
    let buffers = |config: &DispatchConfig, depth: usize| {
        let graph = Steps::new(&gpu).expect("graph");
        let xs = inputs(6, 1000, depth as u32);
        let args: Vec<&[u32]> = xs.iter().map(Vec::as_slice).collect();
        let before = gpu.counters();
        let ran = graph.run_many(config, depth, &args);
        let spent = gpu.counters().since(&before);
        for (k, (r, x)) in ran.iter().zip(&xs).enumerate() {
            let out = r.as_ref().unwrap_or_else(|e| panic!("run {k}: {e}"));
            assert_same(&out.y, &want(x), &format!("depth {depth}, run {k}"));
        }
        spent.buffers_created
    };
    let one = buffers(&overlapped(), 1);
    let three = buffers(&overlapped(), 3);
    assert!(
        three > one,
        "three plans in flight make more buffers: {three} vs {one}"
    );
    let picked = buffers(&auto, 3);
    assert_eq!(picked, if cpu { one } else { three }, "auto at depth 3");
}
