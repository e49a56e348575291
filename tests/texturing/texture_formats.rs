//! Texel formats on the GPU (lavapipe in CI): every integer family (8, 16
//! and 32 bits, signed and unsigned), snorm, two-channel formats, and the
//! formats that need a device feature (`bgra8unorm_storage`,
//! `texture_adapter_specific_format_features`, `texture_format_16bit_norm`,
//! `float32_filterable`), read and written at widths whose rows are and are
//! not multiples of 256 bytes, each texel compared with a CPU reference in
//! the format's host texel type. A device without a feature refuses the
//! graph that needs it with `UnsupportedFeature`, and still runs others.

use crate::common;

use std::borrow::Cow;

use vyre_graph::{BackendError, Gpu, GpuOptions, graph, wgpu};

/// On wgpu's OpenGL backend, which lacks some formats and features and
/// mishandles snorm storage, `made` must be a refusal whose message
/// contains `part` (then the test stops there); elsewhere nothing is
/// checked and the test goes on.
fn refused_on_gl<T>(gpu: &Gpu, made: &Result<T, BackendError>, part: &str) -> bool {
    if gpu.adapter().backend != wgpu::Backend::Gl {
        return false;
    }
    match made {
        Err(e) => assert!(e.to_string().contains(part), "{e}"),
        Ok(_) => panic!("OpenGL ran a graph it should refuse ({part})"),
    }
    true
}

/// Widths: 1 texel, a few, and rows just past 256 bytes for 16-, 8- and
/// 4-byte texels (17, 33, 65), and a wide one.
const WIDTHS: [usize; 6] = [1, 3, 17, 33, 65, 300];

graph! {
    /// One kernel per integer family, each from one texture into another of
    /// the same format, sampled (`texture_2d<u32|i32>`) or through a
    /// storage read.
    pub struct Ints;

    kernel u8x4 = "
        @group(0) @binding(0) var src: texture_2d<u32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8uint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, (textureLoad(src, g.xy, 0) * 3u + 1u) & vec4<u32>(255u));
        }
    ";
    kernel i8x4 = "
        @group(0) @binding(0) var src: texture_storage_2d<rgba8sint, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8sint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy) / vec4<i32>(2) - vec4<i32>(1));
        }
    ";
    kernel u16x4 = "
        @group(0) @binding(0) var src: texture_2d<u32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba16uint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, (textureLoad(src, g.xy, 0) * 5u + 7u) & vec4<u32>(65535u));
        }
    ";
    kernel i16x4 = "
        @group(0) @binding(0) var src: texture_storage_2d<rgba16sint, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba16sint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy) / vec4<i32>(3) - vec4<i32>(2));
        }
    ";
    kernel i32x1 = "
        @group(0) @binding(0) var v: texture_storage_2d<r32sint, read_write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(v)) { return; }
            textureStore(v, g.xy, textureLoad(v, g.xy) * vec4<i32>(-3) + vec4<i32>(i32(g.x)));
        }
    ";
    kernel u32x2 = "
        @group(0) @binding(0) var src: texture_storage_2d<rg32uint, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<rg32uint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            let v = textureLoad(src, g.xy);
            textureStore(dst, g.xy, vec4<u32>(v.x ^ v.y, v.x + v.y, 0u, 0u));
        }
    ";
    kernel i32x4 = "
        @group(0) @binding(0) var src: texture_2d<i32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba32sint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            let v = textureLoad(src, g.xy, 0);
            textureStore(dst, g.xy, vec4<i32>(v.x - v.y, v.y * 2, v.z ^ v.w, i32(g.x)));
        }
    ";

    input texture a_u8[n, 3] rgba8uint;
    input texture a_i8[n, 3] rgba8sint;
    input texture a_u16[n, 3] rgba16uint;
    input texture a_i16[n, 3] rgba16sint;
    inout texture v_i32[n, 3] r32sint;
    input texture a_u32x2[n, 3] rg32uint;
    input texture a_i32x4[n, 3] rgba32sint;
    output texture b_u8[n, 3] rgba8uint;
    output texture b_i8[n, 3] rgba8sint;
    output texture b_u16[n, 3] rgba16uint;
    output texture b_i16[n, 3] rgba16sint;
    output texture b_u32x2[n, 3] rg32uint;
    output texture b_i32x4[n, 3] rgba32sint;

    node u8x4(src: a_u8, dst: b_u8) grid [n / 8, 1, 1];
    node i8x4(src: a_i8, dst: b_i8) grid [n / 8, 1, 1];
    node u16x4(src: a_u16, dst: b_u16) grid [n / 8, 1, 1];
    node i16x4(src: a_i16, dst: b_i16) grid [n / 8, 1, 1];
    node i32x1(v: v_i32) grid [n / 8, 1, 1];
    node u32x2(src: a_u32x2, dst: b_u32x2) grid [n / 8, 1, 1];
    node i32x4(src: a_i32x4, dst: b_i32x4) grid [n / 8, 1, 1];
}

/// A pseudo-random 32-bit value for texel `i`, channel `c`.
fn bits(i: usize, c: usize) -> u32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ (c as u32).wrapping_mul(0x85EB_CA6B);
    x ^= x >> 15;
    x.wrapping_mul(0x2C1B_3C6D)
}

fn run_ints(graph: &Ints, width: usize) {
    let texels = width * 3;
    let u8s: Vec<[u8; 4]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c) as u8))
        .collect();
    let i8s: Vec<[i8; 4]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c + 4) as i8))
        .collect();
    let u16s: Vec<[u16; 4]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c + 8) as u16))
        .collect();
    let i16s: Vec<[i16; 4]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c + 12) as i16))
        .collect();
    let i32s: Vec<i32> = (0..texels).map(|i| bits(i, 16) as i32).collect();
    let u32x2: Vec<[u32; 2]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c + 17)))
        .collect();
    let i32x4: Vec<[i32; 4]> = (0..texels)
        .map(|i| std::array::from_fn(|c| bits(i, c + 19) as i32))
        .collect();
    let out = graph
        .run(&u8s, &i8s, &u16s, &i16s, &i32s, &u32x2, &i32x4)
        .expect("run");
    let at = |i: usize| format!("width {width}, texel ({}, {})", i % width, i / width);
    for i in 0..texels {
        let x = (i % width) as i32;
        assert_eq!(
            out.b_u8[i],
            u8s[i].map(|v| v.wrapping_mul(3).wrapping_add(1)),
            "u8 {}",
            at(i)
        );
        assert_eq!(out.b_i8[i], i8s[i].map(|v| v / 2 - 1), "i8 {}", at(i));
        assert_eq!(
            out.b_u16[i],
            u16s[i].map(|v| v.wrapping_mul(5).wrapping_add(7)),
            "u16 {}",
            at(i)
        );
        assert_eq!(out.b_i16[i], i16s[i].map(|v| v / 3 - 2), "i16 {}", at(i));
        assert_eq!(
            out.v_i32[i],
            i32s[i].wrapping_mul(-3).wrapping_add(x),
            "i32 {}",
            at(i)
        );
        let [a, b] = u32x2[i];
        assert_eq!(
            out.b_u32x2[i],
            [a ^ b, a.wrapping_add(b)],
            "u32x2 {}",
            at(i)
        );
        let [p, q, r, s] = i32x4[i];
        assert_eq!(
            out.b_i32x4[i],
            [p.wrapping_sub(q), q.wrapping_mul(2), r ^ s, x],
            "i32x4 {}",
            at(i)
        );
    }
}

#[test]
fn every_integer_family_read_and_written() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Ints::new(&gpu);
    if refused_on_gl(&gpu, &made, "rg32uint storage texture") {
        return;
    }
    let graph = made.expect("graph");
    for width in WIDTHS {
        run_ints(&graph, width);
    }
}

graph! {
    /// rgba8snorm negated through storage, rg32float from a sampled
    /// (unfilterable) texture, rg32sint through storage.
    pub struct Pairs;

    kernel snorm = "
        @group(0) @binding(0) var src: texture_storage_2d<rgba8snorm, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8snorm, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, -textureLoad(src, g.xy));
        }
    ";
    kernel f32x2 = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rg32float, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            let v = textureLoad(src, g.xy, 0);
            textureStore(dst, g.xy, vec4<f32>(v.x * 2.0 + v.y, v.x - v.y, 0.0, 0.0));
        }
    ";
    kernel i32x2 = "
        @group(0) @binding(0) var src: texture_storage_2d<rg32sint, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<rg32sint, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            let v = textureLoad(src, g.xy);
            textureStore(dst, g.xy, vec4<i32>(v.x - v.y, v.x * v.y, 0, 0));
        }
    ";

    input texture a_snorm[n, 3] rgba8snorm;
    input texture a_f32x2[n, 3] rg32float;
    input texture a_i32x2[n, 3] rg32sint;
    output texture b_snorm[n, 3] rgba8snorm;
    output texture b_f32x2[n, 3] rg32float;
    output texture b_i32x2[n, 3] rg32sint;

    node snorm(src: a_snorm, dst: b_snorm) grid [n / 8, 1, 1];
    node f32x2(src: a_f32x2, dst: b_f32x2) grid [n / 8, 1, 1];
    node i32x2(src: a_i32x2, dst: b_i32x2) grid [n / 8, 1, 1];
}

#[test]
fn snorm_and_two_channel_formats() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Pairs::new(&gpu);
    if refused_on_gl(&gpu, &made, "stores snorm storage textures as unorm") {
        return;
    }
    let graph = made.expect("graph");
    for width in WIDTHS {
        let texels = width * 3;
        let snorm: Vec<[i8; 4]> = (0..texels)
            .map(|i| std::array::from_fn(|c| bits(i, c) as i8))
            .collect();
        // Halves up to 64: every result is exact in f32.
        let f: Vec<[f32; 2]> = (0..texels)
            .map(|i| std::array::from_fn(|c| (bits(i, c + 4) % 257) as f32 * 0.5 - 64.0))
            .collect();
        let ints: Vec<[i32; 2]> = (0..texels)
            .map(|i| std::array::from_fn(|c| bits(i, c + 6) as i32))
            .collect();
        let out = graph.run(&snorm, &f, &ints).expect("run");
        for i in 0..texels {
            // -128 reads as -1.0 (like -127), whose negation stores 127.
            assert_eq!(
                out.b_snorm[i],
                snorm[i].map(|v| -v.max(-127)),
                "snorm, width {width}, texel {i}"
            );
            let [x, y] = f[i];
            assert_eq!(
                out.b_f32x2[i],
                [x * 2.0 + y, x - y],
                "rg32float, width {width}, texel {i}"
            );
            let [p, q] = ints[i];
            assert_eq!(
                out.b_i32x2[i],
                [p.wrapping_sub(q), p.wrapping_mul(q)],
                "rg32sint, width {width}, texel {i}"
            );
        }
    }
}

graph! {
    /// bgra8unorm stored (needs `bgra8unorm_storage`): the channels of a
    /// sampled bgra8unorm texture rotated, `(r, g, b, a) -> (g, b, r, a)`.
    pub struct Bgra;

    features [bgra8unorm_storage];

    kernel rotate = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<bgra8unorm, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            let v = textureLoad(src, g.xy, 0);
            textureStore(dst, g.xy, vec4<f32>(v.g, v.b, v.r, v.a));
        }
    ";

    input texture src[n, 3] bgra8unorm;
    output texture dst[n, 3] bgra8unorm;

    node rotate(src: src, dst: dst) grid [n / 8, 1, 1];
}

fn run_bgra(graph: &Bgra, width: usize) {
    // Host texels are in memory order: blue, green, red, alpha.
    let src: Vec<[u8; 4]> = (0..width * 3)
        .map(|i| std::array::from_fn(|c| bits(i, c) as u8))
        .collect();
    let out = graph.run(&src).expect("run");
    for (i, [b, g, r, a]) in src.iter().copied().enumerate() {
        // Written (r, g, b) = (g, b, r), stored blue first: [r, b, g, a].
        assert_eq!(out.dst[i], [r, b, g, a], "width {width}, texel {i}");
    }
}

#[test]
fn bgra8unorm_storage_with_its_feature() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Bgra::new(&gpu);
    if refused_on_gl(&gpu, &made, "`bgra8unorm_storage`") {
        return;
    }
    let graph = made.expect("graph");
    for width in WIDTHS {
        run_bgra(&graph, width);
    }
}

graph! {
    /// Storage beyond WebGPU's guarantees (the adapter's own format
    /// features): an r8unorm storage write and an rgba8unorm and an
    /// rg16float texture updated in place through `read_write`.
    pub struct Adapter;

    features [texture_adapter_specific_format_features];

    kernel r8 = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<r8unorm, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, vec4<f32>(1.0) - textureLoad(src, g.xy, 0));
        }
    ";
    kernel rgba8 = "
        @group(0) @binding(0) var v: texture_storage_2d<rgba8unorm, read_write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(v)) { return; }
            textureStore(v, g.xy, vec4<f32>(1.0) - textureLoad(v, g.xy));
        }
    ";
    kernel rg16 = "
        @group(0) @binding(0) var v: texture_storage_2d<rg16float, read_write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(v)) { return; }
            textureStore(v, g.xy, textureLoad(v, g.xy) * 2.0);
        }
    ";

    input texture a_r8[n, 3] r8unorm;
    output texture b_r8[n, 3] r8unorm;
    inout texture v_rgba8[n, 3] rgba8unorm;
    inout texture v_rg16[n, 3] rg16float;

    node r8(src: a_r8, dst: b_r8) grid [n / 8, 1, 1];
    node rgba8(v: v_rgba8) grid [n / 8, 1, 1];
    node rg16(v: v_rg16) grid [n / 8, 1, 1];
}

#[test]
fn adapter_specific_storage_with_its_feature() {
    use vyre_graph::half::f16;
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Adapter::new(&gpu);
    if refused_on_gl(&gpu, &made, "r8unorm storage texture") {
        return;
    }
    let graph = made.expect("graph");
    for width in WIDTHS {
        let texels = width * 3;
        let r8: Vec<u8> = (0..texels).map(|i| bits(i, 0) as u8).collect();
        let rgba8: Vec<[u8; 4]> = (0..texels)
            .map(|i| std::array::from_fn(|c| bits(i, c + 1) as u8))
            .collect();
        let rg16: Vec<[f16; 2]> = (0..texels)
            .map(|i| {
                std::array::from_fn(|c| f16::from_f32((bits(i, c + 5) % 400) as f32 * 0.25 - 50.0))
            })
            .collect();
        let out = graph.run(&r8, &rgba8, &rg16).expect("run");
        for i in 0..texels {
            assert_eq!(
                out.b_r8[i],
                255 - r8[i],
                "r8unorm, width {width}, texel {i}"
            );
            assert_eq!(
                out.v_rgba8[i],
                rgba8[i].map(|c| 255 - c),
                "rgba8unorm, width {width}, texel {i}"
            );
            let want = rg16[i].map(|h| f16::from_f32(h.to_f32() * 2.0));
            assert_eq!(out.v_rg16[i], want, "rg16float, width {width}, texel {i}");
        }
    }
}

graph! {
    /// 16-bit normalised formats (need `texture_format_16bit_norm`): an
    /// r16unorm storage read and write, an rgba16snorm sampled into
    /// storage.
    pub struct Norm16;

    features [texture_format_16bit_norm];

    kernel unorm = "
        @group(0) @binding(0) var src: texture_storage_2d<r16unorm, read>;
        @group(0) @binding(1) var dst: texture_storage_2d<r16unorm, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, vec4<f32>(1.0) - textureLoad(src, g.xy));
        }
    ";
    kernel snorm = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba16snorm, write>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(dst)) { return; }
            textureStore(dst, g.xy, -textureLoad(src, g.xy, 0));
        }
    ";

    input texture a_unorm[n, 3] r16unorm;
    input texture a_snorm[n, 3] rgba16snorm;
    output texture b_unorm[n, 3] r16unorm;
    output texture b_snorm[n, 3] rgba16snorm;

    node unorm(src: a_unorm, dst: b_unorm) grid [n / 8, 1, 1];
    node snorm(src: a_snorm, dst: b_snorm) grid [n / 8, 1, 1];
}

#[test]
fn sixteen_bit_normalised_formats_with_their_feature() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Norm16::new(&gpu);
    if refused_on_gl(&gpu, &made, "stores snorm storage textures as unorm") {
        return;
    }
    let graph = made.expect("graph");
    for width in WIDTHS {
        let texels = width * 3;
        let unorm: Vec<u16> = (0..texels).map(|i| bits(i, 0) as u16).collect();
        let snorm: Vec<[i16; 4]> = (0..texels)
            .map(|i| std::array::from_fn(|c| bits(i, c + 1) as i16))
            .collect();
        let out = graph.run(&unorm, &snorm).expect("run");
        for i in 0..texels {
            assert_eq!(
                out.b_unorm[i],
                65535 - unorm[i],
                "r16unorm, width {width}, texel {i}"
            );
            assert_eq!(
                out.b_snorm[i],
                snorm[i].map(|v| -v.max(-32767)),
                "rgba16snorm, width {width}, texel {i}"
            );
        }
    }
}

graph! {
    /// A linear sampler on r32float (needs `float32_filterable`): sampled
    /// exactly halfway between texel centres, where bilinear filtering is
    /// the mean of two texels on any GPU.
    pub struct Filter32;

    features [float32_filterable];

    kernel halfway = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var lin: sampler;
        @group(0) @binding(2) var<storage, read_write> out: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(src);
            if g.x + 1u >= size.x || g.x >= arrayLength(&out) { return; }
            let uv = vec2<f32>(f32(g.x + 1u) / f32(size.x), 0.5);
            out[g.x] = textureSampleLevel(src, lin, uv, 0.0).x;
        }
    ";

    input texture src[n, 1] r32float;
    sampler lin = linear clamp;
    output out[n];

    node halfway(src: src, lin: lin, out: out) over n;
}

#[test]
fn linear_filtering_of_r32float_with_its_feature() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Filter32::new(&gpu);
    if refused_on_gl(&gpu, &made, "`float32_filterable`") {
        return;
    }
    let graph = made.expect("graph");
    // Powers of two: `(x + 1) / width` is exact in f32, so the weights are
    // exactly one half.
    for width in [2usize, 4, 64, 256, 1024] {
        let src: Vec<f32> = (0..width)
            .map(|x| (bits(x, 0) % 1000) as f32 * 0.25)
            .collect();
        let out = graph.run(&src).expect("run");
        for x in 0..width - 1 {
            let want = (src[x] + src[x + 1]) * 0.5;
            assert!(
                (out.out[x] - want).abs() <= want.abs() * 1e-6,
                "width {width}, between texels {x} and {}: GPU {} vs CPU {want}",
                x + 1,
                out.out[x]
            );
        }
    }
}

#[test]
fn a_device_without_a_texture_feature_refuses_the_graph_and_runs_others() {
    let _serial = common::serial();
    let limited = Gpu::with_options(GpuOptions::default().with_features(wgpu::Features::empty()))
        .expect("a device without optional features");
    let refused = |err: BackendError, feature: &str, wgpu_name: &str| match err {
        BackendError::UnsupportedFeature {
            feature: f,
            wgpu: w,
            ..
        } => assert_eq!((f, w), (feature, wgpu_name)),
        other => panic!("expected UnsupportedFeature({feature}), got {other}"),
    };
    let before = limited.counters();
    refused(
        Bgra::new(&limited).expect_err("no BGRA8UNORM_STORAGE"),
        "bgra8unorm_storage",
        "BGRA8UNORM_STORAGE",
    );
    refused(
        Adapter::new(&limited).expect_err("no adapter-specific format features"),
        "texture_adapter_specific_format_features",
        "TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES",
    );
    refused(
        Norm16::new(&limited).expect_err("no 16-bit norm formats"),
        "texture_format_16bit_norm",
        "TEXTURE_FORMAT_16BIT_NORM",
    );
    refused(
        Filter32::new(&limited).expect_err("no float32 filtering"),
        "float32_filterable",
        "FLOAT32_FILTERABLE",
    );
    // The runtime's own check, for a spec that does not declare the
    // feature its kernel needs: the same error, from the binding.
    let mut undeclared = Bgra::SPEC;
    undeclared.features = Cow::Borrowed(&[]);
    refused(
        vyre_graph::Graph::new(&limited, undeclared).expect_err("bgra8unorm storage undeclared"),
        "bgra8unorm_storage",
        "BGRA8UNORM_STORAGE",
    );
    let after = limited.counters();
    assert_eq!(
        after.pipelines_created, before.pipelines_created,
        "nothing was created"
    );
    // Core formats still run on that device, and the refused graph runs
    // where the feature is (OpenGL has neither rg32uint storage nor the
    // feature).
    let ints = Ints::new(&limited);
    if !refused_on_gl(&limited, &ints, "rg32uint storage texture") {
        run_ints(&ints.expect("core formats need no feature"), 33);
        let bgra = Bgra::new(&common::gpu()).expect("the feature is there");
        run_bgra(&bgra, 65);
    }
}
