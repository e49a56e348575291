//! Loops that stop themselves on the device (`repeat up to K as i until
//! ..`), checked against the CPU element by element, with the iterations
//! each run reports: a loop that stops after 3 of 10 iterations, after 0,
//! and one that never stops within `K`.

use crate::common;

use common::*;
use vyre_graph::{DispatchConfig, LoopReport};

use crate::shared::loops::{Countdown, Halving, halving_cpu, ran, report};

fn run_halving(graph: &Halving, x: &[u32]) -> (u32, LoopReport) {
    let (out, report) = graph
        .run_reported(&DispatchConfig::default(), x, &[0u32][..])
        .expect("run");
    assert_eq!(report.loops.len(), 1);
    (out.acc[0], ran(report.loops[0]))
}

#[test]
fn an_empty_frontier_stops_the_loop_after_3_of_10_levels() {
    let _serial = serial();
    let graph = Halving::new(&gpu()).expect("graph");
    // Values up to 7: levels 7, 3, 1 then empty.
    let x: Vec<u32> = (0..1000u32).map(|i| i % 8).collect();
    let got = run_halving(&graph, &x);
    let want = halving_cpu(&x, 10);
    assert_eq!(want.1, report(3, true));
    assert_eq!(got, want);
    // Again, on the same plan: the counts and the loop state start afresh.
    assert_eq!(run_halving(&graph, &x), want);
}

#[test]
fn an_empty_frontier_before_the_first_level_runs_nothing() {
    let _serial = serial();
    let graph = Halving::new(&gpu()).expect("graph");
    let x = vec![0u32; 1000];
    assert_eq!(run_halving(&graph, &x), (0, report(0, true)));
    // And one value: one level.
    let mut one = vec![0u32; 1000];
    one[500] = 1;
    assert_eq!(run_halving(&graph, &one), (1, report(1, true)));
}

#[test]
fn a_frontier_that_never_empties_within_k_is_reported_not_an_error() {
    let _serial = serial();
    let graph = Halving::new(&gpu()).expect("graph");
    // 5,000 halves 12 times before it is 1: more than 10 levels.
    let x: Vec<u32> = (0..4096u32).map(|i| 5000 + i).collect();
    let got = run_halving(&graph, &x);
    let want = halving_cpu(&x, 10);
    assert_eq!(want.1, report(10, false));
    assert_eq!(got, want);
    // Then a short one on the same graph.
    let short: Vec<u32> = (0..4096u32).map(|i| i % 4).collect();
    assert_eq!(run_halving(&graph, &short), halving_cpu(&short, 10));
}

/// The CPU's `Countdown`: every value less the iterations that ran.
fn countdown_cpu(v: &[u32], k: u32) -> (Vec<u32>, LoopReport) {
    let max = v.iter().copied().max().unwrap_or(0);
    // Do-while: the first iteration always runs; each later one runs while
    // a value was left after the one before.
    let iterations = max.clamp(1, k);
    let stopped = max < k;
    let out = v.iter().map(|x| x.saturating_sub(iterations)).collect();
    (out, report(iterations, stopped))
}

#[test]
fn a_flag_left_at_zero_stops_the_loop() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    for (max, n) in [
        (3u32, 1000usize),
        (0, 64),
        (1, 64),
        (9, 5000),
        (10, 100),
        (25, 100_000),
    ] {
        let v: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (max + 1)).collect();
        let (out, report) = graph
            .run_reported(&DispatchConfig::default(), &v)
            .expect("run");
        let (want, want_loop) = countdown_cpu(&v, 10);
        assert_same(&out.v, &want, &format!("max {max}"));
        let loops: Vec<LoopReport> = report.loops.into_iter().map(ran).collect();
        assert_eq!(loops, vec![want_loop], "max {max}");
    }
}

#[test]
fn describe_and_dot_show_append_capacities_indirect_sizes_and_loops() {
    let _serial = serial();
    let graph = Halving::new(&gpu()).expect("graph");
    let text = graph.describe().to_string();
    assert!(text.contains("buffer `fa` append capacity [n]"), "{text}");
    assert!(text.contains("over count(fa)"), "{text}");
    assert!(text.contains("over count(fb)"), "{text}");
    assert!(
        text.contains("loop `repeat up to 10 as i until empty(ping(fa, fb))`: up to 10 iterations"),
        "{text}"
    );
    // One control dispatch per iteration: gate, reset, arguments.
    assert!(text.contains("control dispatches: 10 per run"), "{text}");
    assert_eq!(graph.describe().control_dispatches, 10);
    let dot = graph.to_dot();
    assert!(dot.contains("cluster_loop0"), "{dot}");
    assert_eq!(graph.describe().loops[0].1.len(), 10);
}

mod narrow {
    use vyre_graph::graph;
    graph! {
        /// `Halving` with a second frontier too small for the first level.
        pub struct Narrow;

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
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(src.count, arrayLength(&src.items)) {
                    let v = src.items[g.x];
                    if v > 1u {
                        let slot = atomicAdd(&dst.count, 1u);
                        if slot < arrayLength(&dst.items) { dst.items[slot] = v / 2u; }
                    }
                }
            }
        };

        input x[n];
        append fa[n];
        append fb[n / 8];

        node seed(x: x, dst: fa) over n;
        repeat up to 10 as i until empty(ping(fa, fb)) {
            node expand(src: ping(fa, fb), dst: pong(fa, fb)) over count(ping(fa, fb));
        }
    }
}

#[test]
fn an_overflow_in_an_early_iteration_is_reported_after_a_later_reset() {
    let _serial = serial();
    let graph = narrow::Narrow::new(&gpu()).expect("graph");
    // Levels of 7, 3, 1: fb (capacity 128) receives 1,024 items in the first
    // level; a later level resets its count before appending again.
    let x = vec![7u32; 1024];
    match graph.run(&x) {
        Err(vyre_graph::BackendError::AppendOverflow {
            buffer,
            count,
            capacity,
            limit: None,
        }) => {
            assert_eq!(buffer, "fb");
            assert_eq!((count, capacity), (1024, 128));
        }
        Err(e) => panic!("expected AppendOverflow, got {e}"),
        Ok(_) => panic!("an overflow in the first level must be reported"),
    }
    // Within the capacities: fine, on the same graph.
    let mut ok = vec![0u32; 1024];
    ok[..100].fill(7);
    let out = graph.run(&ok).expect("run");
    assert_eq!(out.fa.len(), 100, "the last level (1s) was appended to fa");
    assert!(out.fb.is_empty(), "fb was reset and consumed");
}

mod tally {
    use vyre_graph::graph;
    graph! {
        /// `Halving` with two more nodes per level: one sums the frontier it
        /// expands (`over count` of a buffer the level's first node only
        /// reads: its arguments come from the level's first control
        /// dispatch), one sums the frontier the level made (`over count` of
        /// a buffer written in the level: a control dispatch of its own).
        pub struct Tally;

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
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(src.count, arrayLength(&src.items)) {
                    let v = src.items[g.x];
                    if v > 1u {
                        let slot = atomicAdd(&dst.count, 1u);
                        if slot < arrayLength(&dst.items) { dst.items[slot] = v / 2u; }
                    }
                }
            }
        };
        kernel sum = wgsl {
            struct In { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> src: In;
            @group(0) @binding(1) var<storage, read_write> acc: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(src.count, arrayLength(&src.items)) {
                    atomicAdd(&acc[0], src.items[g.x]);
                }
            }
        };

        input x[n];
        inout seen[1];
        inout made[1];
        append intermediate fa[n];
        append intermediate fb[n];

        node seed(x: x, dst: fa) over n;
        repeat up to 10 as i until empty(ping(fa, fb)) {
            node expand(src: ping(fa, fb), dst: pong(fa, fb)) over count(ping(fa, fb));
            node before = sum(src: ping(fa, fb), acc: seen) over count(ping(fa, fb));
            node after = sum(src: pong(fa, fb), acc: made) over count(pong(fa, fb));
        }
    }
}

/// The CPU's `Tally`: the sums of the frontiers expanded and made, and the
/// levels that ran.
fn tally_cpu(x: &[u32], max_levels: u32) -> (u32, u32, u32) {
    let mut frontier: Vec<u32> = x.iter().copied().filter(|&v| v != 0).collect();
    let (mut seen, mut made, mut levels) = (0u32, 0u32, 0);
    while !frontier.is_empty() && levels < max_levels {
        seen = frontier.iter().fold(seen, |a, &v| a.wrapping_add(v));
        frontier = frontier.iter().filter(|&&v| v > 1).map(|v| v / 2).collect();
        made = frontier.iter().fold(made, |a, &v| a.wrapping_add(v));
        levels += 1;
    }
    (seen, made, levels)
}

#[test]
fn an_iteration_records_one_control_dispatch_and_its_nodes() {
    let _serial = serial();
    let gpu = gpu();
    // Halving: the seed, then per level one control dispatch (gate, reset
    // of the next frontier's count, the node's arguments) and the node,
    // whether the level runs or not. Every level recorded (`Full`; the
    // learned bound records fewer: `tests/data_dependent/loop_bounds.rs`).
    let full = DispatchConfig::default().with_loop_bound(vyre_graph::LoopBound::Full);
    let halving = Halving::new(&gpu).expect("graph");
    let x: Vec<u32> = (0..1000u32).map(|i| i % 8).collect();
    let (_, rep) = halving.run_reported(&full, &x, &[0u32][..]).expect("run");
    assert_eq!(ran(rep.loops[0]), report(3, true));
    assert_eq!(rep.dispatches, 1 + 10 * 2);
    // Learned from that run (3 levels needed): 3 + 1 + 2 = 6 recorded,
    // then the loop's exit.
    let (_, rep) = halving
        .run_reported(&DispatchConfig::default(), &x, &[0u32][..])
        .expect("run");
    assert_eq!(ran(rep.loops[0]), report(3, true));
    assert_eq!(rep.loops[0].recorded, 6);
    assert_eq!(rep.dispatches, 1 + 6 * 2 + 1);
    // Tally: the second node's arguments join the first control dispatch;
    // the third node's count is written in the level, so it has its own.
    let tally = tally::Tally::new(&gpu).expect("graph");
    for x in [
        x.clone(),
        vec![0u32; 100],
        (0..5000u32).map(|i| i * 7919 % 1024).collect(),
        vec![1u32 << 20; 64],
    ] {
        let (out, rep) = tally
            .run_reported(&full, &x, &[0u32][..], &[0u32][..])
            .expect("run");
        let (seen, made, levels) = tally_cpu(&x, 10);
        assert_eq!((out.seen[0], out.made[0]), (seen, made), "sums");
        assert_eq!(rep.loops[0].iterations, levels);
        assert_eq!(rep.dispatches, 1 + 10 * 5);
    }
}

mod spread {
    use vyre_graph::graph;
    graph! {
        /// Every value appended to seven buffers, read, and appended again:
        /// the seven count resets before the second append need two
        /// control dispatches (one binds at most six graph buffers).
        pub struct Spread;

        kernel keep = wgsl {
            struct Out { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> h0: Out;
            @group(0) @binding(2) var<storage, read_write> h1: Out;
            @group(0) @binding(3) var<storage, read_write> h2: Out;
            @group(0) @binding(4) var<storage, read_write> h3: Out;
            @group(0) @binding(5) var<storage, read_write> h4: Out;
            @group(0) @binding(6) var<storage, read_write> h5: Out;
            @group(0) @binding(7) var<storage, read_write> h6: Out;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) {
                    let v = x[g.x];
                    let s0 = atomicAdd(&h0.count, 1u); if s0 < arrayLength(&h0.items) { h0.items[s0] = v; }
                    let s1 = atomicAdd(&h1.count, 1u); if s1 < arrayLength(&h1.items) { h1.items[s1] = v; }
                    let s2 = atomicAdd(&h2.count, 1u); if s2 < arrayLength(&h2.items) { h2.items[s2] = v; }
                    let s3 = atomicAdd(&h3.count, 1u); if s3 < arrayLength(&h3.items) { h3.items[s3] = v; }
                    let s4 = atomicAdd(&h4.count, 1u); if s4 < arrayLength(&h4.items) { h4.items[s4] = v; }
                    let s5 = atomicAdd(&h5.count, 1u); if s5 < arrayLength(&h5.items) { h5.items[s5] = v; }
                    let s6 = atomicAdd(&h6.count, 1u); if s6 < arrayLength(&h6.items) { h6.items[s6] = v; }
                }
            }
        };
        kernel read = wgsl {
            struct In { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> h0: In;
            @group(0) @binding(1) var<storage, read> h1: In;
            @group(0) @binding(2) var<storage, read> h2: In;
            @group(0) @binding(3) var<storage, read> h3: In;
            @group(0) @binding(4) var<storage, read> h4: In;
            @group(0) @binding(5) var<storage, read> h5: In;
            @group(0) @binding(6) var<storage, read> h6: In;
            @group(0) @binding(7) var<storage, read_write> acc: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(h0.count, arrayLength(&h0.items)) { atomicAdd(&acc[0], h0.items[g.x] * 1u); }
                if g.x < min(h1.count, arrayLength(&h1.items)) { atomicAdd(&acc[0], h1.items[g.x] * 2u); }
                if g.x < min(h2.count, arrayLength(&h2.items)) { atomicAdd(&acc[0], h2.items[g.x] * 3u); }
                if g.x < min(h3.count, arrayLength(&h3.items)) { atomicAdd(&acc[0], h3.items[g.x] * 4u); }
                if g.x < min(h4.count, arrayLength(&h4.items)) { atomicAdd(&acc[0], h4.items[g.x] * 5u); }
                if g.x < min(h5.count, arrayLength(&h5.items)) { atomicAdd(&acc[0], h5.items[g.x] * 6u); }
                if g.x < min(h6.count, arrayLength(&h6.items)) { atomicAdd(&acc[0], h6.items[g.x] * 7u); }
            }
        };

        input x[n];
        inout first[1];
        inout second[1];
        append intermediate h0[n];
        append intermediate h1[n];
        append intermediate h2[n];
        append intermediate h3[n];
        append intermediate h4[n];
        append intermediate h5[n];
        append intermediate h6[n];

        node keep(x: x, h0: h0, h1: h1, h2: h2, h3: h3, h4: h4, h5: h5, h6: h6) over n;
        node read(h0: h0, h1: h1, h2: h2, h3: h3, h4: h4, h5: h5, h6: h6, acc: first) over n;
        node again = keep(x: x, h0: h0, h1: h1, h2: h2, h3: h3, h4: h4, h5: h5, h6: h6) over n;
        node read_again = read(h0: h0, h1: h1, h2: h2, h3: h3, h4: h4, h5: h5, h6: h6, acc: second) over n;
    }
}

#[test]
fn seven_resets_before_one_node_take_two_control_dispatches() {
    let _serial = serial();
    let graph = spread::Spread::new(&gpu()).expect("graph");
    for n in [1usize, 100, 1000] {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 8)
            .collect();
        let (out, rep) = graph
            .run_reported(&DispatchConfig::default(), &x, &[0u32][..], &[0u32][..])
            .expect("run");
        // Each value is read once from each buffer, weighted 1 to 7.
        let want = x
            .iter()
            .fold(0u32, |a, &v| a.wrapping_add(v.wrapping_mul(28)));
        assert_eq!((out.first[0], out.second[0]), (want, want), "n = {n}");
        assert_eq!(rep.dispatches, 4 + 2);
    }
}
