//! A batch of instances spread over the ranks of an MPI job: rank 0 holds
//! the batch (instances of mixed sizes), `vyre_mpi::Cluster` splits it by
//! each rank's measured throughput, every rank runs its share on its own
//! GPU, and rank 0 checks every instance against the CPU.
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
//! `--timeout SECONDS` (`ClusterOptions::timeout`), `--json PATH` (the
//! overhead figures, written by rank 0). Failures, for the tests:
//! `--exit-rank R`, `--panic-rank R`, `--stall-rank R` (that rank exits,
//! panics or stops answering in the middle of the first batch) and
//! `--fail-rank R` (that rank's engine refuses its share) and
//! `--member-batch R` (that rank passes a batch of its own, which only rank
//! 0 may): every rank then runs a clean batch again and exits with code 2.

use std::time::{Duration, Instant};

use vyre_graph::{DispatchConfig, Feed, Gpu, Graph, Instance, Sink, graph};
use vyre_mpi::{Cluster, ClusterOptions, Fault};

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

/// The command line.
struct Args {
    instances: usize,
    size: usize,
    batches: usize,
    timeout: Option<u64>,
    json: Option<String>,
    fault: Option<(usize, Fault)>,
    member_batch: Option<usize>,
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

/// Rank 0's batch: instances over `xs`, outputs into `ys`.
fn batch<'a>(xs: &'a [Vec<u32>], ys: &'a mut [Vec<u32>]) -> Vec<Instance<'a>> {
    xs.iter()
        .zip(ys.iter_mut())
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::Host(bytemuck::cast_slice_mut(y))],
            )
        })
        .collect()
}

/// Instances whose every element matches the CPU.
fn check(xs: &[Vec<u32>], ys: &[Vec<u32>]) -> Result<usize, String> {
    for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
        if let Some(j) = (0..x.len()).find(|&j| y.get(j) != Some(&expected(x[j]))) {
            return Err(format!(
                "instance {i} element {j}: GPU {:?}, CPU {}",
                y.get(j),
                expected(x[j])
            ));
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
    let adapter = gpu.adapter().name.clone();
    let mut options = ClusterOptions::default();
    if let Some(t) = args.timeout {
        options = options.with_timeout(Duration::from_secs(t));
    }
    let cluster = Cluster::with_options(&universe, Graph::new(&gpu, Poly::SPEC)?, options);
    let (rank, ranks) = (cluster.rank(), cluster.size());
    let config = DispatchConfig::default();

    let (xs, mut ys): (Vec<Vec<u32>>, Vec<Vec<u32>>) = if rank == 0 {
        (0..args.instances)
            .map(|i| {
                let n = size_of_instance(i, args.size);
                let x: Vec<u32> = (0..n).map(|j| (i * 7919 + j * 31) as u32).collect();
                (x, vec![0u32; n])
            })
            .unzip()
    } else {
        (Vec::new(), Vec::new())
    };

    // The local engine alone on rank 0, for the overhead figures.
    let mut alone = Vec::new();
    if rank == 0 && args.json.is_some() {
        for _ in 0..args.batches {
            let start = Instant::now();
            cluster
                .local()
                .run_batch(&config, &mut batch(&xs, &mut ys))?;
            alone.push(start.elapsed().as_secs_f64() * 1e3);
        }
        check(&xs, &ys)?;
        ys.iter_mut().for_each(|y| y.fill(0));
    }

    if let Some((r, fault)) = args.fault {
        cluster.inject_fault(r, fault);
    }
    let mut rows = Vec::new();
    let mut checked = 0;
    for b in 1..=args.batches {
        let start = Instant::now();
        // `--member-batch R`: rank R wrongly passes a batch of its own.
        let (own_x, mut own_y) = (vec![vec![1u32; 4]], vec![vec![0u32; 4]]);
        let result = if b == 1 && args.member_batch == Some(rank) && rank != 0 {
            cluster.run(&config, &mut batch(&own_x, &mut own_y))
        } else {
            cluster.run(&config, &mut batch(&xs, &mut ys))
        };
        let wall = start.elapsed();
        if let Err(error) = result {
            println!("rank {rank}: batch {b} failed: {error}");
            // The same cluster runs the next batch correctly.
            cluster.run(&config, &mut batch(&xs, &mut ys))?;
            if rank == 0 {
                println!(
                    "rank 0: the batch after the failure ran; checked {} instances against the CPU",
                    check(&xs, &ys)?
                );
            }
            return Ok(2);
        }
        let report = cluster.last_report().ok_or("no cluster report")?;
        for share in report.shares.iter().filter(|s| s.rank == rank) {
            println!(
                "rank {rank} ({adapter}): batch {b}: ran {} instance(s) in {:.2} ms",
                share.instances,
                ms(share.engine_ns)
            );
        }
        if rank == 0 {
            checked = check(&xs, &ys)?;
            ys.iter_mut().for_each(|y| y.fill(0));
            println!(
                "batch {b}: {} instances over {ranks} rank(s) in {:.2} ms (scatter {:.2} ms, gather {:.2} ms, MPI overhead {:.2} ms)",
                xs.len(),
                wall.as_secs_f64() * 1e3,
                ms(report.scatter_ns),
                ms(report.gather_ns),
                ms(report.overhead_ns())
            );
            rows.push(report);
        }
    }
    if rank == 0 {
        println!("checked {checked} instances against the CPU on every batch");
        if let Some(path) = &args.json {
            std::fs::write(path, json(&args, ranks, &adapter, &rows, &mut alone))?;
            println!("wrote {path}");
        }
    }
    Ok(0)
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
        "{{\"ranks\": {ranks}, \"adapter\": \"{adapter}\", \"instances\": {}, \"largest_instance\": {}, \"batches\": {}, \"local_engine_alone_ms\": {:.3}, \"batch_ms\": {:.3}, \"scatter_ms\": {:.3}, \"gather_ms\": {:.3}, \"overhead_ms\": {:.3}, \"last_shares\": [{}]}}\n",
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
