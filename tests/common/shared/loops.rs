//! `Halving` (a frontier that halves until empty) and `Countdown` (stops
//! on a zero flag), self-stopping loops, with the CPU's `Halving` and the
//! loop reports the loop tests of both suites expect
//! (`tests/data_dependent/loops.rs`, `vyre-web/tests/browser/loops.rs`).

use vyre_graph::LoopReport;

pub mod halving {
    use vyre_graph::graph;
    graph! {
        /// A frontier of values: each level keeps `v / 2` of every `v > 1`,
        /// and adds every value it sees to `acc`; stops when the frontier is
        /// empty (at most 10 levels).
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
pub use halving::Halving;

pub mod countdown {
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
pub use countdown::Countdown;

/// The CPU's `Halving`: the sum of every value seen and the levels that ran.
pub fn halving_cpu(x: &[u32], max_levels: u32) -> (u32, LoopReport) {
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

pub fn report(iterations: u32, stopped: bool) -> LoopReport {
    let mut r = LoopReport::default();
    r.iterations = iterations;
    r.stopped = stopped;
    r
}

/// What a loop did, without how many iterations the run recorded (which
/// the learned bound decides: `tests/data_dependent/loop_bounds.rs`), checked here to be
/// at least the iterations that ran and at most `K`.
pub fn ran(l: LoopReport) -> LoopReport {
    assert!(l.recorded >= l.iterations && l.recorded <= 10, "{l:?}");
    let mut l = l;
    l.recorded = 0;
    l
}
