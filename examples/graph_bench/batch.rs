//! `--batch`: many small problems at once. chain64 at 1,024 and 65,536
//! elements as `B` = 1, 16 and 256 instances run four ways, interleaved in
//! a new shuffled order each repetition:
//! - **batched**: one `Graph::run_batch` (chain64 is stackable: one run
//!   over `B × n`);
//! - **sequential**: `B` calls of the typed `run_into`, one after another;
//! - **stream d2** and **stream d3**: `Graph::run_many` keeping 2 or 3 runs
//!   in flight;
//! - **one run B*n** (a reference, not a way to run `B` problems): one
//!   typed run over the `B` inputs laid end to end: what batched costs
//!   without gathering the inputs and handing out the outputs.
//!
//! Every variant's outputs are checked against the CPU first. Reported: the
//! median time of the whole set, per instance, and against sequential.

use vyre_graph::{DispatchConfig, Feed, Gpu, Instance, Sink};

use crate::chains::{Chain64, Chain64Outputs, chain_reference};
use crate::measure::{json_escape, median, order, random_u32, time_ms};

const VARIANTS: [&str; 5] = [
    "batched",
    "sequential",
    "stream d2",
    "stream d3",
    "one run B*n",
];

/// One variant's median on one `(n, B)`.
pub struct Measured {
    n: usize,
    b: usize,
    variant: &'static str,
    ms: f64,
}

impl Measured {
    fn us_per_instance(&self) -> f64 {
        self.ms * 1e3 / self.b as f64
    }
}

/// The instances of `xs`, reading back into `ys`.
fn instances<'a>(xs: &'a [Vec<u32>], ys: &'a mut [Vec<u32>]) -> Vec<Instance<'a>> {
    xs.iter()
        .zip(ys)
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect()
}

/// Run variant `k` once over `xs` into `ys` (`joined`: `xs` end to end).
fn run_variant(
    chain: &Chain64,
    k: usize,
    (xs, joined): (&[Vec<u32>], &[u32]),
    ys: &mut [Vec<u32>],
) {
    let config = DispatchConfig::default();
    let graph = chain.graph();
    match k {
        0 => {
            let report = graph
                .run_batch(&config, &mut instances(xs, ys))
                .expect("batch");
            for run in report.runs {
                run.expect("batched instance");
            }
        }
        1 => {
            let mut out = Chain64Outputs::default();
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                chain.run_into(&config, &mut out, x).expect("run");
                std::mem::swap(y, &mut out.y);
            }
        }
        4 => {
            let mut out = Chain64Outputs::default();
            chain.run_into(&config, &mut out, joined).expect("run");
            let mut at = 0;
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                y.clear();
                y.extend_from_slice(&out.y[at..at + x.len()]);
                at += x.len();
            }
        }
        _ => {
            let depth = k;
            for run in graph.run_many(&config, depth, &mut instances(xs, ys)) {
                run.expect("streamed run");
            }
        }
    }
}

pub fn run(gpu: &Gpu, quick: bool) -> Result<Vec<Measured>, Box<dyn std::error::Error>> {
    let chain = Chain64::new(gpu)?;
    let mut rows = Vec::new();
    for n in [1024usize, 65_536] {
        for b in [1usize, 16, 256] {
            // 256 instances of 65,536 take a while on a software device.
            if quick && n * b > 1 << 20 {
                continue;
            }
            let xs: Vec<Vec<u32>> = (0..b).map(|i| random_u32(n, (n * b + i) as u64)).collect();
            let joined: Vec<u32> = xs.concat();
            let want: Vec<Vec<u32>> = xs.iter().map(|x| chain_reference(x)).collect();
            let mut ys: Vec<Vec<u32>> = vec![Vec::new(); b];
            for (k, variant) in VARIANTS.iter().enumerate() {
                // Twice: the first run makes the plans, the second checks
                // the steady state's results.
                for _ in 0..2 {
                    ys.iter_mut().for_each(Vec::clear);
                    run_variant(&chain, k, (&xs, &joined), &mut ys);
                    for (i, (y, w)) in ys.iter().zip(&want).enumerate() {
                        assert!(
                            y == w,
                            "{} n={n} B={b}: instance {i} differs from the CPU",
                            variant
                        );
                    }
                }
            }
            let reps = match (quick, n * b) {
                (true, _) => 5,
                (false, work) if work >= 1 << 22 => 7,
                _ => 21,
            };
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
            for rep in 0..reps {
                for k in order(VARIANTS.len(), rep) {
                    times[k].push(time_ms(|| run_variant(&chain, k, (&xs, &joined), &mut ys)));
                }
            }
            for (k, t) in times.iter_mut().enumerate() {
                rows.push(Measured {
                    n,
                    b,
                    variant: VARIANTS[k],
                    ms: median(t),
                });
            }
            println!("measured chain64 n={n} B={b}");
        }
    }
    Ok(rows)
}

pub fn print(rows: &[Measured]) {
    println!();
    println!(
        "{:<8} {:>7} {:>4} {:<11} {:>10} {:>14} {:>14}",
        "workload", "n", "B", "variant", "total ms", "us/instance", "/sequential"
    );
    for r in rows {
        let sequential = rows
            .iter()
            .find(|o| o.n == r.n && o.b == r.b && o.variant == "sequential")
            .map_or(f64::NAN, |o| o.ms);
        println!(
            "{:<8} {:>7} {:>4} {:<11} {:>10.3} {:>14.2} {:>14.3}",
            "chain64",
            r.n,
            r.b,
            r.variant,
            r.ms,
            r.us_per_instance(),
            r.ms / sequential
        );
    }
}

pub fn json(gpu: &Gpu, quick: bool, rows: &[Measured]) -> String {
    let mut text = String::from("{\n");
    text.push_str(&format!(
        "  \"adapter\": \"{}\",\n  \"quick\": {quick},\n  \"batch\": [\n",
        json_escape(&gpu.adapter().to_string())
    ));
    for (i, r) in rows.iter().enumerate() {
        text.push_str(&format!(
            "    {{\"workload\": \"chain64\", \"n\": {}, \"b\": {}, \"variant\": \"{}\", \"ms\": {:.4}, \"us_per_instance\": {:.3}}}{}\n",
            r.n,
            r.b,
            r.variant,
            r.ms,
            r.us_per_instance(),
            if i + 1 < rows.len() { "," } else { "" }
        ));
    }
    text.push_str("  ]\n}\n");
    text
}
