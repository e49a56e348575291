// Radix sort, pass step 1: count the 4-bit digit `(key >> SHIFT) & 15` of
// each block of 1,024 keys.
//
// `counts` is digit-major: `counts[digit * blocks + block]`, so that an
// exclusive scan of it gives, for every (digit, block), where that block's
// keys with that digit start in the sorted output.

import super::digits::{WG, ITEMS, BLOCK, RADIX, block_index, block_count, digit_of};

@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;

override SHIFT: u32 = 0u;

var<workgroup> bins: array<atomic<u32>, RADIX>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) t: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = block_index(wid, nwg);
    let n = arrayLength(&keys);
    let blocks = block_count(n);
    if t < RADIX {
        atomicStore(&bins[t], 0u);
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let j = block * BLOCK + k * WG + t;
        if j < n {
            atomicAdd(&bins[digit_of(keys[j], SHIFT)], 1u);
        }
    }
    workgroupBarrier();
    if t < RADIX && block < blocks {
        counts[t * blocks + block] = atomicLoad(&bins[t]);
    }
}
