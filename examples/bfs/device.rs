//! The breadth-first search as one `graph!` whose loop stops itself.

use vyre_graph::{BackendError, DispatchConfig, GpuBufferHandle, RunReport, graph};

/// Frontiers the device loop expands at most (`repeat up to 64`).
pub const MAX_LEVELS: u32 = 64;

graph! {
    /// Breadth-first levels from `params.source` of a graph in CSR form
    /// with 8 directed edges per vertex on average (`n` vertices), in one
    /// submission: the frontier is an append buffer, and the loop stops
    /// itself once a frontier is empty (at most 64 levels).
    pub struct Bfs;

    kernel init = file "examples/kernels/bfs/init.wgsl";
    kernel expand = file "examples/kernels/bfs/expand.wgsl";

    input offsets[n + 1];
    input edges[8 * n];
    uniform params;
    output levels[n];
    // Two frontiers, each able to hold every vertex, used in turn; they
    // stay on the device (never read back).
    append intermediate fa[n];
    append intermediate fb[n];

    // Every level UNVISITED but the source's, 0; the source appended to fa.
    node init(params: params, levels: levels, frontier: fa) over n;
    // Iteration i expands ping(fa, fb) (fa when i is even) into the other;
    // before each iteration, the device checks whether that frontier is
    // empty, and from then on every dispatch is of zero workgroups.
    repeat up to 64 as i until empty(ping(fa, fb)) {
        node expand(offsets: offsets, edges: edges, levels: levels, frontier: ping(fa, fb), next: pong(fa, fb)) over count(ping(fa, fb));
    }
}

/// One search by `bfs` from `source` of the graph in `offsets` and `edges`
/// (already on the device, bound in place), the levels read back into
/// `out.levels` (resized to `n`, its allocation reused): the frontiers are
/// `append intermediate` buffers, so the typed run reads back nothing else.
pub fn search(
    bfs: &Bfs,
    offsets: &GpuBufferHandle,
    edges: &GpuBufferHandle,
    source: u32,
    out: &mut BfsOutputs,
    config: &DispatchConfig,
) -> Result<RunReport, BackendError> {
    bfs.run_into(config, out, offsets, edges, &Params { source })
}
