//! The `bfs` workload: breadth-first levels of a random graph (8 directed
//! edges per vertex) from vertex 0, four ways, interleaved:
//! - **graph K=64 learned**: `examples/bfs`'s `graph!` (`repeat up to 64`;
//!   the frontier an append buffer, the loop stopping itself on the
//!   device, levels read back once) with the default
//!   `LoopBound::Learned`: it records about as many levels as the last
//!   runs needed (one submission once learned);
//! - **graph K=64 full**: the same with `LoopBound::Full`: all 64 levels
//!   recorded, one submission (what every run did before learned bounds);
//! - **graph K=16**: the same graph with `repeat up to 16` (enough here),
//!   `LoopBound::Full`: a hand-picked `K`;
//! - **host loop**: the same kernels driven from the host, one submission
//!   and one 4-byte readback of the frontier size per level
//!   (`examples/bfs/host.rs`).
//!
//! The graph is uploaded once for both (the graph's inputs are resident
//! handles); both times include reading the levels back, and only them
//! (the graph's frontiers are `append intermediate`: they stay on the
//! device). Both results are checked vertex by vertex against the CPU first. `GRAPH_BENCH_BFS=1` runs
//! this workload alone.

use std::cell::RefCell;

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle, LoopBound, graph};

use crate::bfs::device::{Bfs, BfsOutputs, MAX_LEVELS, search};
use crate::bfs::host::HostBfs;
use crate::bfs::{cpu_bfs, expanded_levels, first_mismatch, random_graph};
use crate::measure::{median, order, time_ms};

graph! {
    /// `Bfs` with at most 16 levels instead of 64 (enough for these
    /// graphs: 7 to 11 levels): what the idle iterations of `Bfs` cost.
    pub struct BfsK16;

    kernel init = file "examples/kernels/bfs/init.wgsl";
    kernel expand = file "examples/kernels/bfs/expand.wgsl";

    input offsets[n + 1];
    input edges[8 * n];
    uniform params;
    output levels[n];
    append intermediate fa[n];
    append intermediate fb[n];

    node init(params: params, levels: levels, frontier: fa) over n;
    repeat up to 16 as i until empty(ping(fa, fb)) {
        node expand(offsets: offsets, edges: edges, levels: levels, frontier: ping(fa, fb), next: pong(fa, fb)) over count(ping(fa, fb));
    }
}

/// One size's measurements.
pub struct BfsRow {
    pub vertices: u64,
    pub edges: u64,
    /// Frontiers expanded (the CPU's depth; every variant checked to match).
    pub levels: u32,
    /// `Bfs`: `repeat up to 64`, learned bound (the default).
    pub graph_ms: f64,
    /// `Bfs` with `LoopBound::Full`: all 64 levels recorded.
    pub graph_full_ms: f64,
    /// Levels a steady learned run recorded.
    pub graph_recorded: u32,
    /// The first run at this size (a fresh graph; plan made in the run),
    /// learned (records 8, continues) and full (records 64): medians.
    pub first_learned_ms: f64,
    pub first_full_ms: f64,
    /// `BfsK16`: `repeat up to 16`, `LoopBound::Full`.
    pub graph_k16_ms: f64,
    pub host_loop_ms: f64,
    /// The `Bfs` pass's GPU time (timestamps), where the adapter has them.
    pub graph_gpu_ms: Option<f64>,
    pub graph_submissions: u32,
    pub host_loop_submissions: u32,
    /// Buffers and bind groups a steady-state `Bfs` run created.
    pub steady_buffers_created: u64,
    pub steady_bind_groups_created: u64,
}

impl BfsRow {
    /// The row as one JSON object (fields named as in the other workloads).
    pub fn json(&self) -> String {
        format!(
            "{{\"workload\": \"bfs\", \"n\": {}, \"edges\": {}, \"levels\": {}, \"max_levels\": {MAX_LEVELS}, \"graph_ms\": {:.4}, \"graph_recorded\": {}, \"graph_full_ms\": {:.4}, \"first_learned_ms\": {:.4}, \"first_full_ms\": {:.4}, \"graph_k16_ms\": {:.4}, \"host_loop_ms\": {:.4}, \"graph_over_host_loop\": {:.4}, \"graph_full_over_host_loop\": {:.4}, \"graph_over_k16\": {:.4}, \"graph_k16_over_host_loop\": {:.4}, \"graph_gpu_ms\": {}, \"graph_submissions\": {}, \"host_loop_submissions\": {}, \"steady_buffers_created\": {}, \"steady_bind_groups_created\": {}}}",
            self.vertices,
            self.edges,
            self.levels,
            self.graph_ms,
            self.graph_recorded,
            self.graph_full_ms,
            self.first_learned_ms,
            self.first_full_ms,
            self.graph_k16_ms,
            self.host_loop_ms,
            self.graph_ms / self.host_loop_ms,
            self.graph_full_ms / self.host_loop_ms,
            self.graph_ms / self.graph_k16_ms,
            self.graph_k16_ms / self.host_loop_ms,
            self.graph_gpu_ms
                .map_or_else(|| "null".to_string(), |v| format!("{v:.4}")),
            self.graph_submissions,
            self.host_loop_submissions,
            self.steady_buffers_created,
            self.steady_bind_groups_created,
        )
    }
}

type Error = Box<dyn std::error::Error>;

/// Checks a device-loop search's levels and iterations against the CPU's.
fn check(
    label: &str,
    levels: &[u32],
    iterations: u32,
    expected: &[u32],
    depth: u32,
) -> Result<(), Error> {
    if let Some((v, got, want)) = first_mismatch(levels, expected) {
        return Err(format!("bfs {label}: vertex {v} has level {got}, the CPU {want}").into());
    }
    if iterations != depth {
        return Err(format!(
            "bfs {label}: {iterations} levels expanded, the CPU's depth is {depth}"
        )
        .into());
    }
    Ok(())
}

/// Measure one graph size (`vertices`, 8 edges each) with `reps`
/// interleaved repetitions of each variant.
pub fn measure(gpu: &Gpu, vertices: u32, reps: usize) -> Result<BfsRow, Error> {
    let csr = random_graph(vertices, u64::from(vertices));
    let expected = cpu_bfs(&csr, 0);
    let depth = expanded_levels(&expected);

    let k64 = Bfs::new(gpu)?;
    let k16 = BfsK16::new(gpu)?;
    let offsets = GpuBufferHandle::from_slice(gpu, &csr.offsets)?;
    let edges = GpuBufferHandle::from_slice(gpu, &csr.edges)?;
    let out64 = RefCell::new(BfsOutputs::default());
    let out16 = RefCell::new(BfsK16Outputs::default());
    let plain = DispatchConfig::default();
    let whole = DispatchConfig::default().with_loop_bound(LoopBound::Full);
    // The levels alone are read back (the frontiers stay on the device),
    // as in the host loop; `run_into` reuses the outputs' allocation.
    let run = |config: &DispatchConfig| {
        search(&k64, &offsets, &edges, 0, &mut out64.borrow_mut(), config).expect("bfs graph run")
    };
    let run16 = |config: &DispatchConfig| {
        k16.run_into(
            config,
            &mut out16.borrow_mut(),
            &offsets,
            &edges,
            &Params { source: 0 },
        )
        .expect("bfs graph run")
    };
    let report = run(&plain);
    let iterations = report.loops.first().map_or(0, |l| l.iterations);
    check(
        "graph",
        &out64.borrow().levels,
        iterations,
        &expected,
        depth,
    )?;
    let report = run16(&whole);
    let iterations = report.loops.first().map_or(0, |l| l.iterations);
    check(
        "graph K=16",
        &out16.borrow().levels,
        iterations,
        &expected,
        depth,
    )?;
    run(&plain);
    let before = gpu.counters();
    let report = run(&plain);
    let steady = gpu.counters().since(&before);
    let recorded = report.loops.first().map_or(0, |l| l.recorded);

    let host = HostBfs::new(gpu, &csr);
    let mut host_levels = Vec::new();
    let host_report = host.run(0, MAX_LEVELS, &mut host_levels);
    check(
        "host loop",
        &host_levels,
        host_report.iterations,
        &expected,
        depth,
    )?;

    let report = run(&whole);
    let iterations = report.loops.first().map_or(0, |l| l.iterations);
    check(
        "graph full",
        &out64.borrow().levels,
        iterations,
        &expected,
        depth,
    )?;
    let (first_learned_ms, first_full_ms) = first_runs(gpu, (&offsets, &edges), &expected, depth)?;

    let (mut g, mut gf, mut g16, mut h) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        for variant in order(4, rep) {
            match variant {
                0 => g.push(time_ms(|| {
                    run(&plain);
                })),
                1 => gf.push(time_ms(|| {
                    run(&whole);
                })),
                2 => g16.push(time_ms(|| {
                    run16(&whole);
                })),
                _ => h.push(time_ms(|| {
                    host.run(0, MAX_LEVELS, &mut host_levels);
                })),
            }
        }
    }
    let profile = DispatchConfig::default().with_profile(true);
    let mut gpu_ms: Vec<f64> = (0..5)
        .filter_map(|_| run(&profile).gpu_ns)
        .map(|ns| ns as f64 / 1e6)
        .collect();
    Ok(BfsRow {
        vertices: u64::from(vertices),
        edges: csr.edges.len() as u64,
        levels: depth,
        graph_ms: median(&mut g),
        graph_full_ms: median(&mut gf),
        graph_recorded: recorded,
        first_learned_ms,
        first_full_ms,
        graph_k16_ms: median(&mut g16),
        host_loop_ms: median(&mut h),
        graph_gpu_ms: (!gpu_ms.is_empty()).then(|| median(&mut gpu_ms)),
        graph_submissions: report.submissions,
        host_loop_submissions: host_report.submissions,
        steady_buffers_created: steady.buffers_created,
        steady_bind_groups_created: steady.bind_groups_created,
    })
}

/// The first run at a size, learned (records 8 levels, continues in
/// further submissions) against full (records 64), each on a fresh graph
/// (so nothing is learned and no plan cached; pipelines built beforehand):
/// medians of 3, checked against the CPU.
fn first_runs(
    gpu: &Gpu,
    (offsets, edges): (&GpuBufferHandle, &GpuBufferHandle),
    expected: &[u32],
    depth: u32,
) -> Result<(f64, f64), Error> {
    let (mut learned, mut full) = (Vec::new(), Vec::new());
    for bound in [
        LoopBound::Learned,
        LoopBound::Full,
        LoopBound::Learned,
        LoopBound::Full,
        LoopBound::Learned,
        LoopBound::Full,
    ] {
        let bfs = Bfs::new(gpu)?;
        let mut out = BfsOutputs::default();
        let config = DispatchConfig::default().with_loop_bound(bound);
        let mut report = None;
        let ms = time_ms(|| report = Some(search(&bfs, offsets, edges, 0, &mut out, &config)));
        let report = report.ok_or("no run")??;
        let iterations = report.loops.first().map_or(0, |l| l.iterations);
        check("graph, first run", &out.levels, iterations, expected, depth)?;
        match bound {
            LoopBound::Full => full.push(ms),
            _ => learned.push(ms),
        }
    }
    Ok((median(&mut learned), median(&mut full)))
}

/// The sizes of a run: small ones for `--quick` (CI), up to 1,000,000
/// vertices and 8,000,000 edges for the full run.
pub fn sizes(quick: bool) -> &'static [(u32, usize)] {
    if quick {
        &[(10_000, 10), (100_000, 6)]
    } else {
        &[(10_000, 120), (100_000, 60), (1_000_000, 20)]
    }
}

/// The rows as a table.
pub fn print(rows: &[BfsRow]) {
    println!();
    println!(
        "{:<5} {:>9} {:>9} {:>6} {:>12} {:>8} {:>11} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>11} {:>9} {:>16}",
        "bfs",
        "vertices",
        "edges",
        "levels",
        "K=64 learned",
        "recorded",
        "K=64 full",
        "K=16 ms",
        "host ms",
        "gpu ms",
        "graph/host",
        "graph/K=16",
        "full/host",
        "submissions",
        "steady b/bg",
        "first learned/full"
    );
    for r in rows {
        println!(
            "{:<5} {:>9} {:>9} {:>6} {:>12.3} {:>8} {:>11.3} {:>9.3} {:>9.3} {:>9} {:>10.3} {:>10.3} {:>10.3} {:>5} / {:<3} {:>5}/{} {:>8.3}/{:.3}",
            "",
            r.vertices,
            r.edges,
            r.levels,
            r.graph_ms,
            r.graph_recorded,
            r.graph_full_ms,
            r.graph_k16_ms,
            r.host_loop_ms,
            r.graph_gpu_ms
                .map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}")),
            r.graph_ms / r.host_loop_ms,
            r.graph_ms / r.graph_k16_ms,
            r.graph_full_ms / r.host_loop_ms,
            r.graph_submissions,
            r.host_loop_submissions,
            r.steady_buffers_created,
            r.steady_bind_groups_created,
            r.first_learned_ms,
            r.first_full_ms,
        );
    }
}

/// The rows as the `"bfs"` member of the benchmark's JSON object (a line
/// each, no trailing comma).
pub fn json(rows: &[BfsRow]) -> String {
    let mut json = String::from("  \"bfs\": [\n");
    for (i, r) in rows.iter().enumerate() {
        let comma = if i + 1 < rows.len() { "," } else { "" };
        json.push_str(&format!("    {}{comma}\n", r.json()));
    }
    json.push_str("  ]\n");
    json
}

/// `GRAPH_BENCH_BFS=1`: the bfs workload alone, its table, and its JSON
/// (`adapter`, `quick` and `bfs`, as in the full run) when asked.
pub fn only(
    gpu: &Gpu,
    quick: bool,
    json_path: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    for &(vertices, reps) in sizes(quick) {
        rows.push(measure(gpu, vertices, reps)?);
        println!("measured bfs n={vertices}");
    }
    print(&rows);
    if let Some(path) = json_path {
        let json = format!(
            "{{\n  \"adapter\": \"{}\",\n  \"quick\": {quick},\n{}}}\n",
            crate::measure::json_escape(&gpu.adapter().to_string()),
            json(&rows)
        );
        std::fs::write(path, json)?;
        println!("wrote {path}");
    }
    Ok(())
}
