//! [`DispatchConfig`]: optional knobs of one run, and [`GridStride`], how
//! its fused groups launch.

use std::borrow::Cow;
use std::time::Duration;

use super::transfer::TransferOptions;

/// Optional knobs of one run. `Default` is what you want almost always.
///
/// ```
/// let config = vyre_graph::DispatchConfig::default()
///     .with_label("my run")
///     .with_max_output_bytes(1 << 20);
/// assert_eq!(config.max_output_bytes, Some(1 << 20));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatchConfig {
    /// Label of the command encoder and compute pass (for GPU debuggers).
    pub label: Option<Cow<'static, str>>,
    /// How long a blocking run waits for the GPU before giving up with
    /// [`crate::BackendError::Timeout`]; `None` (the default) waits as long
    /// as it takes. It bounds the wait, not the kernels: a kernel already on
    /// the GPU runs to its end (see [`crate::Gpu::abandon`] for a runaway
    /// one).
    ///
    /// Natively the async methods (`run_async`, `run_batch_async`, ...) do
    /// not apply it: drop the future to stop waiting. In a browser (wasm32)
    /// nothing may block and WebGPU has no timeout, so vyre cannot bound a
    /// wait there: a run given a timeout is refused with
    /// [`crate::BackendError::TimeoutUnsupported`] before anything is
    /// submitted (rather than silently waiting longer than asked). Race the
    /// future against a timer of your own (a `setTimeout` promise) and drop
    /// it to stop waiting, as other WebGPU code does.
    pub timeout: Option<Duration>,
    /// Cap on the bytes read back to the host in one run.
    pub max_output_bytes: Option<u64>,
    /// Launch every node with this grid instead of the planned one.
    pub grid_override: Option<[u32; 3]>,
    /// Compute grids from invocation counts with this workgroup size x
    /// instead of the kernel's (for kernels whose size is set at pipeline
    /// creation).
    pub workgroup_override: Option<u32>,
    /// Device memory a run may allocate, in bytes; 0 = unbounded. A plan over
    /// budget fails with [`crate::BackendError::DeviceOutOfMemory`] before
    /// anything is allocated.
    pub device_memory_budget_bytes: u64,
    /// Measure the pass's GPU time with timestamp queries (when the device
    /// has them) into [`crate::RunReport::gpu_ns`].
    pub profile: bool,
    /// Whether a profiled run also times each dispatch (a timestamp before
    /// every dispatch, where the device has timestamps inside passes) into
    /// [`crate::RunReport::dispatch_gpu_ns`]; default `true`. See
    /// [`DispatchConfig::with_dispatch_times`].
    pub dispatch_times: bool,
    /// Usages added to the buffers the typed `run_resident` creates for
    /// outputs (always `STORAGE | COPY_SRC | COPY_DST`), e.g. `VERTEX` or
    /// `INDIRECT` so that a render pass can draw from a graph's output.
    pub resident_usage: wgpu::BufferUsages,
    /// Whether fused groups run as grid-stride loops on fewer workgroups
    /// (see [`GridStride`]; default [`GridStride::Never`]).
    pub grid_stride: GridStride,
    /// How this run moves data in and out; `None` (the default) takes the
    /// [`Gpu`](crate::Gpu)'s ([`GpuOptions::transfer`](crate::GpuOptions::transfer)).
    pub transfer: Option<TransferOptions>,
    /// How many iterations of each `repeat up to K .. until ..` loop a run
    /// records (see [`LoopBound`]; default [`LoopBound::Learned`]).
    pub loop_bound: LoopBound,
    /// How many runs a stream (`run_many`) keeps in flight: the depth it
    /// was asked for, or fewer on an adapter where overlapping runs does
    /// not pay (see [`StreamDepth`]; default [`StreamDepth::Auto`]).
    pub stream_depth: StreamDepth,
}

/// How a stream of runs (`Graph::run_many`, the typed `run_many`) picks
/// how many runs it keeps in flight.
///
/// On a GPU, uploads, kernels and read-backs of consecutive runs overlap,
/// so a deeper stream is faster. On a CPU adapter (`DeviceType::Cpu`, such
/// as Mesa's lavapipe) the "device" is the host's own cores: a run in
/// flight competes with the host work of the next one, and a stream was
/// measured slower than the same runs one at a time (`docs/batches.md`,
/// "Depth per adapter"). [`StreamDepth::Auto`] therefore runs a stream on
/// a CPU adapter one run at a time.
///
/// ```
/// use vyre_graph::{DispatchConfig, StreamDepth};
/// let asked = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
/// assert_eq!(asked.stream_depth, StreamDepth::Asked);
/// assert_eq!(DispatchConfig::default().stream_depth, StreamDepth::Auto);
/// assert_eq!(StreamDepth::Auto.depth(3, vyre_graph::wgpu::DeviceType::Cpu), 1);
/// assert_eq!(StreamDepth::Auto.depth(3, vyre_graph::wgpu::DeviceType::DiscreteGpu), 3);
/// assert_eq!(StreamDepth::Asked.depth(3, vyre_graph::wgpu::DeviceType::Cpu), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamDepth {
    /// The depth asked for, except on a CPU adapter (`DeviceType::Cpu`):
    /// there one run at a time, as plain blocking runs.
    #[default]
    Auto,
    /// The depth asked for on every adapter (to measure, or where the host
    /// has cores to spare beside a CPU adapter's).
    Asked,
}

impl StreamDepth {
    /// The runs a stream keeps in flight when asked for `asked` on an
    /// adapter of type `device` (at least 1).
    #[must_use]
    pub fn depth(self, asked: usize, device: wgpu::DeviceType) -> usize {
        match (self, device) {
            (StreamDepth::Auto, wgpu::DeviceType::Cpu) => 1,
            _ => asked.max(1),
        }
    }
}

/// How many iterations of a self-stopping loop (`repeat up to K ..
/// until ..`) a run records.
///
/// An idle iteration still costs its control dispatch and an empty
/// dispatch, so recording all `K` when the loop needs far fewer is waste;
/// [`LoopBound::Learned`] records about what the last runs of the same
/// problem size needed, and continues a loop that needs more in a further
/// submission from where it is (never past `K`, never with a different
/// result). The policy is in `docs/data-dependent.md` ("Learned loop
/// bounds").
///
/// ```
/// use vyre_graph::{DispatchConfig, LoopBound};
/// let whole = DispatchConfig::default().with_loop_bound(LoopBound::Full);
/// assert_eq!(whole.loop_bound, LoopBound::Full);
/// assert_eq!(DispatchConfig::default().loop_bound, LoopBound::Learned);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoopBound {
    /// Record the iterations the last runs of this problem size needed,
    /// plus a margin (the first run at a size records up to 8); a loop
    /// that has not stopped when they are done holds the rest of the run,
    /// and the run continues it in a further submission
    /// ([`RunReport::submissions`](crate::RunReport::submissions) counts
    /// it). Runs recorded into the caller's encoder
    /// ([`Graph::record`](crate::Graph::record)), profiled runs and runs
    /// with [`DispatchConfig::grid_override`] record every iteration, as
    /// [`LoopBound::Full`] does, and so does a graph whose loops cannot be
    /// continued safely (see the docs).
    #[default]
    Learned,
    /// Record all `K` iterations of every loop in the run's one submission.
    Full,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            label: None,
            timeout: None,
            max_output_bytes: None,
            grid_override: None,
            workgroup_override: None,
            device_memory_budget_bytes: 0,
            profile: false,
            dispatch_times: true,
            resident_usage: wgpu::BufferUsages::empty(),
            grid_stride: GridStride::Never,
            transfer: None,
            loop_bound: LoopBound::Learned,
            stream_depth: StreamDepth::Auto,
        }
    }
}

impl DispatchConfig {
    /// Whether this platform can honour the config's waits: in a browser
    /// a timeout cannot be (see [`DispatchConfig::timeout`]).
    ///
    /// # Errors
    /// [`crate::BackendError::TimeoutUnsupported`] on wasm32 when a timeout
    /// is set.
    pub(crate) fn check_waits(&self) -> crate::spec::error::Result<()> {
        match self.timeout {
            Some(timeout) if cfg!(target_arch = "wasm32") => {
                Err(crate::spec::error::BackendError::TimeoutUnsupported { timeout })
            }
            _ => Ok(()),
        }
    }

    /// How a stream picks its depth (see [`StreamDepth`]).
    #[must_use]
    pub fn with_stream_depth(mut self, depth: StreamDepth) -> Self {
        self.stream_depth = depth;
        self
    }

    /// Add usages to the resident outputs the typed `run_resident` creates.
    ///
    /// ```
    /// use vyre_graph::{DispatchConfig, wgpu::BufferUsages};
    /// let config = DispatchConfig::default().with_resident_usage(BufferUsages::VERTEX);
    /// assert_eq!(config.resident_usage, BufferUsages::VERTEX);
    /// ```
    #[must_use]
    pub fn with_resident_usage(mut self, usage: wgpu::BufferUsages) -> Self {
        self.resident_usage = usage;
        self
    }

    /// Choose how fused groups launch (see [`GridStride`]).
    ///
    /// ```
    /// use vyre_graph::{DispatchConfig, GridStride};
    /// let config = DispatchConfig::default().with_grid_stride(GridStride::Workgroups(64));
    /// assert_eq!(config.grid_stride, GridStride::Workgroups(64));
    /// ```
    #[must_use]
    pub fn with_grid_stride(mut self, mode: GridStride) -> Self {
        self.grid_stride = mode;
        self
    }

    /// Move this run's data as `transfer` says instead of as the
    /// [`Gpu`](crate::Gpu)'s options do (see [`TransferOptions`]).
    #[must_use]
    pub fn with_transfer(mut self, transfer: TransferOptions) -> Self {
        self.transfer = Some(transfer);
        self
    }

    /// Choose how many iterations of each self-stopping loop a run records
    /// (see [`LoopBound`]).
    #[must_use]
    pub fn with_loop_bound(mut self, bound: LoopBound) -> Self {
        self.loop_bound = bound;
        self
    }

    /// Set the label.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<Cow<'static, str>>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Set the wait timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cap the bytes read back.
    #[must_use]
    pub fn with_max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = Some(bytes);
        self
    }

    /// Launch every node with `grid`.
    #[must_use]
    pub fn with_grid_override(mut self, grid: [u32; 3]) -> Self {
        self.grid_override = Some(grid);
        self
    }

    /// Plan grids with workgroup size x `size`.
    #[must_use]
    pub fn with_workgroup_override(mut self, size: u32) -> Self {
        self.workgroup_override = Some(size);
        self
    }

    /// Measure the GPU time of the run's pass.
    #[must_use]
    pub fn with_profile(mut self, on: bool) -> Self {
        self.profile = on;
        self
    }

    /// Whether a profiled run times each dispatch as well as its pass
    /// (default `true`). A timestamp between two dispatches is not free:
    /// on an NVIDIA H200 through Vulkan, the per-dispatch timestamps of a
    /// two-level sum of 2^24 floats added about a third to its GPU time.
    /// With `false` a profiled run writes only the pass's two timestamps,
    /// so [`crate::RunReport::gpu_ns`] is the run's own GPU time and
    /// [`crate::RunReport::dispatch_gpu_ns`] stays empty.
    ///
    /// ```
    /// let whole_pass = vyre_graph::DispatchConfig::default()
    ///     .with_profile(true)
    ///     .with_dispatch_times(false);
    /// assert!(whole_pass.profile && !whole_pass.dispatch_times);
    /// ```
    #[must_use]
    pub fn with_dispatch_times(mut self, on: bool) -> Self {
        self.dispatch_times = on;
        self
    }

    /// Limit device memory (0 = unbounded).
    #[must_use]
    pub fn with_device_memory_budget_bytes(mut self, bytes: u64) -> Self {
        self.device_memory_budget_bytes = bytes;
        self
    }
}

/// How fused groups with a grid-stride entry point launch (see
/// [`crate::spec::FusedGroup::grid_stride_entry`]). Other dispatches always
/// run on their plain grid, and so does every dispatch of a run with a
/// `grid_override` or `workgroup_override`.
///
/// The default is [`GridStride::Never`]: on lavapipe neither way wins
/// consistently (a compute-heavy 64-step chain ran 0.89x as long as a loop
/// at 4M elements, a memory-heavy image pipeline 1.11x to 1.21x; see the
/// README's Performance section), so runs stay as written until a device
/// shows a consistent win.
///
/// ```
/// use vyre_graph::{DispatchConfig, GridStride};
/// let config = DispatchConfig::default().with_grid_stride(GridStride::Auto);
/// assert_eq!(config.grid_stride, GridStride::Auto);
/// assert_eq!(DispatchConfig::default().grid_stride, GridStride::Never);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GridStride {
    /// Loop on
    /// [`Gpu::grid_stride_workgroups`](crate::Gpu::grid_stride_workgroups)
    /// workgroups when the plain grid has more than that; else the plain grid.
    Auto,
    /// Always loop, on at most
    /// [`Gpu::grid_stride_workgroups`](crate::Gpu::grid_stride_workgroups)
    /// workgroups.
    Always,
    /// Always loop, on at most this many workgroups (at least 1, at most
    /// the device's `max_compute_workgroups_per_dimension`).
    Workgroups(u32),
    /// Never loop: one workgroup per `workgroup_size` elements, as written
    /// (the default).
    #[default]
    Never,
}

impl GridStride {
    /// The workgroups a dispatch whose plain grid has `plain` workgroups
    /// launches, when it loops; `None` for its plain grid. `auto` is the
    /// adapter's count
    /// ([`Gpu::grid_stride_workgroups`](crate::Gpu::grid_stride_workgroups)),
    /// `max` the device's per-dimension limit.
    ///
    /// However few workgroups are asked for, each invocation loops at most
    /// [`MAX_STRIDE_STEPS`] times (lavapipe was seen to cut a single
    /// invocation's long loop short, silently).
    ///
    /// ```
    /// use vyre_graph::GridStride;
    /// assert_eq!(GridStride::Auto.workgroups(100, 64, 65_535), Some(64));
    /// assert_eq!(GridStride::Auto.workgroups(64, 64, 65_535), None);
    /// assert_eq!(GridStride::Always.workgroups(10, 64, 65_535), Some(10));
    /// assert_eq!(GridStride::Workgroups(1).workgroups(5_000, 64, 65_535), Some(5));
    /// assert_eq!(GridStride::Never.workgroups(1 << 20, 64, 65_535), None);
    /// ```
    #[must_use]
    pub fn workgroups(self, plain: u64, auto: u32, max: u32) -> Option<u32> {
        let floor = plain.div_ceil(MAX_STRIDE_STEPS);
        let cap = |w: u32| {
            let w = u64::from(w)
                .max(floor)
                .min(plain)
                .min(u64::from(max))
                .max(1);
            u32::try_from(w).unwrap_or(u32::MAX)
        };
        match self {
            GridStride::Never => None,
            GridStride::Auto => (plain > u64::from(auto)).then(|| cap(auto)),
            GridStride::Always => Some(cap(auto)),
            GridStride::Workgroups(w) => Some(cap(w)),
        }
    }
}

/// The most elements one invocation of a grid-stride loop runs: a launch
/// has at least `plain workgroups / MAX_STRIDE_STEPS` workgroups.
pub const MAX_STRIDE_STEPS: u64 = 1024;
