//! A separable Gaussian blur (radius 8, sigma 3) of a generated RGBA8
//! image: a horizontal pass into an f32 image, then a vertical pass, on
//! textures (`BlurTexture`: the input is a sampled rgba8unorm texture read
//! through a linear sampler, the intermediate and the output are
//! rgba32float storage textures) and, for comparison, on buffers (`Blur`).
//!
//! It shows graph textures and samplers (`input texture image[n, 3 * n /
//! 4] rgba8unorm;`, `sampler lin = linear clamp;`), a `uniform` buffer
//! whose WGSL struct `graph!` turns into a Rust struct (`Params`, with
//! WGSL's padding made explicit), two entry points of one WGSL file
//! (`entry "horizontal"`, `entry "vertical"`), and vector elements
//! (`array<vec4<f32>>` is a `Vec<[f32; 4]>`). Both results are checked
//! against a CPU blur (max abs error 1e-4 on a 0..1 scale); the texture
//! graph's is written beside the input as `target/blur.png`. Both times are
//! printed.
//!
//! ```text
//! cargo run --release --example blur          # 1024 x 768
//! cargo run --release --example blur -- 256   # 256 x 192
//! ```

mod common;
use common::median_time;

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{Gpu, graph};

graph! {
    /// Gaussian blur of an RGBA8 image (one u32 a pixel, red in the low
    /// byte) into RGBA f32 in 0..1, edges clamped. `n` is the pixel count;
    /// `params` gives the size and the weights.
    pub struct Blur;

    kernel horizontal = file "examples/kernels/blur/blur.wgsl" entry "horizontal";
    kernel vertical = file "examples/kernels/blur/blur.wgsl" entry "vertical";

    input image[n];
    uniform params;
    intermediate rows[n];
    output blurred[n];

    node horizontal(params: params, image: image, rows: rows) over n;
    node vertical(params: params, rows: rows, blurred: blurred) over n;
}

/// The texture graph, in its own module: its kernels' `Params` struct
/// becomes `texture::Params`, beside the buffer graph's `Params`.
mod texture {
    use vyre_graph::graph;

    graph! {
    /// The same blur on textures: `n` is the width; the input is sampled
    /// through a linear sampler at texel centres (exact), the passes write
    /// rgba32float storage textures.
    pub struct BlurTexture;

    kernel horizontal = file "examples/kernels/blur/blur_texture.wgsl" entry "horizontal";
    kernel vertical = file "examples/kernels/blur/blur_texture.wgsl" entry "vertical";

    input texture image[n, 3 * n / 4] rgba8unorm;
    sampler lin = linear clamp;
    uniform params;
    intermediate texture rows[n, 3 * n / 4] rgba32float;
    output texture blurred[n, 3 * n / 4] rgba32float;

    node horizontal(params: params, image: image, lin: lin, rows_out: rows) grid [n / 16, 3 * n / 64, 1];
    node vertical(params: params, rows_in: rows, blurred: blurred) grid [n / 16, 3 * n / 64, 1];
    }
}

const RADIUS: usize = 8;
const SIGMA: f32 = 3.0;
/// The largest difference allowed between the GPU's and the CPU's result.
const TOLERANCE: f32 = 1e-4;

/// Normalised Gaussian weights of the centre and of the taps 1..=radius
/// away on each side.
fn gaussian_weights(radius: usize, sigma: f32) -> Vec<f32> {
    let mut weights: Vec<f32> = (0..=radius)
        .map(|k| (-((k * k) as f32) / (2.0 * sigma * sigma)).exp())
        .collect();
    let sum = weights[0] + 2.0 * weights[1..].iter().sum::<f32>();
    weights.iter_mut().for_each(|w| *w /= sum);
    weights
}

/// A test card with sharp edges: a checkerboard, a disc, thin lines and a
/// gradient, packed RGBA8 (red in the low byte, opaque).
fn test_card(width: usize, height: usize) -> Vec<u32> {
    let rgba = |r: usize, g: usize, b: usize| {
        (r as u32) | (g as u32) << 8 | (b as u32) << 16 | 0xff00_0000
    };
    let (cx, cy, radius) = (width as f32 / 2.0, height as f32 / 2.0, height as f32 / 4.0);
    let cell = (width / 16).max(1);
    (0..width * height)
        .map(|i| {
            let (x, y) = (i % width, i / width);
            let (fx, fy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
            if (fx * fx + fy * fy).sqrt() < radius {
                rgba(250, 200, 40)
            } else if x % cell == 0 || y % cell == 0 {
                rgba(255, 255, 255)
            } else if (x / cell + y / cell).is_multiple_of(2) {
                rgba(30, 60, 200)
            } else {
                rgba(x * 255 / width, 40, 255 - y * 255 / height)
            }
        })
        .collect()
}

fn unpack(pixel: u32) -> [f32; 4] {
    pixel.to_le_bytes().map(|c| f32::from(c) / 255.0)
}

/// The CPU reference, in the same order of operations as the kernels.
fn blur_cpu(image: &[u32], width: usize, height: usize, weights: &[f32]) -> Vec<[f32; 4]> {
    let tap = |acc: &mut [f32; 4], w: f32, a: [f32; 4], b: [f32; 4]| {
        for c in 0..4 {
            acc[c] += w * (a[c] + b[c]);
        }
    };
    let mut rows = vec![[0.0f32; 4]; width * height];
    for y in 0..height {
        let row = &image[y * width..][..width];
        for x in 0..width {
            let mut acc = unpack(row[x]).map(|c| weights[0] * c);
            for (k, &w) in weights.iter().enumerate().skip(1) {
                tap(
                    &mut acc,
                    w,
                    unpack(row[x.saturating_sub(k)]),
                    unpack(row[(x + k).min(width - 1)]),
                );
            }
            rows[y * width + x] = acc;
        }
    }
    let mut out = vec![[0.0f32; 4]; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut acc = rows[y * width + x].map(|c| weights[0] * c);
            for (k, &w) in weights.iter().enumerate().skip(1) {
                let up = rows[y.saturating_sub(k) * width + x];
                let down = rows[(y + k).min(height - 1) * width + x];
                tap(&mut acc, w, up, down);
            }
            out[y * width + x] = acc;
        }
    }
    out
}

/// Writes the input and the blurred image side by side as an RGBA8 PNG.
fn write_png(
    path: &Path,
    image: &[u32],
    blurred: &[[f32; 4]],
    width: usize,
    height: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut pixels = Vec::with_capacity(width * height * 8);
    for y in 0..height {
        for &p in &image[y * width..][..width] {
            pixels.extend_from_slice(&p.to_le_bytes());
        }
        for p in &blurred[y * width..][..width] {
            pixels.extend(p.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut encoder = png::Encoder::new(
        BufWriter::new(File::create(path)?),
        u32::try_from(2 * width)?,
        u32::try_from(height)?,
    );
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(())
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let width: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the width `{arg}` is not a number: {e}"))?,
        None => 1024,
    };
    // The texture graph's height, `3 * n / 4`, rounds up.
    let height = (width * 3).div_ceil(4);
    if !(2..=8192).contains(&width) {
        return Err(format!("the width must be between 2 and 8192, not {width}").into());
    }

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let blur = Blur::new(&gpu)?;
    let blur_texture = texture::BlurTexture::new(&gpu)?;
    common::write_dot("blur", &blur.to_dot())?;
    common::write_dot("blur_texture", &blur_texture.to_dot())?;

    let weights = gaussian_weights(RADIUS, SIGMA);
    let mut params = Params {
        width: u32::try_from(width)?,
        height: u32::try_from(height)?,
        radius: u32::try_from(RADIUS)?,
        ..Params::default()
    };
    for (k, &w) in weights.iter().enumerate() {
        params.weights[k / 4][k % 4] = w;
    }
    let image = test_card(width, height);

    let texels: Vec<[u8; 4]> = image.iter().map(|p| p.to_le_bytes()).collect();
    let texture_params = texture::Params {
        width: params.width,
        height: params.height,
        radius: params.radius,
        weights: params.weights,
        ..texture::Params::default()
    };

    let (buffer_time, out) = median_time(5, || blur.run(&image, &params))?;
    let (texture_time, out_texture) = median_time(5, || {
        blur_texture.run(width as u64, &texels, &texture_params)
    })?;
    let start = Instant::now();
    let expected = blur_cpu(&image, width, height, &weights);
    let cpu_time = start.elapsed();

    for (what, blurred) in [
        ("buffers", &out.blurred),
        ("textures", &out_texture.blurred),
    ] {
        let max_error = blurred
            .iter()
            .flatten()
            .zip(expected.iter().flatten())
            .map(|(got, want)| (got - want).abs())
            .fold(0.0f32, f32::max);
        if blurred.len() != expected.len() || max_error.is_nan() || max_error > TOLERANCE {
            eprintln!(
                "mismatch ({what}): {} pixels, max abs error {max_error:e} exceeds {TOLERANCE:e}",
                blurred.len()
            );
            return Ok(false);
        }
        println!(
            "{width}x{height} blur on {what} (radius {RADIUS}, sigma {SIGMA}) matches the CPU reference: max abs error {max_error:e} (tolerance {TOLERANCE:e})"
        );
    }
    println!(
        "GPU graph run (median of 5, with upload and readback): textures {:.2} ms, buffers {:.2} ms; CPU reference: {:.2} ms",
        texture_time.as_secs_f64() * 1e3,
        buffer_time.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );

    let path = Path::new("target").join("blur.png");
    write_png(&path, &image, &out_texture.blurred, width, height)?;
    let shown = std::fs::canonicalize(&path).unwrap_or(path);
    println!("wrote input | blurred side by side to {}", shown.display());
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
