//! The measuring shared by every workload: a workload's variants run
//! interleaved in a new shuffled order every repetition ([`measure`], one
//! [`Row`]), medians, timing, deterministic inputs and JSON escaping.

use std::time::Instant;

use vyre_graph::spec::GraphSpec;
use vyre_graph::{DispatchConfig, Gpu, GridStride, RunReport};

use crate::hand::HandGraph;

pub fn random_u32(n: usize, mut seed: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 16) as u32
        })
        .collect()
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

pub fn time_ms(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e3
}

/// A shuffled order of `n` variants for repetition `rep` (deterministic).
pub fn order(n: usize, rep: usize) -> Vec<usize> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ (rep as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        order.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    order
}

/// One workload's measurements.
pub struct Row {
    pub workload: String,
    pub n: u64,
    pub nodes: usize,
    pub dispatches: usize,
    pub graph_ms: f64,
    /// The graph with `GridStride::Auto` and `GridStride::Always`.
    pub auto_ms: f64,
    pub persistent_ms: f64,
    /// The most workgroups a dispatch of the graph launches with `Auto`.
    pub worker_groups: u32,
    pub unfused_ms: f64,
    pub hand_ms: f64,
    pub naive_ms: f64,
    pub hand_fused_ms: Option<f64>,
    /// Median host time of each phase of the graph's run (µs): check, plan,
    /// bind, encode, submit, wait, copy.
    pub phases_us: [f64; 7],
    pub graph_record_us_per_node: f64,
    pub hand_record_us_per_node: f64,
    pub gpu_us_per_node: Option<f64>,
    pub hand_gpu_us_per_node: Option<f64>,
    pub steady_buffers_created: u64,
    pub steady_bind_groups_created: u64,
}

/// A graph run with a config: its output when asked for (a copy, outside
/// the timed runs) and the run's report.
pub type GraphRun<'a> = dyn Fn(&[u32], bool, &DispatchConfig) -> (Option<Vec<u32>>, RunReport) + 'a;

/// A workload: the graph's `run`, its spec for the baselines, one input and
/// the expected output.
pub struct Workload<'a> {
    pub name: &'a str,
    pub n: u64,
    pub spec: &'a GraphSpec,
    pub input: &'a [u32],
    pub expected: &'a [u32],
    pub run_graph: &'a GraphRun<'a>,
    /// The same graph without its fused groups.
    pub unfused: &'a vyre_graph::Graph,
    /// The chain written by hand as one looping kernel, where there is one.
    pub hand_fused: Option<&'a HandGraph>,
}

/// `spec` without its fused groups: every node its own dispatch.
pub fn unfused(spec: &GraphSpec) -> GraphSpec {
    GraphSpec {
        fused: std::borrow::Cow::Borrowed(&[]),
        loops: std::borrow::Cow::Borrowed(&[]),
        ..spec.clone()
    }
}

pub fn measure(gpu: &Gpu, w: &Workload<'_>, reps: usize) -> Row {
    let nodes = w.spec.nodes.len();
    let hand = HandGraph::new(gpu, w.spec, w.n);
    let input: &[u8] = bytemuck::cast_slice(w.input);
    let mut out = vec![0u32; w.expected.len()];

    let plain = DispatchConfig::default();
    let (graph_out, _) = (w.run_graph)(w.input, true, &plain);
    assert_eq!(
        graph_out.as_deref(),
        Some(w.expected),
        "{}: graph! result differs from the CPU",
        w.name
    );
    hand.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)]);
    assert_eq!(
        out, w.expected,
        "{}: hand result differs from the CPU",
        w.name
    );
    out.fill(0);
    hand.run_naive(&[input], &mut [bytemuck::cast_slice_mut(&mut out)]);
    assert_eq!(
        out, w.expected,
        "{}: naive result differs from the CPU",
        w.name
    );
    let run_unfused = |out: &mut [u32]| {
        w.unfused
            .run(
                &plain,
                w.n,
                &[vyre_graph::Feed::Host(input)],
                &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(out))],
            )
            .expect("unfused run")
    };
    out.fill(0);
    run_unfused(&mut out);
    assert_eq!(
        out, w.expected,
        "{}: unfused graph result differs from the CPU",
        w.name
    );
    if let Some(fused) = w.hand_fused {
        out.fill(0);
        fused.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)]);
        assert_eq!(out, w.expected, "{}: hand fused result differs", w.name);
    }

    let before = gpu.counters();
    let _ = (w.run_graph)(w.input, false, &plain);
    let steady = gpu.counters().since(&before);

    let (mut g, mut h, mut s, mut rec) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut u, mut hf) = (Vec::new(), Vec::new());
    let (mut auto, mut persistent) = (Vec::new(), Vec::new());
    let auto_config = DispatchConfig::default().with_grid_stride(GridStride::Auto);
    let always = DispatchConfig::default().with_grid_stride(GridStride::Always);
    for config in [&auto_config, &always] {
        let (got, _) = (w.run_graph)(w.input, true, config);
        assert_eq!(got.as_deref(), Some(w.expected), "{}: {config:?}", w.name);
    }
    let mut phases: [Vec<f64>; 7] = Default::default();
    let mut variants = vec![0, 1, 2, 3, 5, 6];
    if w.hand_fused.is_some() {
        variants.push(4);
    }
    let mut dispatches = nodes;
    let mut worker_groups = 0;
    for rep in 0..reps {
        // A new shuffled order every repetition, so that each variant runs
        // in every position and after every other variant alike (`naive`'s
        // many waits let clocks drop for whatever follows it).
        for k in order(variants.len(), rep) {
            match variants[k] {
                0 => g.push(time_ms(|| {
                    let (_, report) = (w.run_graph)(w.input, false, &plain);
                    rec.push(report.record_ns as f64 / 1e3 / nodes as f64);
                    let p = report.phases;
                    let values = [
                        p.check_ns,
                        p.plan_ns,
                        p.bind_ns,
                        p.encode_ns,
                        p.submit_ns,
                        p.wait_ns,
                        p.copy_ns,
                    ];
                    for (v, list) in values.iter().zip(&mut phases) {
                        list.push(*v as f64 / 1e3);
                    }
                    dispatches = w.unfused.spec().nodes.len() + w.spec.fused.len()
                        - w.spec.fused.iter().map(|g| g.nodes.len()).sum::<usize>();
                })),
                1 => h.push(time_ms(|| {
                    hand.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])
                })),
                2 => s.push(time_ms(|| {
                    hand.run_naive(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])
                })),
                3 => u.push(time_ms(|| {
                    run_unfused(&mut out);
                })),
                5 => auto.push(time_ms(|| {
                    let (_, report) = (w.run_graph)(w.input, false, &auto_config);
                    worker_groups = report.plan.worker_groups;
                })),
                6 => persistent.push(time_ms(|| {
                    let _ = (w.run_graph)(w.input, false, &always);
                })),
                _ => hf.push(time_ms(|| {
                    if let Some(fused) = w.hand_fused {
                        fused.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)]);
                    }
                })),
            }
        }
    }
    Row {
        workload: w.name.to_string(),
        n: w.n,
        nodes,
        dispatches,
        graph_ms: median(&mut g),
        auto_ms: median(&mut auto),
        persistent_ms: median(&mut persistent),
        worker_groups,
        unfused_ms: median(&mut u),
        hand_ms: median(&mut h),
        naive_ms: median(&mut s),
        hand_fused_ms: w.hand_fused.map(|_| median(&mut hf)),
        phases_us: phases.map(|mut v| median(&mut v)),
        graph_record_us_per_node: median(&mut rec),
        hand_record_us_per_node: hand.record_ns_per_node(20) / 1e3,
        gpu_us_per_node: {
            let profile = DispatchConfig::default().with_profile(true);
            let mut ns: Vec<f64> = (0..9)
                .filter_map(|_| (w.run_graph)(w.input, false, &profile).1.gpu_ns)
                .map(|ns| ns as f64)
                .collect();
            (!ns.is_empty()).then(|| median(&mut ns) / 1e3 / nodes as f64)
        },
        hand_gpu_us_per_node: hand.gpu_ns_per_node(gpu, &[input]).map(|ns| ns / 1e3),
        steady_buffers_created: steady.buffers_created,
        steady_bind_groups_created: steady.bind_groups_created,
    }
}

pub fn json_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
