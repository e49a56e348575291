//! What a run reports: [`RunReport`] (the plan, whether it was cached,
//! the dispatches, the host time of each phase in [`RunPhases`], GPU times
//! when profiled) and each self-stopping loop's [`LoopReport`].

use crate::spec::plan::BatchDispatchPlan;

/// What one run did, for telemetry and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunReport {
    /// The problem size.
    pub n: u64,
    /// The plan used.
    pub plan: BatchDispatchPlan,
    /// Whether the plan (and its buffers and bind groups) came from the cache.
    pub cache_hit: bool,
    /// Live plans in the cache after the lookup.
    pub cache_entries: usize,
    /// Queue submissions this run made: 0 or 1; one more for each time a
    /// loop recorded in part had not stopped after the iterations recorded
    /// and the run continued it
    /// ([`LoopBound::Learned`](crate::LoopBound::Learned)); and one more
    /// when it read append outputs by their count
    /// ([`TransferOptions::count_first_min_bytes`](crate::TransferOptions::count_first_min_bytes)).
    pub submissions: u32,
    /// Dispatches recorded into the run's compute passes (one per
    /// submission): one per node or
    /// fused group, plus one control dispatch wherever append counts, loop
    /// gates or indirect arguments are worked out on the device (at most
    /// one per loop iteration and one per node sized by a count written in
    /// its own iteration), and one exit after each loop recorded in part.
    /// A loop's iterations that were not recorded
    /// ([`LoopReport::recorded`]) cost nothing.
    pub dispatches: u32,
    /// CPU nanoseconds spent recording the command buffer (encoder creation
    /// to `finish`), for profiling the recording cost per node.
    pub record_ns: u64,
    /// GPU nanoseconds from the start to the end of the compute pass,
    /// measured with timestamp queries when the run asked for it
    /// ([`DispatchConfig::profile`](crate::DispatchConfig::profile)) and the
    /// device has them: the first submission's pass, when a loop continued
    /// in further ones ([`LoopBound`](crate::LoopBound); a device with
    /// timestamps inside passes records loops whole when profiling).
    pub gpu_ns: Option<u64>,
    /// GPU nanoseconds of each dispatch, in recording order (a fused group
    /// of nodes is one dispatch), when the run profiled on a device with
    /// timestamps inside passes (`TIMESTAMP_QUERY_INSIDE_PASSES`); empty
    /// otherwise. [`Graph::node_times`](crate::Graph::node_times), [`Graph::describe`](crate::Graph::describe) and
    /// [`Graph::to_dot`](crate::Graph::to_dot) show the latest per node.
    pub dispatch_gpu_ns: Vec<u64>,
    /// Host time of each phase of the run.
    pub phases: RunPhases,
    /// What each `repeat up to K .. until ..` loop did, in
    /// [`GraphSpec::loops`](crate::spec::GraphSpec::loops) order (read back
    /// with the outputs; empty for a run recorded and finished without
    /// waiting).
    pub loops: Vec<LoopReport>,
    /// Which device of a device set ran it: its index in
    /// [`Gpus`](crate::Gpus) (0 for a run of one [`Graph`](crate::Graph)).
    pub device: usize,
    /// Which process ran it: its MPI rank when `vyre-mpi` spread the batch
    /// over processes (0 otherwise).
    pub rank: usize,
    /// How a trace shows the graph's dispatches (see
    /// [`RunReport::write_trace`]).
    pub(crate) tracks: std::sync::Arc<crate::plan::tracks::Tracks>,
    /// When the run began (its check), for traces of many runs.
    pub(crate) started: Option<web_time::Instant>,
    /// Whether the run asked for GPU times
    /// ([`DispatchConfig::profile`](crate::DispatchConfig::profile)).
    pub(crate) profiled: bool,
}

impl RunReport {
    /// The report of a run done elsewhere (by another process, in
    /// `vyre-mpi`): its size and where it ran, with nothing planned,
    /// submitted or timed here.
    ///
    /// ```
    /// let report = vyre_graph::RunReport::elsewhere(1000, 2, 1);
    /// assert_eq!((report.n, report.rank, report.device), (1000, 2, 1));
    /// assert_eq!(report.submissions, 0);
    /// ```
    #[must_use]
    pub fn elsewhere(n: u64, rank: usize, device: usize) -> RunReport {
        RunReport {
            n,
            plan: BatchDispatchPlan {
                queue_len: 0,
                worker_groups: 0,
                workgroup_size_x: 0,
                hit_capacity: 0,
                estimated_peak_device_bytes: 0,
                device_memory_budget_bytes: 0,
                topology: crate::spec::plan::Topology::Empty,
            },
            cache_hit: false,
            cache_entries: 0,
            submissions: 0,
            dispatches: 0,
            record_ns: 0,
            gpu_ns: None,
            dispatch_gpu_ns: Vec::new(),
            phases: RunPhases::default(),
            loops: Vec::new(),
            device,
            rank,
            tracks: std::sync::Arc::default(),
            started: None,
            profiled: false,
        }
    }
}

/// Host nanoseconds of each phase of a run, in order: what to compare with
/// hand-written wgpu when a run is slower than it should be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunPhases {
    /// Checking the device, inputs, outputs and grids.
    pub check_ns: u64,
    /// Taking the cached launch plan (or making one: sizing and allocating).
    pub plan_ns: u64,
    /// Uploading host inputs and rebinding resident ones.
    pub bind_ns: u64,
    /// Recording the commands.
    pub encode_ns: u64,
    /// Finishing the encoder and submitting it.
    pub submit_ns: u64,
    /// Waiting for the GPU and the map callbacks.
    pub wait_ns: u64,
    /// Copying mapped results out.
    pub copy_ns: u64,
}

pub(crate) fn elapsed_ns(since: web_time::Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// What one `repeat up to K .. until ..` loop did in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoopReport {
    /// Iterations that did work (at most `K`).
    pub iterations: u32,
    /// Whether the condition stopped it before `K` iterations ran out (a
    /// loop that never stops within `K` is reported here, not an error).
    pub stopped: bool,
    /// Iterations recorded (at most `K`), over every submission of the
    /// run: all `K` with [`LoopBound::Full`](crate::LoopBound::Full), else
    /// about what the last runs at this size needed (see
    /// [`LoopBound::Learned`](crate::LoopBound::Learned)); at least
    /// `iterations`.
    pub recorded: u32,
}
