//! A batch of instances spread over the ranks of an MPI job: rank 0 holds
//! the batch (instances of mixed sizes), `vyre_mpi::Cluster` splits it by
//! each rank's measured throughput, every rank runs its share on its own
//! GPU, and rank 0 checks every instance against the CPU.
//!
//! By default through the typed API of the `graph!` type, on every rank:
//!
//! ```text
//! let graph = Poly::with_engine(Cluster::new(&universe, local))?;
//! let outs = graph.run_batch(&config, &inputs)?; // rank 0's inputs; &[] elsewhere
//! ```
//!
//! ```sh
//! cd vyre-mpi
//! cargo build --release --example mpi_batch
//! mpirun --allow-run-as-root --oversubscribe -np 4 ../target/release/examples/mpi_batch
//! ```
//!
//! Options: `--instances N` (default 24), `--size S` (the largest
//! instance; default 65536), `--batches B` (default 3: shares are learned
//! from the first), `--quick` (8 instances of at most 2048 elements),
//! `--sinks typed|host|vector|headed` (the typed API, the default; or
//! `Cluster::run` on instances built by hand whose outputs go into slices,
//! vectors, or `Headed` vectors of a graph with a header), `--timeout
//! SECONDS` (`ClusterOptions::timeout`), `--json PATH` (the overhead
//! figures, written by rank 0). Failures, for the tests: `--exit-rank R`,
//! `--panic-rank R`, `--stall-rank R` (that rank exits, panics or stops
//! answering in the middle of the first batch) and `--fail-rank R` (that
//! rank's engine refuses its share) and `--member-batch R` (that rank
//! passes a batch of its own, which only rank 0 may) and `--sinks wide`
//! (rank 0's vectors of `u64` do not fit the `u32` outputs): every rank
//! then runs a clean batch again and exits with code 2.

use std::time::{Duration, Instant};

use vyre_graph::{DispatchConfig, Feed, Gpu, Graph, Headed, Instance, Sink, graph};
use vyre_mpi::{Cluster, ClusterOptions, ClusterReport, Fault};

graph! {
    /// `y = x² + 3x + 1` (wrapping u32) of every element.
    pub struct Poly;

    kernel poly = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) {
                let v = x[g.x];
                y[g.x] = v * v + 3u * v + 1u;
            }
        }
    };

    input x[n];
    output y[n];

    node poly(x: x, y: y) over n;
}

graph! {
    /// As `Poly`, into a buffer with a header: the instance's length and
    /// its first result, then every result (read back as a `Headed`).
    pub struct HeadedPoly;

    kernel poly = wgsl {
        struct Out { len: u32, first: u32, items: array<u32> }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: Out;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&x);
            if g.x < n {
                let v = x[g.x];
                let p = v * v + 3u * v + 1u;
                y.items[g.x] = p;
                if g.x == 0u {
                    y.len = n;
                    y.first = p;
                }
            }
        }
    };

    input x[n];
    output y[n];

    node poly(x: x, y: y) over n;
}

/// How rank 0's outputs are read back (`--sinks`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sinks {
    /// Through the typed API: `Poly::with_engine(cluster).run_batch(..)`
    /// (the default), which reads into vectors.
    Typed,
    /// Into slices (`Sink::Host`).
    Host,
    /// Into vectors (`Sink::from(&mut Vec<u32>)`), as `graph!`'s typed
    /// `run_batch` reads.
    Vector,
    /// Into `Headed` vectors (header and elements), with `HeadedPoly`.
    Headed,
    /// Into vectors of `u64`, which an output of an odd number of `u32`s
    /// does not fit (for the tests: every rank fails the first batch).
    Wide,
}

/// Rank 0's outputs.
enum Outs {
    /// For [`Sinks::Host`] and [`Sinks::Vector`].
    Plain(Vec<Vec<u32>>),
    /// For [`Sinks::Headed`].
    Headed(Vec<Headed<OutHeader, u32>>),
    /// For [`Sinks::Wide`].
    Wide(Vec<Vec<u64>>),
}

/// The command line.
struct Args {
    instances: usize,
    size: usize,
    batches: usize,
    timeout: Option<u64>,
    json: Option<String>,
    fault: Option<(usize, Fault)>,
    member_batch: Option<usize>,
    sinks: Sinks,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        instances: 24,
        size: 65536,
        batches: 3,
        timeout: None,
        json: None,
        fault: None,
        member_batch: None,
        sinks: Sinks::Typed,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--instances" => args.instances = number(value()?)?,
            "--size" => args.size = number(value()?)?.max(1),
            "--batches" => args.batches = number(value()?)?.max(1),
            "--quick" => (args.instances, args.size) = (8, 2048),
            "--timeout" => args.timeout = Some(number(value()?)? as u64),
            "--json" => args.json = Some(value()?),
            "--exit-rank" => args.fault = Some((number(value()?)?, Fault::Exit)),
            "--panic-rank" => args.fault = Some((number(value()?)?, Fault::Panic)),
            "--stall-rank" => args.fault = Some((number(value()?)?, Fault::Stall)),
            "--fail-rank" => args.fault = Some((number(value()?)?, Fault::CorruptFeed)),
            "--member-batch" => args.member_batch = Some(number(value()?)?),
            "--sinks" => {
                args.sinks = match value()?.as_str() {
                    "typed" => Sinks::Typed,
                    "host" => Sinks::Host,
                    "vector" => Sinks::Vector,
                    "headed" => Sinks::Headed,
                    "wide" => Sinks::Wide,
                    other => {
                        return Err(format!("--sinks {other}: typed, host, vector or headed"));
                    }
                }
            }
            other => return Err(format!("unknown option {other} (see the example's docs)")),
        }
    }
    Ok(args)
}

/// Instance `i`'s size: mixed, from `size` down to about a quarter of it.
fn size_of_instance(i: usize, size: usize) -> usize {
    (size - (i % 4) * size / 5 - (i % 3) * 7).max(1)
}

fn expected(x: u32) -> u32 {
    x.wrapping_mul(x)
        .wrapping_add(x.wrapping_mul(3))
        .wrapping_add(1)
}

/// Rank 0's batch: instances over `xs`, outputs into `outs` (read as
/// `sinks` says).
fn batch<'a>(xs: &'a [Vec<u32>], outs: &'a mut Outs, sinks: Sinks) -> Vec<Instance<'a>> {
    let feed = |x: &'a Vec<u32>| vec![Feed::Host(bytemuck::cast_slice(x))];
    match outs {
        Outs::Plain(ys) => xs
            .iter()
            .zip(ys.iter_mut())
            .map(|(x, y)| {
                let sink = match sinks {
                    Sinks::Vector => Sink::from(y),
                    _ => Sink::Host(bytemuck::cast_slice_mut(y)),
                };
                Instance::new(x.len() as u64, feed(x), vec![sink])
            })
            .collect(),
        Outs::Headed(ys) => xs
            .iter()
            .zip(ys.iter_mut())
            .map(|(x, y)| Instance::new(x.len() as u64, feed(x), vec![Sink::from(y)]))
            .collect(),
        Outs::Wide(ys) => xs
            .iter()
            .zip(ys.iter_mut())
            .map(|(x, y)| Instance::new(x.len() as u64, feed(x), vec![Sink::from(y)]))
            .collect(),
    }
}

/// Outputs ready for a batch read as `sinks` says: zeroed slices, or empty
/// vectors (so that nothing checked can be left from an earlier batch).
fn outputs(xs: &[Vec<u32>], sinks: Sinks) -> Outs {
    match sinks {
        Sinks::Host => Outs::Plain(xs.iter().map(|x| vec![0; x.len()]).collect()),
        Sinks::Vector | Sinks::Typed => Outs::Plain(xs.iter().map(|_| Vec::new()).collect()),
        Sinks::Headed => Outs::Headed(xs.iter().map(|_| Headed::default()).collect()),
        Sinks::Wide => Outs::Wide(xs.iter().map(|_| Vec::new()).collect()),
    }
}

/// Instances whose every element (and header) matches the CPU.
fn check(xs: &[Vec<u32>], outs: &Outs) -> Result<usize, String> {
    let ys: Vec<&[u32]> = match outs {
        Outs::Plain(ys) => ys.iter().map(Vec::as_slice).collect(),
        Outs::Headed(ys) => ys.iter().map(|y| y.elements.as_slice()).collect(),
        Outs::Wide(_) => return Err("u64 vectors are for the failure test only".into()),
    };
    if ys.len() != xs.len() {
        return Err(format!("{} outputs for {} instances", ys.len(), xs.len()));
    }
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        if y.len() != x.len() {
            return Err(format!(
                "instance {i}: {} elements, not {}",
                y.len(),
                x.len()
            ));
        }
        if let Some(j) = (0..x.len()).find(|&j| y.get(j) != Some(&expected(x[j]))) {
            return Err(format!(
                "instance {i} element {j}: GPU {:?}, CPU {}",
                y.get(j),
                expected(x[j])
            ));
        }
        if let Outs::Headed(h) = outs {
            let header = h.get(i).map(|h| (h.header.len, h.header.first));
            let want = (x.len() as u32, x.first().map_or(0, |&v| expected(v)));
            if header != Some(want) {
                return Err(format!("instance {i}: header {header:?}, CPU {want:?}"));
            }
        }
    }
    Ok(xs.len())
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("mpi_batch: {error}");
            1
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32, Box<dyn std::error::Error>> {
    let args = parse()?;
    let universe = vyre_mpi::init()?;
    let gpu = Gpu::new()?;
    let mut options = ClusterOptions::default();
    if let Some(t) = args.timeout {
        options = options.with_timeout(Duration::from_secs(t));
    }
    match args.sinks {
        Sinks::Typed => run_typed(&args, &universe, &gpu, options),
        _ => run_untyped(&args, &universe, &gpu, options),
    }
}

/// Rank 0's inputs (none elsewhere): instances of mixed sizes.
fn inputs(rank: usize, args: &Args) -> Vec<Vec<u32>> {
    if rank != 0 {
        return Vec::new();
    }
    (0..args.instances)
        .map(|i| {
            let n = size_of_instance(i, args.size);
            (0..n).map(|j| (i * 7919 + j * 31) as u32).collect()
        })
        .collect()
}

/// What the ranks did in batch `b`: each rank its share, rank 0 the
/// batch's times.
fn print_batch(rank: usize, adapter: &str, b: usize, wall: Duration, report: &ClusterReport) {
    for share in report.shares.iter().filter(|s| s.rank == rank) {
        println!(
            "rank {rank} ({adapter}): batch {b}: ran {} instance(s) in {:.2} ms",
            share.instances,
            ms(share.engine_ns)
        );
    }
    if rank == 0 {
        let instances: usize = report.shares.iter().map(|s| s.instances).sum();
        println!(
            "batch {b}: {instances} instances over {} rank(s) in {:.2} ms (scatter {:.2} ms, gather {:.2} ms, MPI overhead {:.2} ms)",
            report.ranks,
            wall.as_secs_f64() * 1e3,
            ms(report.scatter_ns),
            ms(report.gather_ns),
            ms(report.overhead_ns())
        );
    }
}

/// The end of a clean run: rank 0's last line, and the JSON.
fn finish(
    args: &Args,
    adapter: &str,
    checked: usize,
    rows: &[ClusterReport],
    alone: &mut [f64],
) -> Result<i32, Box<dyn std::error::Error>> {
    println!("checked {checked} instances against the CPU on every batch");
    if let Some(path) = &args.json {
        let ranks = rows.first().map_or(1, |r| r.ranks);
        std::fs::write(path, json(args, ranks, adapter, rows, alone))?;
        println!("wrote {path}");
    }
    Ok(0)
}

/// The typed API over MPI (the default): `Poly::with_engine(Cluster)`,
/// whose `run_batch` every rank calls, rank 0 with the inputs.
fn run_typed(
    args: &Args,
    universe: &vyre_mpi::mpi::environment::Universe,
    gpu: &Gpu,
    options: ClusterOptions,
) -> Result<i32, Box<dyn std::error::Error>> {
    let adapter = gpu.adapter().name.clone();
    let local = Graph::new(gpu, Poly::SPEC)?;
    let graph = Poly::with_engine(Cluster::with_options(universe, local, options))?;
    let cluster = graph.engine();
    let rank = cluster.rank();
    let config = DispatchConfig::default();
    let xs = inputs(rank, args);
    let inputs: Vec<&[u32]> = xs.iter().map(Vec::as_slice).collect();
    let plain = |outs: Vec<PolyOutputs>| Outs::Plain(outs.into_iter().map(|o| o.y).collect());

    // The same typed batch on rank 0's GPU alone, for the overhead figures.
    let mut alone = Vec::new();
    if rank == 0 && args.json.is_some() {
        let one = Poly::new(gpu)?;
        for _ in 0..args.batches {
            let start = Instant::now();
            let outs = one.run_batch(&config, &inputs)?;
            alone.push(start.elapsed().as_secs_f64() * 1e3);
            check(&xs, &plain(outs))?;
        }
    }

    if let Some((r, fault)) = args.fault {
        cluster.inject_fault(r, fault);
    }
    let (mut rows, mut checked) = (Vec::new(), 0);
    let own = [1u32; 4];
    for b in 1..=args.batches {
        // `--member-batch R`: rank R wrongly passes a batch of its own.
        let mine: &[&[u32]] = if b == 1 && args.member_batch == Some(rank) && rank != 0 {
            &[&own]
        } else {
            &inputs
        };
        let start = Instant::now();
        let result = graph.run_batch(&config, mine);
        let wall = start.elapsed();
        let outs = match result {
            Ok(outs) => outs,
            Err(error) => {
                println!("rank {rank}: batch {b} failed: {error}");
                // The same graph runs the next batch correctly.
                let outs = graph.run_batch(&config, &inputs)?;
                if rank == 0 {
                    println!(
                        "rank 0: the batch after the failure ran; checked {} instances against the CPU",
                        check(&xs, &plain(outs))?
                    );
                }
                return Ok(2);
            }
        };
        let report = cluster.last_report().ok_or("no cluster report")?;
        print_batch(rank, &adapter, b, wall, &report);
        if rank == 0 {
            checked = check(&xs, &plain(outs))?;
            let ran: Vec<usize> = report
                .shares
                .iter()
                .filter(|s| s.instances > 0)
                .map(|s| s.rank)
                .collect();
            println!("batch {b}: the typed batch ran on ranks {ran:?}");
            rows.push(report);
        }
    }
    if rank != 0 {
        return Ok(0);
    }
    finish(args, &adapter, checked, &rows, &mut alone)
}

/// The untyped API (`--sinks host|vector|headed`): `Cluster::run` on
/// instances built by hand.
fn run_untyped(
    args: &Args,
    universe: &vyre_mpi::mpi::environment::Universe,
    gpu: &Gpu,
    options: ClusterOptions,
) -> Result<i32, Box<dyn std::error::Error>> {
    let adapter = gpu.adapter().name.clone();
    let spec = match args.sinks {
        Sinks::Headed => HeadedPoly::SPEC,
        _ => Poly::SPEC,
    };
    let cluster = Cluster::with_options(universe, Graph::new(gpu, spec)?, options);
    let rank = cluster.rank();
    let config = DispatchConfig::default();
    let xs = inputs(rank, args);
    let sinks = args.sinks;
    let mut ys = outputs(&xs, sinks);

    // The local engine alone on rank 0, for the overhead figures.
    let mut alone = Vec::new();
    if rank == 0 && args.json.is_some() {
        for _ in 0..args.batches {
            let start = Instant::now();
            cluster
                .local()
                .run_batch(&config, &mut batch(&xs, &mut ys, sinks))?;
            alone.push(start.elapsed().as_secs_f64() * 1e3);
            check(&xs, &ys)?;
            ys = outputs(&xs, sinks);
        }
    }

    if let Some((r, fault)) = args.fault {
        cluster.inject_fault(r, fault);
    }
    let (mut rows, mut checked) = (Vec::new(), 0);
    for b in 1..=args.batches {
        let start = Instant::now();
        // `--member-batch R`: rank R wrongly passes a batch of its own.
        let own_x = vec![vec![1u32; 4]];
        let mut own_y = outputs(&own_x, sinks);
        let result = if b == 1 && args.member_batch == Some(rank) && rank != 0 {
            cluster.run(&config, &mut batch(&own_x, &mut own_y, sinks))
        } else {
            cluster.run(&config, &mut batch(&xs, &mut ys, sinks))
        };
        let wall = start.elapsed();
        let runs = match result {
            Ok(report) => report.runs,
            Err(error) => {
                println!("rank {rank}: batch {b} failed: {error}");
                println!(
                    "rank {rank}: through the Engine API: {}",
                    error.to_backend()
                );
                // The same cluster runs the next batch correctly (into
                // vectors that fit, after `--sinks wide`).
                let sinks = if sinks == Sinks::Wide {
                    Sinks::Vector
                } else {
                    sinks
                };
                ys = outputs(&xs, sinks);
                cluster.run(&config, &mut batch(&xs, &mut ys, sinks))?;
                if rank == 0 {
                    println!(
                        "rank 0: the batch after the failure ran; checked {} instances against the CPU",
                        check(&xs, &ys)?
                    );
                }
                return Ok(2);
            }
        };
        let report = cluster.last_report().ok_or("no cluster report")?;
        print_batch(rank, &adapter, b, wall, &report);
        if rank == 0 {
            checked = check(&xs, &ys)?;
            ys = outputs(&xs, sinks);
            // Where each instance ran, from the batch's own report.
            let mut ran_on: Vec<usize> = runs
                .iter()
                .map(|r| r.as_ref().map_or(usize::MAX, |r| r.rank))
                .collect();
            ran_on.sort_unstable();
            ran_on.dedup();
            println!("batch {b}: the report's runs name ranks {ran_on:?}");
            rows.push(report);
        }
    }
    if rank != 0 {
        return Ok(0);
    }
    finish(args, &adapter, checked, &rows, &mut alone)
}

/// The overhead figures as JSON (medians over the batches after the first).
fn json(
    args: &Args,
    ranks: usize,
    adapter: &str,
    rows: &[vyre_mpi::ClusterReport],
    alone: &mut [f64],
) -> String {
    let later = if rows.len() > 1 { &rows[1..] } else { rows };
    let pick = |f: &dyn Fn(&vyre_mpi::ClusterReport) -> u64| {
        median(&mut later.iter().map(|r| ms(f(r))).collect::<Vec<_>>())
    };
    let shares: Vec<String> = later
        .last()
        .map(|r| {
            r.shares
                .iter()
                .map(|s| {
                    format!(
                        "{{\"rank\": {}, \"instances\": {}, \"engine_ms\": {:.3}}}",
                        s.rank,
                        s.instances,
                        ms(s.engine_ns)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    format!(
        "{{\"ranks\": {ranks}, \"adapter\": \"{adapter}\", \"sinks\": \"{}\", \"instances\": {}, \"largest_instance\": {}, \"batches\": {}, \"local_engine_alone_ms\": {:.3}, \"batch_ms\": {:.3}, \"scatter_ms\": {:.3}, \"gather_ms\": {:.3}, \"overhead_ms\": {:.3}, \"last_shares\": [{}]}}\n",
        match args.sinks {
            Sinks::Typed => "typed",
            Sinks::Host => "host",
            Sinks::Vector => "vector",
            Sinks::Headed => "headed",
            Sinks::Wide => "wide",
        },
        args.instances,
        args.size,
        args.batches,
        median(alone),
        pick(&|r| r.batch_ns),
        pick(&|r| r.scatter_ns),
        pick(&|r| r.gather_ns),
        pick(&|r| r.overhead_ns()),
        shares.join(", ")
    )
}
