// Collatz stopping time: how many `n -> n / 2` (n even) and `n -> 3n + 1`
// (n odd) steps take each input to 1.
//
// Overflow guard: trajectories leave u32 early (the one from 159,487 peaks
// at 17,202,377,752), so the walk runs in u32 while `3n + 1` fits and
// continues in 64 bits (a hi:lo pair of u32) when it does not. An input
// of 0 (which never reaches 1) or a trajectory that would leave 64 bits
// gives FAILED (0xffffffff) instead of looping forever.

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> steps: array<u32>;

const WG: u32 = 256u;
const FAILED: u32 = 0xffffffffu;
// The largest n with 3n + 1 <= 0xffffffff.
const MAX_U32_ODD: u32 = 0x55555554u;

fn stopping_time(start: u32) -> u32 {
    if start == 0u {
        return FAILED;
    }
    var lo = start;
    var count = 0u;
    // Fast path: plain u32.
    loop {
        if lo == 1u {
            return count;
        }
        if (lo & 1u) == 0u {
            lo = lo >> 1u;
        } else if lo <= MAX_U32_ODD {
            lo = 3u * lo + 1u;
        } else {
            break;
        }
        count += 1u;
    }
    // Wide path: the value is hi * 2^32 + lo, and lo is odd here.
    var hi = 0u;
    loop {
        if hi == 0u && lo == 1u {
            return count;
        }
        if (lo & 1u) == 0u {
            lo = (lo >> 1u) | (hi << 31u);
            hi = hi >> 1u;
        } else {
            // 3n + 1 = n + 2n + 1, with carries; fail when it leaves 64 bits.
            if hi > 0x55555555u || (hi == 0x55555555u && lo > 0x55555554u) {
                return FAILED;
            }
            let lo2 = lo << 1u;
            let hi2 = (hi << 1u) | (lo >> 31u);
            let sum = lo + lo2;
            var carry = select(0u, 1u, sum < lo);
            let next = sum + 1u;
            carry += select(0u, 1u, next < sum);
            hi = hi + hi2 + carry;
            lo = next;
        }
        count += 1u;
    }
    return FAILED;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // Linear index of a grid folded into y and z past 65,535 workgroups.
    let i = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
    if i >= arrayLength(&x) {
        return;
    }
    steps[i] = stopping_time(x[i]);
}
