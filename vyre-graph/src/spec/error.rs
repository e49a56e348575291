//! [`BackendError`]: everything that can go wrong, each message ending with
//! what to do about it.

/// The setup step printed when no adapter is found.
#[cfg(not(target_arch = "wasm32"))]
pub const DRIVER_SETUP_HINT: &str = "on a machine without a GPU, install a software Vulkan driver \
(`apt-get install -y --no-install-recommends mesa-vulkan-drivers libvulkan1`) \
and set XDG_RUNTIME_DIR to a 0700 folder; WGPU_BACKEND, WGPU_ADAPTER_NAME and WGPU_POWER_PREF \
choose among several adapters";
/// The step that makes an adapter available, printed when none is found:
/// in a browser, WebGPU itself.
#[cfg(target_arch = "wasm32")]
pub const DRIVER_SETUP_HINT: &str = "WebGPU is unavailable in this browser: use one that has it \
(Chrome or Edge 113+, Firefox 141+ on Windows, Safari 26) on a page served over https or from \
localhost; Chromium on Linux and headless Chromium need `--enable-unsafe-webgpu` (with \
`--headless=new` when headless), and a browser may block WebGPU on a GPU it distrusts \
(see chrome://gpu)";

/// An error from the GPU runtime.
///
/// Every message says what went wrong and how to fix it. Nothing is
/// submitted to the GPU when a run fails validation: errors about inputs,
/// sizes and limits are raised before anything is encoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// No adapter matched the request.
    #[error("no GPU adapter found ({reason}); {hint}", hint = DRIVER_SETUP_HINT)]
    NoAdapter {
        /// What wgpu said, or which filter matched nothing.
        reason: String,
    },
    /// The adapter refused to open a device.
    #[error(
        "the adapter `{adapter}` could not open a device: {reason}; ask for fewer limits or features, or pick another adapter with WGPU_ADAPTER_NAME"
    )]
    DeviceRequestFailed {
        /// The adapter's name.
        adapter: String,
        /// What wgpu said.
        reason: String,
    },
    /// A kernel did not compile.
    #[error(
        "kernel `{kernel}` failed to compile:\n{message}\nfix the WGSL, or the binding description when it disagrees with the WGSL (graph! checks both at compile time; hand-built kernels are only checked here)"
    )]
    KernelCompileFailed {
        /// The kernel's label.
        kernel: String,
        /// naga's or wgpu's message.
        message: String,
    },
    /// wgpu or naga panicked while turning a kernel into a shader module or
    /// a pipeline for this adapter (naga 30's SPIR-V writer does on some
    /// WGSL its own validator accepts, e.g. a pointer into an array element
    /// passed to a function: "Expression \[N\] is not cached"). The panic was
    /// caught: nothing of the graph was built, and the `Gpu` stays usable
    /// for other graphs.
    #[error(
        "the shader backend panicked while {stage} of kernel `{kernel}` (entry point `{entry_point}`): {message}\nthe kernel passed naga's validation, so this is a bug in naga's or wgpu's backend for this adapter, not a mistake in the WGSL; rewrite the expression the message points at (e.g. copy into a local variable and pass a pointer to the whole variable instead of to an element or field), or try another backend with WGPU_BACKEND, and report the kernel to https://github.com/gfx-rs/wgpu/issues; the Gpu stays usable"
    )]
    BackendPanicked {
        /// The kernel's label.
        kernel: String,
        /// The entry point being compiled.
        entry_point: String,
        /// What was being made: "creating the shader module" or "creating
        /// the compute pipeline".
        stage: String,
        /// The panic's message.
        message: String,
    },
    /// The graph description is inconsistent.
    #[error("invalid graph `{graph}`: {reason}")]
    InvalidProgram {
        /// The graph's name.
        graph: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// One instance of a batch ([`Graph::run_batch`](crate::Graph::run_batch),
    /// [`Graph::run_many`](crate::Graph::run_many)) failed: `source` says
    /// why. Checks of a batch name the first instance that fails them
    /// before anything of the batch runs.
    #[error(
        "instance {index} of the batch: {source}; fix that instance (its problem size, feeds or sinks) and run the batch again"
    )]
    BatchInstance {
        /// Its position in the batch, from 0.
        index: usize,
        /// What went wrong with it.
        source: Box<BackendError>,
    },
    /// A node's bindings do not match its kernel.
    #[error("node `{node}` does not match kernel `{kernel}`: {reason}")]
    BindingMismatch {
        /// The node's label.
        node: String,
        /// The kernel's label.
        kernel: String,
        /// The binding that is unknown, missing or of the wrong kind.
        reason: String,
    },
    /// The run's inputs are not the graph's inputs.
    #[error(
        "graph `{graph}` takes {expected} host inputs ({names}) but the run gave {given}; pass them in declaration order"
    )]
    InputCountMismatch {
        /// The graph's name.
        graph: String,
        /// Inputs the graph declares.
        expected: usize,
        /// Inputs the run passed.
        given: usize,
        /// Their names.
        names: String,
    },
    /// The run's output sinks are not the graph's outputs.
    #[error(
        "graph `{graph}` has {expected} outputs ({names}) but the run gave {given} sinks; pass one `Sink` per output, in declaration order (`Sink::Skip` for outputs you do not need)"
    )]
    OutputCountMismatch {
        /// The graph's name.
        graph: String,
        /// Outputs the graph declares.
        expected: usize,
        /// Sinks the run passed.
        given: usize,
        /// Their names.
        names: String,
    },
    /// A host input's byte length is not a whole number of elements.
    #[error(
        "input `{buffer}` is {len} bytes, not a multiple of its {element_size}-byte element; pass whole elements"
    )]
    MisalignedInput {
        /// The buffer's name.
        buffer: String,
        /// Bytes given.
        len: u64,
        /// Bytes per element.
        element_size: u32,
    },
    /// An input or output does not have the length the plan needs.
    #[error(
        "`{buffer}` must hold {expected} bytes for problem size {n} but has {actual}; size it as the graph declares"
    )]
    LengthMismatch {
        /// The buffer's name.
        buffer: String,
        /// Problem size of the run.
        n: u64,
        /// Bytes the plan needs.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// A host input or output of a texture has the wrong number of texels,
    /// or a run passed a resident buffer where a texture goes.
    #[error(
        "texture `{texture}` is {extent} ({format}) at problem size {n}, but the run {given}; pass exactly that many texels, tightly packed: x fastest, then y, then layer or z (no row padding)"
    )]
    TextureMismatch {
        /// The texture's name.
        texture: String,
        /// Problem size of the run.
        n: u64,
        /// Its extent at `n` (`10 x 5 texels`, `16 x 16 texels x 6 layers`).
        extent: String,
        /// Its format.
        format: &'static str,
        /// What the run gave instead.
        given: String,
    },
    /// A texture would be larger than a device limit allows, in the
    /// limit's own unit (texels per side, or layers).
    #[error(
        "texture `{texture}` is {extent}, but the device's `{limit}` is {max} {unit}; use a smaller problem size or split the texture into tiles (a Gpu opened with `GpuOptions::with_default_limits` has WebGPU's default limits, lower than the adapter's own)"
    )]
    TextureTooLarge {
        /// The texture's name.
        texture: String,
        /// Its extent at the run's problem size (`20000 x 3 texels`).
        extent: String,
        /// The `wgpu::Limits` field that applies
        /// (`max_texture_dimension_2d`, `max_texture_array_layers`, ...).
        limit: &'static str,
        /// The limit's value.
        max: u64,
        /// The limit's unit (`texels per side`, `texels`, `layers`).
        unit: &'static str,
    },
    /// A texture the device's backend would mishandle without an error
    /// (wgpu's OpenGL backend: 1D textures, 3D storage bindings, 2D arrays
    /// of one layer or of a cube's shape), refused before it runs.
    #[error("texture `{texture}` cannot run on this device: {reason}")]
    UnsupportedTexture {
        /// The texture's name.
        texture: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A kernel binds a texture format in a way the device does not allow,
    /// though it has every feature the graph declares (the adapter-specific
    /// format features are the adapter's own). Checked by
    /// [`Graph::new`](crate::Graph::new) before anything is created.
    #[error(
        "kernel `{kernel}` binds `{binding}` as a {format} storage texture with `{access}` access, which this adapter does not allow ({reason}); use a WebGPU core storage format (rgba8unorm, rgba8snorm, rgba8uint, rgba8sint, rgba16uint, rgba16sint, rgba16float, r32uint, r32sint, r32float, rg32uint, rg32sint, rg32float, rgba32uint, rgba32sint, rgba32float; `read_write` only r32uint, r32sint, r32float), or pick another adapter with WGPU_ADAPTER_NAME"
    )]
    UnsupportedTextureFormat {
        /// The kernel's label.
        kernel: String,
        /// The WGSL binding's name.
        binding: String,
        /// The format.
        format: &'static str,
        /// `read`, `write` or `read_write`.
        access: &'static str,
        /// What the adapter allows for the format.
        reason: String,
    },
    /// A buffer would be larger than a device limit allows.
    #[error(
        "`{buffer}` needs {bytes} bytes but {limit} is {max} bytes; split the problem into smaller runs (a Gpu opened with `GpuOptions::with_default_limits` has lower limits than the adapter's own)"
    )]
    BufferTooLarge {
        /// The buffer's name.
        buffer: String,
        /// Bytes requested.
        bytes: u64,
        /// The limit that applies, as the device names it (e.g. "the
        /// device's `max_storage_buffer_binding_size`" for a bound buffer).
        limit: &'static str,
        /// The limit's value.
        max: u64,
    },
    /// The problem size is zero or cannot be inferred.
    #[error("{reason}")]
    InvalidProblemSize {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A grid needs more workgroups than three folded dimensions allow.
    #[error(
        "node `{node}` needs a grid of {workgroups} workgroups, which does not fit {max} workgroups per dimension (invocation counts are folded into x, y and z); split the problem or use a larger workgroup size"
    )]
    GridTooLarge {
        /// The node's label.
        node: String,
        /// Workgroups required.
        workgroups: u64,
        /// `max_compute_workgroups_per_dimension`.
        max: u32,
    },
    /// An append buffer received more items than its capacity: the items
    /// past it were dropped by the kernels' bounds check.
    #[error(
        "append buffer `{buffer}` overflowed: kernels appended {count} items but its capacity is {capacity}; {fix}",
        fix = overflow_fix(buffer, *count, *limit)
    )]
    AppendOverflow {
        /// The buffer's name.
        buffer: String,
        /// Items appended (the count on the device after the run).
        count: u64,
        /// Items it holds at this problem size.
        capacity: u64,
        /// For a buffer declared `grow` that cannot grow to hold `count`:
        /// the limit that stops it, as the device names it (e.g. "the
        /// device's `max_storage_buffer_binding_size`"), and its value in
        /// bytes. Its capacity stays as it was. `None` for any other
        /// overflow.
        limit: Option<(&'static str, u64)>,
    },
    /// A node's `over` size needs more workgroups than one grid dimension
    /// holds, and its kernel may index with `global_invocation_id.x` alone
    /// ([`GridFold::XOnly`](crate::spec::GridFold::XOnly)), so a folded grid
    /// would skip elements.
    #[error(
        "node `{node}` needs {workgroups} workgroups, more than the {max} one grid dimension holds, and kernel `{kernel}` may index with `global_invocation_id.x` alone, so a folded grid would skip elements; compute the index from every dimension (`g.x + g.y * nwg.x * WORKGROUP_SIZE_X` with `@builtin(num_workgroups) nwg`) and mark the kernel `GridFold::Linear`, or declare it in graph!, which wraps its entry point"
    )]
    GridNotFoldable {
        /// The node's label.
        node: String,
        /// The kernel's label.
        kernel: String,
        /// Workgroups required.
        workgroups: u64,
        /// `max_compute_workgroups_per_dimension`.
        max: u32,
    },
    /// The plan needs more device memory than the budget allows.
    #[error(
        "the launch needs {requested} bytes of device memory but the budget is {available}; raise `device_memory_budget_bytes` or shrink the problem"
    )]
    DeviceOutOfMemory {
        /// Bytes the plan needs.
        requested: u64,
        /// Bytes allowed.
        available: u64,
    },
    /// The readback would exceed `max_output_bytes`.
    #[error(
        "the run would read back {requested} bytes but `max_output_bytes` is {limit}; raise the limit, read fewer outputs (`Sink::Skip`), or keep them resident"
    )]
    OutputTooLarge {
        /// Bytes to read back.
        requested: u64,
        /// The configured cap.
        limit: u64,
    },
    /// A resident buffer ([`GpuBufferHandle`](crate::GpuBufferHandle))
    /// cannot be used here.
    #[error("{}", resident_message(buffer, reason))]
    InvalidHandle {
        /// The graph buffer it was passed for; empty when it was passed for
        /// none (reading it back, importing it).
        buffer: String,
        /// Why, and what to do: naming the handle by its label when it has
        /// one (or as an imported buffer) and, when `buffer` is empty, the
        /// call that refused it (e.g. "`GpuBufferHandle::read_as` cannot
        /// use the imported buffer `vertices`: ...").
        reason: String,
    },
    /// A resident texture ([`GpuTextureHandle`](crate::GpuTextureHandle))
    /// cannot be used here: it belongs to another `Gpu`, its format, size
    /// or usages do not fit, or it was passed for a buffer.
    #[error("{}", handle_message("texture", buffer, reason))]
    InvalidTexture {
        /// The graph buffer or texture it was passed for; empty when it was
        /// passed for none (reading it back).
        buffer: String,
        /// Why, and what to do.
        reason: String,
    },
    /// Another process of an MPI job (`vyre-mpi`) failed its share of a
    /// batch, refused it, or did not answer in time: every rank's batch
    /// fails with this error, naming the rank and its own error.
    #[error("rank {rank} of the MPI job failed: {reason}")]
    RankFailed {
        /// The rank whose share failed.
        rank: usize,
        /// Its error, as it reported it (or why it did not report).
        reason: String,
    },
    /// wgpu reported an error while recording or submitting.
    #[error(
        "the device rejected the run: {reason}; check the resident handles passed to it (alive, from this Gpu, not mapped elsewhere); if they are fine, this is a bug in vyre or in a hand-built graph description: please report it with the graph"
    )]
    DispatchFailed {
        /// wgpu's message.
        reason: String,
    },
    /// The device did not finish a run within [`DispatchConfig::timeout`](crate::DispatchConfig::timeout).
    ///
    /// The timeout bounds how long `run` waits for results; it cannot stop a
    /// kernel already on the GPU. The run's launch plan is dropped (the next
    /// run of that size builds a fresh one), so the graph stays usable.
    #[error(
        "the run did not finish within {timeout:?}, so its results were discarded; the graph stays usable, but its kernels may still be running: until they end, later runs on this Gpu fail fast with `DeviceBusy` (submitting would block in the driver). Raise the timeout, shrink the problem, or call `Gpu::abandon` and open a new Gpu"
    )]
    Timeout {
        /// The timeout that expired.
        timeout: std::time::Duration,
    },
    /// The device was lost (in a browser: the page's device was reclaimed,
    /// e.g. after a GPU reset or when the tab was in the background too
    /// long; natively: a driver reset); nothing was submitted.
    #[error(
        "the device was lost ({reason}), so it runs nothing more; open a new Gpu (`Gpu::new_async`) and build the graphs again on it"
    )]
    DeviceLost {
        /// Why, as the device said.
        reason: String,
    },
    /// A run in a browser (wasm32) was given a
    /// [`DispatchConfig::timeout`](crate::DispatchConfig::timeout): a wait
    /// there cannot be bounded by vyre; nothing was submitted.
    #[error(
        "DispatchConfig::timeout is set ({timeout:?}), but in a browser vyre cannot bound a wait (nothing may block the page, and WebGPU has no timeout); run without one (`DispatchConfig::default()` has none) and, to stop waiting, race the run's future against a timer of your own and drop it"
    )]
    TimeoutUnsupported {
        /// The timeout asked for.
        timeout: std::time::Duration,
    },
    /// An earlier run on this [`Gpu`](crate::Gpu) timed out and its work has
    /// not finished yet; nothing was submitted.
    #[error(
        "an earlier run on this Gpu timed out and its kernels are still running, so nothing was submitted (the driver would block until they end); retry later, or call `Gpu::abandon` and open a new Gpu"
    )]
    DeviceBusy,
    /// The [`Gpu`](crate::Gpu) was abandoned with
    /// [`Gpu::abandon`](crate::Gpu::abandon); nothing was submitted.
    #[error("this Gpu was abandoned (`Gpu::abandon`), so it runs nothing more; open a new Gpu")]
    Abandoned,
    /// [`RecordedRun::read`](crate::RecordedRun::read) got a host slice for
    /// an output that [`Graph::record`](crate::Graph::record) did not record
    /// as a host sink, so there is nothing to read back into it.
    #[error(
        "output `{buffer}` was recorded without a host sink, so `read` has nothing to copy into its slice; pass `read` the same sinks as `record`"
    )]
    SinkMismatch {
        /// The output.
        buffer: String,
    },
    /// A vector given to receive an output ([`Sink::Vector`](crate::Sink::Vector))
    /// cannot hold it: its element type does not divide the output's
    /// elements, or its header type is larger than the output's header.
    #[error("output `{buffer}` cannot be read into the vector given: {reason}")]
    SinkTypeMismatch {
        /// The output.
        buffer: String,
        /// What does not fit, and how to fix it.
        reason: String,
    },
    /// [`RecordedRun::read`](crate::RecordedRun::read) or
    /// [`RecordedRun::read_async`](crate::RecordedRun::read_async) found
    /// that the commands [`Graph::record`](crate::Graph::record) recorded
    /// never ran: the caller's encoder was dropped, or only other work was
    /// submitted. The outputs hold nothing of this run; its launch plan is
    /// dropped (the encoder, should it still be submitted, writes only
    /// there), and the graph runs again as usual.
    #[error(
        "the commands recorded by `Graph::record` never executed: the encoder they were recorded into was not submitted before the read (it was dropped, or only other work was submitted), so there are no results; record the run again, submit that encoder (`queue.submit([encoder.finish()])`), then read"
    )]
    NotSubmitted,
    /// A kernel needs more of a device limit than the device has.
    #[error(
        "kernel `{kernel}` needs {limit} = {needed} but the device allows {available}; open the device with higher limits (`Gpu::new` asks for the adapter's own; an application device adopted with `Gpu::from_wgpu` keeps the limits it was created with), or change the kernel"
    )]
    LimitExceeded {
        /// The kernel's label.
        kernel: String,
        /// The wgpu limit, by its `wgpu::Limits` field name.
        limit: &'static str,
        /// What the kernel needs.
        needed: u64,
        /// What the device allows.
        available: u64,
    },
    /// A graph's kernels need a device feature (declared in `graph!` with
    /// `features [...]`) that the device was not opened with. Checked by
    /// [`Graph::new`](crate::Graph::new) before anything is created.
    #[error(
        "graph `{graph}` needs the device feature `{feature}` (wgpu::Features::{wgpu}) but the device was opened without it; open the Gpu with `Gpu::new()` (which requests every vyre feature the adapter has) or add it with `GpuOptions::with_features`; an application device adopted with `Gpu::from_wgpu` must be requested with it (an adapter without it cannot run this graph: pick another with WGPU_ADAPTER_NAME)"
    )]
    UnsupportedFeature {
        /// The graph's name.
        graph: String,
        /// The feature's name in `graph!`'s `features [...]`.
        feature: &'static str,
        /// The wgpu feature's name (`SHADER_INT64`).
        wgpu: &'static str,
    },
    /// A device set ([`Gpus`](crate::Gpus), [`GraphSet`](crate::GraphSet))
    /// cannot be made or used as asked.
    #[error("invalid device set: {reason}")]
    InvalidDeviceSet {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Something failed on one device of a device set: `source` says what.
    #[error("device {device} of the set ({adapter}): {source}")]
    OnDevice {
        /// Its index in the set.
        device: usize,
        /// Its adapter.
        adapter: String,
        /// What went wrong there.
        source: Box<BackendError>,
    },
    /// Every device of a device set ([`GraphSet`](crate::GraphSet)) failed
    /// or was left out, so instances of a batch had no device left to run
    /// on. Instances that had run keep their outputs; the others wrote
    /// nothing.
    #[error(
        "no device of the set can run the batch ({unfinished} instances did not run): {}; fix what each device's error says and call `GraphSet::retry` (or `retry_all`) to bring the devices back, or open a new device set",
        devices.join("; ")
    )]
    AllDevicesFailed {
        /// Instances of the batch that did not run.
        unfinished: usize,
        /// Each device's error: `device I (ADAPTER): MESSAGE`, in the set's
        /// order.
        devices: Vec<String>,
    },
    /// Mapping a readback buffer failed.
    #[error(
        "reading results back failed: {reason}; the device may have been lost (driver reset): open a new Gpu"
    )]
    ReadbackFailed {
        /// wgpu's message.
        reason: String,
    },
    /// Host memory for an output could not be allocated.
    #[error(
        "could not allocate {bytes} bytes of host memory for output `{buffer}`; shrink the problem, or keep the output resident (`run_resident`)"
    )]
    HostAllocationFailed {
        /// The output.
        buffer: String,
        /// The bytes asked for.
        bytes: u64,
    },
}

/// The message of a resident handle of `kind` ("resident buffer",
/// "texture") that cannot be used for graph resource `name` (none when
/// empty).
fn handle_message(kind: &str, name: &str, reason: &str) -> String {
    if name.is_empty() {
        format!("the {kind} cannot be used: {reason}")
    } else {
        format!("the {kind} passed for `{name}` cannot be used: {reason}")
    }
}

/// The message of [`BackendError::InvalidHandle`]: a run's names the graph
/// buffer the handle was passed for; a handle's own call (reading it back,
/// importing it) has none, and its reason, which names the call and the
/// handle, is the whole message.
fn resident_message(buffer: &str, reason: &str) -> String {
    if buffer.is_empty() {
        reason.to_string()
    } else {
        handle_message("resident buffer", buffer, reason)
    }
}

/// The end of an [`BackendError::AppendOverflow`] message: how to fix it.
fn overflow_fix(buffer: &str, count: u64, limit: Option<(&'static str, u64)>) -> String {
    match limit {
        None => format!(
            "declare a larger capacity (`append {buffer}[..]`) or let it grow (`append {buffer}[..] grow;`)"
        ),
        Some((limit, max)) => format!(
            "it is declared `grow`, but {count} items do not fit {limit} ({max} bytes), so it cannot grow to hold them and keeps its capacity; append fewer items per run (split the problem into smaller runs, or filter more strictly)"
        ),
    }
}

/// The runtime's result type.
pub type Result<T, E = BackendError> = std::result::Result<T, E>;
