// Breadth-first search, step 0: every vertex UNVISITED except the source,
// which gets level 0 and is appended to the first frontier.
//
// `frontier` is an append buffer (the graph's `append fa[n];`): the count
// first, the items after it. The count starts at 0 in every run.

struct Params {
    source: u32,
}

struct Frontier {
    count: atomic<u32>,
    items: array<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> levels: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> frontier: Frontier;

const WG: u32 = 256u;
const UNVISITED: u32 = 0xffffffffu;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // Linear index, also right on a grid folded into y and z.
    let v = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
    if v >= arrayLength(&levels) {
        return;
    }
    if v == params.source {
        atomicStore(&levels[v], 0u);
        let slot = atomicAdd(&frontier.count, 1u);
        if slot < arrayLength(&frontier.items) {
            frontier.items[slot] = v;
        }
    } else {
        atomicStore(&levels[v], UNVISITED);
    }
}
