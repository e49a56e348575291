//! Faults and load, as a hostile but realistic user meets them: a run that
//! times out, a device error under a panicking error handler, absurd problem
//! sizes through the typed API, zero-sized grids, many threads with random
//! sizes and cache capacities, and more sizes than the cache holds. After
//! every error the same graph must run again and give the right answer.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use vyre_graph::spec::{BufferClass, Extent};
use vyre_graph::{BackendError, DispatchConfig, Feed, Gpu, GpuBufferHandle, Graph, Sink, graph};

graph! {
    /// `y = x + v * zero`, where `v` is `iters` steps of an LCG: as slow as
    /// asked, and the identity when `zero` is 0 (the driver cannot know).
    pub struct Slow;

    kernel spin = wgsl {
        struct Params { iters: u32, zero: u32 }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<uniform> p: Params;
        @group(0) @binding(2) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&x) { return; }
            var v = x[g.x];
            for (var i = 0u; i < p.iters; i++) { v = v * 1664525u + 1013904223u; }
            y[g.x] = x[g.x] + v * p.zero;
        }
    };

    input x[n];
    uniform p;
    output y[n];

    node spin(x: x, p: p, y: y) over n;
}

graph! {
    /// `y[i] = i * 3 + 1`: its size is the problem size itself.
    pub struct Iota;

    kernel iota = wgsl {
        @group(0) @binding(0) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = g.x * 3u + 1u; }
        }
    };

    output y[n];

    node iota(y: y) over n;
}

fn iota_reference(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(3).wrapping_add(1))
        .collect()
}

/// Runs until the device has finished what a timed-out run left running
/// (`DeviceBusy` meanwhile), for at most a minute.
fn run_when_idle<T>(mut run: impl FnMut() -> Result<T, BackendError>) -> Result<T, BackendError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match run() {
            Err(BackendError::DeviceBusy) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Enough work that lavapipe takes well over a second.
const SLOW: Params = Params {
    iters: 3000,
    zero: 0,
};
const FAST: Params = Params { iters: 1, zero: 0 };
const SLOW_N: u32 = 1 << 20;

#[test]
fn a_timed_out_run_leaves_the_graph_usable_at_the_same_size() {
    let _serial = serial();
    // A device of its own: its timed-out kernel must not slow the others.
    let gpu = Gpu::new().expect("gpu");
    let slow = Slow::new(&gpu).expect("graph");
    let x: Vec<u32> = (0..SLOW_N).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    // A first good run caches the plan of this size.
    assert_eq!(slow.run(&x, &FAST).expect("first run").y, x);
    assert_eq!(slow.graph().cached_plans(), 1);

    let config = DispatchConfig::default().with_timeout(Duration::from_millis(1));
    let err = slow.run_with(&config, &x, &SLOW).expect_err("times out");
    assert!(
        matches!(err, BackendError::Timeout { timeout } if timeout == Duration::from_millis(1)),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("Gpu::abandon"), "{message}");
    // The failed run's plan was dropped, not put back half-mapped.
    assert_eq!(slow.graph().cached_plans(), 0);

    // While the kernel still runs, a run fails fast instead of blocking in
    // the driver; once it has finished, the same size runs correctly.
    let started = Instant::now();
    match slow.run(&x, &FAST) {
        Err(BackendError::DeviceBusy) => assert!(
            started.elapsed() < Duration::from_millis(500),
            "DeviceBusy took {:?}",
            started.elapsed()
        ),
        Ok(out) => assert_eq!(out.y, x),
        Err(e) => panic!("unexpected error after a timeout: {e}"),
    }
    let out = run_when_idle(|| slow.run(&x, &FAST)).expect("same size after the timeout");
    assert_eq!(out.y, x);
    let out = slow.run(&x, &FAST).expect("and again, from the cache");
    assert_eq!(out.y, x);
    assert_eq!(slow.graph().cached_plans(), 1);
    // Another size works too.
    let small = &x[..1000];
    assert_eq!(slow.run(small, &FAST).expect("another size").y, small);
}

#[test]
fn an_abandoned_gpu_drops_without_waiting_for_a_runaway_kernel() {
    let _serial = serial();
    let gpu = Gpu::new().expect("gpu");
    let slow = Slow::new(&gpu).expect("graph");
    let x: Vec<u32> = (0..SLOW_N).collect();
    let config = DispatchConfig::default().with_timeout(Duration::from_millis(1));
    let err = slow.run_with(&config, &x, &SLOW).expect_err("times out");
    assert!(matches!(err, BackendError::Timeout { .. }), "{err:?}");
    gpu.abandon();
    assert!(gpu.is_abandoned());
    let err = slow.run(&x[..64], &FAST).expect_err("abandoned");
    assert!(matches!(err, BackendError::Abandoned), "{err:?}");
    let started = Instant::now();
    drop(slow);
    drop(gpu);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "dropping an abandoned Gpu took {:?}",
        started.elapsed()
    );
}

#[test]
fn device_errors_never_reach_a_panicking_error_handler_and_the_graph_recovers() {
    let _serial = serial();
    let gpu = Gpu::new().expect("gpu");
    gpu.device()
        .on_uncaptured_error(Arc::new(|e: vyre_graph::wgpu::Error| {
            panic!("uncaptured wgpu error reached the handler: {e}")
        }));
    let graph = Graph::new(&gpu, two_step_spec("handler")).expect("graph");
    let x = data(1000, 3);
    let want = two_step_cpu(&x);
    let mut y = vec![0u32; 1000];
    let good = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    graph
        .run(
            &DispatchConfig::default(),
            1000,
            &[Feed::Device(&good)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("good run");
    assert_same(&y, &want, "before the fault");

    // A resident input whose wgpu buffer was destroyed behind vyre's back:
    // the bind group and the submission are invalid. The run's error scope
    // captures it: an error, not a panic in the handler.
    let broken = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    broken.buffer().destroy();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        graph.run(
            &DispatchConfig::default(),
            1000,
            &[Feed::Device(&broken)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
    }));
    let err = result
        .expect("the run must not panic")
        .expect_err("a destroyed buffer fails");
    assert!(
        matches!(err, BackendError::DispatchFailed { .. }),
        "{err:?}"
    );

    // The same graph, the same size, a good input: right again.
    y.fill(0);
    graph
        .run(
            &DispatchConfig::default(),
            1000,
            &[Feed::Device(&good)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run after the fault");
    assert_same(&y, &want, "after the fault");
    y.fill(0);
    graph
        .run(
            &DispatchConfig::default(),
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("host run after the fault");
    assert_same(&y, &want, "host input after the fault");
    assert_eq!(graph.cached_plans(), 1);
}

#[test]
fn absurd_sizes_through_the_typed_api_fail_fast_without_allocating() {
    let _serial = serial();
    let gpu = gpu();
    let iota = Iota::new(&gpu).expect("graph");
    let binding_limit = gpu.limits().max_storage_buffer_binding_size;
    for n in [1u64 << 31, 1 << 40, u64::MAX, u64::MAX / 4 + 1] {
        let started = Instant::now();
        let before = gpu.counters();
        let err = iota.run(n).expect_err("too large");
        assert!(
            matches!(err, BackendError::BufferTooLarge { ref buffer, max, .. } if buffer == "y" && max == binding_limit),
            "n = {n}: {err:?}"
        );
        let err = iota.run_resident(n).expect_err("too large resident");
        // The binding limit applies (the buffer is bound), not the larger
        // buffer-size limit.
        assert!(
            matches!(err, BackendError::BufferTooLarge { max, limit, .. } if max == binding_limit && limit.contains("max_storage_buffer_binding_size")),
            "n = {n}: {err:?}"
        );
        let spent = gpu.counters().since(&before);
        assert_eq!(spent.buffers_created, 0, "n = {n}");
        assert_eq!(spent.submissions, 0, "n = {n}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "n = {n} took {:?}",
            started.elapsed()
        );
    }
    // Size 0: an empty output, nothing allocated or submitted.
    let before = gpu.counters();
    assert!(iota.run(0).expect("zero").y.is_empty());
    let spent = gpu.counters().since(&before);
    assert_eq!((spent.buffers_created, spent.submissions), (0, 0));
    // Over the output budget: refused before the vector grows.
    let mut outputs = IotaOutputs::default();
    let err = iota
        .run_into(
            &DispatchConfig::default().with_max_output_bytes(1000),
            &mut outputs,
            1000,
        )
        .expect_err("over max_output_bytes");
    assert!(
        matches!(
            err,
            BackendError::OutputTooLarge {
                requested: 4000,
                limit: 1000
            }
        ),
        "{err:?}"
    );
    assert_eq!(outputs.y.capacity(), 0);
    // And the graph still works.
    assert_eq!(iota.run(1000).expect("run").y, iota_reference(1000));
}

#[test]
fn zero_sized_grids_are_errors_not_silently_skipped_nodes() {
    let _serial = serial();
    let gpu = gpu();
    let iota = Iota::new(&gpu).expect("graph");
    for grid in [[0, 1, 1], [4, 0, 1], [4, 1, 0]] {
        let before = gpu.counters();
        let err = iota
            .run_with(&DispatchConfig::default().with_grid_override(grid), 256)
            .expect_err("zero grid");
        assert!(
            matches!(&err, BackendError::InvalidProblemSize { reason } if reason.contains("no workgroup")),
            "{err:?}"
        );
        assert_eq!(gpu.counters().since(&before).submissions, 0);
    }
    // A hand-built node whose explicit grid is 0 at this size.
    let spec = graph_spec(
        "zero_grid",
        vec![kernel("iota", IOTA, [64, 1, 1], &[write("y", 0, 0, 4)])],
        vec![buffer("y", BufferClass::Output, 4, Extent::N)],
        vec![node(
            "empty",
            0,
            &[(0, 0, 0)],
            vyre_graph::spec::DispatchSize::Workgroups([
                Extent::constant(0),
                Extent::constant(1),
                Extent::constant(1),
            ]),
        )],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let mut y = vec![0u32; 64];
    let err = graph
        .run(
            &DispatchConfig::default(),
            64,
            &[],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect_err("zero grid");
    assert!(
        matches!(&err, BackendError::InvalidProblemSize { reason } if reason.contains("`empty`")),
        "{err:?}"
    );
    assert_eq!(iota.run(256).expect("run").y, iota_reference(256));
}

const IOTA: &str = "
@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&y) { y[g.x] = g.x * 3u + 1u; }
}";

/// A small deterministic generator for the load tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn many_threads_random_sizes_and_cache_capacities_all_correct() {
    let _serial = serial();
    let gpu = gpu();
    let sizes = [
        1u64, 63, 64, 65, 1000, 4096, 10_007, 65_536, 100_000, 250_001,
    ];
    for (round, capacity) in [0usize, 1, 3, 32].into_iter().enumerate() {
        let graph = Arc::new(
            Graph::with_cache_capacity(&gpu, two_step_spec("threads"), capacity).expect("graph"),
        );
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let graph = Arc::clone(&graph);
                std::thread::spawn(move || {
                    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (round as u64 * 31 + t));
                    for run in 0..12 {
                        let n = sizes[rng.below(sizes.len() as u64) as usize];
                        let x = data(n as usize, (t * 100 + run) as u32);
                        let (y, _) = run_host(&graph, &x);
                        let want = two_step_cpu(&x);
                        assert_same(&y, &want, &format!("thread {t} run {run} n {n}"));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert!(graph.cached_plans() <= capacity, "capacity {capacity}");
    }
}

#[test]
fn cycling_more_sizes_than_the_cache_holds_keeps_device_memory_flat() {
    let _serial = serial();
    let gpu = gpu();
    let start = gpu.counters().live_buffer_bytes;
    let graph = Graph::with_cache_capacity(&gpu, two_step_spec("cycle"), 4).expect("graph");
    let sizes: Vec<u64> = (1..=10).map(|k| k * 5000 + k).collect();
    let mut after_round = Vec::new();
    for round in 0..3 {
        for &n in &sizes {
            let x = data(n as usize, round);
            let (y, _) = run_host(&graph, &x);
            let want = two_step_cpu(&x);
            assert_same(&y, &want, &format!("round {round} n {n}"));
        }
        assert_eq!(graph.cached_plans(), 4);
        after_round.push(gpu.counters().live_buffer_bytes);
    }
    assert_eq!(
        after_round[0], after_round[2],
        "device memory grew over rounds: {after_round:?}"
    );
    // The four most recent plans hold device memory; dropping the graph
    // gives it all back.
    assert!(after_round[2] > start);
    drop(graph);
    assert_eq!(
        gpu.counters().live_buffer_bytes,
        start,
        "a dropped graph frees all"
    );
}

#[test]
fn a_dropped_resident_input_is_freed_at_once_even_while_a_plan_names_it() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("dropped_input")).expect("graph");
    let x = data(100_000, 9);
    let mut y = vec![0u32; 100_000];
    let handle = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    graph
        .run(
            &DispatchConfig::default(),
            100_000,
            &[Feed::Device(&handle)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    let with_handle = gpu.counters().live_buffer_bytes;
    drop(handle);
    assert_eq!(
        gpu.counters().live_buffer_bytes,
        with_handle - 400_000,
        "the handle's 400,000 bytes are freed when it is dropped"
    );
    // The plan rebinds to its own buffer for a host input: still right.
    let (mut y, _) = run_host(&graph, &x);
    let want = two_step_cpu(&x);
    assert_same(&y, &want, "after the handle was dropped");
    // A new handle (perhaps at the freed handle's address) is bound anew.
    let other = data(100_000, 10);
    let handle = GpuBufferHandle::from_slice(&gpu, &other).expect("handle");
    graph
        .run(
            &DispatchConfig::default(),
            100_000,
            &[Feed::Device(&handle)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    let want = two_step_cpu(&other);
    assert_same(&y, &want, "a new handle");
}

/// Polls every future whenever the task is woken, and only then: no timer,
/// so a future that returned `Pending` and is never woken hangs the join,
/// which is what the poller tests must catch.
async fn join_woken<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none()
                && let std::task::Poll::Ready(value) = future.as_mut().poll(cx)
            {
                *output = Some(value);
            }
        }
        if outputs.iter().all(Option::is_some) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// `rounds` rounds of `per_round` async runs of `graph` at random sizes
/// from 1 to `max_n`, all in flight at once, joined by [`join_woken`] under
/// `pollster::block_on` on a thread of their own; every result is checked
/// against the CPU. A round still waiting after 30 s fails the test instead
/// of hanging it.
fn async_rounds(graph: &Arc<Graph>, seed: u64, rounds: usize, per_round: usize, max_n: u64) {
    const LIMIT: Duration = Duration::from_secs(30);
    let mut rng = Rng(seed);
    for round in 0..rounds {
        let inputs: Vec<Vec<u32>> = (0..per_round)
            .map(|k| {
                data(
                    1 + rng.below(max_n) as usize,
                    (round * per_round + k) as u32,
                )
            })
            .collect();
        let (send, receive) = std::sync::mpsc::channel();
        let graph = Arc::clone(graph);
        std::thread::spawn(move || {
            let mut outputs: Vec<Vec<u32>> = inputs.iter().map(|x| vec![0u32; x.len()]).collect();
            let errors: Vec<String> = {
                let feeds: Vec<[Feed<'_>; 1]> =
                    inputs.iter().map(|x| [Feed::Host(bytes(x))]).collect();
                let mut sinks: Vec<[Sink<'_>; 1]> = outputs
                    .iter_mut()
                    .map(|y| [Sink::Host(bytes_mut(y))])
                    .collect();
                let config = DispatchConfig::default();
                let runs: Vec<_> = inputs
                    .iter()
                    .zip(&feeds)
                    .zip(sinks.iter_mut())
                    .map(|((x, feeds), sinks)| {
                        graph.run_async(&config, x.len() as u64, feeds, sinks)
                    })
                    .collect();
                pollster::block_on(join_woken(runs))
                    .into_iter()
                    .filter_map(|r| r.err().map(|e| e.to_string()))
                    .collect()
            };
            // The receiver is gone only when the test already failed.
            drop(send.send((inputs, outputs, errors)));
        });
        let Ok((inputs, outputs, errors)) = receive.recv_timeout(LIMIT) else {
            panic!("round {round}: {per_round} async runs still waiting after {LIMIT:?}");
        };
        assert!(errors.is_empty(), "round {round}: {errors:?}");
        for (k, (x, y)) in inputs.iter().zip(&outputs).enumerate() {
            let what = format!("round {round}, run {k}, n = {}", x.len());
            assert_same(y, &two_step_cpu(x), &what);
        }
    }
}

/// One async and one blocking run of `graph`, checked against the CPU.
fn async_then_sync(graph: &Graph, n: usize, seed: u32) {
    let x = data(n, seed);
    let mut y = vec![0u32; n];
    pollster::block_on(graph.run_async(
        &DispatchConfig::default(),
        n as u64,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    ))
    .expect("async run");
    assert_same(&y, &two_step_cpu(&x), "async run");
    let (y, _) = run_host(graph, &x);
    assert_same(&y, &two_step_cpu(&x), "blocking run");
}

/// The probe that found the poller dying: rounds of 64 async runs of random
/// sizes joined with `pollster`, here with two threads running blocking runs
/// beside them, which makes wgpu-core's race (a poll that timed out meeting
/// another thread's poll that emptied the queue: "If the queue is empty, the
/// current submission index (..) should be at least the wait submission
/// index (..)") show up in some runs of this test on lavapipe. Whether it
/// shows up or not, every run must complete and be right.
#[test]
fn rounds_of_64_async_runs_beside_blocking_runs_all_complete_and_are_right() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Arc::new(Graph::new(&gpu, two_step_spec("async_stress")).expect("graph"));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let blocking: Vec<_> = (0..2)
        .map(|t| {
            let (graph, stop) = (Arc::clone(&graph), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut rng = Rng(0xB10C + t);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let x = data(1 + rng.below(50_000) as usize, t as u32);
                    let (y, _) = run_host(&graph, &x);
                    assert_same(&y, &two_step_cpu(&x), "a blocking run beside them");
                }
            })
        })
        .collect();
    let before = gpu.counters();
    async_rounds(&graph, 0x5EED_0001, 6, 64, 200_000);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in blocking {
        t.join().expect("a blocking thread");
    }
    let spent = gpu.counters().since(&before);
    eprintln!(
        "wgpu panics caught while polling: {}, pollers started: {}",
        spent.poll_panics, spent.pollers_started
    );
    async_then_sync(&graph, 100_000, 77);
}

/// Faults injected into the device poller: panics inside its polls (where
/// wgpu's race panics), panics that end its loop, and no thread at all.
/// Async runs in flight meanwhile complete and are right, and the same
/// graph then runs async and blocking correctly.
#[test]
fn async_runs_complete_whatever_happens_to_the_device_poller() {
    use vyre_graph::__private::{PollerFaults, inject_poller_faults};
    let _serial = serial();
    let gpu = gpu();
    let graph = Arc::new(Graph::new(&gpu, two_step_spec("poller_faults")).expect("graph"));

    // Panics inside the poller's polls: caught, counted, polling goes on.
    let before = gpu.counters();
    let faults = PollerFaults {
        poll_panics: 3,
        ..PollerFaults::default()
    };
    inject_poller_faults(&gpu, faults);
    async_rounds(&graph, 0xFA17_0001, 2, 16, 100_000);
    let spent = gpu.counters().since(&before);
    assert!(spent.poll_panics >= 3, "{spent:?}");
    async_then_sync(&graph, 65_537, 1);

    // Panics that end the poller's loop: it starts again at once, on its
    // thread, so runs that already returned `Pending` are still woken.
    let before = gpu.counters();
    let faults = PollerFaults {
        loop_panics: 2,
        ..PollerFaults::default()
    };
    inject_poller_faults(&gpu, faults);
    async_rounds(&graph, 0xFA17_0002, 2, 16, 100_000);
    let spent = gpu.counters().since(&before);
    assert!(spent.pollers_started >= 2, "two restarts: {spent:?}");
    async_then_sync(&graph, 1000, 2);

    // No poller thread at all (the system refuses threads): every future
    // polls the device itself and wakes itself. A Gpu of its own, so that
    // no poller of the shared one lingers.
    let alone = Gpu::new().expect("gpu");
    let graph = Arc::new(Graph::new(&alone, two_step_spec("no_poller")).expect("graph"));
    let faults = PollerFaults {
        refused_spawns: usize::MAX,
        ..PollerFaults::default()
    };
    inject_poller_faults(&alone, faults);
    async_rounds(&graph, 0xFA17_0003, 2, 16, 100_000);
    assert_eq!(alone.counters().pollers_started, 0);
    async_then_sync(&graph, 4097, 3);
    // Threads allowed again: the next async runs start a poller.
    inject_poller_faults(&alone, PollerFaults::default());
    async_rounds(&graph, 0xFA17_0004, 1, 16, 100_000);
    assert_eq!(alone.counters().pollers_started, 1);
}
