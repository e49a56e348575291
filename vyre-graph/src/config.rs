//! [`DispatchConfig`]: optional knobs of one run.

use std::borrow::Cow;
use std::time::Duration;

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
    /// [`crate::BackendError::Timeout`]; `None` waits as long as it takes.
    /// It bounds the wait, not the kernels: a kernel already on the GPU runs
    /// to its end (see [`crate::Gpu::abandon`] for a runaway one).
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
    /// Usages added to the buffers the typed `run_resident` creates for
    /// outputs (always `STORAGE | COPY_SRC | COPY_DST`), e.g. `VERTEX` or
    /// `INDIRECT` so that a render pass can draw from a graph's output.
    pub resident_usage: wgpu::BufferUsages,
    /// Whether fused groups run as grid-stride loops on fewer workgroups
    /// (see [`crate::GridStride`]; default [`crate::GridStride::Never`]).
    pub grid_stride: crate::GridStride,
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
            resident_usage: wgpu::BufferUsages::empty(),
            grid_stride: crate::GridStride::Never,
        }
    }
}

impl DispatchConfig {
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

    /// Choose how fused groups launch (see [`crate::GridStride`]).
    ///
    /// ```
    /// use vyre_graph::{DispatchConfig, GridStride};
    /// let config = DispatchConfig::default().with_grid_stride(GridStride::Workgroups(64));
    /// assert_eq!(config.grid_stride, GridStride::Workgroups(64));
    /// ```
    #[must_use]
    pub fn with_grid_stride(mut self, mode: crate::GridStride) -> Self {
        self.grid_stride = mode;
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

    /// Limit device memory (0 = unbounded).
    #[must_use]
    pub fn with_device_memory_budget_bytes(mut self, bytes: u64) -> Self {
        self.device_memory_budget_bytes = bytes;
        self
    }
}
