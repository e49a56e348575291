//! Holds `graph!` against hand-written wgpu and per-node submission.
//!
//! ```sh
//! cargo run --release --example graph_bench -- [--quick] [--json PATH]
//! cargo run --release --example graph_bench -- --transfer [--quick] [--json PATH]
//! cargo run --release --example graph_bench -- --batch [--quick] [--json PATH]
//! cargo run --release --example graph_bench -- --reduce [--quick] [--json PATH]
//! cargo run --release --example graph_bench -- --trace DIR [--quick]
//! cargo run --release --example graph_bench -- --profile-cost [--quick]
//! ```
//!
//! `--trace DIR` writes a Chrome trace / Perfetto JSON per workload
//! (chain64 at two sizes, wide8x8, radix_sort, bfs): a warm-up, then three
//! profiled runs, each checked against the CPU (`profile.rs`;
//! docs/profiling.md). `--profile-cost` times each workload's runs with
//! profiling off, with timestamps on, and with the run's trace written,
//! interleaved.
//!
//! `--reduce` times the built-in reductions and scans against hand-written
//! WGSL through plain wgpu, in GPU time (`reduce_bench.rs`).
//!
//! `--transfer` measures moving data in and out instead (`transfer.rs`):
//! a one-node identity graph at 1,024 to 16,777,216 `u32`s against a
//! raw-wgpu baseline, chain64's whole run at 1,048,576 and `compact` at
//! 16,777,216 against the CPU filter. `--transfer --sweep` finds where the
//! transfer paths cross over on the adapter (each `TransferOptions` path
//! forced on and off, interleaved, 4 KiB to 64 MiB).
//!
//! `--batch` measures many small problems at once (`batch.rs`): chain64 at
//! 1,024 and 65,536 elements as 1, 16 and 256 instances batched
//! (`Graph::run_batch`), as sequential runs, and streamed at depth 2 and 3.
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
//!   interleaved, with host and GPU medians; `--json PATH` writes them;
//! - `GRAPH_BENCH_CHAIN_THREADS=1`: the fused chain at 1M elements with its
//!   host copies over 1 to 16 threads and several piece sizes, interleaved;
//! - `GRAPH_BENCH_FOLD=1`: chain64 written with `g.x` against chain64
//!   written with the fold-safe `g.x + g.y * nwg.x * 256u` (both fused),
//!   interleaved, host and GPU medians (the table has both as rows too:
//!   `chain64` and `chain64_fold`).
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
//!
//! The files: `main.rs` (arguments and output), `measure.rs` (the shared
//! measuring), one file per workload family (`chains.rs`, `radix_bench.rs`,
//! `bfs_bench.rs`, `stride.rs`, `transfer.rs`, `batch.rs`), `hand.rs` (the hand-written wgpu
//! baselines).

mod batch;
mod bfs_bench;
mod chains;
mod hand;
mod measure;
mod profile;
mod radix_bench;
mod reduce_bench;
mod reduce_probe;

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
mod transfer;

use vyre_graph::Gpu;

use chains::{Chain64, Wide8x8};
use measure::{Row, json_escape};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let json_path = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
        .cloned();

    if std::env::var("GRAPH_BENCH_PROBE").as_deref() == Ok("reduce") {
        return reduce_probe::probe(quick);
    }
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    if std::env::var_os("GRAPH_BENCH_ASYNC").is_some() {
        return chains::async_pair(&gpu);
    }
    if std::env::var("GRAPH_BENCH_PROBE").as_deref() == Ok("radix") {
        return radix_bench::probe_radix(&gpu);
    }
    if std::env::var_os("GRAPH_BENCH_PROBE").is_some() {
        return chains::probe(&gpu);
    }
    if std::env::var_os("GRAPH_BENCH_CHAIN_THREADS").is_some() {
        return transfer::chain_threads(quick);
    }
    if std::env::var_os("GRAPH_BENCH_FOLD").is_some() {
        return chains::fold_only(&gpu);
    }
    if let Some(dir) = args
        .iter()
        .position(|a| a == "--trace")
        .and_then(|i| args.get(i + 1))
    {
        return profile::traces(&gpu, quick, dir);
    }
    if args.iter().any(|a| a == "--profile-cost") {
        return profile::cost(&gpu, quick);
    }
    if std::env::var_os("GRAPH_BENCH_STRIDE").is_some() {
        return stride::run(&gpu, quick, json_path.as_deref());
    }
    if args.iter().any(|a| a == "--batch") {
        let rows = batch::run(&gpu, quick)?;
        batch::print(&rows);
        if let Some(path) = json_path {
            std::fs::write(&path, batch::json(&gpu, quick, &rows))?;
            println!("wrote {path}");
        }
        return Ok(());
    }
    if args.iter().any(|a| a == "--transfer") && args.iter().any(|a| a == "--sweep") {
        return transfer::sweep(&gpu, quick);
    }
    if args.iter().any(|a| a == "--transfer") {
        let report = transfer::run(&gpu, quick)?;
        transfer::print(&report);
        if let Some(path) = json_path {
            std::fs::write(&path, transfer::json(&gpu, quick, &report))?;
            println!("wrote {path}");
        }
        return Ok(());
    }
    if args.iter().any(|a| a == "--reduce") {
        let rows = reduce_bench::run(&gpu, quick)?;
        reduce_bench::print(&rows);
        if let Some(path) = json_path {
            std::fs::write(&path, reduce_bench::json(&gpu, quick, &rows))?;
            println!("wrote {path}");
        }
        return Ok(());
    }
    if std::env::var_os("GRAPH_BENCH_BFS").is_some() {
        return bfs_bench::only(&gpu, quick, json_path.as_deref());
    }
    let chain = Chain64::new(&gpu)?;
    let wide = Wide8x8::new(&gpu)?;
    let sorter = radix::RadixSort::new(&gpu)?;

    let mut rows = chains::rows(&gpu, quick)?;
    rows.push(chains::wide_row(&gpu, &wide, quick)?);
    rows.push(radix_bench::row(&gpu, &sorter, quick)?);
    let mut bfs_rows = Vec::new();
    for &(vertices, reps) in bfs_bench::sizes(quick) {
        bfs_rows.push(bfs_bench::measure(&gpu, vertices, reps)?);
        println!("measured bfs n={vertices}");
    }
    let hits = chains::plan_cache_hit_ns(&chain);

    print(&rows, &bfs_rows, hits);
    if let Some(path) = json_path {
        std::fs::write(&path, json(&gpu, quick, &rows, &bfs_rows, hits))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// The table of every workload's medians, the bfs table and the
/// plan-cache hit times.
fn print(rows: &[Row], bfs_rows: &[bfs_bench::BfsRow], (hit_ns, locked_hit_ns): (f64, f64)) {
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
    for r in rows {
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
    bfs_bench::print(bfs_rows);
    println!(
        "plan-cache hit: {hit_ns:.1} ns (the plan cache's lookup), {locked_hit_ns:.1} ns (Graph::plan: lock + lookup)"
    );
}

/// The JSON of the run (see the README's Performance section).
fn json(
    gpu: &Gpu,
    quick: bool,
    rows: &[Row],
    bfs_rows: &[bfs_bench::BfsRow],
    (hit_ns, locked_hit_ns): (f64, f64),
) -> String {
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
    json.push_str(&bfs_bench::json(bfs_rows));
    json.push_str("}\n");
    json
}
