//! Holds `graph!` against hand-written wgpu and per-node submission.
//!
//! ```sh
//! cargo run --release --example graph_bench -- [--quick] [--json PATH]
//! ```
//!
//! For each workload, these variants run the same WGSL, interleaved in a
//! shuffled order each repetition so that drift affects all alike, and the
//! medians are reported:
//! - **graph**: the `graph!` type's steady-state `run` (plan cached), with
//!   its element-wise nodes fused at compile time;
//! - **graph unfused**: the same `SPEC` with its fused groups removed, one
//!   dispatch per node;
//! - **hand**: plain wgpu, everything made once, one encoder, one compute
//!   pass, one dispatch per node, one submission ([`hand::HandGraph::run`]);
//! - **naive**: the same, with one submission and one wait per node;
//! - **hand fused** (chain64 only): the 64 steps written by hand as one
//!   kernel that loops, the limit automatic fusion should reach;
//! - **graph auto** and **graph persistent**: the graph with
//!   `GridStride::Auto` (a fused group whose plain grid has more than
//!   `Gpu::grid_stride_workgroups` workgroups runs as a grid-stride loop on
//!   that many) and `GridStride::Always` (every fused group loops);
//!   **graph** itself runs the default, `GridStride::Never` (every fused
//!   group on its plain grid, one workgroup per `workgroup_size` elements).
//!
//! Environment options:
//! - `GRAPH_BENCH_PROBE=1`: compare the unfused graph with hand phase by
//!   phase (chain64); `GRAPH_BENCH_PROBE=radix`: the radix sort's typed
//!   `run_into` against untyped `Graph::run` calls on the same graph object
//!   and on a second graph of the same spec, phase by phase, and the typed
//!   API's own host work per run (`GRAPH_BENCH_PROBE_N` sets the size,
//!   default 1,048,576);
//! - `GRAPH_BENCH_ASYNC=1`: two graphs in flight at once against one after
//!   the other;
//! - `GRAPH_BENCH_STRIDE=1`: grid-stride launches only: chain64 and the
//!   image pipeline of `examples/image_pipeline.rs` at several sizes, each
//!   run with `GridStride::Never`, `Auto`, `Always` and fixed workgroup
//!   counts (`GRAPH_BENCH_STRIDE_WORKGROUPS=8,64,512` to choose them),
//!   interleaved, with host and GPU medians; `--json PATH` writes them.
//!
//! The `bfs` workload (`bfs_bench.rs`) holds a different pair against each
//! other: **graph** (breadth-first search as one `graph!` whose loop stops
//! itself on the device) and **host loop** (the same kernels with one
//! submission and one readback of the frontier size per level).
//!
//! Every variant's output is checked against a CPU reference first. Also
//! measured: the plan-cache hit time, the CPU time to record a node, the GPU
//! time per node (timestamp queries, where the adapter has them), and that a
//! steady-state run creates no buffer and no bind group.

mod bfs_bench;
mod hand;

#[path = "../bfs/graph.rs"]
#[allow(dead_code)]
mod bfs;

#[path = "../radix_sort/graph.rs"]
#[allow(dead_code)]
mod radix;

#[path = "../image_pipeline.rs"]
#[allow(dead_code)]
mod image;

mod stride;

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

use hand::HandGraph;
use vyre_graph::plan::{
    BatchDispatchPlan, BatchDispatchPlanCache, LaunchRecommendation, PlanConfig,
};
use vyre_graph::spec::GraphSpec;
use vyre_graph::{DispatchConfig, Gpu, GridStride, RunReport, graph};

graph! {
    /// A chain of 64 dependent LCG steps.
    pub struct Chain64;

    kernel step = file "examples/kernels/chain_step.wgsl";

    input x[n];
    intermediate a[n];
    intermediate b[n];
    output y[n];

    node first = step(src: x, dst: a) over n;
    repeat 62 as i {
        node mid = step(src: ping(a, b), dst: pong(a, b)) over n;
    }
    node last = step(src: a, dst: y) over n;
}

graph! {
    /// Eight independent chains of eight salted steps, joined at the end.
    pub struct Wide8x8;

    kernel salt = file "examples/kernels/chain_salt.wgsl";
    kernel join4 = file "examples/kernels/join4.wgsl";
    kernel join2 = file "examples/kernels/join2.wgsl";

    input x[n];
    intermediate p0[n]; intermediate q0[n];
    intermediate p1[n]; intermediate q1[n];
    intermediate p2[n]; intermediate q2[n];
    intermediate p3[n]; intermediate q3[n];
    intermediate p4[n]; intermediate q4[n];
    intermediate p5[n]; intermediate q5[n];
    intermediate p6[n]; intermediate q6[n];
    intermediate p7[n]; intermediate q7[n];
    intermediate left[n];
    intermediate right[n];
    output y[n];

    node c0 = salt(src: x, dst: p0) over n with { SALT = 1 };
    repeat 7 as i { node c0s = salt(src: ping(p0, q0), dst: pong(p0, q0)) over n with { SALT = 1 }; }
    node c1 = salt(src: x, dst: p1) over n with { SALT = 2 };
    repeat 7 as i { node c1s = salt(src: ping(p1, q1), dst: pong(p1, q1)) over n with { SALT = 2 }; }
    node c2 = salt(src: x, dst: p2) over n with { SALT = 3 };
    repeat 7 as i { node c2s = salt(src: ping(p2, q2), dst: pong(p2, q2)) over n with { SALT = 3 }; }
    node c3 = salt(src: x, dst: p3) over n with { SALT = 4 };
    repeat 7 as i { node c3s = salt(src: ping(p3, q3), dst: pong(p3, q3)) over n with { SALT = 4 }; }
    node c4 = salt(src: x, dst: p4) over n with { SALT = 5 };
    repeat 7 as i { node c4s = salt(src: ping(p4, q4), dst: pong(p4, q4)) over n with { SALT = 5 }; }
    node c5 = salt(src: x, dst: p5) over n with { SALT = 6 };
    repeat 7 as i { node c5s = salt(src: ping(p5, q5), dst: pong(p5, q5)) over n with { SALT = 6 }; }
    node c6 = salt(src: x, dst: p6) over n with { SALT = 7 };
    repeat 7 as i { node c6s = salt(src: ping(p6, q6), dst: pong(p6, q6)) over n with { SALT = 7 }; }
    node c7 = salt(src: x, dst: p7) over n with { SALT = 8 };
    repeat 7 as i { node c7s = salt(src: ping(p7, q7), dst: pong(p7, q7)) over n with { SALT = 8 }; }

    node jl = join4(a: q0, b: q1, c: q2, d: q3, out: left) over n;
    node jr = join4(a: q4, b: q5, c: q6, d: q7, out: right) over n;
    node j = join2(a: left, b: right, out: y) over n;
}

fn lcg(x: u32, salt: u32) -> u32 {
    x.wrapping_mul(1_664_525)
        .wrapping_add(1_013_904_223)
        .wrapping_add(salt)
}

fn chain_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| (0..64).fold(v, |v, _| lcg(v, 0)))
        .collect()
}

fn wide_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            (1..=8u32)
                .map(|salt| (0..8).fold(v, |v, _| lcg(v, salt)))
                .fold(0u32, u32::wrapping_add)
        })
        .collect()
}

fn random_u32(n: usize, mut seed: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 16) as u32
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
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

fn time_ms(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e3
}

/// A shuffled order of `n` variants for repetition `rep` (deterministic).
fn order(n: usize, rep: usize) -> Vec<usize> {
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
struct Row {
    workload: String,
    n: u64,
    nodes: usize,
    dispatches: usize,
    graph_ms: f64,
    /// The graph with `GridStride::Auto` and `GridStride::Always`.
    auto_ms: f64,
    persistent_ms: f64,
    /// The most workgroups a dispatch of the graph launches with `Auto`.
    worker_groups: u32,
    unfused_ms: f64,
    hand_ms: f64,
    naive_ms: f64,
    hand_fused_ms: Option<f64>,
    /// Median host time of each phase of the graph's run (µs): check, plan,
    /// bind, encode, submit, wait, copy.
    phases_us: [f64; 7],
    graph_record_us_per_node: f64,
    hand_record_us_per_node: f64,
    gpu_us_per_node: Option<f64>,
    hand_gpu_us_per_node: Option<f64>,
    steady_buffers_created: u64,
    steady_bind_groups_created: u64,
}

/// A graph run with a config: its output when asked for (a copy, outside
/// the timed runs) and the run's report.
type GraphRun<'a> = dyn Fn(&[u32], bool, &DispatchConfig) -> (Option<Vec<u32>>, RunReport) + 'a;

/// A workload: the graph's `run`, its spec for the baselines, one input and
/// the expected output.
struct Workload<'a> {
    name: &'a str,
    n: u64,
    spec: &'a GraphSpec,
    input: &'a [u32],
    expected: &'a [u32],
    run_graph: &'a GraphRun<'a>,
    /// The same graph without its fused groups.
    unfused: &'a vyre_graph::Graph,
    /// The chain written by hand as one looping kernel, where there is one.
    hand_fused: Option<&'a HandGraph>,
}

/// `spec` without its fused groups: every node its own dispatch.
fn unfused(spec: &GraphSpec) -> GraphSpec {
    GraphSpec {
        fused: std::borrow::Cow::Borrowed(&[]),
        loops: std::borrow::Cow::Borrowed(&[]),
        ..spec.clone()
    }
}

/// chain64 as one hand-written kernel that loops 64 times.
fn hand_fused_chain(gpu: &Gpu, n: u64) -> HandGraph {
    use std::borrow::Cow;
    use vyre_graph::spec::*;
    const LOOP: &str = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            let i = gid.x;
            if i < arrayLength(&src) {
                var v = src[i];
                for (var k = 0u; k < 64u; k++) { v = v * 1664525u + 1013904223u; }
                dst[i] = v;
            }
        }";
    let buffer = |name: &'static str, class| BufferSpec {
        name: name.into(),
        class,
        element_size: 4,
        len: Extent::N,
        header_bytes: 0,
        texture: None,
        append: None,
    };
    let spec = GraphSpec {
        name: "hand fused chain64".into(),
        kernels: vec![KernelSpec {
            label: "loop64".into(),
            source: LOOP.into(),
            entry_point: "main".into(),
            workgroup_size: [256, 1, 1],
            bindings: vec![
                BindingSpec::storage("src", 0, 0, BindingKind::ReadOnlyStorage, 4),
                BindingSpec::storage("dst", 0, 1, BindingKind::ReadWriteStorage, 4),
            ]
            .into(),
            fold: GridFold::XOnly,
        }]
        .into(),
        buffers: vec![
            buffer("x", BufferClass::Input),
            buffer("y", BufferClass::Output),
        ]
        .into(),
        nodes: vec![NodeSpec {
            label: "loop64".into(),
            kernel: 0,
            bindings: vec![
                NodeBinding {
                    group: 0,
                    binding: 0,
                    buffer: 0,
                },
                NodeBinding {
                    group: 0,
                    binding: 1,
                    buffer: 1,
                },
            ]
            .into(),
            overrides: Cow::Borrowed(&[]),
            workgroup_size: None,
            size: DispatchSize::Invocations(Extent::N),
        }]
        .into(),
        features: Cow::Borrowed(&[]),
        schedule: None,
        fused: Cow::Borrowed(&[]),
        loops: Cow::Borrowed(&[]),
    };
    HandGraph::new(gpu, &spec, n)
}

fn measure(gpu: &Gpu, w: &Workload<'_>, reps: usize) -> Row {
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
                w.n,
                &[vyre_graph::Feed::Host(input)],
                &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(out))],
                &plain,
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

/// Nanoseconds per `BatchDispatchPlanCache::lookup` hit, and per
/// `Graph::plan` hit (the lookup `run` does: lock plus cache).
fn plan_cache_hit_ns(chain: &Chain64) -> (f64, f64) {
    let mut cache = BatchDispatchPlanCache::default();
    let recommendation = LaunchRecommendation::default();
    for n in 0..32u64 {
        cache.insert_plan(BatchDispatchPlan::new(
            1024 + n,
            &recommendation,
            &PlanConfig::default(),
        ));
    }
    let iterations = 2_000_000u64;
    let start = Instant::now();
    let mut hits = 0u64;
    for i in 0..iterations {
        if cache.lookup(black_box(1024 + (i & 31))).is_some() {
            hits += 1;
        }
    }
    let raw = start.elapsed().as_nanos() as f64 / iterations as f64;
    assert_eq!(hits, iterations);

    let config = DispatchConfig::default();
    let graph = chain.graph();
    graph.plan(1024, &config).expect("plan");
    let iterations = 200_000u64;
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(graph.plan(black_box(1024), &config).expect("plan"));
    }
    let locked = start.elapsed().as_nanos() as f64 / iterations as f64;
    (raw, locked)
}

/// `GRAPH_BENCH_PROBE=1`: where does a gap between graph and hand come
/// from? Runs the 1M chain as graph, hand, hand with the runtime's layouts
/// and binding sizes, and hand inside an error scope, in shuffled order.
fn probe(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_048_576u64;
    let chain = Chain64::new(gpu)?;
    let x = random_u32(n as usize, n);
    let expected = chain_reference(&x);
    let hand = HandGraph::new(gpu, &Chain64::SPEC, n);
    let like = HandGraph::with_layout(gpu, &Chain64::SPEC, n, true);
    let input: &[u8] = bytemuck::cast_slice(&x);
    let mut outputs = Chain64Outputs::default();
    let mut out = vec![0u32; n as usize];
    chain.run_into(&DispatchConfig::default(), &mut outputs, &x)?;
    assert_eq!(outputs.y, expected);
    // Made after the graph's plan: tells allocation order from code path.
    let late = HandGraph::new(gpu, &Chain64::SPEC, n);
    // One dispatch per node, like hand: the like-for-like comparison.
    let unfused_graph = vyre_graph::Graph::new(gpu, unfused(&Chain64::SPEC))?;
    let mut unfused_phases: [Vec<f64>; 7] = Default::default();
    let names: [&str; 6] = [
        "graph",
        "hand",
        "hand+layout",
        "hand+scope",
        "hand (late)",
        "graph unfused",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut order: Vec<usize> = (0..names.len()).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..60 {
        for i in (1..order.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        for &v in &order {
            let t = match v {
                0 => time_ms(|| {
                    chain
                        .run_into(&DispatchConfig::default(), &mut outputs, &x)
                        .expect("graph run");
                }),
                1 => time_ms(|| hand.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])),
                2 => time_ms(|| like.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])),
                4 => time_ms(|| late.run(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])),
                5 => time_ms(|| {
                    let report = unfused_graph
                        .run(
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                            &DispatchConfig::default(),
                        )
                        .expect("unfused run");
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
                    for (v, list) in values.iter().zip(&mut unfused_phases) {
                        list.push(*v as f64 / 1e3);
                    }
                }),
                _ => {
                    time_ms(|| hand.run_scoped(&[input], &mut [bytemuck::cast_slice_mut(&mut out)]))
                }
            };
            times[v].push(t);
        }
    }
    assert_eq!(out, expected);
    for (name, t) in names.iter().zip(&mut times) {
        println!("probe chain64 n={n}: {name:<13} median {:.3} ms", median(t));
    }
    let [check, plan, bind, encode, submit, wait, copy] =
        unfused_phases.map(|mut v| median(&mut v));
    println!(
        "probe chain64 n={n}: graph unfused phases µs: check {check:.1}, plan {plan:.1}, bind {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, copy {copy:.1}"
    );
    // The same phases by hand: upload, encode, submit, wait + copy.
    let mut hand_phases: [Vec<f64>; 4] = Default::default();
    for _ in 0..30 {
        for (v, list) in hand
            .run_phases(&[input], &mut [bytemuck::cast_slice_mut(&mut out)])
            .iter()
            .zip(&mut hand_phases)
        {
            list.push(*v);
        }
    }
    let [upload, encode, submit, wait] = hand_phases.map(|mut v| median(&mut v));
    println!(
        "probe chain64 n={n}: hand phases µs: upload {upload:.1}, encode {encode:.1}, submit {submit:.1}, wait+copy {wait:.1}"
    );
    let profile = DispatchConfig::default().with_profile(true);
    let mut graph_gpu: Vec<f64> = (0..20)
        .filter_map(|_| chain.run_into(&profile, &mut outputs, &x).ok()?.gpu_ns)
        .map(|ns| ns as f64 / 1e6)
        .collect();
    let mut hand_gpu: Vec<f64> = (0..20)
        .filter_map(|_| hand.gpu_ns_per_node(gpu, &[input]))
        .map(|ns| ns * 64.0 / 1e6)
        .collect();
    println!(
        "probe chain64 n={n}: pass GPU time (timestamps) graph {:.3} ms, hand {:.3} ms",
        median(&mut graph_gpu),
        median(&mut hand_gpu)
    );
    Ok(())
}

/// `GRAPH_BENCH_PROBE=radix`: where the typed radix sort's time goes
/// beyond an untyped run of the same spec.
fn probe_radix(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::var("GRAPH_BENCH_PROBE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let x = random_u32(n as usize, 99);
    let mut expected = x.clone();
    expected.sort_unstable();
    let sorter = radix::RadixSort::new(gpu)?;
    let other = vyre_graph::Graph::new(gpu, radix::RadixSort::SPEC)?;
    let config = DispatchConfig::default();
    let mut outputs = radix::RadixSortOutputs::default();
    let mut out = vec![0u32; n as usize];
    let input: &[u8] = bytemuck::cast_slice(&x);
    sorter.run_into(&config, &mut outputs, &x)?;
    assert_eq!(outputs.keys, expected);
    // The typed API's host work before `Graph::run`, alone (no GPU).
    let feeds = [vyre_graph::Feed::Host(input)];
    let calls = 20_000;
    let pre = time_ms(|| {
        for _ in 0..calls {
            let graph = sorter.graph();
            let m = graph.infer_problem_size(black_box(&feeds)).expect("n");
            graph.check_problem_size(m, &config).expect("size");
            let len = graph.buffer_len(0, m).expect("len");
            vyre_graph::__private::resize_vec(&mut outputs.keys, len, "keys").expect("resize");
        }
    }) * 1e3
        / f64::from(calls);
    println!("probe radix n={n}: typed host work before Graph::run: {pre:.3} µs per run");
    let names = [
        "typed run_into",
        "same graph, untyped run",
        "second graph, untyped run",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut phases: Vec<[Vec<f64>; 7]> = (0..names.len()).map(|_| Default::default()).collect();
    let reps = if n >= 1 << 20 { 30 } else { 90 };
    for rep in 0..reps {
        for v in order(names.len(), rep) {
            let mut report = None;
            let t = time_ms(|| {
                report = Some(match v {
                    0 => sorter.run_into(&config, &mut outputs, &x).expect("typed"),
                    1 => sorter
                        .graph()
                        .run(
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                            &config,
                        )
                        .expect("untyped"),
                    _ => other
                        .run(
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                            &config,
                        )
                        .expect("second"),
                });
            });
            times[v].push(t);
            if let Some(r) = report {
                let p = r.phases;
                let values = [
                    p.check_ns,
                    p.plan_ns,
                    p.bind_ns,
                    p.encode_ns,
                    p.submit_ns,
                    p.wait_ns,
                    p.copy_ns,
                ];
                for (value, list) in values.iter().zip(&mut phases[v]) {
                    list.push(*value as f64 / 1e3);
                }
            }
        }
    }
    assert_eq!(out, expected);
    assert_eq!(outputs.keys, expected);
    for (k, name) in names.iter().enumerate() {
        let [check, plan, bind, encode, submit, wait, copy] =
            std::mem::take(&mut phases[k]).map(|mut v| median(&mut v));
        println!(
            "probe radix n={n}: {name:<27} median {:.3} ms; phases µs: check {check:.1}, plan {plan:.1}, bind {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, copy {copy:.1}",
            median(&mut times[k])
        );
    }
    Ok(())
}

/// `GRAPH_BENCH_ASYNC=1`: two graphs' runs in flight on one device at once
/// (`run_async`, both futures polled by one thread) against the same two
/// runs one after the other (`run`), interleaved, medians.
fn async_pair(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    /// Polls both futures until both are done, parking between wake-ups.
    fn join2<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let (mut a, mut b) = (Box::pin(a), Box::pin(b));
        let (mut ra, mut rb) = (None, None);
        while ra.is_none() || rb.is_none() {
            if ra.is_none()
                && let Poll::Ready(v) = Pin::as_mut(&mut a).poll(&mut cx)
            {
                ra = Some(v);
            }
            if rb.is_none()
                && let Poll::Ready(v) = Pin::as_mut(&mut b).poll(&mut cx)
            {
                rb = Some(v);
            }
            if ra.is_none() || rb.is_none() {
                std::thread::park_timeout(std::time::Duration::from_millis(1));
            }
        }
        (ra.expect("a"), rb.expect("b"))
    }

    for n in [65_536u64, 1_048_576] {
        let chain = Chain64::new(gpu)?;
        let wide = Wide8x8::new(gpu)?;
        let x = random_u32(n as usize, n);
        let config = DispatchConfig::default();
        let (want_chain, want_wide) = (chain_reference(&x), wide_reference(&x));
        let (a, b) = join2(chain.run_async(&config, &x), wide.run_async(&config, &x));
        assert_eq!(a?.y, want_chain);
        assert_eq!(b?.y, want_wide);
        let (mut together, mut apart) = (Vec::new(), Vec::new());
        for rep in 0..40 {
            let both = || {
                time_ms(|| {
                    let (a, b) = join2(chain.run_async(&config, &x), wide.run_async(&config, &x));
                    a.expect("chain");
                    b.expect("wide");
                })
            };
            let one_by_one = || {
                time_ms(|| {
                    chain.run(&x).expect("chain");
                    wide.run(&x).expect("wide");
                })
            };
            if rep % 2 == 0 {
                together.push(both());
                apart.push(one_by_one());
            } else {
                apart.push(one_by_one());
                together.push(both());
            }
        }
        let (t, a) = (median(&mut together), median(&mut apart));
        println!(
            "async n={n}: chain64 and wide8x8 in flight together {t:.3} ms, one after the other {a:.3} ms (ratio {:.2})",
            t / a
        );
    }
    Ok(())
}

fn json_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let json_path = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
        .cloned();

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    if std::env::var_os("GRAPH_BENCH_ASYNC").is_some() {
        return async_pair(&gpu);
    }
    if std::env::var("GRAPH_BENCH_PROBE").as_deref() == Ok("radix") {
        return probe_radix(&gpu);
    }
    if std::env::var_os("GRAPH_BENCH_PROBE").is_some() {
        return probe(&gpu);
    }
    if std::env::var_os("GRAPH_BENCH_STRIDE").is_some() {
        return stride::run(&gpu, quick, json_path.as_deref());
    }
    if std::env::var_os("GRAPH_BENCH_BFS").is_some() {
        return bfs_bench::only(&gpu, quick, json_path.as_deref());
    }
    let chain = Chain64::new(&gpu)?;
    let wide = Wide8x8::new(&gpu)?;
    let sorter = radix::RadixSort::new(&gpu)?;

    let mut rows = Vec::new();
    // 1,000,000 (not a power of two) as well, in the full run.
    let sizes: &[u64] = if quick {
        &[1024, 65_536, 1_048_576]
    } else {
        &[1024, 65_536, 1_000_000, 1_048_576]
    };
    for &n in sizes {
        let reps = match (quick, n >= 1_000_000) {
            (true, true) => 6,
            (true, false) => 18,
            (false, true) => 30,
            (false, false) => 240,
        };
        let x = random_u32(n as usize, n);
        let expected = chain_reference(&x);
        // A graph of its own per size, like the baseline: only this size's
        // plan (and its device buffers) is alive while it is measured.
        let chain = Chain64::new(&gpu)?;
        let outputs = RefCell::new(Chain64Outputs::default());
        let run = |x: &[u32], want: bool, config: &DispatchConfig| {
            let mut out = outputs.borrow_mut();
            let report = chain.run_into(config, &mut out, x).expect("chain run");
            (want.then(|| out.y.clone()), report)
        };
        let chain_unfused = vyre_graph::Graph::new(&gpu, unfused(&Chain64::SPEC))?;
        let hand_fused = hand_fused_chain(&gpu, n);
        rows.push(measure(
            &gpu,
            &Workload {
                name: "chain64",
                n,
                spec: &Chain64::SPEC,
                input: &x,
                expected: &expected,
                run_graph: &run,
                unfused: &chain_unfused,
                hand_fused: Some(&hand_fused),
            },
            reps,
        ));
        println!("measured chain64 n={n}");
    }
    {
        let n = 65_536u64;
        let x = random_u32(n as usize, 7);
        let expected = wide_reference(&x);
        let outputs = RefCell::new(Wide8x8Outputs::default());
        let run = |x: &[u32], want: bool, config: &DispatchConfig| {
            let mut out = outputs.borrow_mut();
            let report = wide.run_into(config, &mut out, x).expect("wide run");
            (want.then(|| out.y.clone()), report)
        };
        let wide_unfused = vyre_graph::Graph::new(&gpu, unfused(&Wide8x8::SPEC))?;
        rows.push(measure(
            &gpu,
            &Workload {
                name: "wide8x8",
                n,
                spec: &Wide8x8::SPEC,
                input: &x,
                expected: &expected,
                run_graph: &run,
                unfused: &wide_unfused,
                hand_fused: None,
            },
            if quick { 18 } else { 240 },
        ));
        println!("measured wide8x8 n={n}");
    }
    {
        let n = 1_048_576u64;
        let x = random_u32(n as usize, 99);
        let mut expected = x.clone();
        expected.sort_unstable();
        let outputs = RefCell::new(radix::RadixSortOutputs::default());
        let run = |x: &[u32], want: bool, config: &DispatchConfig| {
            let mut out = outputs.borrow_mut();
            let report = sorter.run_into(config, &mut out, x).expect("radix run");
            (want.then(|| out.keys.clone()), report)
        };
        let radix_unfused = vyre_graph::Graph::new(&gpu, unfused(&radix::RadixSort::SPEC))?;
        rows.push(measure(
            &gpu,
            &Workload {
                name: "radix_sort",
                n,
                spec: &radix::RadixSort::SPEC,
                input: &x,
                expected: &expected,
                run_graph: &run,
                unfused: &radix_unfused,
                hand_fused: None,
            },
            if quick { 6 } else { 24 },
        ));
        println!("measured radix_sort n={n}");
    }
    let mut bfs_rows = Vec::new();
    for &(vertices, reps) in bfs_bench::sizes(quick) {
        bfs_rows.push(bfs_bench::measure(&gpu, vertices, reps)?);
        println!("measured bfs n={vertices}");
    }
    let (hit_ns, locked_hit_ns) = plan_cache_hit_ns(&chain);

    println!();
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>9} {:>9} {:>9}",
        "workload",
        "n",
        "nodes",
        "dispatch",
        "graph ms",
        "unfused ms",
        "hand ms",
        "h.fused ms",
        "naive ms",
        "graph/hand",
        "g/hand fus.",
        "rec µs/nd",
        "gpu µs/nd",
        "steady b/bg"
    );
    for r in &rows {
        println!(
            "{:<11} {:>9} graph auto (GridStride::Auto) {:.3} ms, launching at most {} workgroups; graph persistent (Always) {:.3} ms",
            r.workload, r.n, r.auto_ms, r.worker_groups, r.persistent_ms
        );
        println!(
            "{:<11} {:>9} {:>9} {:>9} {:>10.3} {:>10.3} {:>10.3} {:>10} {:>10.3} {:>10.3} {:>11} {:>9.3} {:>9} {:>5}/{}",
            r.workload,
            r.n,
            r.nodes,
            r.dispatches,
            r.graph_ms,
            r.unfused_ms,
            r.hand_ms,
            r.hand_fused_ms
                .map_or_else(|| "-".to_string(), |v| format!("{v:.3}")),
            r.naive_ms,
            r.graph_ms / r.hand_ms,
            r.hand_fused_ms
                .map_or_else(|| "-".to_string(), |v| format!("{:.3}", r.graph_ms / v)),
            r.graph_record_us_per_node,
            r.gpu_us_per_node
                .map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}")),
            r.steady_buffers_created,
            r.steady_bind_groups_created,
        );
        let [check, plan, bind, encode, submit, wait, copy] = r.phases_us;
        println!(
            "{:<11} {:>9} graph phases µs: check {check:.1}, plan {plan:.1}, bind {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, copy {copy:.1}",
            "", ""
        );
    }
    bfs_bench::print(&bfs_rows);
    println!(
        "plan-cache hit: {hit_ns:.1} ns (BatchDispatchPlanCache::lookup), {locked_hit_ns:.1} ns (Graph::plan: lock + lookup)"
    );

    if let Some(path) = json_path {
        let mut json = String::new();
        json.push_str("{\n");
        json.push_str(&format!(
            "  \"adapter\": \"{}\",\n",
            json_escape(&gpu.adapter().to_string())
        ));
        json.push_str(&format!("  \"quick\": {quick},\n"));
        json.push_str(&format!("  \"plan_cache_hit_ns\": {hit_ns:.2},\n"));
        json.push_str(&format!("  \"graph_plan_hit_ns\": {locked_hit_ns:.2},\n"));
        json.push_str("  \"workloads\": [\n");
        for (i, r) in rows.iter().enumerate() {
            json.push_str(&format!(
                "    {{\"workload\": \"{}\", \"n\": {}, \"nodes\": {}, \"dispatches\": {}, \"graph_ms\": {:.4}, \"graph_auto_ms\": {:.4}, \"graph_persistent_ms\": {:.4}, \"graph_auto_worker_groups\": {}, \"graph_unfused_ms\": {:.4}, \"hand_ms\": {:.4}, \"hand_fused_ms\": {}, \"naive_ms\": {:.4}, \"graph_over_hand\": {:.4}, \"graph_over_hand_fused\": {}, \"unfused_over_hand\": {:.4}, \"graph_phases_us\": {{\"check\": {:.2}, \"plan\": {:.2}, \"bind\": {:.2}, \"encode\": {:.2}, \"submit\": {:.2}, \"wait\": {:.2}, \"copy\": {:.2}}}, \"naive_over_graph\": {:.3}, \"graph_record_us_per_node\": {:.4}, \"hand_record_us_per_node\": {:.4}, \"gpu_us_per_node\": {}, \"hand_gpu_us_per_node\": {}, \"steady_buffers_created\": {}, \"steady_bind_groups_created\": {}}}{}\n",
                r.workload,
                r.n,
                r.nodes,
                r.dispatches,
                r.graph_ms,
                r.auto_ms,
                r.persistent_ms,
                r.worker_groups,
                r.unfused_ms,
                r.hand_ms,
                r.hand_fused_ms.map_or_else(|| "null".to_string(), |v| format!("{v:.4}")),
                r.naive_ms,
                r.graph_ms / r.hand_ms,
                r.hand_fused_ms.map_or_else(|| "null".to_string(), |v| format!("{:.4}", r.graph_ms / v)),
                r.unfused_ms / r.hand_ms,
                r.phases_us[0],
                r.phases_us[1],
                r.phases_us[2],
                r.phases_us[3],
                r.phases_us[4],
                r.phases_us[5],
                r.phases_us[6],
                r.naive_ms / r.graph_ms,
                r.graph_record_us_per_node,
                r.hand_record_us_per_node,
                r.gpu_us_per_node.map_or_else(|| "null".to_string(), |v| format!("{v:.4}")),
                r.hand_gpu_us_per_node.map_or_else(|| "null".to_string(), |v| format!("{v:.4}")),
                r.steady_buffers_created,
                r.steady_bind_groups_created,
                if i + 1 < rows.len() { "," } else { "" }
            ));
        }
        json.push_str("  ],\n");
        // The device loop against the host loop (different variants).
        json.push_str(&bfs_bench::json(&bfs_rows));
        json.push_str("}\n");
        std::fs::write(&path, json)?;
        println!("wrote {path}");
    }
    Ok(())
}
