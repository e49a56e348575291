//! Batched runs (`Graph::run_batch` and the typed `run_batch`): stacked
//! graphs as one run over `B × n`, other graphs as recorded copies in one
//! submission, splits at the device's and the config's limits, mixed sizes,
//! errors naming the instance, and every output checked element by element
//! against the CPU.

use crate::common;

use common::{gpu, serial};
use vyre_graph::{BackendError, DispatchConfig, Feed, Graph, Instance, Sink, graph};

use crate::shared::batches::{Chain, Evens};

mod countdown {
    use super::graph;
    graph! {
        /// Decrements every value to 0, one per iteration (at most 10).
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

// Run untyped here: its typed argument trait goes unused.
#[allow(dead_code)]
mod triples {
    use super::graph;
    graph! {
        /// An element-wise step over 12-byte structs: stackable, and its
        /// instances start at any multiple of 12 bytes.
        pub struct Triples;

        kernel mix = wgsl {
            struct Tri { a: u32, b: u32, c: u32 }
            @group(0) @binding(0) var<storage, read> src: array<Tri>;
            @group(0) @binding(1) var<storage, read_write> dst: array<Tri>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&src) {
                    let t = src[g.x];
                    dst[g.x] = Tri(t.b + 1u, t.c * 3u, t.a ^ t.b);
                }
            }
        };

        input src[n];
        output dst[n];

        node mix(src: src, dst: dst) over n;
    }
}
use triples::Triples;

fn lcg(x: u32) -> u32 {
    x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

/// One instance's data: `x`, `z` in, and the CPU's `(y, z)` out.
struct Case {
    x: Vec<u32>,
    z: Vec<u32>,
    y_out: Vec<u32>,
    z_out: Vec<u32>,
}

impl Case {
    fn new(n: usize, seed: u32) -> Self {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| lcg(i ^ seed.wrapping_mul(7919)))
            .collect();
        let z: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(seed + 3)).collect();
        Case {
            x,
            z,
            y_out: Vec::new(),
            z_out: Vec::new(),
        }
    }

    fn want(&self) -> (Vec<u32>, Vec<u32>) {
        let y: Vec<u32> = self.x.iter().map(|&v| lcg(lcg(v))).collect();
        let z = self.z.iter().zip(&y).map(|(z, y)| z ^ y).collect();
        (y, z)
    }

    fn check(&self, what: &str) {
        let (y, z) = self.want();
        assert_same(&self.y_out, &y, &format!("{what}: y"));
        assert_same(&self.z_out, &z, &format!("{what}: z"));
    }
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

/// The untyped instances of `cases`.
fn instances(cases: &mut [Case]) -> Vec<Instance<'_>> {
    cases
        .iter_mut()
        .map(|c| {
            let Case {
                x, z, y_out, z_out, ..
            } = c;
            Instance::new(
                x.len() as u64,
                vec![
                    Feed::Host(bytemuck::cast_slice(x)),
                    Feed::Host(bytemuck::cast_slice(z)),
                ],
                // Outputs in declaration order: `z` (inout), then `y`.
                vec![Sink::from(z_out), Sink::from(y_out)],
            )
        })
        .collect()
}

fn run_cases(
    graph: &Graph,
    cases: &mut [Case],
    config: &DispatchConfig,
) -> vyre_graph::BatchReport {
    let mut batch = instances(cases);
    let report = graph.run_batch(config, &mut batch).expect("batch");
    drop(batch);
    for (i, run) in report.runs.iter().enumerate() {
        assert!(run.is_ok(), "instance {i}: {run:?}");
    }
    for (i, c) in cases.iter().enumerate() {
        c.check(&format!("instance {i}"));
    }
    report
}

#[test]
fn the_chain_is_stackable_and_the_append_and_loop_graphs_are_not() {
    assert!(Chain::SPEC.schedule.expect("schedule").stackable);
    assert!(!Evens::SPEC.schedule.expect("schedule").stackable);
    assert!(!Countdown::SPEC.schedule.expect("schedule").stackable);
}

#[test]
fn batches_of_1_2_and_many_stack_into_one_run_each() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let config = DispatchConfig::default();
    for b in [1usize, 2, 37] {
        let mut cases: Vec<Case> = (0..b).map(|i| Case::new(1000, i as u32)).collect();
        let before = gpu.counters();
        let report = run_cases(graph.graph(), &mut cases, &config);
        assert_eq!(report.stacked, b);
        assert_eq!(report.chunks, 1, "B = {b}");
        assert_eq!(report.submissions, 1, "B = {b}");
        assert_eq!(gpu.counters().since(&before).submissions, 1, "B = {b}");
        // Each stacked instance's report has its own size.
        for run in &report.runs {
            assert_eq!(run.as_ref().expect("run").n, 1000);
        }
    }
}

#[test]
fn a_stacked_run_past_65535_workgroups_folds_and_every_element_is_right() {
    // 64 instances of n = 65,535 fill exactly 65,535 workgroups of 64; of
    // n = 65,537, two workgroups past it, so the stacked run's grid folds
    // (each instance alone would not).
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let config = DispatchConfig::default();
    for n in [65_535usize, 65_537] {
        let mut cases: Vec<Case> = (0..64).map(|i| Case::new(n, 11 + i as u32)).collect();
        let report = run_cases(graph.graph(), &mut cases, &config);
        assert_eq!(report.stacked, 64, "n = {n}");
        assert_eq!(report.submissions, 1, "n = {n}");
    }
}

#[test]
fn a_steady_batch_allocates_nothing() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let config = DispatchConfig::default();
    let mut cases: Vec<Case> = (0..16).map(|i| Case::new(1024, i)).collect();
    run_cases(graph.graph(), &mut cases, &config);
    let mut cases: Vec<Case> = (0..16).map(|i| Case::new(1024, i + 100)).collect();
    let before = gpu.counters();
    let report = run_cases(graph.graph(), &mut cases, &config);
    let spent = gpu.counters().since(&before);
    assert_eq!(spent.buffers_created, 0, "{spent:?}");
    assert_eq!(spent.bind_groups_created, 0, "{spent:?}");
    assert_eq!(spent.submissions, 1);
    assert!(report.runs[0].as_ref().expect("run").cache_hit);
}

#[test]
fn mixed_sizes_stack_by_size_in_order() {
    let _serial = serial();
    let graph = Chain::new(&gpu()).expect("graph");
    let sizes = [1usize, 64, 1000, 64, 4097, 1000, 1];
    let mut cases: Vec<Case> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| Case::new(n, i as u32))
        .collect();
    let report = run_cases(graph.graph(), &mut cases, &DispatchConfig::default());
    assert_eq!(report.chunks, 4, "one stacked run per size");
    assert_eq!(report.stacked, sizes.len());
    // Each instance's report has its own size, not its stacked run's.
    for (run, &n) in report.runs.iter().zip(&sizes) {
        assert_eq!(run.as_ref().expect("run").n, n as u64);
    }
}

#[test]
fn a_read_back_limit_splits_the_batch_into_the_largest_chunks_that_fit() {
    let _serial = serial();
    let graph = Chain::new(&gpu()).expect("graph");
    let n = 1000usize;
    // `y` and `z` read back: 8n bytes per instance; 3 instances fit.
    let config = DispatchConfig::default().with_max_output_bytes(3 * 8 * n as u64);
    let mut cases: Vec<Case> = (0..16).map(|i| Case::new(n, i)).collect();
    let report = run_cases(graph.graph(), &mut cases, &config);
    assert_eq!(report.chunks, 6, "16 instances, 3 per chunk");
    assert_eq!(report.submissions, 6);
    assert_eq!(report.stacked, 16);
    // Exactly at the limit: one chunk.
    let mut cases: Vec<Case> = (0..3).map(|i| Case::new(n, i + 50)).collect();
    assert_eq!(run_cases(graph.graph(), &mut cases, &config).chunks, 1);
}

#[test]
fn a_memory_budget_splits_the_batch_and_never_fails_on_the_device() {
    let _serial = serial();
    let graph = Chain::new(&gpu()).expect("graph");
    let n = 4096u64;
    let one = graph
        .graph()
        .plan(&DispatchConfig::default(), n)
        .expect("plan")
        .estimated_peak_device_bytes;
    let config = DispatchConfig::default().with_device_memory_budget_bytes(4 * one);
    let mut cases: Vec<Case> = (0..20).map(|i| Case::new(n as usize, i)).collect();
    let report = run_cases(graph.graph(), &mut cases, &config);
    assert!(
        report.chunks >= 5,
        "20 instances, at most 4 per chunk: {report:?}"
    );
    assert_eq!(report.stacked, 20);
}

#[test]
fn a_zero_sized_instance_has_empty_outputs_and_the_others_run() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let mut cases = vec![Case::new(100, 1), Case::new(0, 3), Case::new(100, 2)];
    // Stale contents the empty instance must clear.
    cases[1].y_out = vec![7; 3];
    cases[1].z_out = vec![7; 5];
    let report = run_cases(graph.graph(), &mut cases, &DispatchConfig::default());
    assert!(cases[1].y_out.is_empty() && cases[1].z_out.is_empty());
    let sizes: Vec<u64> = report
        .runs
        .iter()
        .map(|r| r.as_ref().map_or(u64::MAX, |r| r.n))
        .collect();
    assert_eq!(sizes, [100, 0, 100]);
    assert_eq!(report.runs[1].as_ref().map(|r| r.submissions).ok(), Some(0));
}

#[test]
fn a_wrong_length_feed_is_named_before_anything_runs() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let mut cases = vec![Case::new(100, 1), Case::new(100, 2)];
    cases[1].z.pop();
    let before = gpu.counters();
    let mut batch = instances(&mut cases);
    let err = graph
        .graph()
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect_err("a short feed");
    drop(batch);
    assert!(
        matches!(err, BackendError::BatchInstance { index: 1, .. }),
        "{err:?}"
    );
    // As docs/batches.md shows it.
    assert_eq!(
        err.to_string(),
        "instance 1 of the batch: `z` must hold 400 bytes for problem size 100 but has 396; size it as the graph declares; fix that instance (its problem size, feeds or sinks) and run the batch again"
    );
    assert_eq!(gpu.counters().since(&before).submissions, 0);
    cases[1] = Case::new(100, 2);
    run_cases(graph.graph(), &mut cases, &DispatchConfig::default());
}

#[test]
fn instances_sharing_a_resident_input_run_as_recorded_copies() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let g = graph.graph();
    let n = 777usize;
    let shared = Case::new(n, 9);
    let handle = vyre_graph::GpuBufferHandle::from_slice(&gpu, &shared.x).expect("handle");
    let mut cases: Vec<Case> = (0..5)
        .map(|i| {
            let mut c = Case::new(n, 20 + i);
            c.x.clone_from(&shared.x);
            c
        })
        .collect();
    let config = DispatchConfig::default();
    for round in 0..2 {
        let before = gpu.counters();
        let mut batch: Vec<Instance<'_>> = cases
            .iter_mut()
            .map(|c| {
                Instance::new(
                    n as u64,
                    vec![
                        Feed::Device(&handle),
                        Feed::Host(bytemuck::cast_slice(&c.z)),
                    ],
                    vec![Sink::from(&mut c.z_out), Sink::from(&mut c.y_out)],
                )
            })
            .collect();
        let report = g.run_batch(&config, &mut batch).expect("batch");
        drop(batch);
        assert_eq!(report.stacked, 0);
        assert_eq!(report.chunks, 1);
        assert_eq!(report.submissions, 1);
        for run in &report.runs {
            assert!(run.is_ok(), "{run:?}");
        }
        for (i, c) in cases.iter().enumerate() {
            c.check(&format!("round {round}, instance {i}"));
        }
        let spent = gpu.counters().since(&before);
        assert_eq!(spent.submissions, 1);
        if round == 1 {
            // Five plans of one size, kept from the first round.
            assert_eq!(spent.buffers_created, 0, "{spent:?}");
        }
    }
}

#[test]
fn append_outputs_in_a_batch_keep_each_instance_s_own_count() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Evens::new(&gpu).expect("graph");
    let sizes = [1000usize, 64, 1000, 3, 1000];
    let xs: Vec<Vec<u32>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (0..n as u32)
                .map(|i| lcg(i + k as u32 * 31) >> (k * 3))
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
    let report = graph
        .graph()
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    assert_eq!(report.stacked, 0);
    assert_eq!(report.chunks, 1);
    for (k, (x, got)) in xs.iter().zip(&mut hits).enumerate() {
        assert!(report.runs[k].is_ok(), "{:?}", report.runs[k]);
        let mut want: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_same(got, &want, &format!("instance {k}"));
    }
}

#[test]
fn loops_in_a_batch_report_each_instance_s_own_iterations() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    let cases: Vec<(u32, usize)> = vec![(3, 1000), (0, 64), (9, 5000), (25, 100), (1, 64)];
    let vs: Vec<Vec<u32>> = cases
        .iter()
        .map(|&(max, n)| (0..n as u32).map(|i| (i * 7) % (max + 1)).collect())
        .collect();
    let mut outs: Vec<Vec<u32>> = vec![Vec::new(); vs.len()];
    let mut batch: Vec<Instance<'_>> = vs
        .iter()
        .zip(&mut outs)
        .map(|(v, o)| {
            Instance::new(
                v.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(v))],
                vec![Sink::from(o)],
            )
        })
        .collect();
    let report = graph
        .graph()
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    assert_eq!(report.chunks, 1);
    for (k, (v, got)) in vs.iter().zip(&outs).enumerate() {
        let run = report.runs[k].as_ref().expect("run");
        let max = v.iter().copied().max().unwrap_or(0);
        let iterations = max.clamp(1, 10);
        let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(iterations)).collect();
        assert_same(got, &want, &format!("instance {k}"));
        assert_eq!(run.loops.len(), 1);
        assert_eq!(run.loops[0].iterations, iterations, "instance {k}");
        assert_eq!(run.loops[0].stopped, max < 10, "instance {k}");
    }
}

#[test]
fn the_typed_batch_matches_single_runs() {
    let _serial = serial();
    let graph = Chain::new(&gpu()).expect("graph");
    let cases: Vec<Case> = [5usize, 1000, 5, 300]
        .iter()
        .enumerate()
        .map(|(i, &n)| Case::new(n, i as u32))
        .collect();
    let inputs: Vec<(&[u32], &[u32])> = cases.iter().map(|c| (&c.x[..], &c.z[..])).collect();
    let outputs = graph
        .run_batch(&DispatchConfig::default(), &inputs)
        .expect("typed batch");
    assert_eq!(outputs.len(), cases.len());
    for (i, (c, out)) in cases.iter().zip(&outputs).enumerate() {
        let (y, z) = c.want();
        assert_same(&out.y, &y, &format!("typed instance {i}: y"));
        assert_same(&out.z, &z, &format!("typed instance {i}: z"));
    }
    // An error names the instance.
    let short = &cases[1].z[..10];
    let bad = vec![(&cases[0].x[..], &cases[0].z[..]), (&cases[1].x[..], short)];
    let err = graph
        .run_batch(&DispatchConfig::default(), &bad)
        .expect_err("a short input");
    assert!(
        matches!(err, BackendError::BatchInstance { index: 1, .. }),
        "{err:?}"
    );
}

#[test]
fn recorded_copies_split_at_the_plan_cache_s_capacity() {
    let _serial = serial();
    let gpu = gpu();
    // Room for 2 plans: 5 instances run as 2 + 2 + 1, each chunk one
    // submission.
    let graph = Graph::with_cache_capacity(&gpu, Evens::SPEC, 2).expect("graph");
    let xs: Vec<Vec<u32>> = (0..5u32)
        .map(|k| (0..300u32).map(|i| lcg(i * 3 + k)).collect())
        .collect();
    let mut hits: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut batch: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut hits)
        .map(|(x, h)| {
            Instance::new(
                300,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(h)],
            )
        })
        .collect();
    let before = gpu.counters();
    let report = graph
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    drop(batch);
    assert_eq!(report.chunks, 3);
    assert_eq!(
        gpu.counters().since(&before).submissions,
        u64::from(report.submissions)
    );
    for (k, (x, got)) in xs.iter().zip(&mut hits).enumerate() {
        assert!(report.runs[k].is_ok(), "{:?}", report.runs[k]);
        let mut want: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_same(got, &want, &format!("instance {k}"));
    }
}

/// Sizes that cross the staging threshold (256 KiB per input of the stacked
/// run) and the parallel-copy threshold (1 MiB), odd sizes whose instances
/// start at any word, and B = 1, 2, 37: every element of every instance
/// checked, uploaded straight into the plan's upload path and read straight
/// out of the mapped read-back.
#[test]
fn stacked_runs_upload_and_read_each_instance_in_place_at_every_threshold() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let config = DispatchConfig::default();
    // n = 65,536 x B = 16: 4 MiB per input (staged, split over threads);
    // n = 3000 x 37: 433 KiB (staged, one thread); n = 1, 3, 1000: small.
    let cases = [
        (1usize, 1usize),
        (1, 37),
        (3, 2),
        (3, 37),
        (1000, 1),
        (1000, 37),
        (3000, 37),
        (65_536, 16),
        (65_537, 2),
    ];
    for (n, b) in cases {
        for round in 0..2u32 {
            let mut cases: Vec<Case> = (0..b)
                .map(|i| Case::new(n, i as u32 * 31 + round))
                .collect();
            let report = run_cases(graph.graph(), &mut cases, &config);
            assert_eq!(report.stacked, b, "n = {n}, B = {b}");
            assert_eq!(report.submissions, 1, "n = {n}, B = {b}");
        }
    }
}

/// Host-slice sinks and vector sinks mixed in one stacked batch, with an
/// output skipped by some instances: each instance's part lands in its own
/// sink, the skipped parts nowhere.
#[test]
fn stacked_sinks_of_every_kind_receive_their_own_part() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let config = DispatchConfig::default();
    for n in [3usize, 1000, 70_000] {
        let cases: Vec<Case> = (0..5).map(|i| Case::new(n, i + 7)).collect();
        let mut ys: Vec<Vec<u32>> = vec![vec![0; n]; cases.len()];
        let mut zs: Vec<Vec<u32>> = vec![Vec::new(); cases.len()];
        let mut batch: Vec<Instance<'_>> = cases
            .iter()
            .zip(ys.iter_mut().zip(zs.iter_mut()))
            .enumerate()
            .map(|(i, (c, (y, z)))| {
                let z_sink = if i % 2 == 0 {
                    Sink::from(z)
                } else {
                    Sink::Skip
                };
                Instance::new(
                    n as u64,
                    vec![
                        Feed::Host(bytemuck::cast_slice(&c.x)),
                        Feed::Host(bytemuck::cast_slice(&c.z)),
                    ],
                    vec![z_sink, Sink::Host(bytemuck::cast_slice_mut(y))],
                )
            })
            .collect();
        let report = graph.graph().run_batch(&config, &mut batch).expect("batch");
        drop(batch);
        assert_eq!(report.stacked, cases.len());
        for (i, c) in cases.iter().enumerate() {
            let (y, z) = c.want();
            assert_same(&ys[i], &y, &format!("n = {n}, instance {i}: y"));
            if i % 2 == 0 {
                assert_same(&zs[i], &z, &format!("n = {n}, instance {i}: z"));
            } else {
                assert!(zs[i].is_empty(), "instance {i} skipped z");
            }
        }
    }
}

/// 12-byte elements, n = 1, 3, 1000 and 30,000 (past the staging
/// threshold at B = 37), B = 1, 2, 37: each instance's bytes start where
/// the one before ends, at no particular alignment.
#[test]
fn stacked_struct_elements_of_odd_counts_land_in_place() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Triples::new(&gpu).expect("graph");
    assert!(Triples::SPEC.schedule.expect("schedule").stackable);
    let config = DispatchConfig::default();
    for n in [1usize, 3, 1000, 30_000] {
        for b in [1usize, 2, 37] {
            let xs: Vec<Vec<[u32; 3]>> = (0..b)
                .map(|i| {
                    (0..n as u32)
                        .map(|j| {
                            let s = lcg(j ^ (i as u32 * 977));
                            [s, lcg(s), lcg(lcg(s))]
                        })
                        .collect()
                })
                .collect();
            let mut ys: Vec<Vec<[u32; 3]>> = vec![vec![[0; 3]; n]; b];
            let mut batch: Vec<Instance<'_>> = xs
                .iter()
                .zip(ys.iter_mut())
                .map(|(x, y)| {
                    Instance::new(
                        n as u64,
                        vec![Feed::Host(bytemuck::cast_slice(x))],
                        vec![Sink::Host(bytemuck::cast_slice_mut(y))],
                    )
                })
                .collect();
            let report = graph.graph().run_batch(&config, &mut batch).expect("batch");
            drop(batch);
            assert_eq!(report.stacked, b, "n = {n}, B = {b}");
            for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
                let want: Vec<u32> = x
                    .iter()
                    .flat_map(|t| [t[1].wrapping_add(1), t[2].wrapping_mul(3), t[0] ^ t[1]])
                    .collect();
                let got: Vec<u32> = y.iter().flatten().copied().collect();
                assert_same(&got, &want, &format!("n = {n}, B = {b}, instance {i}"));
            }
        }
    }
}
