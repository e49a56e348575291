//! The smallest useful graph: three kernels, checked at compile time, run as
//! one GPU submission and verified against the CPU.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! Three nodes: `affine` writes `t = a * x + b`, `square` writes `u = t²`,
//! and `smooth` writes the output `y[i] = u[i] + u[i + 1]`. The three
//! kernels show the three ways to give WGSL: as Rust tokens, as a string,
//! and as a file.

use std::time::Instant;

use vyre_graph::{Gpu, graph};

graph! {
    /// `y[i] = u[i] + u[i + 1]` where `u = (a * x + b)²`, in three nodes.
    pub struct Quickstart;

    // WGSL written as Rust tokens: a mistake here is reported at the exact token.
    kernel affine = wgsl {
        struct Params { a: f32, b: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> t: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) {
                t[g.x] = params.a * x[g.x] + params.b;
            }
        }
    };

    // WGSL in a string literal.
    kernel square = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) {
                dst[g.x] = src[g.x] * src[g.x];
            }
        }
    ";

    // WGSL in a file, relative to the crate's Cargo.toml.
    kernel smooth = file "examples/kernels/smooth.wgsl";

    input x[n];
    uniform params;
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node affine(x: x, params: params, t: t) over n;
    node square(src: t, dst: u) over n;
    node smooth(src: u, dst: y) over n;
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = std::env::args()
        .nth(1)
        .map(|s| s.parse::<usize>())
        .transpose()?
        .unwrap_or(1 << 20);

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());

    let graph = Quickstart::new(&gpu)?;
    // Its picture (docs/pictures/graphs.sh sets this).
    if let Some(dir) = std::env::var_os("VYRE_DOT_DIR") {
        std::fs::write(
            std::path::Path::new(&dir).join("quickstart.dot"),
            graph.to_dot(),
        )?;
    }
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 100.0).collect();
    let params = Params { a: 0.5, b: -2.0 };

    let start = Instant::now();
    let out = graph.run(&x, &params)?;
    let first = start.elapsed();
    let start = Instant::now();
    let again = graph.run(&x, &params)?;
    let second = start.elapsed();

    let u: Vec<f32> = x
        .iter()
        .map(|&v| (params.a * v + params.b) * (params.a * v + params.b))
        .collect();
    let expected: Vec<f32> = (0..n)
        .map(|i| u[i] + u.get(i + 1).copied().unwrap_or(0.0))
        .collect();
    let max_error = out
        .y
        .iter()
        .zip(&expected)
        .map(|(g, c)| (g - c).abs() / c.abs().max(1.0))
        .fold(0.0f32, f32::max);
    if max_error > 1e-5 || out.y != again.y {
        eprintln!("MISMATCH: max relative error {max_error:e}");
        std::process::exit(1);
    }
    println!(
        "{n} elements through 3 kernels: matches the CPU (max relative error {max_error:.1e})"
    );
    println!(
        "first run {:.2} ms (plans and allocates), second run {:.2} ms (cached plan, one submission)",
        first.as_secs_f64() * 1e3,
        second.as_secs_f64() * 1e3
    );
    println!("{}", graph.describe());
    Ok(())
}
