//! Textures and samplers as graph resources, on the GPU (lavapipe in CI):
//! every texel of every result is compared with a CPU reference.

use crate::common;

use vyre_graph::{BackendError, graph};

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

fn pattern_cpu(width: usize, height: usize) -> Vec<[u8; 4]> {
    (0..width * height)
        .map(|i| {
            let (x, y) = (i % width, i / width);
            [(x % 256) as u8, y as u8, ((x + y) % 256) as u8, 255]
        })
        .collect()
}

#[test]
fn storage_texture_write_with_rows_that_need_padding() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Pattern::new(&gpu).expect("graph");
    // 4, 252, 260, 4000 and 4100 bytes a row: every row is padded to a
    // multiple of 256 in the readback buffer, never in the result.
    for width in [1usize, 63, 64, 65, 1000, 1025] {
        let out = graph.run(width as u64).expect("run");
        assert_eq!(out.img.len(), width * 3, "width {width}");
        let expected = pattern_cpu(width, 3);
        for (i, (got, want)) in out.img.iter().zip(&expected).enumerate() {
            assert_eq!(
                got,
                want,
                "width {width}, texel ({}, {})",
                i % width,
                i / width
            );
        }
    }
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

const SW: usize = 16;
const SH: usize = 8;

fn sample_image() -> Vec<[u8; 4]> {
    (0..SW * SH)
        .map(|i| {
            let (x, y) = (i % SW, i / SW);
            [
                (x * 17) as u8,
                (y * 31) as u8,
                ((x * y * 7) % 256) as u8,
                255 - (x * 9) as u8,
            ]
        })
        .collect()
}

fn texel(image: &[[u8; 4]], x: i64, y: i64) -> [f32; 4] {
    let x = x.clamp(0, SW as i64 - 1) as usize;
    let y = y.clamp(0, SH as i64 - 1) as usize;
    image[y * SW + x].map(|c| f32::from(c) / 255.0)
}

fn nearest_cpu(image: &[[u8; 4]], uv: [f32; 2]) -> [f32; 4] {
    let x = (uv[0] * SW as f32).floor() as i64;
    let y = (uv[1] * SH as f32).floor() as i64;
    texel(image, x, y)
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

#[test]
fn sampled_texture_read_with_nearest_and_linear_samplers() {
    let _serial = common::serial();
    let gpu = common::gpu();
    if gpu.adapter().backend == vyre_graph::wgpu::Backend::Gl {
        // OpenGL pairs each texture with one sampler: wgpu refuses this
        // kernel's pipeline with an internal error, which must be
        // `Graph::new`'s error, not an uncaptured one after an `Ok`.
        let err = Sample::new(&gpu).expect_err("GL refuses two samplers on one texture");
        assert!(
            matches!(err, vyre_graph::BackendError::KernelCompileFailed { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("sampler"), "{err}");
        return;
    }
    let graph = Sample::new(&gpu).expect("graph");
    let image = sample_image();
    // Texel centres, points between texels (bilinear mixes four), the
    // edges and points outside [0, 1] (clamped).
    let mut coords: Vec<[f32; 2]> = Vec::new();
    for y in 0..SH {
        for x in 0..SW {
            coords.push([(x as f32 + 0.5) / SW as f32, (y as f32 + 0.5) / SH as f32]);
        }
    }
    for k in 0..97 {
        let u = (k as f32 * 0.137).fract() * 1.2 - 0.1;
        let v = (k as f32 * 0.291).fract() * 1.2 - 0.1;
        // Keep off exact texel boundaries, where nearest may round either way.
        let nudge = |t: f32, size: usize| {
            let f = (t * size as f32).fract();
            if f.abs() < 0.01 || f > 0.99 {
                t + 0.1 / size as f32
            } else {
                t
            }
        };
        coords.push([nudge(u, SW), nudge(v, SH)]);
    }
    let out = graph.run(&image, &coords).expect("run");
    // Texel centres read back exactly: 8-bit unorm to f32 is exact to f32
    // rounding.
    // Linear filtering: GPUs interpolate with weights of at least 8
    // fractional bits (lavapipe: 8), so a result may be off by up to
    // |a - b| / 256 <= 1/256 of the 0..1 range, plus f32 rounding.
    const LINEAR_TOLERANCE: f32 = 1.0 / 256.0 + 1e-5;
    for (i, uv) in coords.iter().enumerate() {
        let n = nearest_cpu(&image, *uv);
        let l = linear_cpu(&image, *uv);
        for c in 0..4 {
            assert!(
                (out.nearest[i][c] - n[c]).abs() <= 1e-6,
                "nearest at {uv:?}, channel {c}: GPU {} vs CPU {}",
                out.nearest[i][c],
                n[c]
            );
            assert!(
                (out.linear[i][c] - l[c]).abs() <= LINEAR_TOLERANCE,
                "linear at {uv:?}, channel {c}: GPU {} vs CPU {}",
                out.linear[i][c],
                l[c]
            );
        }
    }
}

graph! {
    /// A chain of three nodes through two intermediate textures:
    /// `out = ((a * 2) + 1) * 0.5` per channel, a rgba8unorm input and
    /// rgba32float intermediates and output, all `n x n / 2`.
    pub struct Chain;

    kernel double = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0) * 2.0);
        }
    ";
    kernel inc = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0) + vec4<f32>(1.0));
        }
    ";
    kernel half = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0) * 0.5);
        }
    ";

    input texture a[n, n / 2] rgba8unorm;
    intermediate texture t1[n, n / 2] rgba32float;
    intermediate texture t2[n, n / 2] rgba32float;
    output texture out[n, n / 2] rgba32float;

    node double(src: a, dst: t1) grid [n / 8, n / 16, 1];
    node inc(src: t1, dst: t2) grid [n / 8, n / 16, 1];
    node half(src: t2, dst: out) grid [n / 8, n / 16, 1];
}

fn chain_input(n: usize) -> Vec<[u8; 4]> {
    (0..n * n.div_ceil(2))
        .map(|i| {
            [
                (i * 7 % 256) as u8,
                (i * 13 % 256) as u8,
                (i % 251) as u8,
                200,
            ]
        })
        .collect()
}

fn check_chain(input: &[[u8; 4]], out: &[[f32; 4]], steps: &[fn(f32) -> f32]) {
    assert_eq!(out.len(), input.len());
    for (i, (a, o)) in input.iter().zip(out).enumerate() {
        for c in 0..4 {
            let want = steps.iter().fold(f32::from(a[c]) / 255.0, |v, f| f(v));
            assert!(
                (o[c] - want).abs() <= 1e-6,
                "texel {i}, channel {c}: GPU {} vs CPU {want}",
                o[c]
            );
        }
    }
}

#[test]
fn texture_chain_of_three_nodes() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Chain::new(&gpu).expect("graph");
    // t1 and t2 are live at once (node 1 reads t1 and writes t2): no sharing.
    assert_eq!(
        Chain::SPEC.schedule.as_ref().expect("schedule").slots[..],
        [0, 1, 2, 3]
    );
    for n in [1usize, 9, 64, 70] {
        let input = chain_input(n);
        let out = graph.run(n as u64, &input).expect("run");
        check_chain(&input, &out.out, &[|v| v * 2.0, |v| v + 1.0, |v| v * 0.5]);
    }
}

#[test]
fn wrong_texel_count_then_a_correct_run_of_the_same_graph() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Chain::new(&gpu).expect("graph");
    let input = chain_input(10);
    let err = graph.run(10, &input[1..]).expect_err("one texel short");
    let message = err.to_string();
    assert!(
        matches!(err, BackendError::TextureMismatch { .. }),
        "{message}"
    );
    assert!(message.contains("10 x 5 texels"), "{message}");
    assert!(message.contains("passed 49 texels"), "{message}");
    let err = graph.run(0, &input[..0]).expect_err("n = 0");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err}"
    );
    let out = graph.run(10, &input).expect("run after the errors");
    check_chain(&input, &out.out, &[|v| v * 2.0, |v| v + 1.0, |v| v * 0.5]);
}

graph! {
    /// Four nodes through three intermediates of one format and size: `t3`
    /// takes `t1`'s texture (their live ranges do not overlap), `t2` (live
    /// beside both) gets its own, and the r32float `flat` never shares with
    /// them.
    pub struct Aliased;

    kernel step = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba16float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0) + vec4<f32>(0.25));
        }
    ";
    kernel last = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<r32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            let v = textureLoad(src, g.xy, 0);
            textureStore(dst, g.xy, vec4<f32>(v.x + v.y + v.z + v.w, 0.0, 0.0, 0.0));
        }
    ";

    input texture a[n, 4] rgba8unorm;
    intermediate texture t1[n, 4] rgba16float;
    intermediate texture t2[n, 4] rgba16float;
    intermediate texture t3[n, 4] rgba16float;
    output texture flat[n, 4] r32float;

    node s1 = step(src: a, dst: t1) grid [n / 8, 1, 1];
    node s2 = step(src: t1, dst: t2) grid [n / 8, 1, 1];
    node s3 = step(src: t2, dst: t3) grid [n / 8, 1, 1];
    node last(src: t3, dst: flat) grid [n / 8, 1, 1];
}

#[test]
fn intermediate_textures_of_one_shape_share_a_texture() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let slots = &Aliased::SPEC.schedule.as_ref().expect("schedule").slots;
    assert_eq!(slots[1], slots[3], "t1 and t3 share: {slots:?}");
    assert_ne!(slots[1], slots[2], "t2 is live beside t1 and t3: {slots:?}");
    let graph = Aliased::new(&gpu).expect("graph");
    for n in [3usize, 40] {
        // The width alone gives n (the height is a constant).
        let input: Vec<[u8; 4]> = (0..n * 4)
            .map(|i| [(i % 256) as u8, (i * 3 % 256) as u8, 17, 255])
            .collect();
        let out = graph.run(&input).expect("run");
        assert_eq!(out.flat.len(), n * 4);
        for (i, (a, got)) in input.iter().zip(&out.flat).enumerate() {
            // Three steps of + 0.25 in f16: every value here is exact in f16
            // to within its 11-bit mantissa (values below 2 need 1/1024).
            let want: f32 = a
                .iter()
                .map(|&c| {
                    let mut v =
                        vyre_graph::half::f16::from_f32(f32::from(c) / 255.0 + 0.25).to_f32();
                    v = vyre_graph::half::f16::from_f32(v + 0.25).to_f32();
                    vyre_graph::half::f16::from_f32(v + 0.25).to_f32()
                })
                .sum();
            // f16 rounding: at most one ulp (2^-10 below 2) a step, three steps, four channels.
            assert!(
                (got - want).abs() <= 12.0 / 1024.0,
                "texel {i}: GPU {got} vs CPU {want}"
            );
        }
    }
}

graph! {
    /// Sums each column of an rgba8unorm texture of height 3 (all four
    /// channels, as bytes).
    pub struct ColumnSums;

    kernel sums = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var<storage, read_write> sums: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&sums) { return; }
            var total = 0u;
            for (var y = 0u; y < 3u; y++) {
                let c = vec4<u32>(round(textureLoad(src, vec2<u32>(g.x, y), 0) * 255.0));
                total += c.x + c.y + c.z + c.w;
            }
            sums[g.x] = total;
        }
    ";

    input texture src[n, 3] rgba8unorm;
    output sums[n];

    node sums(src: src, sums: sums) over n;
}

#[test]
fn resident_texture_output_feeds_a_second_graph() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let pattern = Pattern::new(&gpu).expect("pattern");
    let sums = ColumnSums::new(&gpu).expect("sums");
    let width = 70usize;
    let resident = pattern.run_resident(width as u64).expect("resident run");
    assert_eq!(resident.img.size(), [70, 3]);
    let expected = pattern_cpu(width, 3);
    // Read back directly: padding stripped, texels as the CPU made them.
    let bytes = resident.img.read(&gpu).expect("read");
    assert_eq!(bytemuck::cast_slice::<u8, [u8; 4]>(&bytes), &expected[..]);
    // Fed into the second graph on the device; n comes from its width.
    let out = sums
        .run(&resident.img)
        .expect("run on the resident texture");
    for x in 0..width {
        let want: u32 = (0..3)
            .map(|y| {
                expected[y * width + x]
                    .iter()
                    .map(|&c| u32::from(c))
                    .sum::<u32>()
            })
            .sum();
        assert_eq!(out.sums[x], want, "column {x}");
    }
    // A texture of the wrong size is refused, then the right one runs.
    let small = pattern.run_resident(8).expect("small");
    let small_sums = sums
        .run_with(&Default::default(), &small.img)
        .expect("n is inferred from the resident texture's width");
    assert_eq!(small_sums.sums.len(), 8);
    let wrong = Pattern::new(&gpu)
        .expect("pattern")
        .graph()
        .create_texture(0, 9)
        .expect("texture");
    let err = sums
        .graph()
        .run(
            &Default::default(),
            8,
            &[vyre_graph::Feed::Texture(&wrong)],
            &mut [vyre_graph::Sink::Skip],
        )
        .expect_err("9 x 3 for 8 x 3");
    assert!(
        err.to_string()
            .contains("is 9 x 3 but the graph texture is 8 x 3"),
        "{err}"
    );
    let again = sums
        .run(&resident.img)
        .expect("the same graph after the error");
    assert_eq!(again.sums, out.sums);
}

graph! {
    /// An `inout` r32float texture updated in place through a `read_write`
    /// storage binding, twice: `acc = (acc + 1) * 2`.
    pub struct InPlace;

    kernel bump = "
        @group(0) @binding(0) var acc: texture_storage_2d<r32float, read_write>;
        @compute @workgroup_size(8, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(acc);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(acc, g.xy, textureLoad(acc, g.xy) + vec4<f32>(1.0));
        }
    ";
    kernel twice = "
        @group(0) @binding(0) var acc: texture_storage_2d<r32float, read_write>;
        @compute @workgroup_size(8, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(acc);
            if (g.x >= size.x || g.y >= size.y) { return; }
            textureStore(acc, g.xy, textureLoad(acc, g.xy) * 2.0);
        }
    ";

    inout texture acc[n, 2] r32float;

    node bump(acc: acc) grid [n / 8, 1, 1];
    node twice(acc: acc) grid [n / 8, 1, 1];
}

#[test]
fn inout_texture_updated_in_place_through_read_write_storage() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = InPlace::new(&gpu).expect("graph");
    // The two nodes are ordered by the same hazard analysis as buffers.
    assert_eq!(
        InPlace::SPEC.schedule.as_ref().expect("schedule").levels[..],
        [0, 1]
    );
    let description = format!("{:?}", graph.describe());
    assert!(description.contains("acc"), "{description}");
    assert!(graph.to_dot().contains("acc"));
    for n in [1usize, 65] {
        let acc: Vec<f32> = (0..n * 2).map(|i| i as f32 * 0.5 - 3.0).collect();
        let out = graph.run(&acc).expect("run");
        for (i, (a, got)) in acc.iter().zip(&out.acc).enumerate() {
            assert_eq!(*got, (a + 1.0) * 2.0, "texel {i}");
        }
    }
}

graph! {
    /// Reads an `input` r32uint texture through a read-only storage binding
    /// and writes each texel's value times 3 plus its column into a buffer.
    pub struct StorageRead;

    kernel scan = "
        @group(0) @binding(0) var src: texture_storage_2d<r32uint, read>;
        @group(0) @binding(1) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(8, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(src);
            if (g.x >= size.x || g.y >= size.y) { return; }
            let v = textureLoad(src, vec2<u32>(g.xy)).x;
            out[g.y * size.x + g.x] = v * 3u + g.x;
        }
    ";

    input texture src[n, 5] r32uint;
    output out[5 * n];

    node scan(src: src, out: out) grid [n / 8, 2, 1];
}

#[test]
fn read_only_storage_texture_input() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = StorageRead::new(&gpu).expect("graph");
    // 4 bytes a texel: widths whose rows are and are not multiples of 256
    // bytes, and a width past one workgroup column.
    for width in [1usize, 7, 64, 65, 300] {
        let src: Vec<u32> = (0..width * 5)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761))
            .collect();
        let out = graph.run(&src).expect("run");
        assert_eq!(out.out.len(), width * 5);
        for (i, (&s, &got)) in src.iter().zip(&out.out).enumerate() {
            let want = s.wrapping_mul(3).wrapping_add((i % width) as u32);
            assert_eq!(
                got,
                want,
                "width {width}, texel ({}, {})",
                i % width,
                i / width
            );
        }
    }
    // A wrong texel count is an error; the same graph then runs correctly.
    let err = graph
        .run(&[1u32, 2, 3][..])
        .expect_err("3 texels are not n x 5");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.contains("`src` is [n, 5]"), "{message}");
    let src: Vec<u32> = (0..10).collect();
    let out = graph.run(&src).expect("run after the error");
    assert_eq!(
        out.out,
        (0..10u32).map(|v| v * 3 + v % 2).collect::<Vec<_>>()
    );
}
