// One level of a multi-level exclusive prefix sum (u32, wrapping).
//
// Each workgroup scans one block of 1,024 items (256 threads, 4 items each):
// `dst[i]` = the sum of the block's items before `i`, and `sums[block]` = the
// block's total, for the next level to scan. Items past the end of `src`
// count as 0, so any length works. Workgroups of a grid folded into y and z
// (past 65,535 workgroups) find their block from `num_workgroups`.

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;

const WG: u32 = 256u;
const ITEMS: u32 = 4u;
const BLOCK: u32 = 1024u;
const RUN: u32 = 8u;

var<workgroup> tile: array<u32, BLOCK>;
var<workgroup> totals: array<u32, WG>;
var<workgroup> runs: array<u32, 32>; // WG / RUN
var<workgroup> block_total: u32;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) t: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = wid.x + (wid.y + wid.z * nwg.y) * nwg.x;
    let len = arrayLength(&src);
    let base = block * BLOCK;

    // Coalesced load: thread t reads items t, t + 256, t + 512, t + 768.
    for (var k = 0u; k < ITEMS; k++) {
        let j = base + k * WG + t;
        var v = 0u;
        if j < len {
            v = src[j];
        }
        tile[k * WG + t] = v;
    }
    workgroupBarrier();

    // Each thread scans its 4 consecutive items.
    let a = vec4<u32>(tile[t * ITEMS], tile[t * ITEMS + 1u], tile[t * ITEMS + 2u], tile[t * ITEMS + 3u]);
    let own = vec4<u32>(0u, a.x, a.x + a.y, a.x + a.y + a.z);
    let total = own.w + a.w;
    totals[t] = total;
    workgroupBarrier();

    // Exclusive raking scan of the 256 thread totals: 32 threads each scan a
    // run of 8, then one thread scans the 32 run totals.
    if t < WG / RUN {
        var sum = 0u;
        for (var j = 0u; j < RUN; j++) {
            let v = totals[t * RUN + j];
            totals[t * RUN + j] = sum;
            sum += v;
        }
        runs[t] = sum;
    }
    workgroupBarrier();
    if t == 0u {
        var sum = 0u;
        for (var r = 0u; r < WG / RUN; r++) {
            let v = runs[r];
            runs[r] = sum;
            sum += v;
        }
        block_total = sum;
    }
    workgroupBarrier();
    let before = totals[t] + runs[t / RUN];
    tile[t * ITEMS] = before + own.x;
    tile[t * ITEMS + 1u] = before + own.y;
    tile[t * ITEMS + 2u] = before + own.z;
    tile[t * ITEMS + 3u] = before + own.w;
    workgroupBarrier();

    for (var k = 0u; k < ITEMS; k++) {
        let j = base + k * WG + t;
        if j < len {
            dst[j] = tile[k * WG + t];
        }
    }
    if t == 0u && block < arrayLength(&sums) {
        sums[block] = block_total;
    }
}
