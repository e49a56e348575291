// Breadth-first search, one level: every vertex of `frontier` claims its
// unvisited neighbours for the next level and appends them to `next`.
//
// The graph is in CSR form: the neighbours of `u` are
// `edges[offsets[u] .. offsets[u + 1]]`. `levels[u]` is the level of a
// visited vertex, UNVISITED otherwise. A neighbour is claimed with
// `atomicMin`: every claimer in one level writes the same value (the
// frontier's level + 1), so exactly one of them sees UNVISITED come back,
// and only that one appends it. Nothing else synchronises: the order of the
// next frontier is whatever the atomics make it, and the levels do not
// depend on it.
//
// `frontier` and `next` are append buffers (`{ count, items }`): a reader
// binds `count` as a plain u32 and bounds its work by
// `min(count, arrayLength(&items))`; a writer adds to `count` atomically and
// stores only below the capacity (the count keeps counting past it, which
// is how an overflow is seen after the run).

import super::common::{Frontier, UNVISITED, linear_index};

// The frontier this level reads: its count as a plain u32.
struct FrontierIn {
    count: u32,
    items: array<u32>,
}

@group(0) @binding(0) var<storage, read> offsets: array<u32>;
@group(0) @binding(1) var<storage, read> edges: array<u32>;
@group(0) @binding(2) var<storage, read_write> levels: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> frontier: FrontierIn;
@group(0) @binding(4) var<storage, read_write> next: Frontier;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= min(frontier.count, arrayLength(&frontier.items)) {
        return;
    }
    let u = frontier.items[i];
    let depth = atomicLoad(&levels[u]) + 1u;
    let end = offsets[u + 1u];
    for (var e = offsets[u]; e < end; e++) {
        let v = edges[e];
        // A plain load first: most neighbours are already visited, and a
        // load is cheaper than an atomic read-modify-write.
        if atomicLoad(&levels[v]) != UNVISITED {
            continue;
        }
        if atomicMin(&levels[v], depth) == UNVISITED {
            let slot = atomicAdd(&next.count, 1u);
            if slot < arrayLength(&next.items) {
                next.items[slot] = v;
            }
        }
    }
}
