//! `--transfer`: what moving data in and out costs. The workloads:
//!
//! - **transfer**: a one-node identity graph over `u32` (upload `n`, copy
//!   on the device, read `n` back) at 1,024, 65,536, 1,048,576 and
//!   16,777,216 elements, against a raw-wgpu baseline that does what a
//!   careful user would ([`HandGraph::run`]: buffers and bind group made
//!   once, `Queue::write_buffer` up, the same dispatch, a copy to a
//!   `MAP_READ` buffer, map, one `copy_from_slice` out, one thread). The
//!   graph runs two ways: `run_into` (outputs reused, as a steady-state
//!   loop would) and `run` (a fresh output vector every run), and
//!   `run_into` once more with every transfer path off (`plain`:
//!   `Queue::write_buffer`, one thread: the runtime's paths before them,
//!   in the same process). Interleaved,
//!   medians, in ms and GB/s (both directions counted: `2 * 4 * n` bytes);
//! - **chain64** at 1,048,576 elements: the fused 64-step chain's whole run
//!   (`run_into`);
//! - **compact** at 16,777,216 values (input resident, as
//!   `examples/compact.rs` measures it): the whole typed `run`, against the
//!   CPU filter.
//!
//! `--quick` keeps the sizes small (1,024 and 65,536; compact at 65,536).

use std::time::Instant;

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle, RunPhases, graph};

use crate::chains::{Chain64, Chain64Outputs, chain_reference};
use crate::hand::HandGraph;
use crate::measure::{json_escape, median, order, random_u32, time_ms};

graph! {
    /// `y = x`: one upload, one dispatch, one read-back.
    pub struct Identity;

    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;

        // The linear index on a grid folded into y and z (16M elements need
        // 65,536 workgroups of 256), for the hand baseline too.
        @compute @workgroup_size(256)
        fn main(
            @builtin(global_invocation_id) gid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>,
        ) {
            let i = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * 256u;
            if i < arrayLength(&src) { dst[i] = src[i]; }
        }
    };

    input x[n];
    output y[n];

    node copy(src: x, dst: y) over n;
}

graph! {
    /// Every value below `params.threshold` (as `examples/compact.rs`).
    pub struct Compact;

    kernel keep = file "examples/kernels/compact/keep.wgsl";

    input values[n];
    uniform params;
    append kept[n];

    node keep(values: values, params: params, kept: kept) over n;
}

/// One size of the transfer workload.
pub struct TransferRow {
    pub n: u64,
    /// Graph `run_into`, graph `run`, raw-wgpu baseline (ms, medians), and
    /// the graph `run_into` with every transfer path off (`plain`:
    /// `Queue::write_buffer`, one thread), the runtime's paths before them.
    pub graph_ms: f64,
    pub plain_ms: f64,
    pub graph_fresh_ms: f64,
    pub baseline_ms: f64,
    /// Medians of the graph's phases (µs): bind (upload), encode, submit,
    /// wait, copy (read-back).
    pub phases_us: [f64; 5],
    /// The pass's GPU time (µs, timestamps), where the adapter has them.
    pub gpu_us: Option<f64>,
    /// Buffers and bind groups a steady-state graph run created.
    pub steady: (u64, u64),
}

impl TransferRow {
    fn gbps(&self, ms: f64) -> f64 {
        (2 * 4 * self.n) as f64 / (ms * 1e-3) / 1e9
    }
}

/// Everything `--transfer` measures.
pub struct TransferReport {
    pub rows: Vec<TransferRow>,
    /// chain64 at 1M: whole run (ms) and its phases (µs).
    pub chain_ms: f64,
    pub chain_phases_us: [f64; 5],
    pub chain_n: u64,
    /// compact: n, whole run (ms), CPU filter (ms), kept count.
    pub compact: (u64, f64, f64, usize),
}

fn phases(p: &RunPhases) -> [f64; 5] {
    [p.bind_ns, p.encode_ns, p.submit_ns, p.wait_ns, p.copy_ns].map(|ns| ns as f64 / 1e3)
}

fn phase_medians(lists: &mut [Vec<f64>; 5]) -> [f64; 5] {
    let mut out = [0.0; 5];
    for (o, l) in out.iter_mut().zip(lists.iter_mut()) {
        *o = median(l);
    }
    out
}

/// The transfer workload at `n`, `reps` interleaved repetitions.
fn transfer_row(gpu: &Gpu, n: u64, reps: usize) -> Result<TransferRow, Box<dyn std::error::Error>> {
    let x = random_u32(n as usize, n ^ 0x5eed);
    let graph = Identity::new(gpu)?;
    let hand = HandGraph::new(gpu, &Identity::SPEC, n);
    let config = DispatchConfig::default();
    let mut outputs = IdentityOutputs::default();
    let mut out = vec![0u32; n as usize];
    // Correct first, every variant.
    graph.run_into(&config, &mut outputs, &x)?;
    assert!(outputs.y == x, "transfer n={n}: graph run_into differs");
    assert!(graph.run(&x)?.y == x, "transfer n={n}: graph run differs");
    hand.run(
        &[bytemuck::cast_slice(&x)],
        &mut [bytemuck::cast_slice_mut(&mut out)],
    );
    assert!(out == x, "transfer n={n}: baseline differs");

    let before = gpu.counters();
    graph.run_into(&config, &mut outputs, &x)?;
    let steady = gpu.counters().since(&before);

    let plain = DispatchConfig::default().with_transfer(
        vyre_graph::TransferOptions::default()
            .with_threads(0)
            .with_staging_min_bytes(u64::MAX)
            .with_count_first_min_bytes(u64::MAX),
    );
    let mut plain_outputs = IdentityOutputs::default();
    graph.run_into(&plain, &mut plain_outputs, &x)?;
    assert!(plain_outputs.y == x, "transfer n={n}: plain graph differs");
    let (mut g, mut f, mut b, mut p) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut lists: [Vec<f64>; 5] = Default::default();
    for rep in 0..reps {
        for k in order(4, rep) {
            match k {
                0 => g.push(time_ms(|| {
                    let report = graph
                        .run_into(&config, &mut outputs, &x)
                        .expect("graph run");
                    for (l, v) in lists.iter_mut().zip(phases(&report.phases)) {
                        l.push(v);
                    }
                })),
                1 => f.push(time_ms(|| {
                    let fresh = graph.run(&x).expect("graph run");
                    std::hint::black_box(&fresh.y);
                })),
                2 => p.push(time_ms(|| {
                    graph
                        .run_into(&plain, &mut plain_outputs, &x)
                        .expect("plain run");
                })),
                _ => b.push(time_ms(|| {
                    hand.run(
                        &[bytemuck::cast_slice(&x)],
                        &mut [bytemuck::cast_slice_mut(&mut out)],
                    );
                })),
            }
        }
    }
    assert!(
        outputs.y == x && out == x,
        "transfer n={n}: results changed"
    );
    let profile = DispatchConfig::default().with_profile(true);
    let mut gpu_us: Vec<f64> = (0..5)
        .filter_map(|_| graph.run_reported(&profile, &x).ok()?.1.gpu_ns)
        .map(|ns| ns as f64 / 1e3)
        .collect();
    Ok(TransferRow {
        n,
        graph_ms: median(&mut g),
        plain_ms: median(&mut p),
        graph_fresh_ms: median(&mut f),
        baseline_ms: median(&mut b),
        phases_us: phase_medians(&mut lists),
        gpu_us: (!gpu_us.is_empty()).then(|| median(&mut gpu_us)),
        steady: (steady.buffers_created, steady.bind_groups_created),
    })
}

/// chain64 at `n`: whole `run_into` (ms) and its phases.
fn chain_row(
    gpu: &Gpu,
    n: u64,
    reps: usize,
) -> Result<(f64, [f64; 5]), Box<dyn std::error::Error>> {
    let x = random_u32(n as usize, n);
    let expected = chain_reference(&x);
    let chain = Chain64::new(gpu)?;
    let mut outputs = Chain64Outputs::default();
    let config = DispatchConfig::default();
    chain.run_into(&config, &mut outputs, &x)?;
    assert!(outputs.y == expected, "chain64 n={n} differs from the CPU");
    let mut times = Vec::new();
    let mut lists: [Vec<f64>; 5] = Default::default();
    for _ in 0..reps {
        times.push(time_ms(|| {
            let report = chain
                .run_into(&config, &mut outputs, &x)
                .expect("chain run");
            for (l, v) in lists.iter_mut().zip(phases(&report.phases)) {
                l.push(v);
            }
        }));
    }
    assert!(outputs.y == expected, "chain64 n={n} changed");
    Ok((median(&mut times), phase_medians(&mut lists)))
}

/// compact at `n`: the whole typed `run` with the input resident, and the
/// CPU filter, interleaved (ms), and the count kept.
fn compact_row(
    gpu: &Gpu,
    n: u64,
    reps: usize,
) -> Result<(f64, f64, usize), Box<dyn std::error::Error>> {
    let values = random_u32(n as usize, 0xc0ff_ee00);
    let params = Params { threshold: 1 << 30 };
    let compact = Compact::new(gpu)?;
    let resident = GpuBufferHandle::from_slice(gpu, &values)?;
    let cpu = |v: &[u32]| -> Vec<u32> { v.iter().copied().filter(|&v| v < 1 << 30).collect() };
    let mut expected = cpu(&values);
    let mut got = compact.run(&resident, &params)?.kept;
    got.sort_unstable();
    expected.sort_unstable();
    assert!(
        got == expected,
        "compact n={n}: the GPU kept other values than the CPU"
    );
    let (mut g, mut c) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        for k in order(2, rep) {
            if k == 0 {
                g.push(time_ms(|| {
                    let out = compact.run(&resident, &params).expect("compact run");
                    assert_eq!(out.kept.len(), expected.len());
                }));
            } else {
                c.push(time_ms(|| {
                    std::hint::black_box(cpu(std::hint::black_box(&values)));
                }));
            }
        }
    }
    Ok((median(&mut g), median(&mut c), expected.len()))
}

/// Every workload of `--transfer`.
pub fn run(gpu: &Gpu, quick: bool) -> Result<TransferReport, Box<dyn std::error::Error>> {
    let sizes: &[(u64, usize)] = if quick {
        &[(1024, 60), (65_536, 30)]
    } else {
        &[(1024, 300), (65_536, 150), (1 << 20, 40), (1 << 24, 9)]
    };
    let mut rows = Vec::new();
    for &(n, reps) in sizes {
        let start = Instant::now();
        rows.push(transfer_row(gpu, n, reps)?);
        println!(
            "measured transfer n={n} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
    let chain_n = if quick { 65_536 } else { 1 << 20 };
    let (chain_ms, chain_phases_us) = chain_row(gpu, chain_n, if quick { 20 } else { 40 })?;
    println!("measured chain64 n={chain_n}");
    let compact_n = if quick { 65_536 } else { 1 << 24 };
    let (g, c, kept) = compact_row(gpu, compact_n, if quick { 10 } else { 7 })?;
    println!("measured compact n={compact_n}");
    Ok(TransferReport {
        rows,
        chain_ms,
        chain_phases_us,
        chain_n,
        compact: (compact_n, g, c, kept),
    })
}

pub fn print(r: &TransferReport) {
    println!();
    println!(
        "{:<9} {:>9} {:>10} {:>9} {:>10} {:>9} {:>11} {:>9} {:>8} {:>9} {:>8} {:>9} {:>9}",
        "transfer",
        "n",
        "graph ms",
        "GB/s",
        "base ms",
        "GB/s",
        "graph/base",
        "fresh ms",
        "fresh/b",
        "plain ms",
        "plain/b",
        "gpu µs",
        "steady b/bg"
    );
    for row in &r.rows {
        println!(
            "{:<9} {:>9} {:>10.3} {:>9.2} {:>10.3} {:>9.2} {:>11.3} {:>9.3} {:>8.3} {:>9.3} {:>8.3} {:>9} {:>7}/{}",
            "",
            row.n,
            row.graph_ms,
            row.gbps(row.graph_ms),
            row.baseline_ms,
            row.gbps(row.baseline_ms),
            row.graph_ms / row.baseline_ms,
            row.graph_fresh_ms,
            row.graph_fresh_ms / row.baseline_ms,
            row.plain_ms,
            row.plain_ms / row.baseline_ms,
            row.gpu_us
                .map_or_else(|| "n/a".into(), |v| format!("{v:.1}")),
            row.steady.0,
            row.steady.1,
        );
        let [bind, encode, submit, wait, copy] = row.phases_us;
        println!(
            "{:<9} {:>9} graph phases µs: upload (bind) {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, read-back (copy) {copy:.1}",
            "", ""
        );
    }
    let [bind, encode, submit, wait, copy] = r.chain_phases_us;
    println!(
        "chain64   {:>9} whole run {:.3} ms; phases µs: upload {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, read-back {copy:.1}",
        r.chain_n, r.chain_ms
    );
    let (n, g, c, kept) = r.compact;
    println!(
        "compact   {n:>9} whole run {g:.3} ms, CPU filter {c:.3} ms ({:.2}x the CPU's speed), {kept} kept",
        c / g
    );
}

pub fn json(gpu: &Gpu, quick: bool, r: &TransferReport) -> String {
    let mut s = String::from("{\n");
    s.push_str(&format!(
        "  \"adapter\": \"{}\",\n  \"quick\": {quick},\n  \"transfer\": [\n",
        json_escape(&gpu.adapter().to_string())
    ));
    let phase_json = |p: &[f64; 5]| {
        format!(
            "{{\"bind\": {:.2}, \"encode\": {:.2}, \"submit\": {:.2}, \"wait\": {:.2}, \"copy\": {:.2}}}",
            p[0], p[1], p[2], p[3], p[4]
        )
    };
    for (i, row) in r.rows.iter().enumerate() {
        s.push_str(&format!(
            "    {{\"n\": {}, \"bytes_each_way\": {}, \"graph_ms\": {:.4}, \"graph_gbps\": {:.3}, \"graph_fresh_ms\": {:.4}, \"graph_plain_ms\": {:.4}, \"baseline_ms\": {:.4}, \"baseline_gbps\": {:.3}, \"graph_over_baseline\": {:.4}, \"graph_phases_us\": {}, \"gpu_us\": {}, \"steady_buffers_created\": {}, \"steady_bind_groups_created\": {}}}{}\n",
            row.n,
            4 * row.n,
            row.graph_ms,
            row.gbps(row.graph_ms),
            row.graph_fresh_ms,
            row.plain_ms,
            row.baseline_ms,
            row.gbps(row.baseline_ms),
            row.graph_ms / row.baseline_ms,
            phase_json(&row.phases_us),
            row.gpu_us.map_or_else(|| "null".into(), |v| format!("{v:.2}")),
            row.steady.0,
            row.steady.1,
            if i + 1 < r.rows.len() { "," } else { "" }
        ));
    }
    let (n, g, c, kept) = r.compact;
    s.push_str(&format!(
        "  ],\n  \"chain64\": {{\"n\": {}, \"whole_run_ms\": {:.4}, \"phases_us\": {}}},\n  \"compact\": {{\"n\": {n}, \"whole_run_ms\": {g:.4}, \"cpu_filter_ms\": {c:.4}, \"cpu_over_graph\": {:.3}, \"kept\": {kept}}}\n}}\n",
        r.chain_n,
        r.chain_ms,
        phase_json(&r.chain_phases_us),
        c / g
    ));
    s
}

/// `--transfer --sweep`: where the paths cross over on this adapter. The
/// identity graph at 4 KiB to 64 MiB each way, and `compact` keeping few
/// values at 16 K to 16 M, under several [`TransferOptions`], interleaved;
/// whole-run medians (ms) and the upload (bind) and read-back (copy) phase
/// medians (µs).
pub fn sweep(gpu: &Gpu, quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    use vyre_graph::TransferOptions;
    let never = TransferOptions::default()
        .with_staging_min_bytes(u64::MAX)
        .with_parallel_min_bytes(u64::MAX)
        .with_count_first_min_bytes(u64::MAX);
    let split = never.with_staging_min_bytes(0).with_parallel_min_bytes(0);
    let variants: [(&str, TransferOptions); 7] = [
        ("queue, 1 thread", never),
        ("staged, 1 thread", never.with_staging_min_bytes(0)),
        ("staged, split", split),
        ("queue, split", never.with_parallel_min_bytes(0)),
        (
            "staged, split, 1 MiB chunks",
            split.with_overlap_chunk_bytes(1 << 20),
        ),
        (
            "staged, split, 4 MiB chunks",
            split.with_overlap_chunk_bytes(4 << 20),
        ),
        ("defaults", gpu.transfer_options()),
    ];
    let sizes: &[u64] = if quick {
        &[1 << 10, 1 << 14, 1 << 16]
    } else {
        &[
            1 << 10,
            1 << 12,
            1 << 14,
            1 << 16,
            1 << 17,
            1 << 18,
            1 << 20,
            1 << 22,
            1 << 24,
        ]
    };
    // `GRAPH_BENCH_SWEEP_N=4194304,16777216` and `GRAPH_BENCH_SWEEP_REPS=15`
    // narrow the identity sweep to some sizes, with more repetitions.
    let chosen: Vec<u64> = std::env::var("GRAPH_BENCH_SWEEP_N")
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|_| sizes.to_vec());
    let least_reps: usize = std::env::var("GRAPH_BENCH_SWEEP_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    println!("identity graph: whole run ms (upload µs / read-back µs), medians, interleaved");
    for &n in &chosen {
        let x = random_u32(n as usize, n);
        // A graph (so a launch plan and staging buffers) per variant: the
        // variants do not reshape each other's staging.
        let graphs = (0..variants.len())
            .map(|_| Identity::new(gpu))
            .collect::<Result<Vec<_>, _>>()?;
        let mut outputs = IdentityOutputs::default();
        let configs: Vec<DispatchConfig> = variants
            .iter()
            .map(|(_, t)| DispatchConfig::default().with_transfer(*t))
            .collect();
        for (c, graph) in configs.iter().zip(&graphs) {
            graph.run_into(c, &mut outputs, &x)?;
            assert!(outputs.y == x, "sweep n={n}: {c:?}");
        }
        let reps = (((1u64 << 26) / (4 * n)) as usize).clamp(least_reps, 200.max(least_reps));
        let mut times = vec![Vec::new(); configs.len()];
        let mut binds = vec![Vec::new(); configs.len()];
        let mut copies = vec![Vec::new(); configs.len()];
        for rep in 0..reps {
            for k in order(configs.len(), rep) {
                let mut report = None;
                times[k].push(time_ms(|| {
                    report = Some(
                        graphs[k]
                            .run_into(&configs[k], &mut outputs, &x)
                            .expect("run"),
                    );
                }));
                if let Some(r) = report {
                    binds[k].push(r.phases.bind_ns as f64 / 1e3);
                    copies[k].push(r.phases.copy_ns as f64 / 1e3);
                }
            }
        }
        let cells: Vec<String> = (0..configs.len())
            .map(|k| {
                format!(
                    "{}: {:.3} ({:.0}/{:.0})",
                    variants[k].0,
                    median(&mut times[k]),
                    median(&mut binds[k]),
                    median(&mut copies[k])
                )
            })
            .collect();
        println!("{:>9} u32 ({reps} reps): {}", n, cells.join("; "));
    }
    println!(
        "compact keeping ~0.4%: whole run ms read whole / read by count, medians, interleaved"
    );
    let compact = Compact::new(gpu)?;
    let params = Params { threshold: 1 << 24 };
    let whole = DispatchConfig::default().with_transfer(never);
    let counted = DispatchConfig::default().with_transfer(never.with_count_first_min_bytes(0));
    let sizes: &[u64] = if quick {
        &[1 << 12, 1 << 14]
    } else {
        &[
            1 << 12,
            1 << 14,
            1 << 16,
            1 << 18,
            1 << 20,
            1 << 22,
            1 << 24,
        ]
    };
    for &n in sizes {
        let values = random_u32(n as usize, 3 * n);
        let resident = GpuBufferHandle::from_slice(gpu, &values)?;
        let want = values.iter().filter(|&&v| v < params.threshold).count();
        let reps = (((1u64 << 26) / (4 * n)).clamp(5, 100)) as usize;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for rep in 0..reps {
            for k in order(2, rep) {
                let config = if k == 0 { &whole } else { &counted };
                let t = time_ms(|| {
                    let out = compact
                        .run_with(config, &resident, &params)
                        .expect("compact");
                    assert_eq!(out.kept.len(), want);
                });
                if k == 0 { a.push(t) } else { b.push(t) }
            }
        }
        println!(
            "{:>9} values, capacity {} KiB, {want} kept ({reps} reps): whole {:.3}, by count {:.3}",
            n,
            (4 * n + 4) >> 10,
            median(&mut a),
            median(&mut b)
        );
    }
    Ok(())
}

/// `GRAPH_BENCH_CHAIN_THREADS=1`: the fused chain at 1M elements with its
/// host copies split over 1 to 16 threads and pieces of 128 to 512 KiB,
/// interleaved (a `Gpu` whose pool has 16 threads): whole-run medians and
/// the upload and read-back phases.
pub fn chain_threads(quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    use vyre_graph::{GpuOptions, TransferOptions};
    let pool = TransferOptions::default().with_threads(16);
    let gpu = Gpu::with_options(GpuOptions::default().with_transfer(pool))?;
    println!("adapter: {} (transfer pool of 16)", gpu.adapter());
    let n = 1u64 << 20;
    let x = random_u32(n as usize, n);
    let expected = chain_reference(&x);
    let chain = Chain64::new(&gpu)?;
    let mut outputs = Chain64Outputs::default();
    let variants: [(usize, u64); 7] = [
        (1, 256 << 10),
        (4, 256 << 10),
        (8, 256 << 10),
        (8, 512 << 10),
        (12, 256 << 10),
        (16, 256 << 10),
        (16, 128 << 10),
    ];
    let configs: Vec<DispatchConfig> = variants
        .iter()
        .map(|&(t, p)| {
            let transfer = TransferOptions::default()
                .with_threads(t)
                .with_piece_bytes(p);
            DispatchConfig::default().with_transfer(transfer)
        })
        .collect();
    for config in &configs {
        chain.run_into(config, &mut outputs, &x)?;
        assert!(outputs.y == expected, "chain64 n={n} differs from the CPU");
    }
    let reps = if quick { 20 } else { 300 };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut ups: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut downs: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    for rep in 0..reps {
        for v in order(configs.len(), rep) {
            let mut phases = [0.0; 5];
            times[v].push(time_ms(|| {
                let report = chain
                    .run_into(&configs[v], &mut outputs, &x)
                    .expect("chain run");
                phases = self::phases(&report.phases);
            }));
            ups[v].push(phases[0]);
            downs[v].push(phases[4]);
        }
    }
    assert!(outputs.y == expected, "chain64 n={n} changed");
    for (v, &(t, p)) in variants.iter().enumerate() {
        println!(
            "chain64 1M threads {t:>2} pieces {:>3} KiB: whole run {:.3} ms, upload {:.1} µs, read-back {:.1} µs",
            p >> 10,
            median(&mut times[v]),
            median(&mut ups[v]),
            median(&mut downs[v])
        );
    }
    Ok(())
}
