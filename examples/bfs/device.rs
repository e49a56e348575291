//! The breadth-first search as one `graph!` whose loop stops itself.

use vyre_graph::{
    BackendError, DispatchConfig, Feed, GpuBufferHandle, Graph, RunReport, Sink, graph,
};

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
    // Two frontiers, each able to hold every vertex, used in turn.
    append fa[n];
    append fb[n];

    // Every level UNVISITED but the source's, 0; the source appended to fa.
    node init(params: params, levels: levels, frontier: fa) over n;
    // Iteration i expands ping(fa, fb) (fa when i is even) into the other;
    // before each iteration, the device checks whether that frontier is
    // empty, and from then on every dispatch is of zero workgroups.
    repeat up to 64 as i until empty(ping(fa, fb)) {
        node expand(offsets: offsets, edges: edges, levels: levels, frontier: ping(fa, fb), next: pong(fa, fb)) over count(ping(fa, fb));
    }
}

/// One search by `bfs` (a [`Bfs`]'s `graph()`, or a graph with the same
/// buffers) from `source` of the `levels.len()`-vertex graph in `offsets`
/// and `edges` (already on the device, bound in place), reading back the
/// levels alone.
///
/// The typed `run` also reads back both frontiers, which are append
/// outputs: their whole capacity (the count is only known on the device
/// when the copy is recorded), 2 × 4 MB at 1M vertices, that the search
/// does not need. The untyped run skips them (`Sink::Skip`).
pub fn search(
    bfs: &Graph,
    offsets: &GpuBufferHandle,
    edges: &GpuBufferHandle,
    source: u32,
    levels: &mut [u32],
    config: &DispatchConfig,
) -> Result<RunReport, BackendError> {
    let params = Params { source };
    bfs.run(
        levels.len() as u64,
        &[
            Feed::Device(offsets),
            Feed::Device(edges),
            Feed::Host(bytemuck::bytes_of(&params)),
        ],
        &mut [
            Sink::Host(bytemuck::cast_slice_mut(levels)),
            Sink::Skip,
            Sink::Skip,
        ],
        config,
    )
}
