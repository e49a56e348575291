//! The chain workloads: `chain64` (64 dependent LCG steps, fused by
//! `graph!` into one element-wise kernel) at several sizes and `wide8x8`
//! (eight independent chains of eight salted steps, joined), their CPU
//! references and chain64 written by hand as one looping kernel, and
//! `chain64_fold` (chain64 indexed with `g.x + g.y * nwg.x * 256u`, which
//! fusion must treat like `g.x`) beside them; the
//! plan-cache hit time; and the chain probes (`GRAPH_BENCH_PROBE=1`,
//! `GRAPH_BENCH_ASYNC=1`).

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

use vyre_graph::{DispatchConfig, Gpu, graph};

use crate::hand::HandGraph;
use crate::measure::{Row, Workload, measure, median, random_u32, time_ms, unfused};
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
    /// chain64 written with the fold-safe index (`g.x + g.y * nwg.x * 256u`).
    pub struct Chain64Fold;

    kernel step = file "examples/kernels/chain_step_fold.wgsl";

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

pub fn chain_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| (0..64).fold(v, |v, _| lcg(v, 0)))
        .collect()
}

pub fn wide_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            (1..=8u32)
                .map(|salt| (0..8).fold(v, |v, _| lcg(v, salt)))
                .fold(0u32, u32::wrapping_add)
        })
        .collect()
}

/// chain64 as one hand-written kernel that loops 64 times.
pub fn hand_fused_chain(gpu: &Gpu, n: u64) -> HandGraph {
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
        empty_value: None,
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

/// chain64 at every size of the run (`quick`: fewer and fewer
/// repetitions), each on a graph of its own.
pub fn rows(gpu: &Gpu, quick: bool) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
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
        let chain = Chain64::new(gpu)?;
        let outputs = RefCell::new(Chain64Outputs::default());
        let run = |x: &[u32], want: bool, config: &DispatchConfig| {
            let mut out = outputs.borrow_mut();
            let report = chain.run_into(config, &mut out, x).expect("chain run");
            (want.then(|| out.y.clone()), report)
        };
        let chain_unfused = vyre_graph::Graph::new(gpu, unfused(&Chain64::SPEC))?;
        let hand_fused = hand_fused_chain(gpu, n);
        rows.push(measure(
            gpu,
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
        let fold = Chain64Fold::new(gpu)?;
        let fold_outputs = RefCell::new(Chain64FoldOutputs::default());
        let run_fold = |x: &[u32], want: bool, config: &DispatchConfig| {
            let mut out = fold_outputs.borrow_mut();
            let report = fold.run_into(config, &mut out, x).expect("chain run");
            (want.then(|| out.y.clone()), report)
        };
        let fold_unfused = vyre_graph::Graph::new(gpu, unfused(&Chain64Fold::SPEC))?;
        rows.push(measure(
            gpu,
            &Workload {
                name: "chain64_fold",
                n,
                spec: &Chain64Fold::SPEC,
                input: &x,
                expected: &expected,
                run_graph: &run_fold,
                unfused: &fold_unfused,
                hand_fused: Some(&hand_fused),
            },
            reps,
        ));
        fold_against_gx(&chain, &fold, &x, reps);
    }
    Ok(rows)
}

/// The two spellings of chain64 run interleaved (one after the other, in
/// alternating order), medians and their ratio: the fold-safe spelling must
/// be fused like the `g.x` one and as fast.
fn fold_against_gx(chain: &Chain64, fold: &Chain64Fold, x: &[u32], reps: usize) {
    let config = DispatchConfig::default();
    let (mut gx, mut folded) = (Vec::new(), Vec::new());
    let mut a = Chain64Outputs::default();
    let mut b = Chain64FoldOutputs::default();
    for rep in 0..reps.max(6) * 2 {
        let mut time_gx = || {
            time_ms(|| {
                chain.run_into(&config, &mut a, x).expect("g.x");
            })
        };
        let mut time_fold = || {
            time_ms(|| {
                fold.run_into(&config, &mut b, x).expect("fold");
            })
        };
        if rep % 2 == 0 {
            gx.push(time_gx());
            folded.push(time_fold());
        } else {
            folded.push(time_fold());
            gx.push(time_gx());
        }
    }
    assert_eq!(a.y, b.y, "the two spellings agree");
    let (g, f) = (median(&mut gx), median(&mut folded));
    println!(
        "chain64 n={}: g.x {g:.3} ms, g.x + g.y * nwg.x * 256u {f:.3} ms (ratio {:.3}; fused groups {} and {})",
        x.len(),
        f / g,
        Chain64::SPEC.fused.len(),
        Chain64Fold::SPEC.fused.len(),
    );
}

/// `GRAPH_BENCH_FOLD=1`: only the two spellings of chain64, interleaved,
/// with more runs than the table gives them (host time and, from
/// timestamps, GPU time).
pub fn fold_only(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
    let chain = Chain64::new(gpu)?;
    let fold = Chain64Fold::new(gpu)?;
    for (n, reps) in [(1024usize, 200usize), (65_536, 100), (1_048_576, 20)] {
        let x = random_u32(n, n as u64);
        fold_against_gx(&chain, &fold, &x, reps);
        let profile = DispatchConfig::default().with_profile(true);
        let (mut a, mut b) = (Chain64Outputs::default(), Chain64FoldOutputs::default());
        let (mut gx, mut folded) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            gx.extend(chain.run_into(&profile, &mut a, &x)?.gpu_ns);
            folded.extend(fold.run_into(&profile, &mut b, &x)?.gpu_ns);
        }
        let ms =
            |v: Vec<u64>| median(&mut v.into_iter().map(|ns| ns as f64 / 1e6).collect::<Vec<_>>());
        let (g, f) = (ms(gx), ms(folded));
        println!(
            "chain64 n={n}: GPU time (timestamps) g.x {g:.3} ms, fold-safe {f:.3} ms (ratio {:.3})",
            f / g
        );
    }
    Ok(())
}

/// wide8x8 at 65,536 elements.
pub fn wide_row(gpu: &Gpu, wide: &Wide8x8, quick: bool) -> Result<Row, Box<dyn std::error::Error>> {
    let n = 65_536u64;
    let x = random_u32(n as usize, 7);
    let expected = wide_reference(&x);
    let outputs = RefCell::new(Wide8x8Outputs::default());
    let run = |x: &[u32], want: bool, config: &DispatchConfig| {
        let mut out = outputs.borrow_mut();
        let report = wide.run_into(config, &mut out, x).expect("wide run");
        (want.then(|| out.y.clone()), report)
    };
    let wide_unfused = vyre_graph::Graph::new(gpu, unfused(&Wide8x8::SPEC))?;
    let row = measure(
        gpu,
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
    );
    println!("measured wide8x8 n={n}");
    Ok(row)
}

/// Nanoseconds per `the plan cache's lookup` hit, and per
/// `Graph::plan` hit (the lookup `run` does: lock plus cache).
pub fn plan_cache_hit_ns(chain: &Chain64) -> (f64, f64) {
    let raw = vyre_graph::__private::plan_cache_hit_ns(2_000_000);

    let config = DispatchConfig::default();
    let graph = chain.graph();
    graph.plan(&config, 1024).expect("plan");
    let iterations = 200_000u64;
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(graph.plan(&config, black_box(1024)).expect("plan"));
    }
    let locked = start.elapsed().as_nanos() as f64 / iterations as f64;
    (raw, locked)
}

/// `GRAPH_BENCH_PROBE=1`: where does a gap between graph and hand come
/// from? Runs the 1M chain as graph, hand, hand with the runtime's layouts
/// and binding sizes, and hand inside an error scope, in shuffled order.
pub fn probe(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
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
                            &DispatchConfig::default(),
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
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

/// `GRAPH_BENCH_ASYNC=1`: two graphs' runs in flight on one device at once
/// (`run_async`, both futures polled by one thread) against the same two
/// runs one after the other (`run`), interleaved, medians.
pub fn async_pair(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
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
