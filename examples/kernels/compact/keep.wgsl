// Stream compaction: append every value below `params.threshold` to `kept`.
//
// `kept` is an append buffer (`{ count, items }`, the graph's
// `append kept[n];`). Instead of one atomicAdd on the global count per kept
// value, each workgroup counts its kept values in workgroup memory, one
// invocation reserves the workgroup's whole range with a single atomicAdd,
// and every invocation writes into its slot of that range. That is 1/256 of
// the global atomics (the global count is one address every workgroup
// contends for).
//
// Order is NOT preserved: workgroups reserve their ranges in whatever order
// they run, and slots inside a workgroup follow the order of its local
// atomics. The kept values are the right multiset; sort them if you need
// an order.

struct Params {
    threshold: u32,
}

struct Kept {
    count: atomic<u32>,
    items: array<u32>,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read_write> kept: Kept;

const WG: u32 = 256u;

// Workgroup memory starts zeroed in every workgroup (WGSL guarantees it).
var<workgroup> local_count: atomic<u32>;
var<workgroup> base: u32;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // Linear index, also right on a grid folded into y and z. No early
    // return: every invocation must reach the barriers below.
    let i = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
    var keep = false;
    var value = 0u;
    if i < arrayLength(&values) {
        value = values[i];
        keep = value < params.threshold;
    }
    var local_slot = 0u;
    if keep {
        local_slot = atomicAdd(&local_count, 1u);
    }
    workgroupBarrier();
    if lid == 0u {
        base = atomicAdd(&kept.count, atomicLoad(&local_count));
    }
    // A barrier, then the value every invocation sees.
    let start = workgroupUniformLoad(&base);
    let slot = start + local_slot;
    if keep && slot < arrayLength(&kept.items) {
        kept.items[slot] = value;
    }
}
