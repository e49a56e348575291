//! The mean and variance of 16M f32 values on the GPU: a square kernel and
//! two built-in reductions (`reduce sum`), checked against the CPU.
//!
//! The graph computes `Σx` and `Σx²` in one pass over `x`: the squares are
//! fused into the reduction's load (`sq` is never written) and the two
//! reductions share their first level, which reads each element once and
//! combines pairs (`describe()` shows the one node,
//! `total__level1__and_total_sq__level1__reads_square`). The host finishes with
//! `mean = Σx / n` and `variance = Σx² / n - mean²` (values are centred near
//! zero, so the subtraction loses little). The CPU reference sums in f64
//! with Kahan compensation; the GPU sums must be within `64 · ε · Σ|x|`
//! (and `64 · ε · Σx²`) of it, or the program exits non-zero.
//!
//! ```text
//! cargo run --release --example stats              # 16,777,216 values
//! cargo run --release --example stats -- 100000    # 100,000 values
//! ```

mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{Gpu, graph};

graph! {
    /// `sum = Σx`, `squares = Σx²` of `x`.
    pub struct Stats;

    kernel square = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> sq: array<f32>;
        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&sq) { sq[g.x] = x[g.x] * x[g.x]; }
        }
    };

    input x[n];
    intermediate sq[n];
    output sum[1];
    output squares[1];

    node square(x: x, sq: sq) over n;
    node total = reduce sum(x) -> sum;
    node total_sq = reduce sum(sq) -> squares;
}

/// Deterministic values in [-1, 1) plus a small offset.
fn values(n: usize) -> Vec<f32> {
    let mut s = 0x2545_f491u32;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1 << 23) as f32 - 1.0 + 0.25
        })
        .collect()
}

/// Kahan sums in f64 of `f(x)`, and of `|f(x)|`.
fn kahan(x: &[f32], f: impl Fn(f64) -> f64) -> (f64, f64) {
    let (mut sum, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for &v in x {
        let term = f(f64::from(v));
        let y = term - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
        abs += term.abs();
    }
    (sum, abs)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the value count `{arg}` is not a number: {e}"))?,
        None => 1 << 24,
    };
    if n == 0 {
        return Err("the value count must be at least 1".into());
    }
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let stats = Stats::new(&gpu)?;
    common::write_dot("stats", &stats.to_dot())?;
    let plan = stats.describe().to_string();
    let one_pass = plan.lines().any(|l| {
        l.contains("total__level1")
            && l.contains("__and_")
            && l.contains("total_sq__level1__reads_square")
    });
    if !one_pass {
        eprintln!("expected one first-level pass for Σx and Σx², got:\n{plan}");
        return Ok(false);
    }
    println!("Σx and Σx² share one pass over x (the squares fused into its load)");
    let x = values(n);
    let (gpu_time, out) = median_time(5, || stats.run(&x))?;

    let start = Instant::now();
    let (sum, sum_abs) = kahan(&x, |v| v);
    let (squares, _) = kahan(&x, |v| v * v);
    let cpu_time = start.elapsed();

    let eps = 64.0 * f64::from(f32::EPSILON);
    let (got_sum, got_sq) = (f64::from(out.sum[0]), f64::from(out.squares[0]));
    if (got_sum - sum).abs() > eps * sum_abs || (got_sq - squares).abs() > eps * squares {
        eprintln!(
            "mismatch: GPU Σx = {got_sum}, Σx² = {got_sq}; CPU (Kahan) {sum}, {squares}; bounds {:e}, {:e}",
            eps * sum_abs,
            eps * squares
        );
        return Ok(false);
    }
    let mean = got_sum / n as f64;
    let variance = got_sq / n as f64 - mean * mean;
    let cpu_mean = sum / n as f64;
    println!(
        "{n} values: mean {mean:.6} (CPU {cpu_mean:.6}), variance {variance:.6} (CPU {:.6})",
        squares / n as f64 - cpu_mean * cpu_mean
    );
    println!("matches the CPU's compensated sums within 64·ε·Σ|term|");
    println!(
        "GPU graph run (median of 5, with upload and readback): {:.2} ms; CPU reference: {:.2} ms",
        gpu_time.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
