//! [`PassTimer`]: the timestamp queries of a profiled run, part of its
//! launch plan (made by the first run that asks for profiling).

use crate::device::gpu::Gpu;

/// Timestamps of a profiled run, resolved and read back with the outputs:
/// the pass's begin and end (queries 0 and 1) and, where the device has
/// timestamps inside passes, one before each dispatch and one after the
/// last (queries 2 to 2 + dispatches).
pub(crate) struct PassTimer {
    pub(crate) queries: wgpu::QuerySet,
    pub(crate) resolve: wgpu::Buffer,
    pub(crate) read: wgpu::Buffer,
    /// Queries in the set.
    pub(crate) count: u32,
    /// Whether the set has per-dispatch queries.
    pub(crate) per_dispatch: bool,
    /// The queries the current run writes, resolves and reads: `count`
    /// when it times each dispatch, else the pass's 2.
    pub(crate) written: u32,
}

impl PassTimer {
    /// Timestamp queries for `dispatches` dispatches, when the device has
    /// them.
    pub(crate) fn new(gpu: &Gpu, dispatches: usize) -> Option<Self> {
        if !gpu.has_timestamps() {
            return None;
        }
        let per_dispatch = gpu
            .device()
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        let extra = if per_dispatch {
            u32::try_from(dispatches).ok()?.checked_add(1)?
        } else {
            0
        };
        let count = extra.checked_add(2)?.min(wgpu::QUERY_SET_MAX_QUERIES);
        let per_dispatch = per_dispatch && count == extra + 2;
        let queries = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("vyre pass timer"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let buffer = |usage| {
            gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre pass timer"),
                size: u64::from(count) * 8,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            queries,
            resolve: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            read: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            count,
            per_dispatch: per_dispatch && count > 2,
            written: count,
        })
    }

    /// Whether the current run writes a timestamp before each dispatch.
    pub(crate) fn times_dispatches(&self) -> bool {
        self.written > 2
    }
}
