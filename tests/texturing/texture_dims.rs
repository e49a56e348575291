//! 1D, 2D array and 3D textures on the GPU (lavapipe in CI), sampled and
//! stored, read and written, at widths whose rows are and are not
//! multiples of 256 bytes: every texel of every result is compared with a
//! CPU reference. Also the compute shapes of naga's own WGSL test inputs
//! (`storage-textures.wgsl`: `r32float`, `rg32float`, `rgba32float`
//! storage loads and stores in two bind groups; `image.wgsl`'s `main`: a
//! `texture_2d<u32>`, an `rgba8uint` storage read, a `texture_2d_array<u32>`,
//! `texture_1d<u32>` and `texture_storage_1d<r32uint, read|write>`),
//! written here anew.

use crate::common;

use vyre_graph::half::f16;
use vyre_graph::{BackendError, Feed, Gpu, Sink, graph};

/// On wgpu's OpenGL backend, which mishandles some texture shapes, `made`
/// must be a refusal whose message contains `part` (then the test stops
/// there); elsewhere nothing is checked and the test goes on.
fn refused_on_gl<T>(gpu: &Gpu, made: &Result<T, BackendError>, part: &str) -> bool {
    if gpu.adapter().backend != vyre_graph::wgpu::Backend::Gl {
        return false;
    }
    match made {
        Err(e) => assert!(e.to_string().contains(part), "{e}"),
        Ok(_) => panic!("OpenGL ran a graph it should refuse ({part})"),
    }
    true
}

graph! {
    /// 1D: `dst[x] = 2 * src[x] + ids[x].r + 256 * ids[x].g` from a sampled
    /// r32float texture and an rgba8uint storage texture.
    pub struct Line;

    kernel line = "
        @group(0) @binding(0) var src: texture_1d<f32>;
        @group(0) @binding(1) var ids: texture_storage_1d<rgba8uint, read>;
        @group(0) @binding(2) var dst: texture_storage_1d<r32float, write>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= textureDimensions(dst) { return; }
            let id = textureLoad(ids, g.x);
            let v = textureLoad(src, g.x, 0).x * 2.0 + f32(id.x + id.y * 256u);
            textureStore(dst, g.x, vec4<f32>(v, 0.0, 0.0, 0.0));
        }
    ";

    input texture_1d src[n] r32float;
    input texture_1d ids[n] rgba8uint;
    output texture_1d dst[n] r32float;

    node line(src: src, ids: ids, dst: dst) over n;
}

#[test]
fn one_dimensional_textures_sampled_and_stored() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Line::new(&gpu);
    if refused_on_gl(&gpu, &made, "makes 1D textures 2D") {
        return;
    }
    let graph = made.expect("graph");
    // 4 bytes a texel: 65 texels are 260 bytes, just past 256.
    for width in [1usize, 3, 64, 65, 300] {
        let src: Vec<f32> = (0..width).map(|x| x as f32 * 0.5 - 7.0).collect();
        let ids: Vec<[u8; 4]> = (0..width)
            .map(|x| [(x * 37 % 256) as u8, (x / 7) as u8, 9, 200])
            .collect();
        let out = graph.run(&src, &ids).expect("run");
        assert_eq!(out.dst.len(), width);
        for x in 0..width {
            let want = src[x] * 2.0 + f32::from(ids[x][0]) + 256.0 * f32::from(ids[x][1]);
            assert_eq!(out.dst[x], want, "width {width}, texel {x}");
        }
    }
}

graph! {
    /// 2D arrays: `dst = src / 3 - tint + layer` per channel, with `src` an
    /// rgba16sint storage texture and `tint` an rg8uint sampled one, four
    /// layers of `n x 3`.
    pub struct Layers;

    kernel layers = "
        @group(0) @binding(0) var src: texture_storage_2d_array<rgba16sint, read>;
        @group(0) @binding(1) var tint: texture_2d_array<u32>;
        @group(0) @binding(2) var dst: texture_storage_2d_array<rgba16sint, write>;
        @compute @workgroup_size(8, 4, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if g.x >= size.x || g.y >= size.y || g.z >= textureNumLayers(tint) { return; }
            let v = textureLoad(src, g.xy, g.z);
            let t = vec4<i32>(textureLoad(tint, g.xy, g.z, 0));
            textureStore(dst, g.xy, g.z, v / vec4<i32>(3) - t + vec4<i32>(i32(g.z)));
        }
    ";

    input texture_2d_array src[n, 3, 4] rgba16sint;
    input texture_2d_array tint[n, 3, 4] rg8uint;
    output texture_2d_array dst[n, 3, 4] rgba16sint;

    node layers(src: src, tint: tint, dst: dst) grid [n / 8, 1, 4];
}

fn layers_cpu(width: usize, src: &[[i16; 4]], tint: &[[u8; 2]]) -> Vec<[i16; 4]> {
    (0..width * 3 * 4)
        .map(|i| {
            let layer = (i / (width * 3)) as i32;
            // rg8uint loads as (r, g, 0, 1).
            let t = [i32::from(tint[i][0]), i32::from(tint[i][1]), 0, 1];
            std::array::from_fn(|c| (i32::from(src[i][c]) / 3 - t[c] + layer) as i16)
        })
        .collect()
}

#[test]
fn two_dimensional_arrays_layer_by_layer() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Layers::new(&gpu).expect("graph");
    // 8 bytes a texel: 33 texels are 264 bytes a row; every layer is 3
    // padded rows in the readback buffer.
    for width in [1usize, 3, 32, 33, 65, 300] {
        let texels = width * 3 * 4;
        let src: Vec<[i16; 4]> = (0..texels)
            .map(|i| {
                let i = i as i32;
                [
                    (i * 97 % 65_536 - 32_768) as i16,
                    (i * 13 - 5_000) as i16,
                    -(i % 301) as i16,
                    (i % 3) as i16,
                ]
            })
            .collect();
        let tint: Vec<[u8; 2]> = (0..texels)
            .map(|i| [(i % 251) as u8, (i * 7 % 256) as u8])
            .collect();
        let out = graph.run(&src, &tint).expect("run");
        let want = layers_cpu(width, &src, &tint);
        assert_eq!(out.dst.len(), texels);
        for (i, (got, want)) in out.dst.iter().zip(&want).enumerate() {
            assert_eq!(
                got,
                want,
                "width {width}: texel ({}, {}) of layer {}",
                i % width,
                i / width % 3,
                i / (width * 3)
            );
        }
    }
}

graph! {
    /// 3D: `dst = (a.x + a.y, a.z * a.w + z)` from a sampled rgba16float
    /// volume into an rg32float one, `n x 4 x 3`.
    pub struct Volume;

    kernel volume = "
        @group(0) @binding(0) var src: texture_3d<f32>;
        @group(0) @binding(1) var dst: texture_storage_3d<rg32float, write>;
        @compute @workgroup_size(4, 4, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g >= textureDimensions(dst)) { return; }
            let a = textureLoad(src, g, 0);
            textureStore(dst, g, vec4<f32>(a.x + a.y, a.z * a.w + f32(g.z), 0.0, 0.0));
        }
    ";

    input texture_3d src[n, 4, 3] rgba16float;
    output texture_3d dst[n, 4, 3] rg32float;

    node volume(src: src, dst: dst) grid [n / 4, 1, 1];
}

/// Texels whose sums and products are exact in f32 (quarters up to 8).
fn volume_input(width: usize) -> Vec<[f16; 4]> {
    (0..width * 12)
        .map(|i| std::array::from_fn(|c| f16::from_f32(((i * 5 + c * 3) % 33) as f32 * 0.25 - 4.0)))
        .collect()
}

fn volume_cpu(width: usize, src: &[[f16; 4]]) -> Vec<[f32; 2]> {
    src.iter()
        .enumerate()
        .map(|(i, a)| {
            let [x, y, z, w] = a.map(f16::to_f32);
            [x + y, z * w + (i / (width * 4)) as f32]
        })
        .collect()
}

#[test]
fn three_dimensional_volumes_slice_by_slice() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Volume::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let graph = made.expect("graph");
    for width in [1usize, 3, 32, 33, 65, 300] {
        let src = volume_input(width);
        // `n` is inferred from the texel count: the width is the only side
        // that depends on it.
        let out = graph.run(&src).expect("run");
        assert_eq!(out.dst, volume_cpu(width, &src), "width {width}");
    }
}

graph! {
    /// Sums each column `x` of an rg32float volume over y and z, both
    /// channels.
    pub struct ColumnSums3;

    kernel sums = "
        @group(0) @binding(0) var v: texture_3d<f32>;
        @group(0) @binding(1) var<storage, read_write> sums: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&sums) { return; }
            var total = 0.0;
            for (var z = 0u; z < 3u; z++) {
                for (var y = 0u; y < 4u; y++) {
                    let t = textureLoad(v, vec3<u32>(g.x, y, z), 0);
                    total += t.x + t.y;
                }
            }
            sums[g.x] = total;
        }
    ";

    input texture_3d v[n, 4, 3] rg32float;
    output sums[n];

    node sums(v: v, sums: sums) over n;
}

#[test]
fn a_resident_volume_feeds_a_second_graph_and_wrong_sizes_are_refused() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Volume::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let volume = made.expect("volume");
    let sums = ColumnSums3::new(&gpu).expect("sums");
    let width = 37usize;
    let src = volume_input(width);
    let want = volume_cpu(width, &src);
    let resident = volume.run_resident(&src).expect("resident run");
    assert_eq!(resident.dst.extent(), [37, 4, 3]);
    // Read back directly: padding stripped, slices in order.
    let bytes = resident.dst.read(&gpu).expect("read");
    assert_eq!(bytemuck::cast_slice::<u8, [f32; 2]>(&bytes), &want[..]);
    // Fed into the second graph on the device; n comes from its width.
    let out = sums.run(&resident.dst).expect("run on the resident volume");
    let column = |x: usize| -> f32 {
        (0..12)
            .map(|k| {
                let t = want[k * width + x];
                t[0] + t[1]
            })
            .sum()
    };
    for x in 0..width {
        assert!(
            (out.sums[x] - column(x)).abs() <= 1e-3,
            "column {x}: GPU {} vs CPU {}",
            out.sums[x],
            column(x)
        );
    }
    // A volume of another size is refused, naming both extents; then the
    // same graph runs again.
    let wrong = volume.graph().create_texture(1, 9).expect("texture");
    let err = sums
        .graph()
        .run(
            &Default::default(),
            8,
            &[Feed::Texture(&wrong)],
            &mut [Sink::Skip],
        )
        .expect_err("9 x 4 x 3 for 8 x 4 x 3");
    // (The variant is `InvalidHandle`, or `InvalidTexture` where texture
    // handles have their own; the message is what matters here.)
    let message = err.to_string();
    assert!(
        message.contains(
            "the texture is 9 x 4 x 3 but the graph texture is 8 x 4 x 3 texels (texture_3d)"
        ),
        "{message}"
    );
    let again = sums
        .run(&resident.dst)
        .expect("the same graph after the error");
    assert_eq!(again.sums, out.sums);
}

#[test]
fn a_wrong_texel_count_names_the_extent_then_the_graph_runs() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = Volume::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let graph = made.expect("graph");
    let src = volume_input(5);
    // Inferred: 59 texels are no `n x 4 x 3`.
    let err = graph.run(&src[1..]).expect_err("one texel short");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("input texture `src` is [n, 4, 3] texels (rgba16float, texture_3d)"),
        "{message}"
    );
    // Explicit n: the extent at that n is named.
    let bytes: &[u8] = bytemuck::cast_slice(&src[1..]);
    let err = graph
        .graph()
        .run(
            &Default::default(),
            5,
            &[Feed::Host(bytes)],
            &mut [Sink::Skip],
        )
        .expect_err("one texel short of 5 x 4 x 3");
    let message = err.to_string();
    assert!(
        matches!(err, BackendError::TextureMismatch { .. }),
        "{message}"
    );
    assert!(
        message.contains("texture `src` is 5 x 4 x 3 texels (rgba16float) at problem size 5, but the run passed 59 texels"),
        "{message}"
    );
    let out = graph.run(&src).expect("run after the errors");
    assert_eq!(out.dst, volume_cpu(5, &src));
    let description = graph.describe().to_string();
    assert!(
        description.contains("texture `src` Input n x 4 x 3 texels (texture_3d, rgba16float)"),
        "{description}"
    );
}

graph! {
    /// An `inout` 3D r32sint volume updated in place through `read_write`
    /// storage: `v = v * -3 + z`, wrapping.
    pub struct InPlace3;

    kernel bump = "
        @group(0) @binding(0) var v: texture_storage_3d<r32sint, read_write>;
        @compute @workgroup_size(8, 2, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g >= textureDimensions(v)) { return; }
            textureStore(v, g, textureLoad(v, g) * vec4<i32>(-3) + vec4<i32>(i32(g.z)));
        }
    ";

    inout texture_3d v[n, 2, 5] r32sint;

    node bump(v: v) grid [n / 8, 1, 3];
}

#[test]
fn a_storage_volume_updated_in_place() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = InPlace3::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let graph = made.expect("graph");
    for width in [1usize, 3, 64, 65, 300] {
        let v: Vec<i32> = (0..width * 10)
            .map(|i| (i as i32).wrapping_mul(-1_640_531_527))
            .collect();
        let out = graph.run(&v).expect("run");
        for (i, (a, got)) in v.iter().zip(&out.v).enumerate() {
            let z = (i / (width * 2)) as i32;
            assert_eq!(
                *got,
                a.wrapping_mul(-3).wrapping_add(z),
                "width {width}, texel {i}"
            );
        }
    }
}

graph! {
    /// Three 2D-array intermediates of one shape and a 3D one of the same
    /// extent: `t3` takes `t1`'s texture, the volume shares with none.
    pub struct ArrayChain;

    kernel first = "
        @group(0) @binding(0) var src: texture_2d_array<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d_array<r32float, write>;
        @compute @workgroup_size(8, 2, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if g.x >= size.x || g.y >= size.y || g.z >= textureNumLayers(dst) { return; }
            textureStore(dst, g.xy, g.z, textureLoad(src, g.xy, g.z, 0) + vec4<f32>(1.0));
        }
    ";
    kernel flat = "
        @group(0) @binding(0) var src: texture_2d_array<f32>;
        @group(0) @binding(1) var dst: texture_storage_3d<r32float, write>;
        @compute @workgroup_size(8, 2, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g >= textureDimensions(dst)) { return; }
            textureStore(dst, g, textureLoad(src, g.xy, g.z, 0) * 2.0);
        }
    ";
    kernel back = "
        @group(0) @binding(0) var src: texture_3d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d_array<r32float, write>;
        @compute @workgroup_size(8, 2, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if g.x >= size.x || g.y >= size.y || g.z >= textureNumLayers(dst) { return; }
            textureStore(dst, g.xy, g.z, textureLoad(src, g, 0) - vec4<f32>(3.0));
        }
    ";

    input texture_2d_array a[n, 2, 3] r32float;
    intermediate texture_2d_array t1[n, 2, 3] r32float;
    intermediate texture_3d vol[n, 2, 3] r32float;
    intermediate texture_2d_array t3[n, 2, 3] r32float;
    output texture_2d_array out[n, 2, 3] r32float;

    node first(src: a, dst: t1) grid [n / 8, 1, 3];
    node flat(src: t1, dst: vol) grid [n / 8, 1, 3];
    node back(src: vol, dst: t3) grid [n / 8, 1, 3];
    node last = first(src: t3, dst: out) grid [n / 8, 1, 3];
}

#[test]
fn array_intermediates_share_only_with_their_own_shape() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let slots = &ArrayChain::SPEC.schedule.as_ref().expect("schedule").slots;
    assert_eq!(slots[1], slots[3], "t1 and t3 share: {slots:?}");
    assert_ne!(slots[2], slots[1], "the volume is another shape: {slots:?}");
    let made = ArrayChain::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let graph = made.expect("graph");
    for width in [1usize, 65] {
        let a: Vec<f32> = (0..width * 6).map(|i| i as f32 - 10.0).collect();
        let out = graph.run(&a).expect("run");
        for (i, (x, got)) in a.iter().zip(&out.out).enumerate() {
            assert_eq!(
                *got,
                (x + 1.0) * 2.0 - 3.0 + 1.0,
                "width {width}, texel {i}"
            );
        }
    }
}

graph! {
    /// naga's `storage-textures.wgsl` shapes: r32float, rg32float and
    /// rgba32float storage textures read in group 0 by one kernel and
    /// written in group 1 by another.
    pub struct StorageShapes;

    kernel cs_load = "
        @group(0) @binding(0) var r: texture_storage_2d<r32float, read>;
        @group(0) @binding(1) var rg: texture_storage_2d<rg32float, read>;
        @group(0) @binding(2) var rgba: texture_storage_2d<rgba32float, read>;
        @group(0) @binding(3) var<storage, read_write> mid: array<vec4<f32>>;
        @compute @workgroup_size(8, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(r);
            if g.x >= size.x || g.y >= size.y { return; }
            let a = textureLoad(rgba, g.xy);
            mid[g.y * size.x + g.x] = vec4<f32>(textureLoad(r, g.xy).x, textureLoad(rg, g.xy).xy, a.x + a.y + a.z + a.w);
        }
    ";
    kernel cs_store = "
        @group(0) @binding(0) var<storage, read> mid: array<vec4<f32>>;
        @group(1) @binding(0) var r: texture_storage_2d<r32float, write>;
        @group(1) @binding(1) var rg: texture_storage_2d<rg32float, write>;
        @group(1) @binding(2) var rgba: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(8, 2)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(r);
            if g.x >= size.x || g.y >= size.y { return; }
            let m = mid[g.y * size.x + g.x];
            textureStore(r, g.xy, vec4<f32>(m.x * 2.0, 0.0, 0.0, 0.0));
            textureStore(rg, g.xy, vec4<f32>(m.z, m.y, 0.0, 0.0));
            textureStore(rgba, g.xy, m);
        }
    ";

    input texture r_in[n, 2] r32float;
    input texture rg_in[n, 2] rg32float;
    input texture rgba_in[n, 2] rgba32float;
    intermediate mid[2 * n];
    output texture r_out[n, 2] r32float;
    output texture rg_out[n, 2] rg32float;
    output texture rgba_out[n, 2] rgba32float;

    node cs_load(r: r_in, rg: rg_in, rgba: rgba_in, mid: mid) grid [n / 8, 1, 1];
    node cs_store(mid: mid, r: r_out, rg: rg_out, rgba: rgba_out) grid [n / 8, 1, 1];
}

#[test]
fn the_shapes_of_nagas_storage_texture_test() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = StorageShapes::new(&gpu);
    if refused_on_gl(&gpu, &made, "rg32float storage texture") {
        return;
    }
    let graph = made.expect("graph");
    // 16 bytes a texel: 17 texels are 272 bytes a row.
    for width in [1usize, 3, 16, 17, 65] {
        let texels = width * 2;
        let r: Vec<f32> = (0..texels).map(|i| i as f32 * 0.5).collect();
        let rg: Vec<[f32; 2]> = (0..texels).map(|i| [i as f32, -(i as f32)]).collect();
        let rgba: Vec<[f32; 4]> = (0..texels)
            .map(|i| [i as f32, 1.0, 2.0, (i % 5) as f32])
            .collect();
        let out = graph.run(&r, &rg, &rgba).expect("run");
        for i in 0..texels {
            let m = [r[i], rg[i][0], rg[i][1], rgba[i].iter().sum::<f32>()];
            assert_eq!(out.r_out[i], m[0] * 2.0, "r, width {width}, texel {i}");
            assert_eq!(out.rg_out[i], [m[2], m[1]], "rg, width {width}, texel {i}");
            assert_eq!(out.rgba_out[i], m, "rgba, width {width}, texel {i}");
        }
    }
}

graph! {
    /// naga's `image.wgsl` compute shapes (less its multisampled texture,
    /// which graphs refuse): a `texture_2d<u32>`, an rgba8uint storage
    /// read, a `texture_2d_array<u32>`, a `texture_1d<u32>` and r32uint
    /// 1D storage read and write, summed per column.
    pub struct ImageShapes;

    kernel image = "
        @group(0) @binding(0) var mipmapped: texture_2d<u32>;
        @group(0) @binding(1) var storage_src: texture_storage_2d<rgba8uint, read>;
        @group(0) @binding(5) var array_src: texture_2d_array<u32>;
        @group(0) @binding(6) var dup_src: texture_storage_1d<r32uint, read>;
        @group(0) @binding(7) var one_d: texture_1d<u32>;
        @group(0) @binding(2) var dst: texture_storage_1d<r32uint, write>;
        @compute @workgroup_size(16)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= textureDimensions(dst) { return; }
            let x = i32(g.x);
            let v = textureLoad(mipmapped, vec2<i32>(x, 1), 0).x
                + textureLoad(storage_src, vec2<u32>(g.x, 0u)).y * 10u
                + textureLoad(array_src, vec2<i32>(x, 1), 1, 0).x * 100u
                + textureLoad(dup_src, x).x * 1000u
                + textureLoad(one_d, g.x, 0).x * 10000u;
            textureStore(dst, x, vec4<u32>(v));
        }
    ";

    input texture mipmapped[n, 2] rgba8uint;
    input texture storage_src[n, 2] rgba8uint;
    input texture_2d_array array_src[n, 2, 2] r32uint;
    input texture_1d dup_src[n] r32uint;
    input texture_1d one_d[n] r32uint;
    output texture_1d dst[n] r32uint;

    node image(mipmapped: mipmapped, storage_src: storage_src, array_src: array_src, dup_src: dup_src, one_d: one_d, dst: dst) over n;
}

#[test]
fn the_compute_shapes_of_nagas_image_test() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let made = ImageShapes::new(&gpu);
    if refused_on_gl(&gpu, &made, "makes 1D textures 2D") {
        return;
    }
    let graph = made.expect("graph");
    for width in [1usize, 3, 65, 300] {
        let rgba = |seed: usize| -> Vec<[u8; 4]> {
            (0..width * 2)
                .map(|i| [((i + seed) % 10) as u8, ((i * 3 + seed) % 10) as u8, 7, 9])
                .collect()
        };
        let (mip, st) = (rgba(1), rgba(2));
        let array: Vec<u32> = (0..width * 4).map(|i| (i % 10) as u32).collect();
        let dup: Vec<u32> = (0..width).map(|i| (i * 7 % 10) as u32).collect();
        let one: Vec<u32> = (0..width).map(|i| (i * 3 % 10) as u32).collect();
        let out = graph.run(&mip, &st, &array, &dup, &one).expect("run");
        for x in 0..width {
            let want = u32::from(mip[width + x][0])
                + u32::from(st[x][1]) * 10
                + array[3 * width + x] * 100
                + dup[x] * 1000
                + one[x] * 10000;
            assert_eq!(out.dst[x], want, "width {width}, texel {x}");
        }
    }
}

graph! {
    /// `n` layers of 4 x 2 r32uint texels, summed per layer: `n` is
    /// inferred from the layer count, and one layer is still an array.
    pub struct Stack;

    kernel sum = "
        @group(0) @binding(0) var layers: texture_2d_array<u32>;
        @group(0) @binding(1) var<storage, read_write> sums: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= textureNumLayers(layers) { return; }
            var total = 0u;
            for (var y = 0u; y < 2u; y++) {
                for (var x = 0u; x < 4u; x++) {
                    total += textureLoad(layers, vec2<u32>(x, y), g.x, 0).x * (x + 1u);
                }
            }
            sums[g.x] = total;
        }
    ";

    input texture_2d_array layers[4, 2, n] r32uint;
    output sums[n];

    node sum(layers: layers, sums: sums) over n;
}

#[test]
fn layer_counts_that_depend_on_n_including_one() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Stack::new(&gpu).expect("graph");
    let description = graph.describe().to_string();
    assert!(
        description
            .contains("texture `layers` Input 4 x 2 texels x n layers (texture_2d_array, r32uint)"),
        "{description}"
    );
    for layers in [1usize, 2, 7] {
        let texels: Vec<u32> = (0..layers * 8).map(|i| (i * i % 1000) as u32).collect();
        let run = graph.run(&texels);
        // OpenGL makes a texture of one layer a plain 2D texture.
        if layers == 1 && refused_on_gl(&gpu, &run, "guesses a 2D texture's kind from its layers") {
            continue;
        }
        let out = run.expect("run");
        assert_eq!(out.sums.len(), layers);
        for l in 0..layers {
            let want: u32 = (0..8).map(|k| texels[l * 8 + k] * (k as u32 % 4 + 1)).sum();
            assert_eq!(out.sums[l], want, "{layers} layers, layer {l}");
        }
    }
}

#[test]
fn textures_over_the_device_limits_name_the_limit_in_its_unit() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let limits = gpu.limits().clone();
    // 1D: the width against `max_texture_dimension_1d`, in texels.
    let made = Line::new(&gpu);
    if !refused_on_gl(&gpu, &made, "makes 1D textures 2D") {
        over_the_1d_limit(&made.expect("line"), &limits);
    }
    // 2D arrays: each side against `max_texture_dimension_2d`, texels per
    // side, and the layer count against `max_texture_array_layers`.
    let layered = Layers::new(&gpu).expect("layers");
    let w = limits.max_texture_dimension_2d as usize + 1;
    let message = layered
        .run(&vec![[0i16; 4]; w * 12], &vec![[0u8; 2]; w * 12])
        .expect_err("over the 2D limit")
        .to_string();
    assert!(
        message.contains(&format!(
            "texture `src` is {w} x 3 texels x 4 layers, but the device's `max_texture_dimension_2d` is {} texels per side;",
            limits.max_texture_dimension_2d
        )),
        "{message}"
    );
    let stack = Stack::new(&gpu).expect("stack");
    let layers = limits.max_texture_array_layers as usize + 1;
    let message = stack
        .run(&vec![0u32; 8 * layers])
        .expect_err("over the layer limit")
        .to_string();
    assert!(
        message.contains(&format!(
            "texture `layers` is 4 x 2 texels x {layers} layers, but the device's `max_texture_array_layers` is {} layers;",
            limits.max_texture_array_layers
        )),
        "{message}"
    );
    // 3D: every side against `max_texture_dimension_3d`, texels per side.
    let made = Volume::new(&gpu);
    if refused_on_gl(&gpu, &made, "only the first z slice") {
        return;
    }
    let volume = made.expect("volume");
    let w = limits.max_texture_dimension_3d as usize + 1;
    let message = volume
        .run(&volume_input(w))
        .expect_err("over the 3D limit")
        .to_string();
    assert!(
        message.contains(&format!(
            "texture `src` is {w} x 4 x 3 texels, but the device's `max_texture_dimension_3d` is {} texels per side;",
            limits.max_texture_dimension_3d
        )),
        "{message}"
    );
    let src = volume_input(2);
    assert_eq!(
        volume.run(&src).expect("a run after the error").dst,
        volume_cpu(2, &src)
    );
}

fn over_the_1d_limit(line: &Line, limits: &vyre_graph::wgpu::Limits) {
    let w = limits.max_texture_dimension_1d as usize + 1;
    let err = line
        .run(&vec![0.0f32; w], &vec![[0u8; 4]; w])
        .expect_err("over the 1D limit");
    assert!(matches!(err, BackendError::TextureTooLarge { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "texture `src` is {w} texels, but the device's `max_texture_dimension_1d` is {} texels;",
            limits.max_texture_dimension_1d
        )),
        "{message}"
    );
    assert!(!message.contains("bytes"), "{message}");
    let out = line
        .run(&[1.0f32][..], &[[1u8, 0, 0, 0]][..])
        .expect("a run after the error");
    assert_eq!(out.dst, [3.0]);
}
