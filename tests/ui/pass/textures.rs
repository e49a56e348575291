//! Textures and samplers: every texture class and format, both samplers,
//! sampled and storage bindings; the run takes and returns host texels.

use vyre_graph::graph;

graph! {
    pub struct Textures;

    kernel first = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var lin: sampler;
        @group(0) @binding(2) var dst: texture_storage_2d<rgba16float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let uv = (vec2<f32>(g.xy) + 0.5) / vec2<f32>(textureDimensions(src));
            textureStore(dst, g.xy, textureSampleLevel(src, lin, uv, 0.0));
        }
    ";
    kernel second = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var ids: texture_2d<u32>;
        @group(0) @binding(2) var near: sampler;
        @group(0) @binding(3) var out: texture_storage_2d<rgba32float, write>;
        @group(0) @binding(4) var acc: texture_storage_2d<r32float, read_write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let v = textureSampleLevel(src, near, vec2<f32>(0.5), 0.0) + textureLoad(src, g.xy, 0);
            textureStore(out, g.xy, v * f32(textureLoad(ids, g.xy, 0).x));
            textureStore(acc, g.xy, textureLoad(acc, g.xy) + v.x);
        }
    ";

    input texture image[n, 3 * n / 4] rgba8unorm;
    input texture ids[n, 3 * n / 4] r32uint;
    sampler lin = linear clamp;
    sampler near = nearest repeat;
    intermediate texture mid[n, 3 * n / 4] rgba16float;
    output texture out[n, 3 * n / 4] rgba32float;
    inout texture acc[n, 3 * n / 4] r32float;

    node first(src: image, lin: lin, dst: mid) grid [n / 8, 3 * n / 32, 1];
    node second(src: mid, ids: ids, near: near, out: out, acc: acc) grid [n / 8, 3 * n / 32, 1];
}

fn _run(g: &Textures, image: &[[u8; 4]], ids: &[u32], acc: &Vec<f32>) -> Result<(), vyre_graph::BackendError> {
    let out: TexturesOutputs = g.run(64, image, ids, acc)?;
    let _: &Vec<[f32; 4]> = &out.out;
    let _: &Vec<f32> = &out.acc;
    Ok(())
}

fn main() {}
