//! Breadth-first search levels of a random graph, the frontier an append
//! buffer, the loop stopping itself on the device.
//!
//! The graph: 1,000,000 vertices and 8,000,000 directed edges (4,000,000
//! random pairs stored both ways) in CSR form (`offsets[V + 1]`,
//! `edges[E]`), built by a deterministic generator. The search from vertex
//! 0 is one `graph!` ([`graph::device::Bfs`], in `device.rs`): an `init` node
//! writes the levels and appends the source to the first frontier, then
//! `repeat up to 64 as i until empty(ping(fa, fb))` expands one frontier
//! per iteration into the other (`over count(ping(fa, fb))`: as many
//! invocations as the frontier holds, dispatched indirectly). Once a
//! frontier is empty the remaining iterations dispatch nothing, so the
//! whole search is one submission with no readback until the levels.
//!
//! It is checked vertex by vertex against a CPU BFS, and the iterations
//! that did work (from the run's report) against the CPU's depth. The same
//! search driven from the host (one submission and one 4-byte readback of
//! the frontier size per level, `host.rs`) is checked and timed beside it.
//!
//! ```text
//! cargo run --release --example bfs              # 1,000,000 vertices, 8,000,000 edges
//! cargo run --release --example bfs -- 10000     # 10,000 vertices, 80,000 edges
//! cargo run --release --example bfs -- 10000 --trace bfs.json   # and a trace of 3 profiled runs
//! ```

mod graph;

#[path = "../common/mod.rs"]
mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use graph::device::{Bfs, BfsOutputs, MAX_LEVELS, Params, search};
use graph::host::HostBfs;
use graph::{EDGES_PER_VERTEX, cpu_bfs, expanded_levels, first_mismatch, random_graph};
use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle, Trace};

/// The search starts here.
const SOURCE: u32 = 0;

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let vertices: u32 = match common::args().first() {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the vertex count `{arg}` is not a u32: {e}"))?,
        None => 1_000_000,
    };
    if !(2..=u32::MAX / EDGES_PER_VERTEX).contains(&vertices) {
        return Err(format!(
            "the vertex count must be 2 to {} (8 directed edges per vertex must fit in u32)",
            u32::MAX / EDGES_PER_VERTEX
        )
        .into());
    }

    let start = Instant::now();
    let csr = random_graph(vertices, 0x5eed_b0f5);
    println!(
        "random graph: {vertices} vertices, {} directed edges (built in {:.1} ms)",
        csr.edges.len(),
        ms(start.elapsed())
    );
    // The device graph's contract: `offsets[n + 1]`, `edges[8 * n]`.
    if csr.offsets.len() != vertices as usize + 1
        || csr.edges.len() != (vertices * EDGES_PER_VERTEX) as usize
        || csr.offsets.last().copied() != Some(csr.edges.len() as u32)
    {
        return Err("the generator broke the CSR contract (offsets[V + 1], edges[8 V])".into());
    }
    let start = Instant::now();
    let expected = cpu_bfs(&csr, SOURCE);
    let cpu_time = start.elapsed();
    let depth = expanded_levels(&expected);
    let reached = expected.iter().filter(|&&l| l != graph::UNVISITED).count();
    println!(
        "CPU BFS from {SOURCE}: {reached} vertices reached, {depth} levels, {:.1} ms",
        ms(cpu_time)
    );

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());

    // The device loop: one graph run, the graph uploaded once (resident
    // inputs are bound in place).
    let bfs = Bfs::new(&gpu)?;
    common::write_dot("bfs", &bfs.to_dot())?;
    let offsets = GpuBufferHandle::from_slice(&gpu, &csr.offsets)?;
    let edges = GpuBufferHandle::from_slice(&gpu, &csr.edges)?;
    let config = DispatchConfig::default();
    // Timed with the levels read back alone, as the host loop does (the
    // frontiers are `append intermediate`: they stay on the device).
    let mut out = BfsOutputs::default();
    let (graph_time, report) = median_time(5, || {
        search(&bfs, &offsets, &edges, SOURCE, &mut out, &config)
    })?;
    let mut levels = std::mem::take(&mut out.levels);
    if let Some((v, got, want)) = first_mismatch(&levels, &expected) {
        eprintln!("graph: vertex {v} has level {got} on the GPU, {want} on the CPU");
        return Ok(false);
    }
    let Some(looped) = report.loops.first() else {
        eprintln!("graph: the run reported no loop");
        return Ok(false);
    };
    if looped.iterations != depth || looped.stopped != (depth < MAX_LEVELS) {
        eprintln!(
            "graph: {} iterations did work (stopped before {MAX_LEVELS}: {}), the CPU expanded {depth} levels",
            looped.iterations, looped.stopped
        );
        return Ok(false);
    }
    println!(
        "graph (device loop): {} of {MAX_LEVELS} iterations did work ({} recorded, learned), stopped itself: {}; {} submission(s); every level matches the CPU; median of 5: {:.2} ms",
        looped.iterations,
        looped.recorded,
        looped.stopped,
        report.submissions,
        ms(graph_time)
    );

    // The same graph object again, through the typed `run_reported`, from
    // another source: the last vertex.
    let other = vertices - 1;
    let (out, report) = bfs.run_reported(&config, &offsets, &edges, &Params { source: other })?;
    let want = cpu_bfs(&csr, other);
    if let Some((v, got, want)) = first_mismatch(&out.levels, &want) {
        eprintln!("graph from {other}: vertex {v} has level {got} on the GPU, {want} on the CPU");
        return Ok(false);
    }
    let iterations = report.loops.first().map_or(0, |l| l.iterations);
    if iterations != expanded_levels(&want) {
        eprintln!(
            "graph from {other}: {iterations} iterations did work, the CPU expanded {}",
            expanded_levels(&want)
        );
        return Ok(false);
    }
    println!("graph from vertex {other}: {iterations} iterations, every level matches the CPU");
    if let Some(path) = common::trace_path() {
        trace(&bfs, (&offsets, &edges), &expected, &path)?;
    }

    // The same kernels driven from the host: a submission and a readback
    // of the frontier's size per level.
    let host = HostBfs::new(&gpu, &csr);
    levels.fill(0);
    let (host_time, report) = median_time(5, || {
        Ok::<_, std::convert::Infallible>(host.run(SOURCE, MAX_LEVELS, &mut levels))
    })?;
    if let Some((v, got, want)) = first_mismatch(&levels, &expected) {
        eprintln!("host loop: vertex {v} has level {got} on the GPU, {want} on the CPU");
        return Ok(false);
    }
    if report.iterations != depth {
        eprintln!(
            "host loop: {} levels expanded, the CPU needed {depth}",
            report.iterations
        );
        return Ok(false);
    }
    println!(
        "host loop: {} levels, {} submissions, every level matches the CPU; median of 5: {:.2} ms",
        report.iterations,
        report.submissions,
        ms(host_time)
    );
    println!(
        "graph / host loop: {:.3} (CPU BFS {:.2} ms)",
        graph_time.as_secs_f64() / host_time.as_secs_f64(),
        ms(cpu_time)
    );
    Ok(true)
}

/// Three profiled searches from the source, each checked, as one trace
/// file (`--trace PATH`).
fn trace(
    bfs: &Bfs,
    (offsets, edges): (&GpuBufferHandle, &GpuBufferHandle),
    expected: &[u32],
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = DispatchConfig::default().with_profile(true);
    let mut trace = Trace::new();
    let mut out = BfsOutputs::default();
    for _ in 0..3 {
        let report = search(bfs, offsets, edges, SOURCE, &mut out, &config)?;
        if let Some((v, got, want)) = first_mismatch(&out.levels, expected) {
            return Err(format!("profiled run: vertex {v} has level {got}, the CPU {want}").into());
        }
        trace.push(&report);
    }
    trace.write(path)?;
    println!("wrote a trace of 3 profiled runs to {}", path.display());
    Ok(())
}

fn main() -> ExitCode {
    common::exit_code(run())
}
