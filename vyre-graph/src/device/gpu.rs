//! [`Gpu`]: adapter and device acquisition, limits, the runtime's own
//! counters of submissions, allocations and transfers (`counters.rs`) and
//! the pool of its transfers (`transfer.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::adapter::{instance_descriptor, pick_adapter};
use super::counters::{Counters, GpuCounters};
use super::poller::{PollResult, Polled, PollerState};
use super::scopes::CaughtErrors;
use super::transfer::{Copier, TransferPool};
use crate::spec::error::{BackendError, Result};
use crate::spec::transfer::TransferOptions;

mod hooks;
mod open;

/// How to open a [`Gpu`].
///
/// Natively, the environment variables `WGPU_BACKEND` (e.g. `vulkan`,
/// `gl`), `WGPU_ADAPTER_NAME` (a case-insensitive substring of the
/// adapter's name) and `WGPU_POWER_PREF` (`low` or `high`) are honoured on
/// top of these options. In a browser (wasm32) there is no environment:
/// the backend is WebGPU and the browser picks the adapter.
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
    /// How runs move data in and out by default (a run's
    /// [`DispatchConfig::transfer`](crate::DispatchConfig::transfer)
    /// overrides it); its [`threads`](TransferOptions::threads) also sizes
    /// the device's transfer pool. `None` (the default) takes
    /// [`TransferOptions::for_adapter`] of the adapter opened;
    /// `with_transfer(TransferOptions::default().with_threads(0))` copies on
    /// the calling thread only, with no pool.
    pub transfer: Option<TransferOptions>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            adapter_limits: true,
            timestamps: true,
            power_preference: wgpu::PowerPreference::HighPerformance,
            features: None,
            transfer: None,
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

    /// Move data in and out as `transfer` says (see [`TransferOptions`]).
    ///
    /// ```
    /// use vyre_graph::{GpuOptions, TransferOptions};
    /// // An application with its own thread pool: copy on the calling thread.
    /// let options = GpuOptions::default().with_transfer(TransferOptions::default().with_threads(0));
    /// assert_eq!(options.transfer.map(|t| t.threads), Some(0));
    /// ```
    #[must_use]
    pub fn with_transfer(mut self, transfer: TransferOptions) -> Self {
        self.transfer = Some(transfer);
        self
    }
}

/// Adapter facts worth printing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" or "NVIDIA H200"; in a
    /// browser, what it tells of its adapter (`GPUAdapterInfo`'s vendor,
    /// architecture, device and description, those it gives: "google
    /// swiftshader" in headless Chromium), empty only when it tells nothing.
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
    /// Why the device was lost, once it was (set by the device-lost
    /// callback of a device that `Gpu::new_async` opened).
    lost: Arc<Mutex<Option<String>>>,
    /// The submission of a run that timed out, until it is seen finished.
    pending: Mutex<Option<wgpu::SubmissionIndex>>,
    /// The thread that polls the device while async runs wait
    /// (`poller.rs`).
    poller: PollerState,
    /// How runs move data by default, and the pool that splits large
    /// copies (`transfer.rs`).
    transfer: TransferOptions,
    pool: TransferPool,
    /// Shader-module creations still to panic inside their catch, for
    /// vyre's own tests ([`Gpu::inject_backend_panics`]).
    backend_panics: AtomicUsize,
    /// Whether popped scopes answer later, as in a browser, for vyre's own
    /// tests ([`Gpu::defer_scope_errors`]).
    defer_scopes: AtomicBool,
    /// Submissions still to go before the device is destroyed as lost (0:
    /// never), for vyre's own tests ([`Gpu::inject_device_loss`]).
    lose_after: AtomicUsize,
}

impl Polled for GpuInner {
    fn device(&self) -> &wgpu::Device {
        &self.device
    }

    fn poller(&self) -> &PollerState {
        &self.poller
    }
}

/// An async run waiting for the device: while one exists, a native
/// [`Gpu`] polls its device on a background thread so that map callbacks
/// fire without anyone blocking.
pub(crate) struct InFlight {
    gpu: Gpu,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.gpu.inner.poller.end();
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

/// Why a device was lost, as [`BackendError::DeviceLost`] says it.
fn lost_reason(reason: wgpu::DeviceLostReason, message: &str) -> String {
    match (reason, message.trim()) {
        (wgpu::DeviceLostReason::Destroyed, "") => "destroyed: `destroy()` was called on it".into(),
        (wgpu::DeviceLostReason::Destroyed, m) => format!("destroyed: {m}"),
        (_, "") => "lost for a reason the driver did not give".into(),
        (_, m) => m.to_string(),
    }
}

impl Gpu {
    /// Open the default adapter, blocking.
    ///
    /// Not on wasm32: use [`Gpu::new_async`].
    ///
    /// # Errors
    /// [`BackendError::NoAdapter`] (with the driver setup step) when there is
    /// no adapter, [`BackendError::DeviceRequestFailed`] when it refuses a
    /// device.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::new_async(GpuOptions::default()))
    }

    /// Open an adapter with options, blocking.
    ///
    /// Not on wasm32: use [`Gpu::new_async`].
    ///
    /// # Errors
    /// As [`Gpu::new`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn with_options(options: GpuOptions) -> Result<Self> {
        pollster::block_on(Self::new_async(options))
    }

    /// Open an adapter with options: the way to open a [`Gpu`] in a
    /// browser (wasm32, WebGPU), and natively the future [`Gpu::new`]
    /// blocks on.
    ///
    /// ```no_run
    /// # async fn open() -> Result<(), vyre_graph::BackendError> {
    /// use vyre_graph::{Gpu, GpuOptions};
    /// let gpu = Gpu::new_async(GpuOptions::default()).await?;
    /// println!("running on {}", gpu.adapter());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`BackendError::NoAdapter`] when there is no adapter (natively with
    /// the driver setup step; in a browser, WebGPU is unavailable there,
    /// and the message says how to enable it),
    /// [`BackendError::DeviceRequestFailed`] when it refuses a device.
    pub async fn new_async(options: GpuOptions) -> Result<Self> {
        let instance = wgpu::Instance::new(instance_descriptor());
        let adapter = pick_adapter(&instance, options.power_preference).await?;
        Self::open_adapter(adapter, &options).await
    }

    /// Request a device of `adapter` and assemble the `Gpu`.
    async fn request(
        adapter: wgpu::Adapter,
        features: wgpu::Features,
        limits: wgpu::Limits,
        transfer: Option<TransferOptions>,
    ) -> Result<Self> {
        let mut summary = AdapterSummary::of(&adapter.get_info());
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
        summary.name = super::adapter::adapter_name(&device, summary.name);
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            eprintln!("vyre-graph: uncaptured wgpu error: {e}");
        }));
        let gpu = Self::assemble(Some(adapter), device, queue, summary, limits, transfer);
        // A lost device (a browser that reclaimed it, a driver reset) fails
        // the next run with `DeviceLost`, saying so, instead of a puzzling
        // validation error. Only on devices vyre opened: an adopted device's
        // callback is the application's. A destroyed device (`destroy()`,
        // which a browser's page may call on it too) is lost as well.
        let lost = Arc::clone(&gpu.inner.lost);
        gpu.inner
            .device
            .set_device_lost_callback(move |reason, message| {
                *lost.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(lost_reason(reason, &message));
            });
        Ok(gpu)
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
        Self::from_wgpu_with_transfer(adapter, device, queue, None)
    }

    /// As [`Gpu::from_wgpu`], moving data in and out as `transfer` says
    /// (e.g. `Some(TransferOptions::default().with_threads(0))` for an
    /// application that keeps its threads to itself: every copy on the
    /// calling thread; `None`: [`TransferOptions::for_adapter`]).
    #[must_use]
    pub fn from_wgpu_with_transfer(
        adapter: Option<wgpu::Adapter>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        transfer: Option<TransferOptions>,
    ) -> Gpu {
        let info = adapter
            .as_ref()
            .map_or_else(|| device.adapter_info(), wgpu::Adapter::get_info);
        let mut summary = AdapterSummary::of(&info);
        summary.name = super::adapter::adapter_name(&device, summary.name);
        let limits = device.limits();
        Self::assemble(adapter, device, queue, summary, limits, transfer)
    }

    fn assemble(
        adapter: Option<wgpu::Adapter>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        summary: AdapterSummary,
        limits: wgpu::Limits,
        transfer: Option<TransferOptions>,
    ) -> Gpu {
        let transfer =
            transfer.unwrap_or_else(|| TransferOptions::for_adapter(summary.device_type));
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
                lost: Arc::new(Mutex::new(None)),
                pending: Mutex::new(None),
                poller: PollerState::default(),
                pool: TransferPool::new(transfer.threads),
                transfer,
                backend_panics: AtomicUsize::new(0),
                defer_scopes: AtomicBool::new(false),
                lose_after: AtomicUsize::new(0),
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
        self.inner
            .counters
            .snapshot(&self.inner.poller, &self.inner.pool)
    }

    /// How runs move data in and out unless their
    /// [`DispatchConfig::transfer`](crate::DispatchConfig::transfer) says
    /// otherwise (see [`GpuOptions::transfer`]).
    #[must_use]
    pub fn transfer_options(&self) -> TransferOptions {
        self.inner.transfer
    }

    /// The copier of a run with `options` (the device's own when `None`).
    pub(crate) fn copier(&self, options: Option<TransferOptions>) -> Copier<'_> {
        Copier {
            pool: &self.inner.pool,
            options: options.unwrap_or(self.inner.transfer),
        }
    }

    pub(crate) fn count_staged(&self, staged: bool) {
        self.inner.counters.count_staged(staged);
    }

    pub(crate) fn count_read_by_count(&self) {
        self.inner.counters.count_read_by_count();
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

    /// Count `bytes` uploaded other than through [`Gpu::write_buffer`].
    pub(crate) fn count_uploaded(&self, bytes: u64) {
        self.inner
            .counters
            .bytes_uploaded
            .fetch_add(bytes, Ordering::Relaxed);
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
        let index = self.inner.queue.submit(std::iter::once(command));
        self.lose_if_due();
        index
    }

    /// Block until `index` (or everything submitted) has finished, or
    /// `timeout` passes ([`BackendError::Timeout`]; the submission is then
    /// remembered, and runs fail fast with [`BackendError::DeviceBusy`]
    /// until it is seen finished).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        timeout: Option<std::time::Duration>,
    ) -> Result<()> {
        let result = self.poll_caught(wgpu::PollType::Wait {
            submission_index: index.clone(),
            timeout,
        });
        match result {
            Some(Ok(_)) => Ok(()),
            Some(Err(wgpu::PollError::Timeout)) => {
                if let Some(index) = index {
                    *self.pending() = Some(index);
                }
                Err(BackendError::Timeout {
                    timeout: timeout.unwrap_or_default(),
                })
            }
            Some(Err(e)) => {
                // A destroyed device's submissions fail; wgpu reports the
                // loss (the callback `new_async` set) on the next poll.
                self.poll_once();
                Err(match self.lost() {
                    Some(reason) => BackendError::DeviceLost { reason },
                    None => BackendError::ReadbackFailed {
                        reason: e.to_string(),
                    },
                })
            }
            None => Err(BackendError::ReadbackFailed {
                reason: format!(
                    "wgpu panicked in each of {} polls of the device while this run waited",
                    super::poller::POLL_ATTEMPTS
                ),
            }),
        }
    }

    /// Process finished work without blocking (fires ready map callbacks).
    pub(crate) fn poll_once(&self) {
        // A poll error here only means nothing was ready to process.
        let _ = self.poll_caught(wgpu::PollType::Poll);
    }

    /// `device.poll`, a panic inside wgpu caught and the poll repeated
    /// (see `poller.rs`); `None` when it kept panicking.
    fn poll_caught(&self, poll: wgpu::PollType) -> Option<PollResult> {
        self.inner.poller.poll_caught(&self.inner.device, poll)
    }

    /// Register an async run waiting for the device, starting the poller
    /// thread if it is not running (native backends; in a browser the event
    /// loop delivers the callbacks).
    pub(crate) fn begin_async(&self) -> InFlight {
        self.inner.poller.begin();
        super::poller::ensure_poller(&self.inner);
        InFlight { gpu: self.clone() }
    }

    /// Whether a poller thread polls the device (one is started when none
    /// does). `false` means the caller must poll the device itself: the
    /// system refused a thread, or a browser's event loop delivers the
    /// callbacks.
    pub(crate) fn poller_alive(&self) -> bool {
        super::poller::ensure_poller(&self.inner)
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
        if let Some(reason) = self.lost() {
            return Err(BackendError::DeviceLost { reason });
        }
        let mut pending = self.pending();
        if let Some(index) = pending.clone() {
            let done = self.poll_caught(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(std::time::Duration::ZERO),
            });
            match done {
                Some(Ok(_)) => *pending = None,
                Some(Err(_)) | None => return Err(BackendError::DeviceBusy),
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

    /// Why the device was lost, when it was (`None` while it works, and
    /// for a device adopted with [`Gpu::from_wgpu`], whose loss the
    /// application hears of).
    pub(crate) fn lost(&self) -> Option<String> {
        self.inner
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether [`Gpu::abandon`] was called.
    #[must_use]
    pub fn is_abandoned(&self) -> bool {
        self.inner.abandoned.load(Ordering::Acquire)
    }
}

impl Gpu {
    /// How many workgroups of `workgroup_size_x` invocations a grid-stride
    /// launch uses on this adapter under [`GridStride::Auto`](crate::GridStride::Auto): enough to keep
    /// every core busy. On a CPU device (lavapipe runs each workgroup on one
    /// thread) 4 per hardware thread, so that uneven threads even out; on a
    /// GPU 2^18 invocations (a large GPU holds about 2,048 resident per
    /// compute unit, 132 units on an H200: 270,336). At most 65,535.
    #[must_use]
    pub fn grid_stride_workgroups(&self, workgroup_size_x: u32) -> u32 {
        let max = self.limits().max_compute_workgroups_per_dimension.max(1);
        let count = match self.adapter().device_type {
            wgpu::DeviceType::Cpu => {
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
                u32::try_from(threads.saturating_mul(4)).unwrap_or(u32::MAX)
            }
            _ => (1u32 << 18) / workgroup_size_x.max(1),
        };
        count.clamp(1, max)
    }
}

impl Gpu {
    /// Start catching every device error of this thread (see
    /// [`CaughtErrors`]).
    pub(crate) fn catch_errors(&self) -> CaughtErrors {
        let defer = self.inner.defer_scopes.load(Ordering::Acquire);
        CaughtErrors::push(self.device(), defer)
    }
}
