//! A stopped loop's idle iterations run none of their body's work (only
//! their control dispatch's one invocation, which finds the loop stopped
//! and writes zero workgroups): every body node counts each of its invocations (padding lanes included) with an
//! atomic, so an iteration after the stop must add nothing, and the
//! iterations each run reports stay exact, for `K = 1` and `K = 6`, a stop
//! at the first gate, at the last one, and no stop at all; also across
//! runs of one plan (a stale argument of an earlier, longer run would show
//! up as extra invocations).

use crate::common;

use common::*;
use vyre_graph::{DispatchConfig, LoopReport};

/// One frontier graph per `K`: a level appends `v / 2` of every `v > 1`;
/// three body nodes count their invocations: `expand` (over the level's
/// frontier) in `ticks[0]`, `next` (over the count it just wrote, so its
/// arguments come from a second control dispatch of the iteration) in
/// `ticks[1]`, `fixed` (over `n`, its arguments from the gate) in
/// `ticks[2]`.
macro_rules! frontier_graph {
    ($module:ident, $name:ident, $k:literal) => {
        // The resident form is not used here.
        #[allow(dead_code)]
        mod $module {
            use vyre_graph::graph;
            graph! {
                /// Halves a frontier each level, counting every invocation.
                pub struct $name;

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
                    @group(0) @binding(2) var<storage, read_write> ticks: array<atomic<u32>>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                        atomicAdd(&ticks[0], 1u);
                        if g.x < min(src.count, arrayLength(&src.items)) {
                            let v = src.items[g.x];
                            if v > 1u {
                                let slot = atomicAdd(&dst.count, 1u);
                                if slot < arrayLength(&dst.items) { dst.items[slot] = v / 2u; }
                            }
                        }
                    }
                };
                kernel next = wgsl {
                    struct In { count: u32, items: array<u32> }
                    @group(0) @binding(0) var<storage, read> src: In;
                    @group(0) @binding(1) var<storage, read_write> ticks: array<atomic<u32>>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                        // Reads the count it runs over (nothing else to do).
                        atomicAdd(&ticks[1], 1u + src.count * 0u);
                    }
                };
                kernel fixed = wgsl {
                    @group(0) @binding(0) var<storage, read_write> ticks: array<atomic<u32>>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                        atomicAdd(&ticks[2], 1u);
                    }
                };

                input x[n];
                inout ticks[3];
                append fa[n];
                append fb[n];

                node seed(x: x, dst: fa) over n;
                repeat up to $k as i until empty(ping(fa, fb)) {
                    node expand(src: ping(fa, fb), dst: pong(fa, fb), ticks: ticks) over count(ping(fa, fb));
                    node next(src: pong(fa, fb), ticks: ticks) over count(pong(fa, fb));
                    node fixed(ticks: ticks) over n;
                }
            }
        }
    };
}

frontier_graph!(k1, FrontierK1, 1);
frontier_graph!(k6, FrontierK6, 6);

/// One do-while loop per `K`: decrements every value, raising the flag
/// while any is left; `dec` counts its invocations in `ticks[0]`.
macro_rules! countdown_graph {
    ($module:ident, $name:ident, $k:literal) => {
        // The resident form is not used here.
        #[allow(dead_code)]
        mod $module {
            use vyre_graph::graph;
            graph! {
                /// Decrements to 0, counting every invocation.
                pub struct $name;

                kernel dec = wgsl {
                    @group(0) @binding(0) var<storage, read_write> v: array<u32>;
                    @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
                    @group(0) @binding(2) var<storage, read_write> ticks: array<atomic<u32>>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                        atomicAdd(&ticks[0], 1u);
                        if g.x < arrayLength(&v) {
                            let left = max(v[g.x], 1u) - 1u;
                            v[g.x] = left;
                            if left > 0u { atomicMax(&flag[0], 1u); }
                        }
                    }
                };

                inout v[n];
                inout ticks[1];
                intermediate flag[1];

                repeat up to $k as i until zero(flag) {
                    node dec(v: v, flag: flag, ticks: ticks) over n;
                }
            }
        }
    };
}

countdown_graph!(c1, CountdownK1, 1);
countdown_graph!(c6, CountdownK6, 6);

fn report(iterations: u32, stopped: bool) -> LoopReport {
    let mut r = LoopReport::default();
    r.iterations = iterations;
    r.stopped = stopped;
    r
}

/// What the loops did, without the iterations each run recorded (the
/// learned bound's business: `tests/data_dependent/loop_bounds.rs`), which must cover
/// those that ran.
fn ran(loops: Vec<LoopReport>) -> Vec<LoopReport> {
    loops
        .into_iter()
        .map(|mut l| {
            assert!(l.recorded >= l.iterations, "{l:?}");
            l.recorded = 0;
            l
        })
        .collect()
}

/// Invocations of a dispatch over `items` at workgroup size 64.
fn lanes(items: usize) -> u32 {
    (items.div_ceil(64) * 64) as u32
}

/// The CPU's frontier loop: the ticks every running level adds, and the
/// loop's report.
fn frontier_cpu(x: &[u32], k: u32) -> ([u32; 3], LoopReport) {
    let mut frontier: Vec<u32> = x.iter().copied().filter(|&v| v != 0).collect();
    let mut ticks = [0u32; 3];
    let mut levels = 0;
    while !frontier.is_empty() && levels < k {
        let next: Vec<u32> = frontier.iter().filter(|&&v| v > 1).map(|v| v / 2).collect();
        ticks[0] += lanes(frontier.len());
        ticks[1] += lanes(next.len());
        ticks[2] += lanes(x.len());
        frontier = next;
        levels += 1;
    }
    let stopped = frontier.is_empty() && levels < k || levels == 0;
    (ticks, report(levels, stopped))
}

/// `n` values in `0..=max`, the first one `max`.
fn values(n: usize, max: u32) -> Vec<u32> {
    (0..n as u32).map(|i| (i * 7 + max) % (max + 1)).collect()
}

#[test]
fn idle_frontier_iterations_dispatch_nothing() {
    let _serial = serial();
    let g1 = k1::FrontierK1::new(&gpu()).expect("graph");
    let g6 = k6::FrontierK6::new(&gpu()).expect("graph");
    // max 0: stops at the first gate; 1: one level; 7: three levels;
    // 31: five levels, stopped by the last gate; 63: six levels, the loop
    // runs out; 5,000: never empties. Long runs first and last, so a short
    // run follows a long one on the same plan.
    for (max, n) in [
        (5000u32, 1000usize),
        (0, 1000),
        (1, 1000),
        (7, 100),
        (31, 4096),
        (5000, 65),
        (63, 1000),
        (0, 1),
        (3, 1),
        (7, 1000),
    ] {
        let x = values(n, max);
        for k in [1u32, 6] {
            let config = DispatchConfig::default();
            let ticks0 = &[0u32; 3][..];
            let (got, loops) = if k == 1 {
                let (out, rep) = g1.run_reported(&config, &x, ticks0).expect("run");
                (out.ticks, rep.loops)
            } else {
                let (out, rep) = g6.run_reported(&config, &x, ticks0).expect("run");
                (out.ticks, rep.loops)
            };
            let (ticks, want) = frontier_cpu(&x, k);
            let case = format!("K = {k}, max {max}, n = {n}");
            assert_eq!(ran(loops), vec![want], "{case}");
            assert_same(&got, &ticks, &case);
        }
    }
    let (_, stop_first) = frontier_cpu(&values(10, 0), 6);
    assert_eq!(stop_first, report(0, true));
    let (_, stop_last) = frontier_cpu(&values(4096, 31), 6);
    assert_eq!(stop_last, report(5, true));
    let (_, runs_out) = frontier_cpu(&values(1000, 63), 6);
    assert_eq!(runs_out, report(6, false));
}

#[test]
fn idle_do_while_iterations_dispatch_nothing() {
    let _serial = serial();
    let g1 = c1::CountdownK1::new(&gpu()).expect("graph");
    let g6 = c6::CountdownK6::new(&gpu()).expect("graph");
    for (max, n) in [
        (9u32, 1000usize),
        (0, 64),
        (1, 65),
        (3, 1000),
        (5, 100),
        (6, 7),
        (2, 1),
    ] {
        let v = values(n, max);
        for k in [1u32, 6] {
            let config = DispatchConfig::default();
            let (got, ticks, loops) = if k == 1 {
                let (out, rep) = g1.run_reported(&config, &v, &[0u32][..]).expect("run");
                (out.v, out.ticks, rep.loops)
            } else {
                let (out, rep) = g6.run_reported(&config, &v, &[0u32][..]).expect("run");
                (out.v, out.ticks, rep.loops)
            };
            // Do-while: the first iteration always runs; the gate after
            // the last value reached 0 stops the loop, if K leaves one.
            let iterations = max.clamp(1, k);
            let case = format!("K = {k}, max {max}, n = {n}");
            assert_eq!(
                ran(loops),
                vec![report(iterations, max.max(1) < k)],
                "{case}"
            );
            let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(iterations)).collect();
            assert_same(&got, &want, &case);
            assert_same(&ticks, &[iterations * lanes(n)], &case);
        }
    }
}

mod two {
    use vyre_graph::graph;
    graph! {
        /// A frontier loop, then a do-while loop, then a plain node: the
        /// second loop's first control dispatch never depends on the first
        /// loop having stopped.
        pub struct TwoLoops;

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
            @group(0) @binding(2) var<storage, read_write> ticks: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                atomicAdd(&ticks[0], 1u);
                if g.x < min(src.count, arrayLength(&src.items)) {
                    let v = src.items[g.x];
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
            @group(0) @binding(2) var<storage, read_write> ticks: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                atomicAdd(&ticks[1], 1u);
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };
        kernel after = wgsl {
            @group(0) @binding(0) var<storage, read_write> ticks: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                atomicAdd(&ticks[2], 1u);
            }
        };

        input x[n];
        inout v[n];
        inout ticks[3];
        append fa[n];
        append fb[n];
        intermediate flag[1];

        node seed(x: x, dst: fa) over n;
        repeat up to 6 as i until empty(ping(fa, fb)) {
            node expand(src: ping(fa, fb), dst: pong(fa, fb), ticks: ticks) over count(ping(fa, fb));
        }
        repeat up to 6 as j until zero(flag) {
            node dec(v: v, flag: flag, ticks: ticks) over n;
        }
        node after(ticks: ticks) over n;
    }
}

#[test]
fn a_second_loop_runs_after_a_first_one_stopped() {
    let _serial = serial();
    let graph = two::TwoLoops::new(&gpu()).expect("graph");
    for (xmax, vmax, n) in [
        (0u32, 3u32, 100usize),
        (3, 0, 100),
        (5000, 9, 70),
        (1, 2, 1000),
    ] {
        let x = values(n, xmax);
        let v = values(n, vmax);
        let (out, rep) = graph
            .run_reported(&DispatchConfig::default(), &x, &v, &[0u32; 3][..])
            .expect("run");
        let (frontier, first) = frontier_cpu(&x, 6);
        let iterations = vmax.clamp(1, 6);
        let case = format!("x max {xmax}, v max {vmax}, n = {n}");
        assert_eq!(
            ran(rep.loops),
            vec![first, report(iterations, vmax.max(1) < 6)],
            "{case}"
        );
        let want: Vec<u32> = v.iter().map(|a| a.saturating_sub(iterations)).collect();
        assert_same(&out.v, &want, &case);
        let ticks = [frontier[0], iterations * lanes(n), lanes(n)];
        assert_same(&out.ticks, &ticks, &case);
    }
}
