// Separable Gaussian blur of an RGBA8 image (one u32 per pixel, red in the
// low byte), clamped at the edges: `horizontal` blurs rows into an f32
// image, `vertical` blurs its columns. The weights come from a uniform, so
// the radius and sigma change without recompiling.
//
// Pixels are addressed linearly (`i = y * width + x`), one invocation each,
// so the grid may be folded into y and z for large images.

import super::params::Params;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> image: array<u32>;
@group(0) @binding(2) var<storage, read_write> rows: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> blurred: array<vec4<f32>>;

const WG: u32 = 256u;

fn weight(k: u32) -> f32 {
    return params.weights[k / 4u][k % 4u];
}

fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
}

@compute @workgroup_size(256)
fn horizontal(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= arrayLength(&rows) {
        return;
    }
    let w = params.width;
    let x = i % w;
    let row = i - x;
    var acc = weight(0u) * unpack4x8unorm(image[i]);
    for (var k = 1u; k <= params.radius; k++) {
        let left = unpack4x8unorm(image[row + select(0u, x - k, x >= k)]);
        let right = unpack4x8unorm(image[row + min(x + k, w - 1u)]);
        acc += weight(k) * (left + right);
    }
    rows[i] = acc;
}

@compute @workgroup_size(256)
fn vertical(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= arrayLength(&blurred) {
        return;
    }
    let w = params.width;
    let h = params.height;
    let y = i / w;
    let x = i - y * w;
    var acc = weight(0u) * rows[i];
    for (var k = 1u; k <= params.radius; k++) {
        let up = rows[select(0u, y - k, y >= k) * w + x];
        let down = rows[min(y + k, h - 1u) * w + x];
        acc += weight(k) * (up + down);
    }
    blurred[i] = acc;
}
