//! Self-stopping loops (`repeat up to K as i until ..`,
//! `tests/data_dependent/loops.rs`): a frontier that halves until it is
//! empty and a countdown that stops when a flag stays zero, against the CPU,
//! with the `LoopReport` of every run: stopped after some of `K`
//! iterations, after none, and not stopped within `K`; with the learned
//! bound (continuations in later submissions) and with the full bound.

use crate::common::{assert_same, gpu};

use vyre_graph::{DispatchConfig, LoopBound, LoopReport};
use wasm_bindgen_test::wasm_bindgen_test;

mod halving {
    use vyre_graph::graph;
    graph! {
        /// Each level keeps `v / 2` of every `v > 1` of the frontier and adds
        /// every value it sees to `acc`; stops when the frontier is empty (at
        /// most 10 levels).
        pub struct Halving;

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

        input x[n];
        inout acc[1];
        append fa[n];
        append fb[n];

        node seed(x: x, dst: fa) over n;
        repeat up to 10 as i until empty(ping(fa, fb)) {
            node expand(src: ping(fa, fb), dst: pong(fa, fb), acc: acc) over count(ping(fa, fb));
        }
    }
}
use halving::Halving;

mod countdown {
    use vyre_graph::graph;
    graph! {
        /// Decrements every value to 0, one per iteration; the body raises
        /// `flag` while any value is left (at most 10 iterations).
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

        repeat up to 10 as i until zero(flag) {
            node dec(v: v, flag: flag) over n;
        }
    }
}
use countdown::Countdown;

fn report(iterations: u32, stopped: bool) -> LoopReport {
    let mut r = LoopReport::default();
    r.iterations = iterations;
    r.stopped = stopped;
    r
}

/// What a loop did, without how many iterations the run recorded (the
/// learned bound's choice), checked to be at least those that ran and at
/// most `K`.
fn ran(l: LoopReport) -> LoopReport {
    assert!(l.recorded >= l.iterations && l.recorded <= 10, "{l:?}");
    let mut l = l;
    l.recorded = 0;
    l
}

/// The CPU's `Halving`: the sum of every value seen and the levels that ran.
fn halving_cpu(x: &[u32], max_levels: u32) -> (u32, LoopReport) {
    let mut frontier: Vec<u32> = x.iter().copied().filter(|&v| v != 0).collect();
    let mut acc = 0u32;
    let mut levels = 0;
    while !frontier.is_empty() && levels < max_levels {
        acc = acc.wrapping_add(frontier.iter().copied().fold(0u32, u32::wrapping_add));
        frontier = frontier.iter().filter(|&&v| v > 1).map(|v| v / 2).collect();
        levels += 1;
    }
    let stopped = frontier.is_empty() && levels < max_levels || levels == 0;
    (acc, report(levels, stopped))
}

#[wasm_bindgen_test]
async fn a_frontier_loop_stops_itself_and_reports_its_levels() {
    let graph = Halving::new_async(&gpu().await).await.expect("graph");
    let cases: [Vec<u32>; 4] = [
        // Values up to 7: levels 7, 3, 1, then empty.
        (0..1000u32).map(|i| i % 8).collect(),
        // Nothing: no level.
        vec![0; 1000],
        // 5,000 halves 12 times: not empty within 10 levels.
        (0..4096u32).map(|i| 5000 + i).collect(),
        (0..4096u32).map(|i| i % 4).collect(),
    ];
    for config in [
        DispatchConfig::default(),
        DispatchConfig::default().with_loop_bound(LoopBound::Full),
    ] {
        for x in &cases {
            let (out, run) = graph
                .run_reported_async(&config, x, &[0u32][..])
                .await
                .expect("run");
            let (acc, want) = halving_cpu(x, 10);
            assert_eq!(run.loops.len(), 1);
            assert_eq!((out.acc[0], ran(run.loops[0])), (acc, want), "{config:?}");
        }
    }
}

#[wasm_bindgen_test]
async fn a_flag_left_at_zero_stops_the_countdown() {
    let graph = Countdown::new_async(&gpu().await).await.expect("graph");
    for (max, n) in [
        (3u32, 1000usize),
        (0, 64),
        (9, 5000),
        (10, 100),
        (25, 100_000),
    ] {
        let v: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (max + 1)).collect();
        let (out, run) = graph
            .run_reported_async(&DispatchConfig::default(), &v)
            .await
            .expect("run");
        // Do-while: the first iteration always runs.
        let iterations = max.clamp(1, 10);
        let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(iterations)).collect();
        assert_same(&out.v, &want, &format!("max {max}"));
        let loops: Vec<LoopReport> = run.loops.into_iter().map(ran).collect();
        assert_eq!(loops, vec![report(iterations, max < 10)], "max {max}");
    }
}
