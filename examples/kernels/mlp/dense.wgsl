// A dense layer: y = act(x W + b) for a batch of rows.
//
// x: [batch][IN], W: [IN][OUT], b: [OUT], y: [batch][OUT], row-major; act
// is ReLU when RELU != 0, else the identity. Each 16x16 workgroup computes
// a 64x64 tile of y, 4x4 outputs a thread (rows lid.y + 16i, columns
// lid.x + 16j), walking the shared dimension 16 at a time through
// workgroup memory. Every output sums its products in order of k, like a
// plain loop. Launch with [ceil(OUT / 64), ceil(batch / 64), 1] workgroups.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

override IN: u32;
override OUT: u32;
override RELU: u32 = 1u;

const THREADS: u32 = 16u; // threads along each edge of the workgroup
const TILE: u32 = 64u;    // outputs along each edge of the tile
const K_STEP: u32 = 16u;  // shared-dimension slice per step
const LOADS: u32 = 4u;    // (TILE * K_STEP) / (THREADS * THREADS)

var<workgroup> xs: array<array<f32, K_STEP>, TILE>; // [row][k]
var<workgroup> ws: array<array<f32, TILE>, K_STEP>; // [k][col]

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let batch = arrayLength(&x) / IN;
    let row0 = wid.y * TILE;
    let col0 = wid.x * TILE;
    let t = lid.y * THREADS + lid.x;
    var acc: array<vec4<f32>, 4>;
    for (var k0 = 0u; k0 < IN; k0 += K_STEP) {
        for (var q = 0u; q < LOADS; q++) {
            let e = t + q * THREADS * THREADS;
            let r = e / K_STEP;
            let kx = k0 + e % K_STEP;
            var xv = 0.0;
            if row0 + r < batch && kx < IN {
                xv = x[(row0 + r) * IN + kx];
            }
            xs[r][e % K_STEP] = xv;
            let kw = e / TILE;
            let c = col0 + e % TILE;
            var wv = 0.0;
            if k0 + kw < IN && c < OUT {
                wv = w[(k0 + kw) * OUT + c];
            }
            ws[kw][e % TILE] = wv;
        }
        workgroupBarrier();
        for (var k = 0u; k < K_STEP; k++) {
            let wv = vec4<f32>(ws[k][lid.x], ws[k][lid.x + 16u], ws[k][lid.x + 32u], ws[k][lid.x + 48u]);
            acc[0] += xs[lid.y][k] * wv;
            acc[1] += xs[lid.y + 16u][k] * wv;
            acc[2] += xs[lid.y + 32u][k] * wv;
            acc[3] += xs[lid.y + 48u][k] * wv;
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let row = row0 + lid.y + i * THREADS;
        for (var j = 0u; j < 4u; j++) {
            let col = col0 + lid.x + j * THREADS;
            if row < batch && col < OUT {
                var v = acc[i][j] + b[col];
                if RELU != 0u {
                    v = max(v, 0.0);
                }
                y[row * OUT + col] = v;
            }
        }
    }
}
