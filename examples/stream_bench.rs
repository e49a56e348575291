//! Streams against sequential runs (`docs/batches.md`, "Depth per
//! adapter"): `N` problems of 1,024 elements through a graph of three
//! kernels that each read a neighbour (so they neither fuse nor stack),
//! run seven ways, interleaved in a new shuffled order every repetition:
//!
//! - **sequential**: `Graph::run` on each problem, one after another;
//! - **asked d1** to **asked d4**: `Graph::run_many` at depths 1 to 4 with
//!   `StreamDepth::Asked` (the runs really overlap, whatever the adapter);
//! - **auto d3**, **auto d4**: `run_many` at depth 3 and 4 with the
//!   default `StreamDepth::Auto` (what a user gets: one run at a time on a
//!   CPU adapter).
//!
//! Every variant's outputs are checked against the CPU first. Reported per
//! variant: the median time of the whole set of `N` runs, and the median
//! over repetitions of its time divided by the sequential time of the same
//! repetition (the machine may be shared: the ratio of neighbours in time
//! is steadier than either time).
//!
//! ```text
//! cargo run --release --example stream_bench -- [--problems 2000] [--reps 9] [--json PATH] [--note TEXT]
//! ```

use std::time::Instant;

use vyre_graph::{DispatchConfig, Feed, Gpu, Instance, Sink, StreamDepth, graph};

graph! {
    /// Three steps, each reading its element and a neighbour.
    pub struct Neighbours;

    kernel right = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&src);
            if g.x < n { dst[g.x] = src[g.x] + 3u * src[(g.x + 1u) % n]; }
        }
    };
    kernel left = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&src);
            if g.x < n { dst[g.x] = src[g.x] ^ (src[(g.x + n - 1u) % n] >> 1u); }
        }
    };
    kernel mix = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&src);
            if g.x < n { dst[g.x] = src[g.x] * 69069u + src[(g.x + 2u) % n]; }
        }
    };

    input x[n];
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node right(src: x, dst: t) over n;
    node left(src: t, dst: u) over n;
    node mix(src: u, dst: y) over n;
}

/// The graph on the CPU.
fn reference(x: &[u32]) -> Vec<u32> {
    let n = x.len();
    let t: Vec<u32> = (0..n)
        .map(|i| x[i].wrapping_add(x[(i + 1) % n].wrapping_mul(3)))
        .collect();
    let u: Vec<u32> = (0..n).map(|i| t[i] ^ (t[(i + n - 1) % n] >> 1)).collect();
    (0..n)
        .map(|i| u[i].wrapping_mul(69069).wrapping_add(u[(i + 2) % n]))
        .collect()
}

const VARIANTS: [&str; 7] = [
    "sequential",
    "asked d1",
    "asked d2",
    "asked d3",
    "asked d4",
    "auto d3",
    "auto d4",
];

fn random_u32(n: usize, mut seed: u64) -> Vec<u32> {
    seed |= 1;
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 16) as u32
        })
        .collect()
}

/// A shuffled order of `n` variants for repetition `rep` (deterministic).
fn order(n: usize, rep: usize) -> Vec<usize> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ (rep as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        order.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    order
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        len if len % 2 == 1 => v[len / 2],
        len => (v[len / 2 - 1] + v[len / 2]) / 2.0,
    }
}

/// Run variant `k` over `xs` into `ys`; its time in milliseconds.
fn run_variant(graph: &Neighbours, k: usize, xs: &[Vec<u32>], ys: &mut [Vec<u32>]) -> f64 {
    let mut runs: Vec<Instance<'_>> = xs
        .iter()
        .zip(ys.iter_mut())
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let graph = graph.graph();
    let asked = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
    let auto = DispatchConfig::default();
    let start = Instant::now();
    match k {
        0 => {
            for i in &mut runs {
                graph
                    .run(&auto, i.n, &i.feeds, &mut i.sinks)
                    .expect("sequential run");
            }
        }
        1..=4 => {
            for r in graph.run_many(&asked, k, &mut runs) {
                r.expect("streamed run");
            }
        }
        _ => {
            for r in graph.run_many(&auto, k - 2, &mut runs) {
                r.expect("streamed run");
            }
        }
    }
    start.elapsed().as_secs_f64() * 1e3
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let problems: usize = arg(&args, "--problems").map_or(Ok(2000), |s| s.parse())?;
    let reps: usize = arg(&args, "--reps").map_or(Ok(9), |s| s.parse())?;
    let n = 1024;
    let load_at_start = load_average();
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let graph = Neighbours::new(&gpu)?;
    let auto = DispatchConfig::default();
    println!(
        "auto depth for 3 on this adapter: {}",
        graph.graph().stream_depth(3, &auto)
    );
    let xs: Vec<Vec<u32>> = (0..problems).map(|i| random_u32(n, i as u64 + 7)).collect();
    let want: Vec<Vec<u32>> = xs.iter().map(|x| reference(x)).collect();
    let mut ys: Vec<Vec<u32>> = vec![Vec::new(); problems];
    // Each variant twice: plans made, then the steady state checked.
    for (k, name) in VARIANTS.iter().enumerate() {
        for _ in 0..2 {
            ys.iter_mut().for_each(Vec::clear);
            run_variant(&graph, k, &xs, &mut ys);
            for (i, (y, w)) in ys.iter().zip(&want).enumerate() {
                if let Some(j) = (0..n).find(|&j| y.get(j) != w.get(j)) {
                    return Err(
                        format!("{name}: problem {i}, element {j} differs from the CPU").into(),
                    );
                }
            }
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    for rep in 0..reps {
        for k in order(VARIANTS.len(), rep) {
            times[k].push(run_variant(&graph, k, &xs, &mut ys));
        }
        println!("repetition {} of {reps} done", rep + 1);
    }
    let rows: Vec<(f64, f64)> = times
        .iter()
        .map(|t| {
            let ratios: Vec<f64> = t.iter().zip(&times[0]).map(|(a, s)| a / s).collect();
            (median(t), median(&ratios))
        })
        .collect();
    println!();
    println!(
        "{:<11} {:>12} {:>10} {:>22}",
        "variant", "median ms", "us/run", "median of ms/sequential"
    );
    for (name, (ms, ratio)) in VARIANTS.iter().zip(&rows) {
        println!(
            "{name:<11} {ms:>12.1} {:>10.1} {ratio:>22.3}",
            ms * 1e3 / problems as f64
        );
    }
    if let Some(path) = arg(&args, "--json") {
        let note = arg(&args, "--note").unwrap_or_default();
        let load = [load_at_start, load_average()].join(" -> ");
        let facts = Facts {
            note: &note,
            load: &load,
            sizes: (problems, n, reps),
        };
        std::fs::write(&path, json(&gpu, &facts, &times, &rows))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// The host's 1-minute load average (Linux), to show how busy a shared
/// machine was; empty where it cannot be read.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_default()
}

/// What the JSON says beside the measurements.
struct Facts<'a> {
    /// `--note`: how the machine was used, and by what else.
    note: &'a str,
    /// The load average at the start and at the end.
    load: &'a str,
    /// Problems, elements per problem, repetitions.
    sizes: (usize, usize, usize),
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn json(gpu: &Gpu, facts: &Facts<'_>, times: &[Vec<f64>], rows: &[(f64, f64)]) -> String {
    let (problems, n, reps) = facts.sizes;
    let adapter = escape(&gpu.adapter().to_string());
    let (note, load) = (escape(facts.note), escape(facts.load));
    let mut text = format!(
        "{{\n  \"adapter\": \"{adapter}\",\n  \"note\": \"{note}\",\n  \"load_average_1min\": \"{load}\",\n  \"workload\": \"three kernels with a neighbour read, {problems} problems of {n} u32\",\n  \"problems\": {problems},\n  \"n\": {n},\n  \"repetitions\": {reps},\n  \"method\": \"variants interleaved in one process, a new shuffled order each repetition; medians over repetitions; ratio = median over repetitions of (variant ms / sequential ms of the same repetition)\",\n  \"variants\": [\n"
    );
    for (k, (name, (ms, ratio))) in VARIANTS.iter().zip(rows).enumerate() {
        let samples: Vec<String> = times[k].iter().map(|t| format!("{t:.2}")).collect();
        text.push_str(&format!(
            "    {{\"variant\": \"{name}\", \"median_ms\": {ms:.2}, \"us_per_run\": {:.2}, \"ratio_to_sequential\": {ratio:.3}, \"samples_ms\": [{}]}}{}\n",
            ms * 1e3 / problems as f64,
            samples.join(", "),
            if k + 1 < VARIANTS.len() { "," } else { "" }
        ));
    }
    text.push_str("  ]\n}\n");
    text
}
