// Breadth-first search, step 0: every vertex UNVISITED except the source,
// which gets level 0 and is appended to the first frontier.
//
// `frontier` is an append buffer (the graph's `append fa[n];`): the count
// first, the items after it. The count starts at 0 in every run.

import super::common::{Frontier, UNVISITED, linear_index};

struct Params {
    source: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> levels: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> frontier: Frontier;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = linear_index(gid, nwg);
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
