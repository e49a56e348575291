//! Inference of a small multilayer perceptron (784 -> 256 -> 128 -> 10,
//! ReLU between layers, softmax at the end) on a batch of 256 inputs.
//!
//! It shows one tiled matrix-multiply kernel specialised per layer with
//! `override` constants (`with { IN = 784, OUT = 256 }`), explicit
//! workgroup grids that depend on the batch size (`grid [16, n / 16, 1]`),
//! two outputs, a softmax built from per-row reductions (`reduce max` and
//! `reduce sum` over `[n, 10]`, see docs/reductions.md) around two
//! element-wise kernels, and weights kept on the GPU between runs: they are uploaded
//! once into `GpuBufferHandle`s and passed where the graph expects them,
//! so each run uploads only the batch. Weights and inputs come from a
//! deterministic generator; the result is compared with a CPU reference
//! (max abs error of the probabilities at most 1e-4).
//!
//! ```text
//! cargo run --release --example mlp          # batch of 256
//! cargo run --release --example mlp -- 1024  # batch of 1024
//! ```

mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{Gpu, GpuBufferHandle, graph};

graph! {
    /// A 784-256-128-10 perceptron: `probs = softmax(logits)`, `logits =
    /// relu(relu(x W1 + b1) W2 + b2) W3 + b3`, for a batch of `n` rows.
    /// Matrices are row-major, `W` as [inputs][outputs].
    pub struct Mlp;

    kernel dense = file "examples/kernels/mlp/dense.wgsl";
    kernel exp_shift = file "examples/kernels/mlp/softmax.wgsl" entry "exp_shift";
    kernel normalise = file "examples/kernels/mlp/softmax.wgsl" entry "normalise";

    input x[784 * n];
    input w1[784 * 256];
    input b1[256];
    input w2[256 * 128];
    input b2[128];
    input w3[128 * 10];
    input b3[10];
    intermediate h1[256 * n];
    intermediate h2[128 * n];
    output logits[10 * n];
    output probs[10 * n];
    // The softmax: row maxima, shifted exponentials, row sums.
    intermediate row_max[n];
    intermediate exps[10 * n];
    intermediate row_sum[n];

    // One workgroup per 64x64 output tile: [OUT / 64, batch / 64], rounded up.
    node layer1 = dense(x: x, w: w1, b: b1, y: h1) grid [4, n / 64, 1] with { IN = 784, OUT = 256 };
    node layer2 = dense(x: h1, w: w2, b: b2, y: h2) grid [2, n / 64, 1] with { IN = 256, OUT = 128 };
    node layer3 = dense(x: h2, w: w3, b: b3, y: logits) grid [1, n / 64, 1] with { IN = 128, OUT = 10, RELU = 0 };
    // Softmax per row of 10 classes: two built-in reductions around two
    // element-wise kernels.
    node max_per_row = reduce max(logits) over [n, 10] -> row_max;
    node exp_shift(logits: logits, row: row_max, out: exps) over 10 * n;
    node sum_per_row = reduce sum(exps) over [n, 10] -> row_sum;
    node normalise(logits: exps, row: row_sum, out: probs) over 10 * n;
}

/// Layer widths.
const SIZES: [usize; 4] = [784, 256, 128, 10];
/// The largest difference allowed between the GPU's and the CPU's
/// probabilities.
const TOLERANCE: f32 = 1e-4;

/// Deterministic pseudo-random f32s, uniform in `[lo, hi)` (SplitMix64).
fn uniform(len: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let unit = (z >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * unit
        })
        .collect()
}

/// One layer's weights ([inputs][outputs], He-uniform) and biases.
struct Layer {
    weights: Vec<f32>,
    biases: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Layer {
    fn new(inputs: usize, outputs: usize, seed: u64) -> Self {
        let limit = (6.0 / inputs as f32).sqrt();
        Layer {
            weights: uniform(inputs * outputs, seed, -limit, limit),
            biases: uniform(outputs, seed + 1, -0.1, 0.1),
            inputs,
            outputs,
        }
    }

    /// The CPU reference of the `dense` kernel, summing in the same order.
    fn forward(&self, x: &[f32], relu: bool) -> Vec<f32> {
        let mut y = Vec::with_capacity(x.len() / self.inputs * self.outputs);
        for row in x.chunks_exact(self.inputs) {
            for col in 0..self.outputs {
                let sum = row.iter().enumerate().fold(0.0f32, |acc, (k, &v)| {
                    acc + v * self.weights[k * self.outputs + col]
                });
                let v = sum + self.biases[col];
                y.push(if relu { v.max(0.0) } else { v });
            }
        }
        y
    }
}

fn softmax_rows(logits: &[f32], classes: usize) -> Vec<f32> {
    logits
        .chunks_exact(classes)
        .flat_map(|row| {
            let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let exps: Vec<f32> = row.iter().map(|&v| (v - top).exp()).collect();
            let total: f32 = exps.iter().sum();
            exps.into_iter().map(move |e| e / total)
        })
        .collect()
}

fn max_abs_error(got: &[f32], want: &[f32]) -> f32 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f32::max)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let batch: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the batch size `{arg}` is not a number: {e}"))?,
        None => 256,
    };
    if batch == 0 {
        return Err("the batch size must be at least 1".into());
    }

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let mlp = Mlp::new(&gpu)?;
    common::write_dot("mlp", &mlp.to_dot())?;

    let layers: Vec<Layer> = SIZES
        .windows(2)
        .zip(1..)
        .map(|(io, seed)| Layer::new(io[0], io[1], seed * 100))
        .collect();
    let x = uniform(batch * SIZES[0], 7, 0.0, 1.0);

    // Weights live on the device; each run uploads only `x`.
    let resident = |v: &[f32]| GpuBufferHandle::from_slice(&gpu, v);
    let (w1, b1) = (resident(&layers[0].weights)?, resident(&layers[0].biases)?);
    let (w2, b2) = (resident(&layers[1].weights)?, resident(&layers[1].biases)?);
    let (w3, b3) = (resident(&layers[2].weights)?, resident(&layers[2].biases)?);
    let (gpu_time, out) = median_time(5, || mlp.run(&x, &w1, &b1, &w2, &b2, &w3, &b3))?;

    let start = Instant::now();
    let h1 = layers[0].forward(&x, true);
    let h2 = layers[1].forward(&h1, true);
    let logits = layers[2].forward(&h2, false);
    let probs = softmax_rows(&logits, SIZES[3]);
    let cpu_time = start.elapsed();

    let logit_error = max_abs_error(&out.logits, &logits);
    let prob_error = max_abs_error(&out.probs, &probs);
    println!(
        "batch {batch}: max abs error of the logits {logit_error:e}, of the probabilities {prob_error:e}"
    );
    if prob_error.is_nan() || prob_error > TOLERANCE {
        eprintln!("mismatch: the probabilities differ by {prob_error:e}, more than {TOLERANCE:e}");
        return Ok(false);
    }
    let argmax = |row: &[f32]| {
        row.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i)
    };
    let agree = out
        .probs
        .chunks_exact(SIZES[3])
        .zip(probs.chunks_exact(SIZES[3]))
        .filter(|(g, w)| argmax(g) == argmax(w))
        .count();
    println!(
        "matches the CPU reference (tolerance {TOLERANCE:e}); predicted classes agree on {agree} of {batch} rows"
    );
    println!(
        "GPU graph run (median of 5, batch upload and readback included): {:.2} ms; CPU reference: {:.2} ms",
        gpu_time.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
