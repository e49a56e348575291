//! An image pipeline where fusion matters: five element-wise stages and a
//! blur that reads its neighbours, run fused and unfused and verified
//! against the CPU.
//!
//! ```sh
//! cargo run --release --example image_pipeline -- [PIXELS] [--trace PATH]
//! ```
//!
//! `--trace PATH` (or `VYRE_TRACE=PATH`) also writes a Chrome trace /
//! Perfetto JSON of three profiled runs of each pipeline
//! (docs/profiling.md).
//!
//! Stages on RGBA `vec4<f32>` pixels: brightness, contrast, a horizontal
//! box blur (radius 2, within each row), gamma, clamp and a sepia colour
//! transform. `graph!` fuses brightness and contrast into one dispatch and
//! the blur, gamma, clamp and sepia into another, with their intermediates
//! in registers: the blur reads neighbours only of contrast's output, which
//! nothing in its group writes. (Its group's register-held intermediates
//! share device slots with buffers the group binds; being never allocated,
//! they cannot conflict.) The same graph with `fuse off;` runs beside it
//! for comparison.

#[path = "common/mod.rs"]
mod common;

use vyre_graph::{Gpu, graph};

/// The pipeline's graph body, once fused and once with `fuse off;`.
macro_rules! pipeline {
    ($(#[$attr:meta])* $name:ident $($fuse:tt)*) => {
        graph! {
            $(#[$attr])*
            pub struct $name;
            $($fuse)*

            kernel brightness = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>(p.rgb + vec3<f32>(tone.brightness), p.a);
                    }
                }
            ";
            kernel contrast = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>((p.rgb - vec3<f32>(0.5)) * tone.contrast + vec3<f32>(0.5), p.a);
                    }
                }
            ";
            kernel blur = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    let i = g.x;
                    if i >= arrayLength(&src) { return; }
                    let w = tone.width;
                    let row = i / w;
                    let col = i32(i % w);
                    var sum = vec4<f32>(0.0);
                    var count = 0.0;
                    for (var d = -2; d <= 2; d++) {
                        let c = col + d;
                        if c >= 0 && c < i32(w) {
                            sum += src[row * w + u32(c)];
                            count += 1.0;
                        }
                    }
                    dst[i] = sum / count;
                }
            ";
            kernel gamma = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>(pow(max(p.rgb, vec3<f32>(0.0)), vec3<f32>(1.0 / tone.gamma)), p.a);
                    }
                }
            ";
            kernel clamp01 = "
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        dst[g.x] = clamp(src[g.x], vec4<f32>(0.0), vec4<f32>(1.0));
                    }
                }
            ";
            kernel sepia = "
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        let r = 0.393 * p.r + 0.769 * p.g + 0.189 * p.b;
                        let gr = 0.349 * p.r + 0.686 * p.g + 0.168 * p.b;
                        let b = 0.272 * p.r + 0.534 * p.g + 0.131 * p.b;
                        dst[g.x] = vec4<f32>(r, gr, b, p.a);
                    }
                }
            ";

            input image[n];
            uniform tone;
            intermediate t1[n];
            intermediate t2[n];
            intermediate t3[n];
            intermediate t4[n];
            intermediate t5[n];
            output out[n];

            node brightness(src: image, tone: tone, dst: t1) over n;
            node contrast(src: t1, tone: tone, dst: t2) over n;
            node blur(src: t2, tone: tone, dst: t3) over n;
            node gamma(src: t3, tone: tone, dst: t4) over n;
            node clamp01(src: t4, dst: t5) over n;
            node sepia(src: t5, dst: out) over n;
        }
    };
}

pipeline!(
    /// Six stages; the element-wise runs are fused at compile time.
    Pipeline
);

/// The unfused graph (its generated types are used only in part).
#[allow(dead_code)]
mod unfused {
    use super::*;
    pipeline!(
        /// The same stages, one dispatch each.
        Pipeline fuse off;
    );
}

const WIDTH: u32 = 512;

/// The same pipeline on the CPU, in the GPU's order of operations.
fn reference(image: &[[f32; 4]], tone: &Tone) -> Vec<[f32; 4]> {
    let rgb = |p: [f32; 4], f: &dyn Fn(f32) -> f32| [f(p[0]), f(p[1]), f(p[2]), p[3]];
    let toned: Vec<[f32; 4]> = image
        .iter()
        .map(|&p| rgb(p, &|c| c + tone.brightness))
        .map(|p| rgb(p, &|c| (c - 0.5) * tone.contrast + 0.5))
        .collect();
    let w = WIDTH as usize;
    (0..toned.len())
        .map(|i| {
            let (row, col) = (i / w, (i % w) as i64);
            let mut sum = [0.0f32; 4];
            let mut count = 0.0f32;
            for d in -2..=2 {
                let c = col + d;
                if c >= 0 && c < w as i64 {
                    let p = toned[row * w + c as usize];
                    for k in 0..4 {
                        sum[k] += p[k];
                    }
                    count += 1.0;
                }
            }
            let p = sum.map(|s| s / count);
            let p = rgb(p, &|c| c.max(0.0).powf(1.0 / tone.gamma));
            let p = p.map(|c| c.clamp(0.0, 1.0));
            [
                0.393 * p[0] + 0.769 * p[1] + 0.189 * p[2],
                0.349 * p[0] + 0.686 * p[1] + 0.168 * p[2],
                0.272 * p[0] + 0.534 * p[1] + 0.131 * p[2],
                p[3],
            ]
        })
        .collect()
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let pixels = common::args()
        .first()
        .map(|s| s.parse::<u32>())
        .transpose()?
        .unwrap_or(1 << 20)
        .max(WIDTH)
        / WIDTH
        * WIDTH;
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let fused = Pipeline::new(&gpu)?;
    let unfused = unfused::Pipeline::new(&gpu)?;
    common::write_dot("image_pipeline", &fused.to_dot())?;
    let image: Vec<[f32; 4]> = (0..pixels)
        .map(|i| {
            let x = (i % WIDTH) as f32 / WIDTH as f32;
            let y = (i / WIDTH) as f32 / (pixels / WIDTH) as f32;
            [x, y, (x * 7.0 + y * 3.0).fract(), 1.0]
        })
        .collect();
    let tone = Tone {
        brightness: 0.05,
        contrast: 1.2,
        gamma: 2.2,
        width: WIDTH,
    };
    let (fused_time, a) = common::median_time(9, || fused.run(&image, &tone))?;
    // Each graph! generates its own `Tone`; they have one layout.
    let unfused_tone: unfused::Tone = bytemuck::cast(tone);
    let (unfused_time, b) = common::median_time(9, || unfused.run(&image, &unfused_tone))?;
    let want = reference(&image, &tone);
    let error = a
        .out
        .iter()
        .zip(&want)
        .flat_map(|(g, c)| g.iter().zip(c).map(|(g, c)| (g - c).abs()))
        .fold(0.0f32, f32::max);
    // f32 sums of five neighbours and pow: a few ulps apart from the CPU.
    let ok = error <= 1e-4
        && bytemuck::cast_slice::<_, u8>(&a.out) == bytemuck::cast_slice::<_, u8>(&b.out);
    println!(
        "{pixels} pixels ({WIDTH} wide), 6 stages in {} dispatches fused, 6 unfused: fused and unfused agree byte for byte: {}; max abs error against the CPU {error:.1e}",
        Pipeline::SPEC.nodes.len() + Pipeline::SPEC.fused.len()
            - Pipeline::SPEC
                .fused
                .iter()
                .map(|g| g.nodes.len())
                .sum::<usize>(),
        bytemuck::cast_slice::<_, u8>(&a.out) == bytemuck::cast_slice::<_, u8>(&b.out)
    );
    println!(
        "median of 9 runs (upload and readback included): fused {:.3} ms, unfused {:.3} ms ({:.2}x)",
        fused_time.as_secs_f64() * 1e3,
        unfused_time.as_secs_f64() * 1e3,
        unfused_time.as_secs_f64() / fused_time.as_secs_f64()
    );
    if !ok {
        eprintln!("MISMATCH");
    }
    if let Some(path) = common::trace_path() {
        trace(
            (&fused, &unfused),
            &image,
            (&tone, &unfused_tone),
            &a.out,
            &path,
        )?;
    }
    Ok(ok)
}

/// Three profiled runs of the fused pipeline and three of the unfused one,
/// interleaved and each checked against the fused result, as one trace
/// file (`--trace PATH`).
fn trace(
    (fused, unfused): (&Pipeline, &unfused::Pipeline),
    image: &[[f32; 4]],
    (tone, unfused_tone): (&Tone, &unfused::Tone),
    want: &[[f32; 4]],
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = vyre_graph::DispatchConfig::default().with_profile(true);
    let mut trace = vyre_graph::Trace::new();
    for _ in 0..3 {
        let (a, report) = fused.run_reported(&config, image, tone)?;
        trace.push(&report);
        let (b, report) = unfused.run_reported(&config, image, unfused_tone)?;
        trace.push(&report);
        let bytes = bytemuck::cast_slice::<_, u8>;
        if bytes(&a.out) != bytes(want) || bytes(&b.out) != bytes(want) {
            return Err("a profiled run differs from the unprofiled one".into());
        }
    }
    trace.write(path)?;
    println!(
        "wrote a trace of 3 fused and 3 unfused profiled runs to {}",
        path.display()
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    common::exit_code(run())
}
