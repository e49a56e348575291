//! [`Gpu`]: adapter and device acquisition, limits, and the runtime's own
//! counters of submissions, allocations and transfers.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{BackendError, Result};

/// How to open a [`Gpu`].
///
/// The environment variables `WGPU_BACKEND` (e.g. `vulkan`, `gl`),
/// `WGPU_ADAPTER_NAME` (a case-insensitive substring of the adapter's name)
/// and `WGPU_POWER_PREF` (`low` or `high`) are honoured on top of these
/// options.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GpuOptions {
    /// Request every limit the adapter supports (the default) instead of
    /// WebGPU's portable defaults. Compute work usually wants the adapter's
    /// limits: storage bindings of 128 MiB and more instead of 128 MiB caps
    /// that no longer exist, and more workgroups per dimension.
    pub adapter_limits: bool,
    /// Enable timestamp queries when the adapter has them (for profiling).
    pub timestamps: bool,
    /// Power preference when `WGPU_POWER_PREF` is not set.
    pub power_preference: wgpu::PowerPreference,
    /// Shader features to request. `None` (the default) requests every
    /// feature of [`Feature::ALL`](crate::spec::Feature::ALL) the adapter
    /// has (`f16`, `f64`, 64-bit integers and their atomics, ...), so graphs
    /// that declare `features [...]` run wherever the adapter allows;
    /// `Some(f)` requests exactly `f` (opening fails when the adapter lacks
    /// one).
    pub features: Option<wgpu::Features>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            adapter_limits: true,
            timestamps: true,
            power_preference: wgpu::PowerPreference::HighPerformance,
            features: None,
        }
    }
}

impl GpuOptions {
    /// Ask for WebGPU's default limits instead of the adapter's.
    #[must_use]
    pub fn with_default_limits(mut self) -> Self {
        self.adapter_limits = false;
        self
    }

    /// Request exactly these shader features (instead of every one vyre
    /// maps that the adapter has); timestamp queries are added as
    /// [`GpuOptions::timestamps`] says. A graph that declares a feature the
    /// device lacks is refused by `Graph::new` with
    /// [`BackendError::UnsupportedFeature`](crate::BackendError::UnsupportedFeature).
    #[must_use]
    pub fn with_features(mut self, features: wgpu::Features) -> Self {
        self.features = Some(features);
        self
    }

    /// Turn timestamp queries on or off.
    #[must_use]
    pub fn with_timestamps(mut self, on: bool) -> Self {
        self.timestamps = on;
        self
    }
}

/// What the runtime has done on a [`Gpu`], counted by the runtime itself.
///
/// Tests and benchmarks read it to prove claims such as "a cached run makes
/// no buffer and no bind group" and "a graph is one submission".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuCounters {
    /// `queue.submit` calls.
    pub submissions: u64,
    /// Buffers created (device, staging and readback).
    pub buffers_created: u64,
    /// Bind groups created.
    pub bind_groups_created: u64,
    /// Compute pipelines created.
    pub pipelines_created: u64,
    /// Bytes written from the host to the device.
    pub bytes_uploaded: u64,
    /// Bytes read from the device back to the host.
    pub bytes_read_back: u64,
    /// Bytes of device buffers the runtime has allocated and not yet freed
    /// (launch plans, readback staging, resident handles): flat in a steady
    /// state, back down when plans are evicted or handles dropped.
    pub live_buffer_bytes: u64,
}

impl GpuCounters {
    /// Counts accumulated since `earlier` (saturating).
    #[must_use]
    pub fn since(&self, earlier: &GpuCounters) -> GpuCounters {
        GpuCounters {
            submissions: self.submissions.saturating_sub(earlier.submissions),
            buffers_created: self.buffers_created.saturating_sub(earlier.buffers_created),
            bind_groups_created: self
                .bind_groups_created
                .saturating_sub(earlier.bind_groups_created),
            pipelines_created: self
                .pipelines_created
                .saturating_sub(earlier.pipelines_created),
            bytes_uploaded: self.bytes_uploaded.saturating_sub(earlier.bytes_uploaded),
            bytes_read_back: self.bytes_read_back.saturating_sub(earlier.bytes_read_back),
            // A level, not a count: the later snapshot's.
            live_buffer_bytes: self.live_buffer_bytes,
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    submissions: AtomicU64,
    buffers_created: AtomicU64,
    bind_groups_created: AtomicU64,
    pipelines_created: AtomicU64,
    bytes_uploaded: AtomicU64,
    bytes_read_back: AtomicU64,
    bytes_allocated: AtomicU64,
    bytes_freed: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> GpuCounters {
        GpuCounters {
            submissions: self.submissions.load(Ordering::Relaxed),
            buffers_created: self.buffers_created.load(Ordering::Relaxed),
            bind_groups_created: self.bind_groups_created.load(Ordering::Relaxed),
            pipelines_created: self.pipelines_created.load(Ordering::Relaxed),
            bytes_uploaded: self.bytes_uploaded.load(Ordering::Relaxed),
            bytes_read_back: self.bytes_read_back.load(Ordering::Relaxed),
            live_buffer_bytes: self
                .bytes_allocated
                .load(Ordering::Relaxed)
                .saturating_sub(self.bytes_freed.load(Ordering::Relaxed)),
        }
    }
}

/// Adapter facts worth printing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" or "NVIDIA H200".
    pub name: String,
    /// Vulkan, Metal, Dx12, Gl, …
    pub backend: wgpu::Backend,
    /// Discrete, integrated, CPU, …
    pub device_type: wgpu::DeviceType,
    /// Driver name and version, where the backend tells.
    pub driver: String,
}

impl AdapterSummary {
    fn of(info: &wgpu::AdapterInfo) -> Self {
        AdapterSummary {
            name: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            driver: [info.driver.as_str(), info.driver_info.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}, {:?}",
            self.name, self.backend, self.device_type
        )?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        write!(f, ")")
    }
}

struct GpuInner {
    id: u64,
    adapter: Option<wgpu::Adapter>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    summary: AdapterSummary,
    limits: wgpu::Limits,
    counters: Counters,
    /// Set by [`Gpu::abandon`].
    abandoned: AtomicBool,
    /// The submission of a run that timed out, until it is seen finished.
    pending: Mutex<Option<wgpu::SubmissionIndex>>,
    /// Async runs waiting for their results, and whether the thread that
    /// polls the device for them runs.
    in_flight: AtomicUsize,
    poller_running: Mutex<bool>,
}

/// An async run waiting for the device: while one exists, a native
/// [`Gpu`] polls its device on a background thread so that map callbacks
/// fire without anyone blocking.
pub(crate) struct InFlight {
    gpu: Gpu,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.gpu.inner.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An open GPU: adapter, device and queue, cheap to clone and shareable
/// between threads.
///
/// ```no_run
/// let gpu = vyre_graph::Gpu::new()?;
/// println!("running on {}", gpu.adapter());
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("id", &self.inner.id)
            .field("adapter", &self.inner.summary)
            .finish_non_exhaustive()
    }
}

static NEXT_GPU_ID: AtomicU64 = AtomicU64::new(1);

impl Gpu {
    /// Open the default adapter, blocking.
    ///
    /// # Errors
    /// [`BackendError::NoAdapter`] (with the driver setup step) when there is
    /// no adapter, [`BackendError::DeviceRequestFailed`] when it refuses a
    /// device.
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::new_async(GpuOptions::default()))
    }

    /// Open an adapter with options, blocking.
    ///
    /// # Errors
    /// As [`Gpu::new`].
    pub fn with_options(options: GpuOptions) -> Result<Self> {
        pollster::block_on(Self::new_async(options))
    }

    /// Open an adapter with options.
    ///
    /// # Errors
    /// As [`Gpu::new`].
    pub async fn new_async(options: GpuOptions) -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pick_adapter(&instance, &options).await?;
        let summary = AdapterSummary::of(&adapter.get_info());
        let limits = if options.adapter_limits {
            adapter.limits()
        } else {
            wgpu::Limits::default().using_resolution(adapter.limits())
        };
        let mut features = options
            .features
            .unwrap_or_else(|| adapter.features() & crate::spec::Feature::all_wgpu());
        if options.timestamps {
            features |= adapter.features()
                & (wgpu::Features::TIMESTAMP_QUERY
                    | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                    | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        }
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("vyre"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| BackendError::DeviceRequestFailed {
                adapter: summary.name.clone(),
                reason: e.to_string(),
            })?;
        // Errors the runtime does not capture in a scope must not abort the
        // process (wgpu's default handler panics); they are reported through
        // scopes or mapping results where it matters.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            eprintln!("vyre-graph: uncaptured wgpu error: {e}");
        }));
        Ok(Self::assemble(
            Some(adapter),
            device,
            queue,
            summary,
            limits,
        ))
    }

    /// Adopt an application's device and queue (and, optionally, the adapter
    /// they came from), so that graphs run beside the application's own work:
    /// on its device, with its buffers, in its command encoders.
    ///
    /// Limits and features are read from the device. Nothing of the device
    /// is changed: the application's uncaptured-error handler stays (the
    /// runtime captures the errors of its own work in error scopes), and
    /// `Graph::new` refuses, with an error, a graph that needs more than
    /// the device has. Several `Gpu`s may adopt one device and run side by
    /// side; a resident handle belongs to the `Gpu` that made or imported
    /// it (clone a `Gpu` to share handles: clones are one `Gpu`).
    ///
    /// ```no_run
    /// # async fn app() -> Result<(), Box<dyn std::error::Error>> {
    /// let instance = wgpu::Instance::default();
    /// let adapter = instance.request_adapter(&Default::default()).await?;
    /// let (device, queue) = adapter.request_device(&Default::default()).await?;
    /// // ... the application uses device and queue ...
    /// let gpu = vyre_graph::Gpu::from_wgpu(Some(adapter), device.clone(), queue.clone());
    /// assert!(gpu.device() == &device);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn from_wgpu(
        adapter: Option<wgpu::Adapter>,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Gpu {
        let info = adapter
            .as_ref()
            .map_or_else(|| device.adapter_info(), wgpu::Adapter::get_info);
        let summary = AdapterSummary::of(&info);
        let limits = device.limits();
        Self::assemble(adapter, device, queue, summary, limits)
    }

    fn assemble(
        adapter: Option<wgpu::Adapter>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        summary: AdapterSummary,
        limits: wgpu::Limits,
    ) -> Gpu {
        Gpu {
            inner: Arc::new(GpuInner {
                id: NEXT_GPU_ID.fetch_add(1, Ordering::Relaxed),
                adapter,
                device,
                queue,
                summary,
                limits,
                counters: Counters::default(),
                abandoned: AtomicBool::new(false),
                pending: Mutex::new(None),
                in_flight: AtomicUsize::new(0),
                poller_running: Mutex::new(false),
            }),
        }
    }

    /// The adapter in use.
    #[must_use]
    pub fn adapter(&self) -> &AdapterSummary {
        &self.inner.summary
    }

    /// The limits the device was opened with.
    #[must_use]
    pub fn limits(&self) -> &wgpu::Limits {
        &self.inner.limits
    }

    /// The wgpu adapter, for interop (`None` for a device adopted with
    /// [`Gpu::from_wgpu`] without its adapter).
    #[must_use]
    pub fn wgpu_adapter(&self) -> Option<&wgpu::Adapter> {
        self.inner.adapter.as_ref()
    }

    /// The wgpu device, for interop.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The wgpu queue, for interop.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// Whether timestamp queries were enabled on the device.
    #[must_use]
    pub fn has_timestamps(&self) -> bool {
        self.inner
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// A snapshot of the runtime's counters.
    #[must_use]
    pub fn counters(&self) -> GpuCounters {
        self.inner.counters.snapshot()
    }

    /// A process-unique id of this device, used to reject buffers from
    /// another device.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    // --- counted operations: every buffer, bind group, pipeline, upload,
    // readback and submission of the runtime goes through these.

    pub(crate) fn create_buffer(&self, desc: &wgpu::BufferDescriptor<'_>) -> wgpu::Buffer {
        let counters = &self.inner.counters;
        counters.buffers_created.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes_allocated
            .fetch_add(desc.size, Ordering::Relaxed);
        self.inner.device.create_buffer(desc)
    }

    /// Free a buffer made by [`Gpu::create_buffer`] now (wgpu defers the
    /// release while a submission still uses it).
    /// Count `buffer` as freed without destroying it: wgpu releases it when
    /// the last command buffer that uses it is done.
    pub(crate) fn forget_buffer(&self, buffer: &wgpu::Buffer) {
        self.inner
            .counters
            .bytes_freed
            .fetch_add(buffer.size(), Ordering::Relaxed);
    }

    pub(crate) fn free_buffer(&self, buffer: &wgpu::Buffer) {
        self.inner
            .counters
            .bytes_freed
            .fetch_add(buffer.size(), Ordering::Relaxed);
        buffer.destroy();
    }

    pub(crate) fn create_bind_group(
        &self,
        desc: &wgpu::BindGroupDescriptor<'_>,
    ) -> wgpu::BindGroup {
        self.inner
            .counters
            .bind_groups_created
            .fetch_add(1, Ordering::Relaxed);
        self.inner.device.create_bind_group(desc)
    }

    pub(crate) fn count_pipeline(&self) {
        self.inner
            .counters
            .pipelines_created
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn write_buffer(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
        self.inner
            .counters
            .bytes_uploaded
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        self.inner.queue.write_buffer(buffer, offset, data);
    }

    pub(crate) fn count_read_back(&self, bytes: u64) {
        self.inner
            .counters
            .bytes_read_back
            .fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn submit(&self, command: wgpu::CommandBuffer) -> wgpu::SubmissionIndex {
        self.inner
            .counters
            .submissions
            .fetch_add(1, Ordering::Relaxed);
        self.inner.queue.submit(std::iter::once(command))
    }

    /// Block until `index` (or everything submitted) has finished, or
    /// `timeout` passes ([`BackendError::Timeout`]; the submission is then
    /// remembered, and runs fail fast with [`BackendError::DeviceBusy`]
    /// until it is seen finished).
    pub(crate) fn wait(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        timeout: Option<std::time::Duration>,
    ) -> Result<()> {
        let result = self.inner.device.poll(wgpu::PollType::Wait {
            submission_index: index.clone(),
            timeout,
        });
        match result {
            Ok(_) => Ok(()),
            Err(wgpu::PollError::Timeout) => {
                if let Some(index) = index {
                    *self.pending() = Some(index);
                }
                Err(BackendError::Timeout {
                    timeout: timeout.unwrap_or_default(),
                })
            }
            Err(e) => Err(BackendError::ReadbackFailed {
                reason: e.to_string(),
            }),
        }
    }

    /// Process finished work without blocking (fires ready map callbacks).
    pub(crate) fn poll_once(&self) {
        // A poll error here only means nothing was ready to process.
        drop(self.inner.device.poll(wgpu::PollType::Poll));
    }

    /// Register an async run waiting for the device, starting the poller
    /// thread if it is not running (native backends; in a browser the event
    /// loop delivers the callbacks).
    pub(crate) fn begin_async(&self) -> InFlight {
        self.inner.in_flight.fetch_add(1, Ordering::AcqRel);
        #[cfg(not(target_arch = "wasm32"))]
        self.ensure_poller();
        InFlight { gpu: self.clone() }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn ensure_poller(&self) {
        let mut running = self
            .inner
            .poller_running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *running {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("vyre device poller".into())
            .spawn(move || poll_while_in_flight(&weak));
        // Without a thread the futures still complete whenever they are
        // polled (each poll polls the device once).
        *running = spawned.is_ok();
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Option<wgpu::SubmissionIndex>> {
        // The guarded value is a plain index, valid whatever a panicking
        // holder left: recover from poisoning.
        self.inner
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Fail fast when this device cannot take a run now: it was abandoned,
    /// or a run that timed out is still executing (submitting would block
    /// in the driver until it ends). Called before anything is recorded.
    pub(crate) fn check_ready(&self) -> Result<()> {
        if self.is_abandoned() {
            return Err(BackendError::Abandoned);
        }
        let mut pending = self.pending();
        if let Some(index) = pending.clone() {
            let done = self.inner.device.poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(std::time::Duration::ZERO),
            });
            match done {
                Ok(_) => *pending = None,
                Err(_) => return Err(BackendError::DeviceBusy),
            }
        }
        Ok(())
    }

    /// Give up on this device: it runs nothing more (runs fail with
    /// [`BackendError::Abandoned`]), and dropping it, its graphs and its
    /// handles never waits for the GPU.
    ///
    /// For a device stuck on a runaway kernel: after a
    /// [`BackendError::Timeout`], the kernel may keep running, and wgpu
    /// waits for the device to go idle when the last reference to it is
    /// dropped, which would block the thread (and keep the process from
    /// exiting) until the kernel ends. An abandoned device is never
    /// released: its memory stays allocated until the process exits. Open a
    /// new [`Gpu`] to go on.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use vyre_graph::{BackendError, Gpu};
    /// # fn run(_: &Gpu) -> Result<(), BackendError> { Ok(()) }
    /// let gpu = Gpu::new()?;
    /// if let Err(BackendError::Timeout { .. }) = run(&gpu) {
    ///     gpu.abandon();
    ///     drop(gpu); // returns at once
    /// }
    /// # Ok::<(), BackendError>(())
    /// ```
    pub fn abandon(&self) {
        if !self.inner.abandoned.swap(true, Ordering::AcqRel) {
            // One reference of each that is never dropped: the device is
            // never destroyed, so nothing waits for it to go idle.
            std::mem::forget(self.inner.device.clone());
            std::mem::forget(self.inner.queue.clone());
        }
    }

    /// Whether [`Gpu::abandon`] was called.
    #[must_use]
    pub fn is_abandoned(&self) -> bool {
        self.inner.abandoned.load(Ordering::Acquire)
    }
}

/// The poller thread: polls the device while async runs wait, and exits
/// after it has been idle a while (a thread per burst of runs, not per run:
/// spawning one costs more than a fast GPU takes for a small run). It holds
/// the device only weakly, so it never keeps a dropped `Gpu` alive.
#[cfg(not(target_arch = "wasm32"))]
fn poll_while_in_flight(weak: &std::sync::Weak<GpuInner>) {
    const LINGER: std::time::Duration = std::time::Duration::from_millis(50);
    let mut idle_since: Option<std::time::Instant> = None;
    loop {
        let Some(inner) = weak.upgrade() else { return };
        if inner.in_flight.load(Ordering::Acquire) == 0 {
            let since = *idle_since.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() >= LINGER {
                let mut running = inner
                    .poller_running
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if inner.in_flight.load(Ordering::Acquire) == 0 {
                    *running = false;
                    return;
                }
            }
            drop(inner);
            std::thread::sleep(std::time::Duration::from_micros(500));
            continue;
        }
        idle_since = None;
        let status = inner.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(std::time::Duration::from_millis(2)),
        });
        drop(inner);
        if matches!(status, Ok(wgpu::PollStatus::QueueEmpty)) {
            // Nothing on the GPU: the futures are about to see their
            // results; do not spin.
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

/// Choose an adapter: `WGPU_ADAPTER_NAME` first (an error, not a panic, when
/// nothing matches), else the power preference from `WGPU_POWER_PREF` or the
/// options.
async fn pick_adapter(instance: &wgpu::Instance, options: &GpuOptions) -> Result<wgpu::Adapter> {
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let wanted = wanted.to_lowercase();
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
            .ok_or_else(|| BackendError::NoAdapter {
                reason: format!(
                    "WGPU_ADAPTER_NAME={wanted:?} matches none of the adapters found: [{}]",
                    names.join(", ")
                ),
            });
    }
    let power_preference = wgpu::PowerPreference::from_env().unwrap_or(options.power_preference);
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference,
            force_fallback_adapter: false,
            compatible_surface: None,
            apply_limit_buckets: false,
        })
        .await
        .map_err(|e| BackendError::NoAdapter {
            reason: e.to_string(),
        })
}

/// Error scopes that catch every kind of device error raised on this thread
/// between [`Gpu::catch_errors`] and [`CaughtErrors::pop`]: validation,
/// internal (a backend that refuses a valid pipeline, e.g. OpenGL's one
/// sampler per texture) and out-of-memory. With validation alone, the
/// others would reach the device's uncaptured-error handler while the call
/// that caused them returned `Ok`.
///
/// Scopes must be popped innermost first, also when a `?` drops them
/// unpopped: fields drop in declaration order, so the innermost scope
/// (pushed last) is declared first.
pub(crate) struct CaughtErrors {
    validation: wgpu::ErrorScopeGuard,
    internal: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
}

impl Gpu {
    /// Start catching every device error of this thread (see
    /// [`CaughtErrors`]).
    pub(crate) fn catch_errors(&self) -> CaughtErrors {
        let device = self.device();
        // Pushed outermost first (a struct literal evaluates in the order
        // written).
        CaughtErrors {
            memory: device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            internal: device.push_error_scope(wgpu::ErrorFilter::Internal),
            validation: device.push_error_scope(wgpu::ErrorFilter::Validation),
        }
    }
}

impl CaughtErrors {
    /// Stop catching (the scopes are popped now, on this thread, innermost
    /// first) and resolve to the first error caught, if any.
    pub(crate) fn pop(self) -> impl std::future::Future<Output = Option<wgpu::Error>> {
        let validation = self.validation.pop();
        let internal = self.internal.pop();
        let memory = self.memory.pop();
        async move {
            let validation = validation.await;
            let internal = internal.await;
            let memory = memory.await;
            validation.or(internal).or(memory)
        }
    }

    /// [`CaughtErrors::pop`], waiting for the result on this thread.
    pub(crate) fn pop_now(self) -> Option<wgpu::Error> {
        pollster::block_on(self.pop())
    }
}
