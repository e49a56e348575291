//! Append buffers and `over count(..)` on the GPU: a filter appends the
//! even values of its input, a second node runs once per appended item
//! (dispatched indirectly from the count, on the device). Every result is
//! checked element by element against the CPU: counts 0, 1, exactly the
//! capacity and over it (an error, then the same graph runs again), and an
//! indirect size that needs a folded grid (> 65,535 workgroups).

use crate::common;

use common::*;
use vyre_graph::{BackendError, graph};

mod evens {
    use super::*;
    graph! {
        /// Keeps the even values of `x` (up to `n / 4`), then doubles each kept
        /// value in a node sized by the count.
        pub struct Evens;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel double = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let items = min(hits.count, arrayLength(&hits.items));
                if g.x < items { out[g.x] = hits.items[g.x] * 2u + 1u; }
            }
        };

        input x[n];
        append hits[n / 4];
        output doubled[n / 4];

        node keep(x: x, hits: hits) over n;
        node double(hits: hits, out: doubled) over count(hits);
    }
}
use evens::Evens;

mod wide {
    use super::*;
    graph! {
        /// One item per invocation of a one-invocation workgroup: 65,536 items
        /// need a folded indirect grid.
        pub struct Wide;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 3u != 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel mark = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> seen: array<u32>;
            @compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(hits.count, arrayLength(&hits.items)) {
                    seen[g.x] = hits.items[g.x] * 3u + 1u;
                }
            }
        };

        input x[n];
        append hits[n];
        output seen[n];

        node keep(x: x, hits: hits) over n;
        node mark(hits: hits, seen: seen) over count(hits);
    }
}
use wide::Wide;

/// The CPU's kept values, sorted.
fn evens(x: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
    v.sort_unstable();
    v
}

/// Runs `Evens` on `x` and checks the items (any order) and the doubled
/// values (in the items' order) against the CPU.
fn check_evens(graph: &Evens, x: &[u32]) -> usize {
    let out = graph.run(x).expect("run");
    let want = evens(x);
    let mut got = out.hits.clone();
    got.sort_unstable();
    assert_same(&got, &want, "appended items");
    assert_eq!(out.doubled.len(), x.len().div_ceil(4));
    for (i, item) in out.hits.iter().enumerate() {
        assert_eq!(out.doubled[i], item * 2 + 1, "doubled[{i}]");
    }
    out.hits.len()
}

/// `n` values with exactly `even` even ones, spread out.
fn with_evens(n: usize, even: usize) -> Vec<u32> {
    let step = n / even.max(1);
    (0..n)
        .map(|i| {
            let wanted = even > 0 && i % step.max(1) == 0 && i / step.max(1) < even;
            (i as u32) * 2 + u32::from(!wanted)
        })
        .collect()
}

#[test]
fn append_counts_zero_one_and_exactly_the_capacity() {
    let _serial = serial();
    let graph = Evens::new(&gpu()).expect("graph");
    let n = 1000; // capacity 250
    assert_eq!(check_evens(&graph, &with_evens(n, 0)), 0);
    assert_eq!(check_evens(&graph, &with_evens(n, 1)), 1);
    assert_eq!(check_evens(&graph, &with_evens(n, 250)), 250);
    assert_eq!(check_evens(&graph, &with_evens(n, 17)), 17);
    // The count starts at 0 every run: the same run twice gives the same.
    assert_eq!(check_evens(&graph, &with_evens(n, 17)), 17);
}

#[test]
fn append_over_the_capacity_is_an_error_and_the_graph_runs_again() {
    let _serial = serial();
    let graph = Evens::new(&gpu()).expect("graph");
    let n = 1000;
    let err = match graph.run(&with_evens(n, 251)) {
        Ok(_) => panic!("one item too many must be an error"),
        Err(e) => e,
    };
    match &err {
        BackendError::AppendOverflow {
            buffer,
            count,
            capacity,
            ..
        } => {
            assert_eq!(buffer, "hits");
            assert_eq!((*count, *capacity), (251, 250));
        }
        other => panic!("expected AppendOverflow, got {other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("hits") && message.contains("251") && message.contains("250"),
        "{message}"
    );
    assert!(
        message.contains("grow"),
        "the message names the fix: {message}"
    );
    // Every value even: far over.
    let all: Vec<u32> = (0..n as u32).map(|i| i * 2).collect();
    assert!(matches!(
        graph.run(&all),
        Err(BackendError::AppendOverflow {
            count: 1000,
            capacity: 250,
            ..
        })
    ));
    // The same graph, the same size: right again.
    assert_eq!(check_evens(&graph, &with_evens(n, 100)), 100);
    assert_eq!(graph.graph().cached_plans(), 1, "the plan was kept");
}

#[test]
fn indirect_dispatch_over_zero_one_and_many_items() {
    let _serial = serial();
    let graph = Evens::new(&gpu()).expect("graph");
    for (n, even) in [(4, 0), (4, 1), (64, 16), (4096, 1000), (100_000, 25_000)] {
        let x = with_evens(n, even);
        assert_eq!(check_evens(&graph, &x), even, "n = {n}");
    }
    let plan = graph.graph().plan(&Default::default(), 4096).expect("plan");
    assert_eq!(
        plan.hit_capacity, 1024,
        "the plan's hit capacity is the append capacity"
    );
}

#[test]
fn indirect_dispatch_folds_past_65535_workgroups() {
    let _serial = serial();
    let graph = Wide::new(&gpu()).expect("graph");
    // One invocation per workgroup: items > 65,535 need a folded grid.
    // Kept items: 65,535 (the last unfolded grid), 65,536, 65,537, 200,000.
    for (n, kept) in [
        (98_303, 65_535),
        (98_305, 65_536),
        (98_306, 65_537),
        (300_000, 200_000),
    ] {
        let x: Vec<u32> = (0..n as u32).collect();
        let out = graph.run(&x).expect("run");
        assert_eq!(x.iter().filter(|v| *v % 3 != 0).count(), kept);
        assert_eq!(out.hits.len(), kept);
        let mut got = out.hits.clone();
        got.sort_unstable();
        let want: Vec<u32> = x.iter().copied().filter(|v| v % 3 != 0).collect();
        assert_same(&got, &want, "kept items");
        // Every invocation of the folded indirect grid saw its own item.
        let marked: Vec<u32> = out.hits.iter().map(|v| v * 3 + 1).collect();
        assert_same(&out.seen[..kept], &marked, "one invocation per item");
    }
}

mod growing {
    use super::*;
    graph! {
        /// `Evens` whose append buffer grows on overflow.
        pub struct Growing;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };

        input x[n];
        append hits[n / 4] grow;

        node keep(x: x, hits: hits) over n;
    }
}
use growing::Growing;

#[test]
fn grow_repeats_an_overflowing_run_once_and_keeps_the_grown_plan() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Growing::new(&gpu).expect("graph");
    let n = 1000;
    // Within the capacity: no growth.
    let x = with_evens(n, 200);
    assert_same(
        &sorted(graph.run(&x).expect("run").hits),
        &evens(&x),
        "items",
    );
    // 600 even values, capacity 250: the run grows and repeats.
    let x = with_evens(n, 600);
    let (out, report) = graph
        .run_reported(&Default::default(), &x)
        .expect("a grown run");
    assert_same(&sorted(out.hits), &evens(&x), "items after growing");
    assert!(report.plan.hit_capacity >= 600, "{:?}", report.plan);
    // The plan for this n kept the grown capacity: no overflow, no new plan.
    let before = gpu.counters();
    let (out, report) = graph.run_reported(&Default::default(), &x).expect("run");
    assert_same(&sorted(out.hits), &evens(&x), "items, grown plan");
    assert!(report.cache_hit);
    assert_eq!(gpu.counters().since(&before).submissions, 1, "no repeat");
    // Every value even: grows again, past the declared n / 4.
    let all: Vec<u32> = (0..n as u32).map(|i| i * 2).collect();
    assert_same(
        &sorted(graph.run(&all).expect("run").hits),
        &all,
        "all kept",
    );
    // Resident outputs carry the grown buffer and its count.
    let resident = graph.run_resident(&all).expect("resident");
    assert!(resident.hits.size() >= 4 + 4 * n as u64);
    // Another size is not affected.
    let small = with_evens(64, 16);
    assert_same(
        &sorted(graph.run(&small).expect("run").hits),
        &evens(&small),
        "n = 64",
    );
}

mod growing_pair {
    use super::*;
    graph! {
        /// Two `grow` buffers filled by one node: the even values and the
        /// odd ones, each declared far too small.
        pub struct GrowingPair;

        kernel split = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> evens: Hits;
            @group(0) @binding(2) var<storage, read_write> odds: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) {
                    let v = x[g.x];
                    if v % 2u == 0u {
                        let slot = atomicAdd(&evens.count, 1u);
                        if slot < arrayLength(&evens.items) { evens.items[slot] = v; }
                    } else {
                        let slot = atomicAdd(&odds.count, 1u);
                        if slot < arrayLength(&odds.items) { odds.items[slot] = v; }
                    }
                }
            }
        };

        input x[n];
        append evens[n / 8] grow;
        append odds[16] grow;

        node split(x: x, evens: evens, odds: odds) over n;
    }
}
use growing_pair::GrowingPair;

/// Found by the differential run (vyre-diff, seed 58): when one run
/// overflowed several `grow` buffers, only the one the error named grew,
/// so the typed `run`'s one repeat overflowed the next and failed.
#[test]
fn one_repeat_fits_every_grow_buffer_that_overflowed() {
    let _serial = serial();
    let gpu = gpu();
    let graph = GrowingPair::new(&gpu).expect("graph");
    for n in [100usize, 1000, 4097] {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let before = gpu.counters();
        let out = graph.run(&x).expect("both grow, and the repeat fits");
        assert_eq!(
            gpu.counters().since(&before).submissions,
            2,
            "the run and one repeat at n = {n}"
        );
        let want =
            |odd: u32| -> Vec<u32> { sorted(x.iter().copied().filter(|v| v % 2 == odd).collect()) };
        assert_same(&sorted(out.evens), &want(0), &format!("evens at {n}"));
        assert_same(&sorted(out.odds), &want(1), &format!("odds at {n}"));
        // Grown for this size: the next run fits at once.
        let before = gpu.counters();
        graph.run(&x).expect("grown");
        assert_eq!(gpu.counters().since(&before).submissions, 1, "n = {n}");
    }
    // The untyped API: one run, `grew_for`, one repeat.
    let x: Vec<u32> = (0..5000u32).collect();
    let g = graph.graph();
    let run = || {
        let mut out: Vec<Vec<u8>> = (0..2)
            .map(|b| {
                vec![
                    0u8;
                    g.buffer_bytes(g.spec().host_outputs().nth(b).unwrap_or(0), 5000)
                        .unwrap_or(0) as usize
                ]
            })
            .collect();
        let mut sinks: Vec<vyre_graph::Sink<'_>> =
            out.iter_mut().map(|o| vyre_graph::Sink::Host(o)).collect();
        let feeds = [vyre_graph::Feed::Host(vyre_graph::bytemuck::cast_slice(&x))];
        g.run(&Default::default(), 5000, &feeds, &mut sinks)
            .map(|_| ())
    };
    let first = run().expect_err("both overflow");
    assert!(g.grew_for(&first, 5000), "{first}");
    run().expect("one repeat fits both");
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

#[test]
fn a_steady_state_append_run_allocates_nothing() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Evens::new(&gpu).expect("graph");
    let x = with_evens(4096, 300);
    let mut outputs = evens::EvensOutputs::default();
    graph
        .run_into(&Default::default(), &mut outputs, &x)
        .expect("first run plans");
    let before = gpu.counters();
    for _ in 0..3 {
        graph
            .run_into(&Default::default(), &mut outputs, &x)
            .expect("run");
        assert_eq!(outputs.hits.len(), 300);
    }
    let spent = gpu.counters().since(&before);
    assert_eq!(spent.buffers_created, 0, "{spent:?}");
    assert_eq!(spent.bind_groups_created, 0, "{spent:?}");
    assert_eq!(spent.submissions, 3, "{spent:?}");
}

mod chained {
    use super::*;
    graph! {
        /// Appends the multiples of 5 of `x`; the result stays resident.
        pub struct Produce;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 5u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };

        input x[n];
        append hits[n];

        node keep(x: x, hits: hits) over n;
    }

    graph! {
        /// Squares each item of another graph's resident append output, in
        /// a node sized by its count.
        pub struct Consume;

        kernel square = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(hits.count, arrayLength(&hits.items)) {
                    out[g.x] = hits.items[g.x] * hits.items[g.x];
                }
            }
        };

        input hits[n];
        output out[n];

        node square(hits: hits, out: out) over count(hits);
    }
}

#[test]
fn a_resident_count_chains_into_another_graph() {
    let _serial = serial();
    let gpu = gpu();
    let produce = chained::Produce::new(&gpu).expect("produce");
    let consume = chained::Consume::new(&gpu).expect("consume");
    for n in [5usize, 1000, 70_000] {
        let x: Vec<u32> = (0..n as u32).map(|i| i * 3 + 7).collect();
        let resident = produce.run_resident(&x).expect("produce");
        let out = consume.run(&resident.hits).expect("consume");
        let kept: Vec<u32> = x.iter().copied().filter(|v| v % 5 == 0).collect();
        // The count travelled on the device: the consumer ran once per item.
        let mut got: Vec<u32> = out.out[..kept.len()].to_vec();
        got.sort_unstable();
        let mut want: Vec<u32> = kept.iter().map(|v| v.wrapping_mul(*v)).collect();
        want.sort_unstable();
        assert_same(&got, &want, &format!("n = {n}"));
    }
    // Zero items: the consumer launches no workgroup, and that is no error.
    let none = vec![1u32; 64];
    let resident = produce.run_resident(&none).expect("produce");
    assert_eq!(consume.run(&resident.hits).expect("consume").out.len(), 64);
}

mod indirect_grid {
    use super::*;
    graph! {
        /// A node writes a grid; the next runs on it (`grid indirect`).
        pub struct GridFrom;

        kernel plan = wgsl {
            @group(0) @binding(0) var<storage, read> want: array<u32>;
            @group(0) @binding(1) var<storage, read_write> args: array<u32>;
            @compute @workgroup_size(1)
            fn main() {
                args[0] = want[0]; args[1] = want[1]; args[2] = want[2];
            }
        };
        kernel fill = wgsl {
            @group(0) @binding(0) var<storage, read_write> out: array<atomic<u32>>;
            @compute @workgroup_size(1)
            fn main() { atomicAdd(&out[0], 1u); }
        };

        input want[3];
        intermediate args[3];
        inout out[1];

        node plan(want: want, args: args) grid [1, 1, 1];
        node fill(out: out) grid indirect(args);
    }
}

#[test]
fn grid_indirect_runs_the_written_grid_and_reports_one_over_the_limit() {
    let _serial = serial();
    let graph = indirect_grid::GridFrom::new(&gpu()).expect("graph");
    for want in [[0u32, 1, 1], [1, 1, 1], [3, 2, 5], [70, 1, 1]] {
        let out = graph.run(&want[..], &[0u32][..]).expect("run");
        assert_eq!(out.out, [want.iter().product::<u32>()], "{want:?}");
    }
    let err = match graph.run(&[70_000u32, 1, 1][..], &[0u32][..]) {
        Ok(_) => panic!("a grid past the device limit must be an error"),
        Err(e) => e,
    };
    assert!(
        matches!(
            err,
            BackendError::GridTooLarge {
                workgroups: 70_000,
                max: 65_535,
                ..
            }
        ),
        "{err}"
    );
    let out = graph
        .run(&[2u32, 2, 2][..], &[0u32][..])
        .expect("run again");
    assert_eq!(out.out, [8]);
}

/// Hand-built specs: a node over the count of a buffer without one, and a
/// fused group holding a device-sized node, are refused by `Graph::new`.
#[test]
fn hand_built_specs_misusing_counts_are_refused() {
    use std::borrow::Cow;
    use vyre_graph::spec::{DispatchSize, Extent, FusedGroup};
    let _serial = serial();
    let gpu = gpu();
    let spec = |size: DispatchSize| {
        graph_spec(
            "counted",
            vec![unary("copy", MUL3_ADD1)],
            vec![
                buffer("x", vyre_graph::spec::BufferClass::Input, 4, Extent::N),
                buffer("y", vyre_graph::spec::BufferClass::Output, 4, Extent::N),
            ],
            vec![node("copy", 0, &[(0, 0, 0), (0, 1, 1)], size)],
        )
    };
    let err = vyre_graph::Graph::new(&gpu, spec(DispatchSize::Count(0))).expect_err("no count");
    assert!(err.to_string().contains("no header to hold one"), "{err}");
    let err = vyre_graph::Graph::new(&gpu, spec(DispatchSize::Count(7))).expect_err("no buffer");
    assert!(err.to_string().contains("does not exist"), "{err}");
    let mut fused = spec(DispatchSize::Indirect(0));
    let member = fused.nodes[0].clone();
    fused.nodes = Cow::Owned(vec![member.clone(), member.clone()]);
    fused.fused = Cow::Owned(vec![FusedGroup {
        nodes: Cow::Owned(vec![0, 1]),
        dispatch: member,
        grid_stride_entry: None,
    }]);
    let err = vyre_graph::Graph::new(&gpu, fused).expect_err("fused indirect");
    assert!(err.to_string().contains("never fuse"), "{err}");
}

const KEEP_ALL: &str = "
    struct Hits { count: atomic<u32>, items: array<u32> }
    @group(0) @binding(0) var<storage, read> x: array<u32>;
    @group(0) @binding(1) var<storage, read_write> hits: Hits;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
        let i = g.x + g.y * nwg.x * 64u;
        if i < arrayLength(&x) {
            let slot = atomicAdd(&hits.count, 1u);
            if slot < arrayLength(&hits.items) { hits.items[slot] = x[i]; }
        }
    }";

const COPY_ITEMS_X_ONLY: &str = "
    struct HitsIn { count: u32, items: array<u32> }
    @group(0) @binding(0) var<storage, read> hits: HitsIn;
    @group(0) @binding(1) var<storage, read_write> out: array<u32>;
    @compute @workgroup_size(1)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        if g.x < min(hits.count, arrayLength(&hits.items)) { out[g.x] = hits.items[g.x]; }
    }";

/// A hand-built kernel that may index with `g.x` alone (`GridFold::XOnly`)
/// run `over count(..)`: a count that needs a folded grid launches nothing
/// and is `GridNotFoldable` after the run, never a silently partial result;
/// below the fold point it runs, on the same graph.
#[test]
fn a_count_past_the_fold_point_of_an_x_only_kernel_is_reported() {
    use vyre_graph::spec::{AppendSpec, BufferClass, DispatchSize, Extent, GridFold};
    let _serial = serial();
    let mut keep = kernel(
        "keep",
        KEEP_ALL,
        [64, 1, 1],
        &[read("x", 0, 0, 4), read_write("hits", 0, 1, 4)],
    );
    keep.fold = GridFold::Linear;
    let copy = kernel(
        "copy",
        COPY_ITEMS_X_ONLY,
        [1, 1, 1],
        &[read("hits", 0, 0, 4), write("out", 0, 1, 4)],
    );
    let mut hits = buffer("hits", BufferClass::Output, 4, Extent::N);
    hits.header_bytes = 4;
    hits.append = Some(AppendSpec::default());
    let spec = graph_spec(
        "x_only_count",
        vec![keep, copy],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            hits,
            buffer("out", BufferClass::Output, 4, Extent::N),
        ],
        vec![
            node("keep", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N),
            node("copy", 1, &[(0, 0, 1), (0, 1, 2)], DispatchSize::Count(1)),
        ],
    );
    let graph = vyre_graph::Graph::new(&gpu(), spec).expect("graph");
    let run = |n: usize| {
        let x: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5a5a).collect();
        let mut hits = vec![0u32; n + 1];
        let mut out = vec![0u32; n];
        let result = graph.run(
            &vyre_graph::DispatchConfig::default(),
            n as u64,
            &[vyre_graph::Feed::Host(bytes(&x))],
            &mut [
                vyre_graph::Sink::Host(bytes_mut(&mut hits)),
                vyre_graph::Sink::Host(bytes_mut(&mut out)),
            ],
        );
        (result, x, hits, out)
    };
    let (result, x, hits, out) = run(65_535);
    result.expect("65,535 workgroups: no fold");
    assert_eq!(hits[0], 65_535);
    let mut got = out.clone();
    got.sort_unstable();
    let mut want = x.clone();
    want.sort_unstable();
    assert_same(&got, &want, "copied items");
    assert_same(&out, &hits[1..], "in append order");
    match run(65_536).0 {
        Err(BackendError::GridNotFoldable {
            node, workgroups, ..
        }) => {
            assert_eq!(node, "copy");
            assert_eq!(workgroups, 65_536);
        }
        other => panic!("expected GridNotFoldable, got {other:?}"),
    }
    run(1000).0.expect("and the graph runs again");
}

mod consume {
    use super::*;
    graph! {
        /// Two appenders accumulate; a reader consumes; the next append
        /// starts from 0.
        pub struct Consume;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            override DIV: u32 = 2u;
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % DIV == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel tally = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> seen: array<u32>;
            @compute @workgroup_size(1)
            fn main() { seen[0] = hits.count; }
        };

        input x[n];
        append hits[2 * n];
        output seen[1];

        node twos = keep(x: x, hits: hits) over n with { DIV = 2 };
        node threes = keep(x: x, hits: hits) over n with { DIV = 3 };
        node tally(hits: hits, seen: seen) grid [1, 1, 1];
        node fives = keep(x: x, hits: hits) over n with { DIV = 5 };
    }
}

#[test]
fn appenders_accumulate_until_a_reader_consumes_the_buffer() {
    let _serial = serial();
    let graph = consume::Consume::new(&gpu()).expect("graph");
    for n in [1usize, 30, 1000] {
        let x: Vec<u32> = (0..n as u32).collect();
        let out = graph.run(&x).expect("run");
        let count = |d: u32| x.iter().filter(|v| *v % d == 0).count() as u32;
        assert_eq!(
            out.seen,
            [count(2) + count(3)],
            "n = {n}: two appenders accumulate"
        );
        let mut got = out.hits.clone();
        got.sort_unstable();
        let want: Vec<u32> = x.iter().copied().filter(|v| v % 5 == 0).collect();
        assert_same(&got, &want, "after the reader, the append starts from 0");
    }
}

#[test]
fn async_and_recorded_runs_check_the_counts_too() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Evens::new(&gpu).expect("graph");
    let config = vyre_graph::DispatchConfig::default();
    // Async: an overflow is the future's error; then a right run.
    let over = pollster::block_on(graph.run_async(&config, &with_evens(1000, 251)));
    assert!(
        matches!(
            over,
            Err(BackendError::AppendOverflow {
                count: 251,
                capacity: 250,
                ..
            })
        ),
        "{over:?}"
    );
    let x = with_evens(1000, 40);
    let out = pollster::block_on(graph.run_async(&config, &x)).expect("async run");
    let mut got = out.hits.clone();
    got.sort_unstable();
    assert_same(&got, &evens(&x), "async items");
    // Recorded into the caller's encoder: `read` checks the status.
    let outputs = graph.resident_outputs(&config, 1000).expect("outputs");
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let x = with_evens(1000, 300);
    let recorded = graph
        .record(&mut encoder, &config, &outputs, &x)
        .expect("record");
    let submission = gpu.queue().submit([encoder.finish()]);
    let read = recorded.read(
        submission,
        &mut [vyre_graph::Sink::Skip, vyre_graph::Sink::Skip],
    );
    assert!(
        matches!(read, Err(BackendError::AppendOverflow { count: 300, .. })),
        "{read:?}"
    );
    // A resident output holds the count, then the items.
    let x = with_evens(1000, 7);
    let resident = graph.run_resident(&x).expect("resident");
    let bytes = resident.hits.read(&gpu).expect("read");
    assert_eq!(bytes.len(), 4 + 4 * 250);
    assert_eq!(
        u32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes")),
        7
    );
}

mod hidden {
    use super::*;
    graph! {
        /// `Evens` with the kept values on the device alone (`append
        /// intermediate`): the doubled values and the count come back.
        pub struct Hidden;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel double = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let items = min(hits.count, arrayLength(&hits.items));
                if g.x < items { out[g.x] = hits.items[g.x] * 2u + 1u; }
            }
        };
        kernel tally = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> kept: array<u32>;
            @compute @workgroup_size(1)
            fn main() { kept[0] = min(hits.count, arrayLength(&hits.items)); }
        };

        input x[n];
        append intermediate hits[n / 4];
        output doubled[n / 4];
        output kept[1];

        node keep(x: x, hits: hits) over n;
        node double(hits: hits, out: doubled) over count(hits);
        node tally(hits: hits, kept: kept) over 1;
    }
}
mod hidden_grow {
    use super::*;
    graph! {
        /// `Hidden` whose device-only buffer grows on overflow.
        pub struct HiddenGrow;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel double = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let items = min(hits.count, arrayLength(&hits.items));
                if g.x < items { out[g.x] = hits.items[g.x] * 2u + 1u; }
            }
        };

        input x[n];
        append intermediate hits[n / 4] grow;
        output doubled[n];

        node keep(x: x, hits: hits) over n;
        node double(hits: hits, out: doubled) over count(hits);
    }
}
use hidden::Hidden;
use hidden_grow::HiddenGrow;

/// The CPU's doubled kept values, sorted.
fn doubled_evens(x: &[u32]) -> Vec<u32> {
    evens(x).iter().map(|v| v * 2 + 1).collect()
}

/// Runs `Hidden` on `x` and checks the count and the doubled values (any
/// order) against the CPU; returns the count.
fn check_hidden(graph: &Hidden, x: &[u32]) -> usize {
    let out = graph.run(x).expect("run");
    let want = doubled_evens(x);
    assert_eq!(out.kept, vec![want.len() as u32], "the device-side count");
    assert_eq!(out.doubled.len(), x.len().div_ceil(4));
    assert_same(
        &sorted(out.doubled[..want.len()].to_vec()),
        &want,
        "doubled kept values",
    );
    want.len()
}

#[test]
fn a_device_only_append_buffer_drives_over_count_and_is_never_read_back() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Hidden::new(&gpu).expect("graph");
    let n = 1000; // capacity 250
    for even in [0, 1, 17, 250] {
        assert_eq!(check_hidden(&graph, &with_evens(n, even)), even);
    }
    // Not an output: nothing of it is read back.
    let outputs = &graph.graph().spec().buffers;
    let hits = outputs.iter().find(|b| b.name == "hits").expect("hits");
    assert_eq!(hits.class, vyre_graph::spec::BufferClass::Intermediate);
    assert!(hits.append.is_some());
    // The steady state allocates nothing.
    let x = with_evens(n, 17);
    check_hidden(&graph, &x);
    let before = gpu.counters();
    check_hidden(&graph, &x);
    let steady = gpu.counters().since(&before);
    assert_eq!((steady.buffers_created, steady.bind_groups_created), (0, 0));
}

#[test]
fn a_device_only_append_buffer_overflows_then_runs_again() {
    let _serial = serial();
    let graph = Hidden::new(&gpu()).expect("graph");
    let n = 1000;
    match graph.run(&with_evens(n, 251)) {
        Err(BackendError::AppendOverflow {
            buffer,
            count,
            capacity,
            ..
        }) => {
            assert_eq!(buffer, "hits");
            assert_eq!((count, capacity), (251, 250));
        }
        Err(other) => panic!("expected AppendOverflow, got {other}"),
        Ok(_) => panic!("one item too many must be an error"),
    }
    // The same graph, the same size: right again.
    assert_eq!(check_hidden(&graph, &with_evens(n, 250)), 250);
    assert_eq!(check_hidden(&graph, &with_evens(n, 3)), 3);
}

#[test]
fn a_device_only_append_buffer_grows() {
    let _serial = serial();
    let graph = HiddenGrow::new(&gpu()).expect("graph");
    let n = 1000;
    for even in [10, 600, 1000, 5] {
        let x = if even == 1000 {
            (0..n as u32).map(|i| i * 2).collect()
        } else {
            with_evens(n, even)
        };
        let (out, report) = graph
            .run_reported(&Default::default(), &x)
            .expect("run, growing when over");
        let want = doubled_evens(&x);
        assert_same(
            &sorted(out.doubled[..want.len()].to_vec()),
            &want,
            "doubled kept values",
        );
        assert!(report.plan.hit_capacity >= want.len() as u64);
    }
}

mod bulk {
    use super::*;
    graph! {
        /// Keeps the first `p.keep` values of `x`, 64 per invocation with one
        /// atomic each (cheap for tens of millions of items), and adds
        /// `p.extra` to the count, as if that many more had been appended.
        pub struct Bulk;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            struct Params { keep: u32, extra: u32 }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<uniform> p: Params;
            @group(0) @binding(2) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x == 0u && p.extra != 0u { atomicAdd(&hits.count, p.extra); }
                let end = min(p.keep, arrayLength(&x));
                let start = g.x * 64u;
                if start >= end { return; }
                let take = min(64u, end - start);
                let slot = atomicAdd(&hits.count, take);
                let room = arrayLength(&hits.items);
                for (var i = 0u; i < take; i++) {
                    // No `slot + i`: near 2^32 it would wrap into the buffer.
                    if slot < room && i < room - slot { hits.items[slot + i] = x[start + i]; }
                }
            }
        };

        input x[n];
        uniform p;
        append hits[n / 4] grow;

        node keep(x: x, p: p, hits: hits) over n / 64;
    }
}
use bulk::{Bulk, Params as BulkParams};

/// `hits` holds each of `0..kept` exactly once, in any order.
fn assert_kept(hits: &[u32], kept: usize, what: &str) {
    assert_eq!(hits.len(), kept, "{what}: items");
    let mut seen = vec![0u8; kept];
    for &v in hits {
        match seen.get_mut(v as usize) {
            Some(s) => *s += 1,
            None => panic!("{what}: item {v} was never kept"),
        }
    }
    if let Some(v) = seen.iter().position(|&s| s != 1) {
        panic!("{what}: item {v} appears {} times", seen[v]);
    }
}

/// A count that even the device's largest buffer cannot hold, in a `grow`
/// buffer: an overflow naming the limit, nothing grown, and the same size
/// runs right afterwards.
fn check_unholdable_count(graph: &Bulk, x: &[u32]) {
    let n = x.len();
    let count = 4_000_000_000u32;
    let huge = BulkParams {
        keep: 1000,
        extra: count - 1000,
    };
    let err = match graph.run(x, &huge) {
        Err(e) => e,
        Ok(_) => panic!("n = {n}: a count of 4e9 cannot be held"),
    };
    let binding = gpu().limits().max_storage_buffer_binding_size;
    match &err {
        BackendError::AppendOverflow {
            buffer,
            count: c,
            limit: Some((limit, max)),
            ..
        } => {
            assert_eq!((buffer.as_str(), *c), ("hits", u64::from(count)));
            assert!(limit.contains("max_storage_buffer_binding_size"), "{limit}");
            assert_eq!(*max, binding);
        }
        other => panic!("n = {n}: expected AppendOverflow naming the limit, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("max_storage_buffer_binding_size") && message.contains("4000000000"),
        "{message}"
    );
    let b = graph.graph().spec().buffer_index("hits").expect("hits");
    let grown = graph.graph().buffer_bytes(b, n as u64).expect("bytes");
    assert!(grown <= binding, "nothing grew past the limit: {grown}");
    let few = BulkParams {
        keep: 1000,
        extra: 0,
    };
    let out = graph.run(x, &few).expect("the same size, 1000 items");
    assert_kept(&out.hits, 1000, "after the 4e9 count");
}

#[test]
fn grow_is_clamped_to_the_device_limit_and_a_failed_grow_breaks_nothing() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Bulk::new(&gpu).expect("graph");
    // A count no buffer can hold, on a fresh plan.
    let x: Vec<u32> = (0..1000).collect();
    check_unholdable_count(&graph, &x);
    // Every value kept at n = 29,360,121: the count (117,440,488 bytes with
    // the header) fits the 128 MiB binding limit, a quarter more does not;
    // the growth stops at the limit and the repeated run succeeds.
    let n = 29_360_121usize;
    let binding = gpu.limits().max_storage_buffer_binding_size;
    assert!(4 + 4 * n as u64 <= binding && 4 + 5 * n as u64 > binding);
    let x: Vec<u32> = (0..n as u32).collect();
    let all = BulkParams {
        keep: n as u32,
        extra: 0,
    };
    let out = graph
        .run(&x, &all)
        .expect("every value kept, grown to the limit");
    assert_kept(&out.hits, n, "every value kept");
    let b = graph.graph().spec().buffer_index("hits").expect("hits");
    let grown = graph.graph().buffer_bytes(b, n as u64).expect("bytes");
    assert!(grown <= binding && grown >= 4 + 4 * n as u64, "{grown}");
    // The grown plan serves the same size again, with few items or all.
    let few = BulkParams {
        keep: 1000,
        extra: 0,
    };
    assert_kept(
        &graph.run(&x, &few).expect("1000 kept").hits,
        1000,
        "1000 kept",
    );
    assert_kept(
        &graph.run(&x, &all).expect("all again").hits,
        n,
        "all again",
    );
    // And a count of 4e9 at this size leaves it as it was.
    check_unholdable_count(&graph, &x);
    assert_kept(
        &graph.run(&x, &all).expect("all at last").hits,
        n,
        "all at last",
    );
}

#[test]
fn grow_stays_within_the_runs_memory_budget() {
    let _serial = serial();
    let graph = Bulk::new(&gpu()).expect("graph");
    let n = 1000; // capacity 250
    let x: Vec<u32> = (0..n as u32).collect();
    let peak = graph
        .graph()
        .plan(&Default::default(), n as u64)
        .expect("plan")
        .estimated_peak_device_bytes;
    // Room for 150 more items, each in `hits` and in its readback buffer.
    let budget = peak + 150 * 4 * 2;
    let config = vyre_graph::DispatchConfig::default().with_device_memory_budget_bytes(budget);
    let keep = |keep: u32| BulkParams { keep, extra: 0 };
    // 380 items: a quarter more would be 475, the budget allows 400.
    let out = graph
        .run_with(&config, &x, &keep(380))
        .expect("grown within the budget");
    assert_kept(&out.hits, 380, "380 kept");
    let b = graph.graph().spec().buffer_index("hits").expect("hits");
    assert_eq!(
        graph.graph().buffer_bytes(b, n as u64).expect("bytes"),
        4 + 4 * 400
    );
    let plan = graph.graph().plan(&config, n as u64).expect("plan");
    assert!(plan.estimated_peak_device_bytes <= budget, "{plan:?}");
    // 401 items do not fit: an overflow naming the budget, nothing grown.
    match graph.run_with(&config, &x, &keep(401)) {
        Err(BackendError::AppendOverflow {
            count: 401,
            capacity: 400,
            limit: Some((limit, max)),
            ..
        }) => {
            assert!(limit.contains("device_memory_budget_bytes"), "{limit}");
            assert_eq!(max, budget);
        }
        other => panic!("expected AppendOverflow naming the budget, got {other:?}"),
    }
    assert_eq!(
        graph.graph().buffer_bytes(b, n as u64).expect("bytes"),
        4 + 4 * 400
    );
    // The same size, the same budget: right again, from the kept plan.
    let (out, report) = graph
        .run_reported(&config, &x, &keep(400))
        .expect("400 kept");
    assert_kept(&out.hits, 400, "400 kept");
    assert!(report.cache_hit);
}

/// A stream of 8 runs at depth 3 (with the runs really in flight together,
/// `StreamDepth::Asked`, and as the adapter picks) at a new size whose
/// append output must grow, with a count that rises from run to run:
/// every run that overflowed its capacity, the ones already in flight
/// included, runs again after the growth, so every run returns its items
/// (checked against the CPU) and none an `AppendOverflow`.
#[test]
fn a_stream_whose_append_output_grows_returns_every_run() {
    let _serial = serial();
    let gpu = gpu();
    let depths = [
        vyre_graph::StreamDepth::Asked,
        vyre_graph::StreamDepth::Auto,
    ];
    for (k, depth) in depths.into_iter().enumerate() {
        let graph = Growing::new(&gpu).expect("graph");
        let n = 4000 + k;
        // Declared capacity n / 4 = 1000: each run holds more than the last.
        let xs: Vec<Vec<u32>> = (0..8).map(|r| with_evens(n, 1100 + 100 * r)).collect();
        let inputs: Vec<&[u32]> = xs.iter().map(Vec::as_slice).collect();
        let config = vyre_graph::DispatchConfig::default().with_stream_depth(depth);
        let ran = graph.run_many(&config, 3, &inputs);
        assert_eq!(ran.len(), 8);
        for (r, (result, x)) in ran.into_iter().zip(&xs).enumerate() {
            let out = result.unwrap_or_else(|e| panic!("{depth:?}, run {r}: {e}"));
            assert_same(&sorted(out.hits), &evens(x), &format!("{depth:?}, run {r}"));
        }
        // The untyped stream with host slices sized for the declared
        // capacity cannot take the grown size: its overflow is kept.
        let x = with_evens(n + 8, 1500);
        let b = graph.graph().spec().host_outputs().next().expect("hits");
        let declared = graph
            .graph()
            .buffer_bytes(b, (n + 8) as u64)
            .expect("bytes");
        assert!(
            declared < 4 * 1500,
            "{declared} bytes hold fewer than 1,500 items"
        );
        let mut hits = vec![0u8; declared as usize];
        let mut one = [vyre_graph::Instance::new(
            (n + 8) as u64,
            vec![vyre_graph::Feed::Host(bytemuck::cast_slice(&x))],
            vec![vyre_graph::Sink::Host(&mut hits)],
        )];
        let ran = graph.graph().run_many(&config, 3, &mut one);
        assert!(
            matches!(
                &ran[0],
                Err(BackendError::BatchInstance { source, .. })
                    if matches!(**source, BackendError::AppendOverflow { count: 1500, .. })
            ),
            "{:?}",
            ran[0]
        );
    }
}
