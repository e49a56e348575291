//! Textures and samplers (`tests/texturing/textures.rs`): a storage texture
//! written by a kernel, whose rows need padding when read back, and a
//! sampled texture read through a nearest and a linear sampler; every
//! texel against the CPU.

use crate::common::gpu;

use vyre_graph::{DispatchConfig, graph};
use wasm_bindgen_test::wasm_bindgen_test;

graph! {
    /// Writes texel `(x, y)` of an rgba8unorm storage texture whose width is
    /// the problem size: channels `x % 256`, `y`, `(x + y) % 256`, 255.
    pub struct Pattern;

    kernel pattern = "
        @group(0) @binding(0) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            let c = vec4<f32>(f32(g.x % 256u), f32(g.y), f32((g.x + g.y) % 256u), 255.0) / 255.0;
            textureStore(dst, vec2<u32>(g.xy), c);
        }
    ";

    output texture img[n, 3] rgba8unorm;

    node pattern(dst: img) grid [n / 8, 2, 1];
}

graph! {
    /// Samples a 16 x 8 rgba8unorm texture at `coords[i]` (normalised) with
    /// a nearest and a linear sampler.
    pub struct Sample;

    kernel sample = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var near: sampler;
        @group(0) @binding(2) var lin: sampler;
        @group(0) @binding(3) var<storage, read> coords: array<vec2<f32>>;
        @group(0) @binding(4) var<storage, read_write> nearest: array<vec4<f32>>;
        @group(0) @binding(5) var<storage, read_write> linear: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.x;
            if (i >= arrayLength(&coords)) { return; }
            nearest[i] = textureSampleLevel(src, near, coords[i], 0.0);
            linear[i] = textureSampleLevel(src, lin, coords[i], 0.0);
        }
    ";

    input texture src[16, 8] rgba8unorm;
    sampler near = nearest clamp;
    sampler lin = linear clamp;
    input coords[n];
    output nearest[n];
    output linear[n];

    node sample(src: src, near: near, lin: lin, coords: coords, nearest: nearest, linear: linear) over n;
}

#[wasm_bindgen_test]
async fn a_storage_texture_with_rows_that_need_padding() {
    let graph = Pattern::new_async(&gpu().await).await.expect("graph");
    // 4 to 4,100 bytes a row: padded to multiples of 256 on the way back.
    for width in [1usize, 63, 64, 65, 1000, 1025] {
        let out = graph
            .run_async(&DispatchConfig::default(), width as u64)
            .await
            .expect("run");
        assert_eq!(out.img.len(), width * 3, "width {width}");
        for (i, got) in out.img.iter().enumerate() {
            let (x, y) = (i % width, i / width);
            let want = [(x % 256) as u8, y as u8, ((x + y) % 256) as u8, 255];
            assert_eq!(*got, want, "width {width}, texel ({x}, {y})");
        }
    }
}

const SW: usize = 16;
const SH: usize = 8;

fn texel(image: &[[u8; 4]], x: i64, y: i64) -> [f32; 4] {
    let x = x.clamp(0, SW as i64 - 1) as usize;
    let y = y.clamp(0, SH as i64 - 1) as usize;
    image[y * SW + x].map(|c| f32::from(c) / 255.0)
}

/// Bilinear filtering as WebGPU defines it: texel centres at `i + 0.5`,
/// clamp to edge.
fn linear_cpu(image: &[[u8; 4]], uv: [f32; 2]) -> [f32; 4] {
    let fx = uv[0] * SW as f32 - 0.5;
    let fy = uv[1] * SH as f32 - 0.5;
    let (x0, y0) = (fx.floor(), fy.floor());
    let (ax, ay) = (fx - x0, fy - y0);
    let (x0, y0) = (x0 as i64, y0 as i64);
    let (a, b) = (texel(image, x0, y0), texel(image, x0 + 1, y0));
    let (c, d) = (texel(image, x0, y0 + 1), texel(image, x0 + 1, y0 + 1));
    std::array::from_fn(|k| {
        let top = a[k] * (1.0 - ax) + b[k] * ax;
        let bottom = c[k] * (1.0 - ax) + d[k] * ax;
        top * (1.0 - ay) + bottom * ay
    })
}

#[wasm_bindgen_test]
async fn a_sampled_texture_through_nearest_and_linear_samplers() {
    let graph = Sample::new_async(&gpu().await).await.expect("graph");
    let image: Vec<[u8; 4]> = (0..SW * SH)
        .map(|i| {
            let (x, y) = (i % SW, i / SW);
            [
                (x * 17) as u8,
                (y * 31) as u8,
                ((x * y * 7) % 256) as u8,
                255 - (x * 9) as u8,
            ]
        })
        .collect();
    // Texel centres, then points between texels and outside [0, 1], kept
    // off the exact boundaries where nearest may round either way.
    let mut coords: Vec<[f32; 2]> = Vec::new();
    for y in 0..SH {
        for x in 0..SW {
            coords.push([(x as f32 + 0.5) / SW as f32, (y as f32 + 0.5) / SH as f32]);
        }
    }
    for k in 0..97 {
        let nudge = |t: f32, size: usize| {
            let f = (t * size as f32).fract();
            if f.abs() < 0.01 || f > 0.99 {
                t + 0.1 / size as f32
            } else {
                t
            }
        };
        let u = (k as f32 * 0.137).fract() * 1.2 - 0.1;
        let v = (k as f32 * 0.291).fract() * 1.2 - 0.1;
        coords.push([nudge(u, SW), nudge(v, SH)]);
    }
    let out = graph
        .run_async(&DispatchConfig::default(), &image, &coords)
        .await
        .expect("run");
    // Linear filtering: weights of at least 8 fractional bits, so up to
    // 1/256 of the range off, plus f32 rounding.
    const LINEAR_TOLERANCE: f32 = 1.0 / 256.0 + 1e-5;
    for (i, uv) in coords.iter().enumerate() {
        let near = texel(
            &image,
            (uv[0] * SW as f32).floor() as i64,
            (uv[1] * SH as f32).floor() as i64,
        );
        let lin = linear_cpu(&image, *uv);
        for c in 0..4 {
            assert!(
                (out.nearest[i][c] - near[c]).abs() <= 1e-6,
                "nearest at {uv:?}, channel {c}: GPU {} vs CPU {}",
                out.nearest[i][c],
                near[c]
            );
            assert!(
                (out.linear[i][c] - lin[c]).abs() <= LINEAR_TOLERANCE,
                "linear at {uv:?}, channel {c}: GPU {} vs CPU {}",
                out.linear[i][c],
                lin[c]
            );
        }
    }
}
