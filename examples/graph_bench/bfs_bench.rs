//! The `bfs` workload: breadth-first levels of a random graph (8 directed
//! edges per vertex) from vertex 0, two ways, interleaved:
//! - **graph**: `examples/bfs`'s `graph!` (one submission; the frontier an
//!   append buffer, the loop stopping itself on the device, levels read
//!   back once);
//! - **host loop**: the same kernels driven from the host, one submission
//!   and one 4-byte readback of the frontier size per level
//!   (`examples/bfs/host.rs`).
//!
//! The graph is uploaded once for both (the graph's inputs are resident
//! handles); both times include reading the levels back. Both results are
//! checked vertex by vertex against the CPU first. `GRAPH_BENCH_BFS=1` runs
//! this workload alone.

use std::cell::RefCell;

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle};

use crate::bfs::device::{Bfs, BfsOutputs, MAX_LEVELS, Params};
use crate::bfs::host::HostBfs;
use crate::bfs::{cpu_bfs, expanded_levels, first_mismatch, random_graph};
use crate::{median, order, time_ms};

/// One size's measurements.
pub struct BfsRow {
    pub vertices: u64,
    pub edges: u64,
    /// Frontiers expanded (the CPU's depth; both variants checked to match).
    pub levels: u32,
    pub graph_ms: f64,
    pub host_loop_ms: f64,
    pub graph_submissions: u32,
    pub host_loop_submissions: u32,
    /// Buffers and bind groups a steady-state graph run created.
    pub steady_buffers_created: u64,
    pub steady_bind_groups_created: u64,
}

impl BfsRow {
    /// The row as one JSON object (fields named as in the other workloads).
    pub fn json(&self) -> String {
        format!(
            "{{\"workload\": \"bfs\", \"n\": {}, \"edges\": {}, \"levels\": {}, \"max_levels\": {MAX_LEVELS}, \"graph_ms\": {:.4}, \"host_loop_ms\": {:.4}, \"graph_over_host_loop\": {:.4}, \"graph_submissions\": {}, \"host_loop_submissions\": {}, \"steady_buffers_created\": {}, \"steady_bind_groups_created\": {}}}",
            self.vertices,
            self.edges,
            self.levels,
            self.graph_ms,
            self.host_loop_ms,
            self.graph_ms / self.host_loop_ms,
            self.graph_submissions,
            self.host_loop_submissions,
            self.steady_buffers_created,
            self.steady_bind_groups_created,
        )
    }
}

/// Measure one graph size (`vertices`, 8 edges each) with `reps`
/// interleaved repetitions of each variant.
pub fn measure(gpu: &Gpu, vertices: u32, reps: usize) -> Result<BfsRow, Box<dyn std::error::Error>> {
    let csr = random_graph(vertices, u64::from(vertices));
    let expected = cpu_bfs(&csr, 0);
    let levels = expanded_levels(&expected);

    let graph = Bfs::new(gpu)?;
    let offsets = GpuBufferHandle::from_slice(gpu, &csr.offsets)?;
    let edges = GpuBufferHandle::from_slice(gpu, &csr.edges)?;
    let params = Params { source: 0 };
    let outputs = RefCell::new(BfsOutputs::default());
    let plain = DispatchConfig::default();
    let run_graph = || {
        let mut out = outputs.borrow_mut();
        graph
            .run_into(&plain, &mut out, &offsets, &edges, &params)
            .expect("bfs graph run")
    };
    let report = run_graph();
    if let Some((v, got, want)) = first_mismatch(&outputs.borrow().levels, &expected) {
        return Err(format!("bfs graph: vertex {v} level {got}, CPU {want}").into());
    }
    let iterations = report.loops.first().map_or(0, |l| l.iterations);
    if iterations != levels {
        return Err(format!("bfs graph: {iterations} iterations did work, CPU depth {levels}").into());
    }
    let before = gpu.counters();
    let report = run_graph();
    let steady = gpu.counters().since(&before);

    let host = HostBfs::new(gpu, &csr);
    let mut host_levels = Vec::new();
    let host_report = host.run(0, MAX_LEVELS, &mut host_levels);
    if let Some((v, got, want)) = first_mismatch(&host_levels, &expected) {
        return Err(format!("bfs host loop: vertex {v} level {got}, CPU {want}").into());
    }
    if host_report.iterations != levels {
        return Err(format!(
            "bfs host loop: {} levels, CPU depth {levels}",
            host_report.iterations
        )
        .into());
    }

    let (mut g, mut h) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        for variant in order(2, rep) {
            if variant == 0 {
                g.push(time_ms(|| {
                    run_graph();
                }));
            } else {
                h.push(time_ms(|| {
                    host.run(0, MAX_LEVELS, &mut host_levels);
                }));
            }
        }
    }
    Ok(BfsRow {
        vertices: u64::from(vertices),
        edges: csr.edges.len() as u64,
        levels,
        graph_ms: median(&mut g),
        host_loop_ms: median(&mut h),
        graph_submissions: report.submissions,
        host_loop_submissions: host_report.submissions,
        steady_buffers_created: steady.buffers_created,
        steady_bind_groups_created: steady.bind_groups_created,
    })
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
        "{:<11} {:>9} {:>9} {:>7} {:>10} {:>12} {:>11} {:>13} {:>11}",
        "workload",
        "vertices",
        "edges",
        "levels",
        "graph ms",
        "host loop ms",
        "graph/host",
        "submissions",
        "steady b/bg"
    );
    for r in rows {
        println!(
            "{:<11} {:>9} {:>9} {:>7} {:>10.3} {:>12.3} {:>11.3} {:>6} / {:<4} {:>5}/{}",
            "bfs",
            r.vertices,
            r.edges,
            r.levels,
            r.graph_ms,
            r.host_loop_ms,
            r.graph_ms / r.host_loop_ms,
            r.graph_submissions,
            r.host_loop_submissions,
            r.steady_buffers_created,
            r.steady_bind_groups_created,
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
pub fn only(gpu: &Gpu, quick: bool, json_path: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    for &(vertices, reps) in sizes(quick) {
        rows.push(measure(gpu, vertices, reps)?);
        println!("measured bfs n={vertices}");
    }
    print(&rows);
    if let Some(path) = json_path {
        let json = format!(
            "{{\n  \"adapter\": \"{}\",\n  \"quick\": {quick},\n{}}}\n",
            crate::json_escape(&gpu.adapter().to_string()),
            json(&rows)
        );
        std::fs::write(path, json)?;
        println!("wrote {path}");
    }
    Ok(())
}
