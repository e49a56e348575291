//! A particle system inside a plain wgpu application: the application opens
//! its own device, `Gpu::from_wgpu` adopts it, and every frame records the
//! graph's step *and* the application's own render pass into one command
//! encoder, one submission.
//!
//! The particles (`struct Particle { pos: vec2<f32>, vel: vec2<f32> }`) live
//! in one resident buffer made by `resident_outputs` with `VERTEX` usage: the
//! graph updates it (an `inout` buffer, fed from that same buffer), and the
//! render pass draws it as a point list. The force field is deterministic:
//! a spin about the centre (8 classes of particles, each with its own spin),
//! a pull towards a ring, and damping, so the particles settle into
//! spinning rings of different radii.
//!
//! After the last frame the positions are read back and checked against a
//! CPU integration of the same steps; the median frame time (recording,
//! submission and the wait) is printed.
//!
//! ```text
//! cargo run --release --example particles                 # 100,000 particles, 60 frames
//! cargo run --release --example particles -- 20000 --png docs/particles.png
//! ```

// `exit_code` of the shared helpers, and `write_dot`: frames are timed one by one.
mod common;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use vyre_graph::wgpu;
use vyre_graph::{DispatchConfig, Gpu, graph};

graph! {
    /// One frame of the particle system: `params.substeps` semi-implicit
    /// Euler steps of every particle, in place.
    pub struct Step;

    kernel step = wgsl {
        struct Particle { pos: vec2<f32>, vel: vec2<f32> }
        struct Params {
            dt: f32,
            spin: f32,
            pull: f32,
            damping: f32,
            ring2: f32,
            substeps: u32,
        }
        @group(0) @binding(0) var<storage, read_write> particles: array<Particle>;
        @group(0) @binding(1) var<uniform> params: Params;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.x;
            if i >= arrayLength(&particles) { return; }
            var p = particles[i];
            // Eight classes of particles, each spinning at its own rate.
            let spin = params.spin * (0.5 + 0.125 * f32(i & 7u));
            for (var s = 0u; s < params.substeps; s += 1u) {
                let r2 = p.pos.x * p.pos.x + p.pos.y * p.pos.y;
                let swirl = spin * vec2<f32>(-p.pos.y, p.pos.x);
                let ring = params.pull * (params.ring2 - r2) * p.pos;
                let accel = swirl + ring - params.damping * p.vel;
                p.vel = p.vel + params.dt * accel;
                p.pos = p.pos + params.dt * p.vel;
            }
            particles[i] = p;
        }
    };

    inout particles[n];
    uniform params;

    node step(particles: particles, params: params) over n;
}

/// Frames simulated and drawn.
const FRAMES: usize = 60;
/// The image's width and height in pixels.
const SIZE: u32 = 256;
/// The largest difference allowed between a GPU and a CPU coordinate.
///
/// The kernel uses only `+`, `-` and `*` (no division, square root or
/// transcendental, whose WGSL precision is looser than IEEE's), each
/// correctly rounded on both sides, so the two integrations differ only
/// where the shader compiler fuses a multiply and an add into one FMA (one
/// rounding fewer, allowed by WGSL) or reassociates: a few ULPs (1 ULP is
/// 6e-8 at 0.5) per step. Damping makes the field contracting almost
/// everywhere, so these differences stay near their per-step size instead
/// of compounding; only the weak outward push near the centre amplifies
/// them, at most about 7 times over the run. 1e-4 (0.005% of the [-1, 1]
/// square, far below a pixel) leaves room for that, and any real mistake
/// (a wrong step, a skipped particle, a stale buffer) moves a particle by
/// far more.
const TOLERANCE: f32 = 1e-4;

fn params() -> Params {
    Params {
        dt: 0.02,
        spin: 1.0,
        pull: 4.0,
        damping: 1.0,
        ring2: 0.1,
        substeps: 4,
    }
}

/// Particles spread over the square [-0.95, 0.95]², at rest (a fixed
/// integer hash, so every run starts the same).
fn initial(n: usize) -> Vec<Particle> {
    let unit = |h: u32| (h >> 8) as f32 * (1.0 / (1u32 << 24) as f32);
    (0..n as u32)
        .map(|i| {
            let mut h = i.wrapping_mul(0x9e37_79b9) ^ 0x85eb_ca6b;
            h ^= h >> 16;
            h = h.wrapping_mul(0x7feb_352d);
            h ^= h >> 15;
            let x = unit(h);
            h = h.wrapping_mul(0x846c_a68b);
            h ^= h >> 16;
            let y = unit(h);
            Particle {
                pos: [1.9 * x - 0.95, 1.9 * y - 0.95],
                vel: [0.0, 0.0],
            }
        })
        .collect()
}

/// The kernel's arithmetic in the same order, on the CPU, for `frames`
/// frames.
fn integrate_cpu(particles: &mut [Particle], params: &Params, frames: usize) {
    for (i, p) in particles.iter_mut().enumerate() {
        let spin = params.spin * (0.5 + 0.125 * (i as u32 & 7) as f32);
        let [mut x, mut y] = p.pos;
        let [mut vx, mut vy] = p.vel;
        for _ in 0..frames * params.substeps as usize {
            let r2 = x * x + y * y;
            let ring = params.pull * (params.ring2 - r2);
            let ax = spin * -y + ring * x - params.damping * vx;
            let ay = spin * x + ring * y - params.damping * vy;
            vx += params.dt * ax;
            vy += params.dt * ay;
            x += params.dt * vx;
            y += params.dt * vy;
        }
        *p = Particle {
            pos: [x, y],
            vel: [vx, vy],
        };
    }
}

/// The application's own device: plain wgpu, honouring `WGPU_BACKEND`.
fn app_device() -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), String> {
    pollster::block_on(async {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions::default())
            .await
            .map_err(|e| format!("no GPU adapter ({e}); {}", vyre_graph::DRIVER_SETUP_HINT))?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor::default())
            .await
            .map_err(|e| format!("the adapter refused a device: {e}"))?;
        Ok((adapter, device, queue))
    })
}

/// The application's render pipeline: one point per particle, coloured by
/// class and speed, added onto the target (dense regions glow).
fn point_pipeline(device: &wgpu::Device) -> wgpu::RenderPipeline {
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("particles"),
        source: wgpu::ShaderSource::Wgsl(
            "struct Out { @builtin(position) pos: vec4<f32>, @location(0) colour: vec4<f32> }
             @vertex
             fn vs(@builtin(vertex_index) i: u32, @location(0) pos: vec2<f32>, @location(1) vel: vec2<f32>) -> Out {
                 let kind = f32(i & 7u) / 7.0;
                 let speed = clamp(length(vel) * 1.5, 0.0, 1.0);
                 let base = mix(vec3<f32>(0.15, 0.45, 1.0), vec3<f32>(1.0, 0.35, 0.1), kind);
                 let colour = mix(base, vec3<f32>(1.0, 0.95, 0.8), speed * 0.5);
                 return Out(vec4<f32>(pos, 0.0, 1.0), vec4<f32>(colour, 0.35));
             }
             @fragment fn fs(@location(0) colour: vec4<f32>) -> @location(0) vec4<f32> { return colour; }"
                .into(),
        ),
    });
    let additive = wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::SrcAlpha,
        dst_factor: wgpu::BlendFactor::One,
        operation: wgpu::BlendOperation::Add,
    };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("particles"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &shader,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: size_of::<Particle>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2],
            })],
        },
        fragment: Some(wgpu::FragmentState {
            module: &shader,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: wgpu::TextureFormat::Rgba8Unorm,
                blend: Some(wgpu::BlendState {
                    color: additive,
                    alpha: additive,
                }),
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::PointList,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: Default::default(),
        multiview_mask: None,
        cache: None,
    })
}

/// Writes tightly packed RGBA8 rows as a PNG.
fn write_png(path: &Path, rgba: &[u8], width: u32, height: u32) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut encoder = png::Encoder::new(BufWriter::new(File::create(path)?), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgba)?;
    writer.finish()?;
    Ok(())
}

struct Args {
    n: usize,
    png: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        n: 100_000,
        png: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--png" {
            let path = args.next().ok_or("--png needs a path")?;
            out.png = Some(path.into());
        } else {
            out.n = arg.parse().map_err(|e| {
                format!("usage: particles [N] [--png PATH]; `{arg}` is not a count: {e}")
            })?;
        }
    }
    if out.n == 0 {
        return Err("the particle count must be at least 1".into());
    }
    Ok(out)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let Args { n, png } = args()?;

    // The application: its own instance, adapter, device and queue.
    let (adapter, device, queue) = app_device()?;
    let pipeline = point_pipeline(&device);
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("frame"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    // 256 pixels of 4 bytes: rows are already a multiple of 256 bytes.
    let row_bytes = SIZE * 4;
    let pixels = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("pixels"),
        size: u64::from(row_bytes * SIZE),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });

    // vyre adopts the application's device.
    let gpu = Gpu::from_wgpu(Some(adapter), device.clone(), queue.clone());
    println!("adapter: {}", gpu.adapter());
    let step = Step::new(&gpu)?;
    common::write_dot("particles", &step.to_dot())?;
    let config = DispatchConfig::default().with_resident_usage(wgpu::BufferUsages::VERTEX);
    // The particles' buffer: STORAGE | COPY_SRC | COPY_DST | VERTEX.
    let resident = step.resident_outputs(&config, n as u64)?;
    let start = initial(n);
    let params = params();

    let mut frame_times = Vec::with_capacity(FRAMES);
    for frame in 0..FRAMES {
        let last = frame + 1 == FRAMES;
        let started = Instant::now();
        let mut encoder = device.create_command_encoder(&Default::default());
        // The graph's step: frame 0 uploads the starting state from the
        // host, later frames feed the buffer its own contents.
        let recorded = if frame == 0 {
            step.record(&mut encoder, &config, &resident, &start, &params)?
        } else {
            step.record(
                &mut encoder,
                &config,
                &resident,
                &resident.particles,
                &params,
            )?
        };
        // The application's render pass draws what the step wrote.
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("particles"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: 0.01,
                            g: 0.01,
                            b: 0.03,
                            a: 1.0,
                        }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.set_vertex_buffer(0, resident.particles.buffer().slice(..));
            pass.draw(0..n as u32, 0..1);
        }
        if last {
            encoder.copy_texture_to_buffer(
                target.as_image_copy(),
                wgpu::TexelCopyBufferInfo {
                    buffer: &pixels,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(row_bytes),
                        rows_per_image: None,
                    },
                },
                target.size(),
            );
        }
        let submission = queue.submit([encoder.finish()]);
        recorded.finish(&submission);
        device.poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: None,
        })?;
        frame_times.push(started.elapsed());
    }

    // The first frame also builds the launch plan: leave it out.
    let mut steady: Vec<Duration> = frame_times[1..].to_vec();
    steady.sort();
    let median = steady[steady.len() / 2];

    let got = resident.particles.read_as::<Particle>(&gpu)?;
    let mut want = start.clone();
    let cpu_started = Instant::now();
    integrate_cpu(&mut want, &params, FRAMES);
    let cpu_time = cpu_started.elapsed();
    let max_error = got
        .iter()
        .zip(&want)
        .flat_map(|(g, w)| {
            [
                g.pos[0] - w.pos[0],
                g.pos[1] - w.pos[1],
                g.vel[0] - w.vel[0],
                g.vel[1] - w.vel[1],
            ]
        })
        .map(f32::abs)
        .fold(0.0f32, f32::max);
    if got.len() != n || max_error.is_nan() || max_error > TOLERANCE {
        eprintln!(
            "mismatch: {} particles read back for {n}; max abs error {max_error:e} (tolerance {TOLERANCE:e})",
            got.len()
        );
        return Ok(false);
    }
    println!(
        "{n} particles, {FRAMES} frames of {} steps: positions and velocities match the CPU integration (max abs error {max_error:e}, tolerance {TOLERANCE:e})",
        params.substeps
    );
    println!(
        "frame (record graph + render pass, one submission, wait), median of {}: {:.2} ms; CPU integration of all frames: {:.2} ms",
        steady.len(),
        median.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );

    // The last frame's image: the map callback fires in the poll below.
    pixels
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map the frame"));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let rgba = pixels.slice(..).get_mapped_range()?.to_vec();
    pixels.unmap();
    let lit = rgba
        .chunks_exact(4)
        .filter(|p| p[0] > 40 || p[2] > 40)
        .count();
    if lit == 0 {
        eprintln!("the last frame is empty: the render pass drew no particle");
        return Ok(false);
    }
    println!(
        "last frame: {lit} of {} pixels lit",
        SIZE as usize * SIZE as usize
    );
    if let Some(path) = png {
        write_png(&path, &rgba, SIZE, SIZE)?;
        println!("wrote {SIZE}x{SIZE} frame to {}", path.display());
    }
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
