// Radix sort, pass step 3: move each key to its place for the digit
// `(key >> SHIFT) & 15`, stably. Two entry points share the ranking:
// `main` moves keys, `pairs` moves each key's value with it (a node binds
// only the globals its entry point uses).
//
// `offsets` is the exclusive scan of the histogram, in blocks of 1,024
// entries, and `block_offsets` the exclusive scan of those blocks' totals:
// together, where the keys of (digit, block) start. Within a block, a key's
// place among the keys with its digit comes from a workgroup-wide scan of
// per-thread digit counts.

import super::digits::{WG, ITEMS, BLOCK, RADIX, block_index, block_count, digit_of};

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(4) var<storage, read> src_values: array<u32>;
@group(0) @binding(5) var<storage, read_write> dst_values: array<u32>;

override SHIFT: u32 = 0u;
// Per-thread digit counts are packed two digits to a u32 (16 bits each: a
// block holds at most 1,024 keys, so no half overflows): 8 words a thread.
const WORDS: u32 = 8u;
// The scan of those words is a raking scan: each thread first scans a run
// of 8 consecutive entries, then one thread per word scans the 32 run totals.
const RUN: u32 = 8u;

// counts[word * WG + thread]: the thread's packed counts, then their
// exclusive scan within each run.
var<workgroup> counts: array<u32, 2048>;
// runs[(word * WG + thread) / RUN]: run totals, then their exclusive scan
// within each word.
var<workgroup> runs: array<u32, 256>;

// Where this thread's keys go: `to[k]` for key `first + k`, or `NOWHERE`
// past the end of the input.
const NOWHERE: u32 = 0xffffffffu;
struct Placement {
    first: u32,
    key: vec4<u32>,
    to: vec4<u32>,
}

fn place(t: u32, wid: vec3<u32>, nwg: vec3<u32>) -> Placement {
    let block = block_index(wid, nwg);
    let n = arrayLength(&src);
    let blocks = block_count(n);
    // Thread t owns the 4 consecutive keys at 4t..4t+3 of the block, so that
    // thread order is key order and the ranks below are stable.
    let first = block * BLOCK + t * ITEMS;

    // Keys past the end get digit RADIX, which matches no word.
    var key = vec4<u32>(0u);
    var digit = vec4<u32>(RADIX);
    for (var k = 0u; k < ITEMS; k++) {
        if first + k < n {
            key[k] = src[first + k];
            digit[k] = digit_of(key[k], SHIFT);
        }
    }
    // Rank of each key among this thread's earlier keys with its digit.
    let d = digit;
    let rank = vec4<u32>(
        0u,
        u32(d.y == d.x),
        u32(d.z == d.x) + u32(d.z == d.y),
        u32(d.w == d.x) + u32(d.w == d.y) + u32(d.w == d.z),
    );
    for (var w = 0u; w < WORDS; w++) {
        var word = 0u;
        for (var k = 0u; k < ITEMS; k++) {
            if (d[k] >> 1u) == w {
                word += 1u << ((d[k] & 1u) * 16u);
            }
        }
        counts[w * WG + t] = word;
    }
    workgroupBarrier();

    // Exclusive scan over threads of each word: how many keys of each digit
    // the block's earlier threads hold.
    var total = 0u;
    for (var j = 0u; j < RUN; j++) {
        let v = counts[t * RUN + j];
        counts[t * RUN + j] = total;
        total += v;
    }
    runs[t] = total;
    workgroupBarrier();
    if t < WORDS {
        var sum = 0u;
        for (var r = 0u; r < WG / RUN; r++) {
            let v = runs[t * (WG / RUN) + r];
            runs[t * (WG / RUN) + r] = sum;
            sum += v;
        }
    }
    workgroupBarrier();

    var to = vec4<u32>(NOWHERE);
    for (var k = 0u; k < ITEMS; k++) {
        if first + k < n {
            let lane = (d[k] & 1u) * 16u;
            let e = (d[k] >> 1u) * WG + t;
            let earlier = ((counts[e] + runs[e / RUN]) >> lane) & 0xffffu;
            let slot = d[k] * blocks + block;
            to[k] = offsets[slot] + block_offsets[slot / BLOCK] + earlier + rank[k];
        }
    }
    return Placement(first, key, to);
}

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) t: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let p = place(t, wid, nwg);
    for (var k = 0u; k < ITEMS; k++) {
        if p.to[k] != NOWHERE {
            dst[p.to[k]] = p.key[k];
        }
    }
}

@compute @workgroup_size(256)
fn pairs(
    @builtin(local_invocation_index) t: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let p = place(t, wid, nwg);
    for (var k = 0u; k < ITEMS; k++) {
        if p.to[k] != NOWHERE {
            dst[p.to[k]] = p.key[k];
            dst_values[p.to[k]] = src_values[p.first + k];
        }
    }
}
