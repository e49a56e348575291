//! [`ProfilerScope`] (feature `profiler`): a run recorded into the
//! application's encoder ([`Graph::record_profiled`](crate::Graph::record_profiled))
//! opens one `wgpu-profiler` scope per dispatch inside its compute pass,
//! nested under the application's query, so the application's
//! [`GpuProfiler`] reports the graph's nodes in its own results (and its
//! Chrome trace, Tracy or puffin output).
//!
//! vyre's own [`RunReport`](crate::RunReport) GPU times do not go through
//! `wgpu-profiler`: see docs/profiling.md for why.

use wgpu_profiler::{GpuProfiler, GpuProfilerQuery};

/// Where a recorded run's GPU scopes go: the application's profiler, and
/// the open query they nest under (`None`: at the top of its frame).
///
/// ```no_run
/// # fn f(gpu: &vyre_graph::Gpu, graph: &vyre_graph::Graph, x: &vyre_graph::GpuBufferHandle, y: &vyre_graph::GpuBufferHandle) -> Result<(), Box<dyn std::error::Error>> {
/// use vyre_graph::wgpu_profiler::{GpuProfiler, GpuProfilerSettings};
/// use vyre_graph::{DispatchConfig, Feed, ProfilerScope, Sink};
/// let mut profiler = GpuProfiler::new(gpu.device(), GpuProfilerSettings::default())?;
/// let mut encoder = gpu.device().create_command_encoder(&Default::default());
/// let frame = profiler.begin_query("frame", &mut encoder);
/// let scope = ProfilerScope { profiler: &profiler, parent: Some(&frame) };
/// let recorded = graph.record_profiled(&mut encoder, &DispatchConfig::default(), 1000, &[Feed::Device(x)], &[Sink::Device(y)], scope)?;
/// profiler.end_query(&mut encoder, frame);
/// profiler.resolve_queries(&mut encoder);
/// let submission = gpu.queue().submit([encoder.finish()]);
/// recorded.finish(&submission);
/// profiler.end_frame()?;
/// // Later, after the device is polled: the frame with a scope per node.
/// let results = profiler.process_finished_frame(gpu.queue().get_timestamp_period());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct ProfilerScope<'a> {
    /// The application's profiler.
    pub profiler: &'a GpuProfiler,
    /// The query the graph's scopes nest under.
    pub parent: Option<&'a GpuProfilerQuery>,
}

impl std::fmt::Debug for ProfilerScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfilerScope")
            .field("parent", &self.parent.is_some())
            .finish_non_exhaustive()
    }
}

impl ProfilerScope<'_> {
    /// Open a scope named `label` in `pass`.
    pub(crate) fn begin(&self, pass: &mut wgpu::ComputePass<'_>, label: &str) -> GpuProfilerQuery {
        self.profiler
            .begin_query(label, pass)
            .with_parent(self.parent)
    }

    /// Close `query` in `pass`.
    pub(crate) fn end(&self, pass: &mut wgpu::ComputePass<'_>, query: GpuProfilerQuery) {
        self.profiler.end_query(pass, query);
    }
}
