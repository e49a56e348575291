//! Profiling modes: `--trace DIR` (a Chrome trace / Perfetto JSON per
//! workload: one warm-up and three profiled runs, each checked against the
//! CPU) and `--profile-cost` (what profiling costs a run: unprofiled,
//! timestamps on, timestamps on with the run's trace made as JSON text, and
//! with it written to a file, as interleaved host wall times).

use std::path::Path;
use std::time::Instant;

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle, RunReport, Trace};

use crate::bfs::device::{Bfs, BfsOutputs, search};
use crate::bfs::{cpu_bfs, first_mismatch, random_graph};
use crate::chains::{
    Chain64, Chain64Outputs, Wide8x8, Wide8x8Outputs, chain_reference, wide_reference,
};
use crate::measure::{median, order, random_u32};
use crate::radix::{RadixSort, RadixSortOutputs};

type Error = Box<dyn std::error::Error>;

/// A workload's run under a config.
type RunFn<'a> = Box<dyn FnMut(&DispatchConfig) -> Result<RunReport, Error> + 'a>;

/// One workload as the profiling modes run it: a run under a config that
/// checks its own output against the CPU.
struct Workload<'a> {
    name: String,
    run: RunFn<'a>,
}

/// Fail with `what` unless `got == want`.
fn same(got: &[u32], want: &[u32], what: &str) -> Result<(), Error> {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        _ if got.len() != want.len() => {
            Err(format!("{what}: {} elements, want {}", got.len(), want.len()).into())
        }
        Some(i) => Err(format!(
            "{what}: element {i} is {}, the CPU says {}",
            got[i], want[i]
        )
        .into()),
        None => Ok(()),
    }
}

/// The chain workloads at `n`, checked against the CPU.
fn chain(gpu: &Gpu, n: usize) -> Result<Workload<'static>, Error> {
    let graph = Chain64::new(gpu)?;
    let x = random_u32(n, n as u64);
    let want = chain_reference(&x);
    let mut out = Chain64Outputs::default();
    Ok(Workload {
        name: format!("chain64_{n}"),
        run: Box::new(move |config| {
            let report = graph.run_into(config, &mut out, &x)?;
            same(&out.y, &want, "chain64")?;
            Ok(report)
        }),
    })
}

fn wide(gpu: &Gpu) -> Result<Workload<'static>, Error> {
    let graph = Wide8x8::new(gpu)?;
    let x = random_u32(65_536, 7);
    let want = wide_reference(&x);
    let mut out = Wide8x8Outputs::default();
    Ok(Workload {
        name: "wide8x8_65536".into(),
        run: Box::new(move |config| {
            let report = graph.run_into(config, &mut out, &x)?;
            same(&out.y, &want, "wide8x8")?;
            Ok(report)
        }),
    })
}

fn radix(gpu: &Gpu, n: usize) -> Result<Workload<'static>, Error> {
    let graph = RadixSort::new(gpu)?;
    let x = random_u32(n, 99);
    let mut want = x.clone();
    want.sort_unstable();
    let mut out = RadixSortOutputs::default();
    Ok(Workload {
        name: format!("radix_sort_{n}"),
        run: Box::new(move |config| {
            let report = graph.run_into(config, &mut out, &x)?;
            same(&out.keys, &want, "radix_sort")?;
            Ok(report)
        }),
    })
}

fn bfs(gpu: &Gpu, vertices: u32) -> Result<Workload<'static>, Error> {
    let graph = Bfs::new(gpu)?;
    let csr = random_graph(vertices, u64::from(vertices));
    let want = cpu_bfs(&csr, 0);
    let offsets = GpuBufferHandle::from_slice(gpu, &csr.offsets)?;
    let edges = GpuBufferHandle::from_slice(gpu, &csr.edges)?;
    let mut out = BfsOutputs::default();
    Ok(Workload {
        name: format!("bfs_{vertices}"),
        run: Box::new(move |config| {
            let report = search(&graph, &offsets, &edges, 0, &mut out, config)?;
            if let Some((v, got, want)) = first_mismatch(&out.levels, &want) {
                return Err(format!("bfs: vertex {v} has level {got}, the CPU says {want}").into());
            }
            Ok(report)
        }),
    })
}

fn workloads(gpu: &Gpu, quick: bool) -> Result<Vec<Workload<'static>>, Error> {
    let big = if quick { 65_536 } else { 1_048_576 };
    Ok(vec![
        chain(gpu, 1024)?,
        chain(gpu, big)?,
        wide(gpu)?,
        radix(gpu, big)?,
        bfs(gpu, if quick { 10_000 } else { 1_000_000 })?,
    ])
}

/// `--trace DIR`: a trace per workload, `DIR/<workload>.json`.
pub fn traces(gpu: &Gpu, quick: bool, dir: &str) -> Result<(), Error> {
    std::fs::create_dir_all(dir)?;
    let config = DispatchConfig::default().with_profile(true);
    for mut w in workloads(gpu, quick)? {
        (w.run)(&config)?;
        let mut trace = Trace::new();
        for _ in 0..3 {
            trace.push(&(w.run)(&config)?);
        }
        let path = Path::new(dir).join(format!("{}.json", w.name));
        trace.write(&path)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `--profile-cost`: each workload's median host wall time per run with
/// profiling off, with timestamps, with timestamps and the run's trace made
/// as JSON text, and with the trace written to a file, interleaved in a
/// shuffled order each repetition.
pub fn cost(gpu: &Gpu, quick: bool) -> Result<(), Error> {
    let reps = if quick { 15 } else { 61 };
    let dir = std::env::temp_dir().join(format!("graph_bench_trace_{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let off = DispatchConfig::default();
    let on = DispatchConfig::default().with_profile(true);
    println!();
    println!(
        "{:<18} {:>9} {:>13} {:>8} {:>10} {:>8} {:>10} {:>8} {:>9}",
        "workload", "off ms", "timestamps ms", "+%", "+json ms", "+%", "+file ms", "+%", "trace KB"
    );
    for mut w in workloads(gpu, quick)? {
        (w.run)(&off)?;
        (w.run)(&on)?;
        let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let mut bytes = 0;
        let path = dir.join(format!("{}.json", w.name));
        for rep in 0..reps {
            for mode in order(4, rep) {
                let start = Instant::now();
                let report = (w.run)(if mode == 0 { &off } else { &on })?;
                match mode {
                    2 => bytes = std::hint::black_box(report.to_trace_json()).len(),
                    3 => report.write_trace(&path)?,
                    _ => {}
                }
                times[mode].push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        let [a, b, c, d] = times.map(|mut t| median(&mut t));
        let pct = |x: f64| 100.0 * (x / a - 1.0);
        println!(
            "{:<18} {a:>9.3} {b:>13.3} {:>+7.1}% {c:>10.3} {:>+7.1}% {d:>10.3} {:>+7.1}% {:>9.1}",
            w.name,
            pct(b),
            pct(c),
            pct(d),
            bytes as f64 / 1024.0
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "(median of {reps} interleaved runs each; timestamps: DispatchConfig::with_profile(true); +json: and RunReport::to_trace_json; +file: RunReport::write_trace instead)"
    );
    Ok(())
}
