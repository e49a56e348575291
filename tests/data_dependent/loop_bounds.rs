//! Learned loop bounds (`LoopBound::Learned`, the default): a run records
//! about as many iterations of a `repeat up to K .. until ..` loop as the
//! last runs at its size needed, and continues a loop that needs more in a
//! further submission from the device's state. Every result is checked
//! against the CPU and against the same run with `LoopBound::Full` (all `K`
//! recorded): a trip count that grows past the learned bound (the extra
//! submissions reported), one that shrinks (the recorded count comes
//! down), one that reaches `K` exactly and one that would pass it, a
//! frontier loop like bfs, two loops where the first holds the second, an
//! error then the same graph again, the async path, and a graph whose loop
//! cannot be continued (recorded whole).

use crate::common;

use common::*;
use vyre_graph::{BackendError, DispatchConfig, Feed, LoopBound, LoopReport, RunReport, Sink};

mod graphs {
    use vyre_graph::graph;
    graph! {
        /// Decrements every value to 0, one per iteration, while any is
        /// left (at most 64 iterations).
        pub struct Countdown;

        kernel dec = wgsl {
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };

        inout v[n];
        intermediate flag[1];

        repeat up to 64 as i until zero(flag) {
            node dec(v: v, flag: flag) over n;
        }
    }

    graph! {
        /// A frontier loop like bfs: each level keeps `v / 2` of every
        /// `v > 1` and adds what it sees to `acc`, until the frontier is
        /// empty (at most 40 levels); then a second loop counts `w` down
        /// (at most 24 iterations), so that the first loop holds the second.
        pub struct Frontier;

        kernel seed = wgsl {
            struct Out { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: Out;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] != 0u {
                    let slot = atomicAdd(&dst.count, 1u);
                    if slot < arrayLength(&dst.items) { dst.items[slot] = x[g.x]; }
                }
            }
        };
        kernel expand = wgsl {
            struct In { count: u32, items: array<u32> }
            struct Out { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> src: In;
            @group(0) @binding(1) var<storage, read_write> dst: Out;
            @group(0) @binding(2) var<storage, read_write> acc: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(src.count, arrayLength(&src.items)) {
                    let v = src.items[g.x];
                    atomicAdd(&acc[0], v);
                    if v > 1u {
                        let slot = atomicAdd(&dst.count, 1u);
                        if slot < arrayLength(&dst.items) { dst.items[slot] = v / 2u; }
                    }
                }
            }
        };
        kernel dec = wgsl {
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };

        input x[n];
        inout w[n];
        inout acc[1];
        append fa[n];
        append intermediate fb[n / 4];
        intermediate flag[1];

        node seed(x: x, dst: fa) over n;
        repeat up to 40 as i until empty(ping(fa, fb)) {
            node expand(src: ping(fa, fb), dst: pong(fa, fb), acc: acc) over count(ping(fa, fb));
        }
        repeat up to 24 as j until zero(flag) {
            node dec(v: w, flag: flag) over n;
        }
    }

    graph! {
        /// `Countdown` with a host-sized node after the loop: a run that a
        /// loop held could not make it launch nothing, so the loop is
        /// always recorded whole.
        pub struct Tail;

        kernel dec = wgsl {
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };
        kernel twice = wgsl {
            @group(0) @binding(0) var<storage, read> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) { out[g.x] = v[g.x] * 2u + 1u; }
            }
        };

        inout v[n];
        output out[n];
        intermediate flag[1];

        repeat up to 32 as i until zero(flag) {
            node dec(v: v, flag: flag) over n;
        }
        node twice(v: v, out: out) over n;
    }
}
use graphs::{Countdown, Frontier, Tail};

fn learned() -> DispatchConfig {
    DispatchConfig::default()
}

fn full() -> DispatchConfig {
    DispatchConfig::default().with_loop_bound(LoopBound::Full)
}

/// Values `0..=max`, the largest once at least.
fn values(n: usize, max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (max + 1)).collect();
    v[n / 2] = max;
    v
}

/// The CPU's countdown of `k` iterations at most: the values after it, the
/// iterations that ran and whether the flag stopped it.
fn countdown_cpu(v: &[u32], k: u32) -> (Vec<u32>, u32, bool) {
    let max = v.iter().copied().max().unwrap_or(0);
    let iterations = max.clamp(1, k);
    (
        v.iter().map(|x| x.saturating_sub(iterations)).collect(),
        iterations,
        max < k,
    )
}

fn loop_of(report: &RunReport, l: usize) -> LoopReport {
    report.loops[l]
}

/// One countdown run, checked against the CPU; returns its report.
fn countdown(graph: &Countdown, v: &[u32], config: &DispatchConfig, what: &str) -> RunReport {
    let (out, report) = graph.run_reported(config, v).expect("run");
    let (want, iterations, stopped) = countdown_cpu(v, 64);
    assert_same(&out.v, &want, what);
    let l = loop_of(&report, 0);
    assert_eq!((l.iterations, l.stopped), (iterations, stopped), "{what}");
    assert!(
        l.recorded >= l.iterations && l.recorded <= 64,
        "{what}: {l:?}"
    );
    report
}

#[test]
fn a_trip_count_that_grows_past_the_learned_bound_continues_in_further_submissions() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    // The first run at a size records 8; 3 are needed.
    let first = countdown(&graph, &values(1000, 3), &learned(), "first");
    assert_eq!((loop_of(&first, 0).recorded, first.submissions), (8, 1));
    assert_eq!(first.dispatches, 8 * 2 + 1, "8 gates, 8 nodes, the exit");
    // Learned: 3 needed, 3 + 1 + 2 = 6 recorded.
    let second = countdown(&graph, &values(1000, 3), &learned(), "second");
    assert_eq!((loop_of(&second, 0).recorded, second.submissions), (6, 1));
    // Now 40 are needed: 6, then 6 more, 12, 24 (doubling): 4 submissions.
    let grown = countdown(&graph, &values(1000, 40), &learned(), "grown");
    assert_eq!(loop_of(&grown, 0).recorded, 48);
    assert_eq!(grown.submissions, 4, "{grown:?}");
    assert_eq!(grown.dispatches, 48 * 2 + 4, "an exit per submission");
    // Learned again: 40 + 10 + 2 = 52 in one submission.
    let again = countdown(&graph, &values(1000, 40), &learned(), "again");
    assert_eq!((loop_of(&again, 0).recorded, again.submissions), (52, 1));
    // Another size learns on its own: 8, 16, 32, then 64 (K: no exit).
    let other = countdown(&graph, &values(777, 40), &learned(), "other size");
    assert_eq!(loop_of(&other, 0).recorded, 64);
    assert_eq!(other.submissions, 4);
    assert_eq!(other.dispatches, 64 * 2 + 3);
}

#[test]
fn a_trip_count_that_shrinks_brings_the_recorded_count_down() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    countdown(&graph, &values(500, 30), &learned(), "long");
    let long = countdown(&graph, &values(500, 30), &learned(), "long, learned");
    assert_eq!(loop_of(&long, 0).recorded, 30 + 8 + 2);
    // The last 4 runs decide: the long ones are forgotten after 4 short.
    let mut recorded = Vec::new();
    for k in 0..5 {
        let short = countdown(&graph, &values(500, 2), &learned(), &format!("short {k}"));
        assert_eq!(short.submissions, 1);
        recorded.push(loop_of(&short, 0).recorded);
    }
    assert_eq!(recorded, vec![40, 40, 40, 40, 5]);
}

#[test]
fn a_loop_that_reaches_k_or_would_pass_it_ends_as_a_full_run_does() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    for (max, n) in [
        (64u32, 256usize),
        (65, 256),
        (200, 4096),
        (63, 256),
        (0, 64),
    ] {
        let v = values(n, max);
        let got = countdown(&graph, &v, &learned(), &format!("learned, max {max}"));
        let whole = countdown(&graph, &v, &full(), &format!("full, max {max}"));
        let (a, b) = (loop_of(&got, 0), loop_of(&whole, 0));
        assert_eq!(
            (a.iterations, a.stopped),
            (b.iterations, b.stopped),
            "max {max}"
        );
        assert_eq!(b.recorded, 64);
        assert_eq!(whole.submissions, 1);
        assert!(a.recorded <= 64);
        if max >= 64 {
            assert_eq!((a.iterations, a.stopped), (64, false), "max {max}");
            assert_eq!(a.recorded, 64, "never past K");
        }
    }
}

/// The CPU's `Frontier`: the sum of the values seen, the levels, whether
/// the frontier emptied within 40; then `w` counted down.
fn frontier_cpu(x: &[u32], w: &[u32]) -> (u32, u32, bool, Vec<u32>, u32, bool) {
    let mut frontier: Vec<u32> = x.iter().copied().filter(|&v| v != 0).collect();
    let (mut acc, mut levels) = (0u32, 0u32);
    while !frontier.is_empty() && levels < 40 {
        acc = frontier.iter().fold(acc, |a, &v| a.wrapping_add(v));
        frontier = frontier.iter().filter(|&&v| v > 1).map(|v| v / 2).collect();
        levels += 1;
    }
    let max = w.iter().copied().max().unwrap_or(0);
    let down = max.clamp(1, 24);
    let w: Vec<u32> = w.iter().map(|v| v.saturating_sub(down)).collect();
    (acc, levels, frontier.is_empty(), w, down, max < 24)
}

/// One `Frontier` run, checked against the CPU and against a full run.
fn frontier(graph: &Frontier, x: &[u32], w: &[u32], what: &str) -> RunReport {
    let (acc, levels, emptied, want_w, down, stopped) = frontier_cpu(x, w);
    let mut reports = Vec::new();
    for config in [learned(), full()] {
        let (out, report) = graph.run_reported(&config, x, w, &[0u32][..]).expect("run");
        assert_eq!(out.acc[0], acc, "{what}: acc");
        assert_same(&out.w, &want_w, &format!("{what}: w"));
        let (a, b) = (loop_of(&report, 0), loop_of(&report, 1));
        assert_eq!((a.iterations, a.stopped), (levels, emptied), "{what}");
        assert_eq!((b.iterations, b.stopped), (down, stopped), "{what}");
        reports.push((out, report));
    }
    let (learned, whole) = (&reports[0], &reports[1]);
    // The last frontier (items past the count are undefined): as the full
    // run left it.
    assert_eq!(learned.0.fa.len(), whole.0.fa.len(), "{what}: fa count");
    let (mut a, mut b) = (learned.0.fa.clone(), whole.0.fa.clone());
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "{what}: fa");
    learned.1.clone()
}

#[test]
fn a_frontier_loop_like_bfs_holds_the_loop_after_it_until_it_stops() {
    let _serial = serial();
    let graph = Frontier::new(&gpu()).expect("graph");
    let n = 4096;
    // Values below 2^bits in the first n / 8 elements (a frontier fits
    // fb, n / 4 items), then zeros.
    let x = |bits: u32| -> Vec<u32> {
        let mut x = vec![0u32; n];
        if bits > 0 {
            for (x, v) in x.iter_mut().zip(data(n / 8, bits)) {
                *x = v >> (32 - bits);
            }
        }
        x
    };
    // 3 levels and 5 countdowns: within the first bound (8 each).
    let r = frontier(&graph, &x(3), &values(n, 5), "small");
    assert_eq!(r.submissions, 1);
    // 20 levels, 3 learned: the first loop holds the run twice (6, 12,
    // 24), and the second loop runs only once it stopped.
    let r = frontier(&graph, &x(20), &values(n, 5), "deep");
    assert_eq!(r.submissions, 3, "{r:?}");
    assert_eq!(loop_of(&r, 0).recorded, 24);
    // Both loops deeper than learned.
    let r = frontier(&graph, &x(32), &values(n, 23), "both deep");
    assert!(r.submissions >= 2, "{r:?}");
    // Nothing in the frontier: no level runs.
    let r = frontier(&graph, &x(0), &values(n, 1), "empty");
    assert_eq!(loop_of(&r, 0).iterations, 0);
    // Learned from the runs before: deep in one submission again.
    frontier(&graph, &x(20), &values(n, 5), "deep again");
    let r = frontier(&graph, &x(20), &values(n, 5), "deep, learned");
    assert_eq!(r.submissions, 1, "{r:?}");
}

#[test]
fn an_overflow_in_a_continued_loop_is_reported_and_the_graph_runs_again() {
    let _serial = serial();
    let graph = Frontier::new(&gpu()).expect("graph");
    let n = 1024;
    let w = values(n, 3);
    // fb holds n / 4 = 256 items: 1,024 values of 2^15 overflow it at the
    // first level; the loop then runs 16 levels, past the bound of 4 that
    // the shallow runs taught, so the overflow found in the first
    // submission is reported after the continuations.
    frontier(&graph, &vec![1u32; n], &w, "shallow");
    let mut deep = vec![0u32; n];
    deep[..200].fill(1 << 15);
    frontier(&graph, &deep, &w, "deep, within fb");
    for _ in 0..4 {
        frontier(&graph, &vec![1u32; n], &w, "shallow again");
    }
    let over = vec![1u32 << 15; n];
    match graph.run_reported(&learned(), &over, &w, &[0u32][..]) {
        Err(BackendError::AppendOverflow {
            buffer, capacity, ..
        }) => {
            assert_eq!((buffer.as_str(), capacity), ("fb", 256));
        }
        Err(e) => panic!("expected AppendOverflow, got {e}"),
        Ok((_, r)) => panic!("fb overflowed; got {r:?}"),
    }
    // The same with every level recorded: the same error.
    match graph.run_reported(&full(), &over, &w, &[0u32][..]) {
        Err(BackendError::AppendOverflow {
            buffer, capacity, ..
        }) => assert_eq!((buffer.as_str(), capacity), ("fb", 256)),
        Err(e) => panic!("expected AppendOverflow, got {e}"),
        Ok((_, r)) => panic!("fb overflowed; got {r:?}"),
    }
    // The same graph runs correctly again, deep and shallow.
    frontier(&graph, &deep, &w, "deep after the error");
    frontier(&graph, &vec![1u32; n], &w, "shallow after the error");
}

#[test]
fn the_async_path_continues_a_held_loop_without_blocking() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    let run = |v: &[u32]| -> (Vec<u32>, RunReport) {
        let mut out = vec![0u32; v.len()];
        let feeds = [Feed::Host(bytemuck::cast_slice(v))];
        let mut sinks = [Sink::Host(bytemuck::cast_slice_mut(&mut out))];
        let config = learned();
        let future = graph
            .graph()
            .run_async(&config, v.len() as u64, &feeds, &mut sinks);
        let report = pollster::block_on(future).expect("async run");
        (out, report)
    };
    let short = values(2048, 2);
    let (out, report) = run(&short);
    assert_same(&out, &countdown_cpu(&short, 64).0, "async short");
    assert_eq!(report.submissions, 1);
    let long = values(2048, 50);
    let (out, report) = run(&long);
    let (want, iterations, stopped) = countdown_cpu(&long, 64);
    assert_same(&out, &want, "async long");
    assert_eq!(report.loops[0].iterations, iterations);
    assert!(stopped && report.loops[0].stopped);
    assert!(report.submissions > 1, "{report:?}");
    // 5 learned from the short run: 5, 10, 20, 40, then K.
    assert_eq!(report.loops[0].recorded, 64);
    assert_eq!(report.submissions, 5);
}

#[test]
fn a_loop_followed_by_a_host_sized_node_is_recorded_whole() {
    let _serial = serial();
    let graph = Tail::new(&gpu()).expect("graph");
    for max in [2u32, 20, 40] {
        let v = values(300, max);
        let (out, report) = graph.run_reported(&learned(), &v).expect("run");
        let iterations = max.clamp(1, 32);
        let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(iterations)).collect();
        assert_same(&out.v, &want, "v");
        let twice: Vec<u32> = want.iter().map(|x| x * 2 + 1).collect();
        assert_same(&out.out, &twice, "out");
        assert_eq!(report.loops[0].recorded, 32, "max {max}");
        assert_eq!(report.submissions, 1);
    }
}

#[test]
fn a_recorded_run_records_every_iteration() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Countdown::new(&gpu).expect("graph");
    let v = values(640, 5);
    let input = vyre_graph::GpuBufferHandle::from_slice(&gpu, &v).expect("upload");
    let output = graph.graph().create_buffer(0, v.len() as u64).expect("out");
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = graph
        .graph()
        .record(
            &mut encoder,
            &learned(),
            v.len() as u64,
            &[Feed::Device(&input)],
            &[Sink::Device(&output)],
        )
        .expect("record");
    assert_eq!(recorded.report().dispatches, 64 * 2, "all K iterations");
    let submission = gpu.queue().submit([encoder.finish()]);
    let report = recorded
        .read(submission, &mut [Sink::Device(&output)])
        .expect("read");
    assert_eq!(report.loops[0].recorded, 64);
    let got: Vec<u32> = output.read_as(&gpu).expect("read back");
    assert_same(&got, &countdown_cpu(&v, 64).0, "recorded");
}
