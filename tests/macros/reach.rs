//! Kernels beyond plain buffers, on the GPU: the WebGPU boids step over a
//! struct that ends in a runtime-sized array (with and without header
//! fields), a `u64` histogram with 64-bit atomics, an `f16` kernel, and a
//! device opened without a feature a graph declares. A GPU test fails,
//! never skips, when the adapter lacks what it needs.

use crate::common;

use common::{gpu, serial};
use vyre_graph::half::f16;
use vyre_graph::{BackendError, Gpu, GpuOptions, graph, wgpu};

graph! {
    /// One boids step over `struct Particles { particles: array<Particle> }`.
    pub struct Boids;

    kernel step = wgsl {
        struct Particle { pos: vec2<f32>, vel: vec2<f32> }
        struct Particles { particles: array<Particle> }
        @group(0) @binding(0) var<storage, read_write> ps: Particles;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&ps.particles);
            if g.x >= n { return; }
            var centre = vec2<f32>(0.0);
            for (var i = 0u; i < n; i++) { centre += ps.particles[i].pos; }
            centre /= f32(n);
            var p = ps.particles[g.x];
            p.vel += (centre - p.pos) * 0.01;
            p.pos += p.vel * 0.1;
            ps.particles[g.x] = p;
        }
    };

    inout p[n];

    node step(ps: p) over n;
}

graph! {
    /// The boids step with header fields before the particles.
    pub struct HeadedBoids;

    kernel step = wgsl {
        struct Bird { pos: vec2<f32>, vel: vec2<f32> }
        struct Flock { count: u32, dt: f32, steps: atomic<u32>, particles: array<Bird> }
        @group(0) @binding(0) var<storage, read_write> flock: Flock;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = flock.count;
            if g.x >= n { return; }
            var centre = vec2<f32>(0.0);
            for (var i = 0u; i < n; i++) { centre += flock.particles[i].pos; }
            centre /= f32(n);
            var p = flock.particles[g.x];
            p.vel += (centre - p.pos) * 0.01;
            p.pos += p.vel * flock.dt;
            flock.particles[g.x] = p;
            atomicAdd(&flock.steps, 1u);
        }
    };

    inout f[n];

    node step(flock: f) over n;
}

fn boids_cpu(ps: &[[f32; 4]], dt: f32) -> Vec<[f32; 4]> {
    let n = ps.len() as f32;
    let (mut cx, mut cy) = (0.0f32, 0.0f32);
    for p in ps {
        cx += p[0];
        cy += p[1];
    }
    let (cx, cy) = (cx / n, cy / n);
    ps.iter()
        .map(|p| {
            let vx = p[2] + (cx - p[0]) * 0.01;
            let vy = p[3] + (cy - p[1]) * 0.01;
            [p[0] + vx * dt, p[1] + vy * dt, vx, vy]
        })
        .collect()
}

fn flock(n: usize) -> Vec<[f32; 4]> {
    (0..n)
        .map(|i| {
            let t = i as f32;
            [
                t.sin() * 10.0,
                (t * 0.7).cos() * 10.0,
                (t * 0.3).sin(),
                (t * 1.3).cos(),
            ]
        })
        .collect()
}

fn close(a: &[[f32; 4]], b: &[[f32; 4]]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for k in 0..4 {
            assert!(
                (x[k] - y[k]).abs() <= 1e-3 * (1.0 + y[k].abs()),
                "particle {i}: {x:?} vs {y:?}"
            );
        }
    }
}

#[test]
fn boids_step_over_a_runtime_sized_struct() {
    let _lock = serial();
    let gpu = gpu();
    let g = Boids::new(&gpu).expect("graph");
    let data = flock(300);
    let ps: Vec<Particle> = data
        .iter()
        .map(|p| Particle {
            pos: [p[0], p[1]],
            vel: [p[2], p[3]],
        })
        .collect();
    let out = g.run(&ps).expect("run");
    let got: Vec<[f32; 4]> = out
        .p
        .iter()
        .map(|p| [p.pos[0], p.pos[1], p.vel[0], p.vel[1]])
        .collect();
    close(&got, &boids_cpu(&data, 0.1));
    assert_eq!(Boids::SPEC.buffers[0].header_bytes, 0);
}

#[test]
fn boids_step_with_header_fields() {
    let _lock = serial();
    let gpu = gpu();
    let g = HeadedBoids::new(&gpu).expect("graph");
    // count, dt, steps: 12 bytes, padded to the array's offset (16).
    assert_eq!(HeadedBoids::SPEC.buffers[0].header_bytes, 16);
    assert_eq!(size_of::<FlockHeader>(), 16);
    let data = flock(200);
    let birds: Vec<Bird> = data
        .iter()
        .map(|p| Bird {
            pos: [p[0], p[1]],
            vel: [p[2], p[3]],
        })
        .collect();
    // Only the first 150 birds are in the flock: the header's count says so.
    let header = FlockHeader {
        count: 150,
        dt: 0.25,
        steps: 7,
        ..Default::default()
    };
    let out = g.run((&header, &birds)).expect("run");
    assert_eq!(out.f.header.count, 150);
    assert_eq!(out.f.header.dt, 0.25);
    assert_eq!(
        out.f.header.steps,
        7 + 150,
        "each bird in the flock counts one step"
    );
    assert_eq!(out.f.elements.len(), 200);
    let got: Vec<[f32; 4]> = out
        .f
        .elements
        .iter()
        .map(|p| [p.pos[0], p.pos[1], p.vel[0], p.vel[1]])
        .collect();
    close(&got[..150], &boids_cpu(&data[..150], 0.25));
    close(&got[150..], &data[150..]);
    // A second step from the first one's output (`&Headed`).
    let again = g.run(&out.f).expect("run");
    assert_eq!(again.f.header.steps, 7 + 300);
}

graph! {
    /// A 64-bit histogram: `atomicAdd` on `array<atomic<u64>>`.
    pub struct Hist64;

    features [shader_int64, shader_int64_atomic_all_ops];

    kernel count = wgsl {
        @group(0) @binding(0) var<storage, read> keys: array<u32>;
        @group(0) @binding(1) var<storage, read_write> bins: array<atomic<u64>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&keys) {
                let k = keys[g.x];
                // Past 2^32: the high word of the weight is exercised.
                atomicAdd(&bins[k % 16u], (u64(k) << 20u) + 1lu);
            }
        }
    };

    input keys[n];
    inout bins[16];

    node count(keys: keys, bins: bins) over n;
}

#[test]
fn u64_histogram_with_64_bit_atomics() {
    let _lock = serial();
    let gpu = gpu();
    let needs = wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS;
    assert!(
        gpu.device().features().contains(needs),
        "the adapter lacks {needs:?}, which this test needs"
    );
    let g = Hist64::new(&gpu).expect("graph");
    let keys: Vec<u32> = (0..10_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let start: Vec<u64> = (0..16).map(|i| (i as u64) << 40).collect();
    let out = g.run(&keys, &start).expect("run");
    let mut expected = start.clone();
    for &k in &keys {
        expected[(k % 16) as usize] += (u64::from(k) << 20) + 1;
    }
    assert_eq!(out.bins, expected);
    assert!(expected.iter().any(|&b| b > u64::from(u32::MAX)));
}

graph! {
    /// `y = x * a + b` in `f16`.
    pub struct Half;

    features [shader_f16];

    kernel fma = wgsl {
        enable f16;
        @group(0) @binding(0) var<storage, read> x: array<f16>;
        @group(0) @binding(1) var<storage, read_write> y: array<f16>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] * 1.5h + 0.25h; }
        }
    };

    input x[n];
    output y[n];

    node fma(x: x, y: y) over n;
}

#[test]
fn f16_kernel_matches_half_on_the_cpu() {
    let _lock = serial();
    let gpu = gpu();
    assert!(
        gpu.device().features().contains(wgpu::Features::SHADER_F16),
        "the adapter lacks SHADER_F16, which this test needs"
    );
    let g = Half::new(&gpu).expect("graph");
    let x: Vec<f16> = (0..1000)
        .map(|i| f16::from_f32(i as f32 * 0.37 - 100.0))
        .collect();
    let out = g.run(&x).expect("run");
    let (a, b) = (f16::from_f32(1.5), f16::from_f32(0.25));
    for (i, (&xi, &yi)) in x.iter().zip(&out.y).enumerate() {
        // The product rounded to f16, then the sum rounded (a fused
        // multiply-add may round once: allow one unit in the last place).
        let want = f16::from_f32((xi * a).to_f32() + b.to_f32());
        let ulp = (want.to_f32().abs() * 2f32.powi(-10)).max(2f32.powi(-24));
        assert!(
            (yi.to_f32() - want.to_f32()).abs() <= ulp,
            "element {i}: {yi} vs {want}"
        );
    }
    assert!(out.y.iter().zip(&x).any(|(y, x)| y != x));
}

#[test]
fn a_device_without_a_declared_feature_is_refused() {
    let _lock = serial();
    let gpu = Gpu::with_options(GpuOptions::default().with_features(wgpu::Features::empty()))
        .expect("a device without shader features");
    assert!(
        !gpu.device()
            .features()
            .contains(wgpu::Features::SHADER_INT64)
    );
    let before = gpu.counters();
    match Hist64::new(&gpu) {
        Err(BackendError::UnsupportedFeature {
            graph,
            feature,
            wgpu,
        }) => {
            assert_eq!(
                (graph.as_str(), feature, wgpu),
                ("Hist64", "shader_int64", "SHADER_INT64")
            );
        }
        Err(e) => panic!("expected UnsupportedFeature, got {e}"),
        Ok(_) => panic!("a device without SHADER_INT64 made the graph"),
    }
    let err = Half::new(&gpu).expect_err("refused").to_string();
    assert!(
        err.contains("`shader_f16`") && err.contains("GpuOptions::with_features"),
        "{err}"
    );
    // Nothing was created.
    let after = gpu.counters();
    assert_eq!(after.pipelines_created, before.pipelines_created);
    assert_eq!(after.buffers_created, before.buffers_created);
    // The default Gpu asks for every feature vyre maps that the adapter has.
    assert!(gpu_default_has(
        wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_F16
    ));
}

fn gpu_default_has(features: wgpu::Features) -> bool {
    gpu().device().features().contains(features)
}
