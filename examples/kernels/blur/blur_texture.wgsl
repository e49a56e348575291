// The separable Gaussian blur of blur.wgsl on textures: `horizontal` reads
// the RGBA8 input through a linear sampler (at texel centres, where
// bilinear filtering returns the texel exactly; the clamp-to-edge address
// mode is the edge handling) into an rgba32float storage texture, and
// `vertical` reads that with textureLoad into the rgba32float output.
// Threads are laid out in 2D, 16 x 16 per workgroup.

import super::params::Params;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var image: texture_2d<f32>;
@group(0) @binding(2) var lin: sampler;
@group(0) @binding(3) var rows_out: texture_storage_2d<rgba32float, write>;
@group(0) @binding(4) var rows_in: texture_2d<f32>;
@group(0) @binding(5) var blurred: texture_storage_2d<rgba32float, write>;

fn weight(k: u32) -> f32 {
    return params.weights[k / 4u][k % 4u];
}

// The texel at integer column `x` of row `y`, through the sampler.
fn texel(x: i32, y: u32) -> vec4<f32> {
    let size = vec2<f32>(f32(params.width), f32(params.height));
    let uv = (vec2<f32>(f32(x), f32(y)) + 0.5) / size;
    return textureSampleLevel(image, lin, uv, 0.0);
}

@compute @workgroup_size(16, 16)
fn horizontal(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= params.width || gid.y >= params.height {
        return;
    }
    let x = i32(gid.x);
    var acc = weight(0u) * texel(x, gid.y);
    for (var k = 1u; k <= params.radius; k++) {
        // Outside the image the sampler clamps to the edge texel.
        acc += weight(k) * (texel(x - i32(k), gid.y) + texel(x + i32(k), gid.y));
    }
    textureStore(rows_out, gid.xy, acc);
}

@compute @workgroup_size(16, 16)
fn vertical(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = params.width;
    let h = params.height;
    if gid.x >= w || gid.y >= h {
        return;
    }
    let y = gid.y;
    var acc = weight(0u) * textureLoad(rows_in, gid.xy, 0);
    for (var k = 1u; k <= params.radius; k++) {
        let up = textureLoad(rows_in, vec2<u32>(gid.x, select(0u, y - k, y >= k)), 0);
        let down = textureLoad(rows_in, vec2<u32>(gid.x, min(y + k, h - 1u)), 0);
        acc += weight(k) * (up + down);
    }
    textureStore(blurred, gid.xy, acc);
}
