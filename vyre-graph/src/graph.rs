//! [`Graph`]: a validated, compiled graph of kernels over named buffers, run
//! with one submission per call and a launch-plan cache per problem size.
//!
//! Every public method of `Graph` lives here, each a call or two into the
//! layer that does the work. A run reads as a straight line
//! ([`Graph::run`], `run_with` and `start`): check (`plan/check.rs`), plan
//! (`plan/plans.rs`), bind, encode, submit and read back (`run/started.rs`);
//! blocking and async runs are one future, a blocking run driving it with
//! `block_on`.
//!
//! It sits on top with `describe.rs` (the schedule as text and DOT): it
//! imports every layer (`spec/`, `device/`, `plan/`, `run/`), and only
//! `seed/` and the crate root import it.

use std::sync::{Mutex, PoisonError};
use web_time::Instant;

use vyre_analysis::{Analysis, PeakBytes};

use crate::describe::{self, Description};
use crate::device::buffer::GpuBufferHandle;
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::device::map::Waiting;
#[cfg(not(target_arch = "wasm32"))]
use crate::device::map::block_on;
use crate::device::texture::{checked_bytes, create as create_texture};
use crate::device::texture_handle::GpuTextureHandle;
use crate::plan::plans::Plans;
use crate::plan::program::Program;
use crate::plan::{BatchDispatchPlan, DEFAULT_PLAN_CACHE_CAPACITY};
use crate::run::encode::{Scopes, encoder};
use crate::run::recorded::RecordedRun;
use crate::run::report::{RunPhases, RunReport, elapsed_ns};
use crate::run::started::{EncoderUse, Io, Started};
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::{BufferSpec, GraphSpec};

/// A compiled graph: pipelines and layouts built once, a launch-plan cache,
/// and `run`.
///
/// Build it from a [`GraphSpec`] (what `graph!` emits, or written by hand).
/// `Graph` is `Send + Sync`: runs from several threads serialise on the plan
/// cache, since a plan's buffers serve one run at a time.
///
/// # Example
/// ```no_run
/// use std::borrow::Cow;
/// use vyre_graph::spec::*;
/// use vyre_graph::{DispatchConfig, Feed, Gpu, Graph, Sink};
///
/// const ADD_ONE: &str = "
///   @group(0) @binding(0) var<storage, read> src: array<u32>;
///   @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
///   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
///       if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + 1u; }
///   }";
/// let kernel = KernelSpec {
///     label: "add_one".into(),
///     source: ADD_ONE.into(),
///     entry_point: "main".into(),
///     workgroup_size: [64, 1, 1],
///     bindings: vec![
///         BindingSpec::storage("src", 0, 0, BindingKind::ReadOnlyStorage, 4),
///         BindingSpec::storage("dst", 0, 1, BindingKind::ReadWriteStorage, 4),
///     ]
///     .into(),
///     fold: GridFold::XOnly,
/// };
/// let buffer = |name: &'static str, class| BufferSpec { name: name.into(), class, element_size: 4, len: Extent::N, header_bytes: 0, texture: None, append: None, empty_value: None };
/// let node = |src: usize, dst: usize| NodeSpec {
///     label: "add_one".into(),
///     kernel: 0,
///     bindings: vec![
///         NodeBinding { group: 0, binding: 0, buffer: src },
///         NodeBinding { group: 0, binding: 1, buffer: dst },
///     ]
///     .into(),
///     overrides: Cow::Borrowed(&[]),
///     workgroup_size: None,
///     size: DispatchSize::Invocations(Extent::N),
/// };
/// let spec = GraphSpec {
///     name: "plus_two".into(),
///     kernels: vec![kernel].into(),
///     buffers: vec![
///         buffer("x", BufferClass::Input),
///         buffer("t", BufferClass::Intermediate),
///         buffer("y", BufferClass::Output),
///     ]
///     .into(),
///     nodes: vec![node(0, 1), node(1, 2)].into(),
///     features: Cow::Borrowed(&[]),
///     schedule: None,
///     fused: Cow::Borrowed(&[]),
///     loops: Cow::Borrowed(&[]),
/// };
/// let gpu = Gpu::new()?;
/// let graph = Graph::new(&gpu, spec)?;
/// let x: Vec<u32> = (0..1000).collect();
/// let mut y = vec![0u32; 1000];
/// graph.run(
///     &DispatchConfig::default(),
///     1000,
///     &[Feed::Host(bytemuck::cast_slice(&x))],
///     &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
/// )?;
/// assert!(y.iter().zip(&x).all(|(y, x)| *y == x + 2));
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
pub struct Graph {
    pub(crate) gpu: Gpu,
    pub(crate) program: Program,
    /// Launch plans by problem size. A run checks its plan out of the cache
    /// and puts it back when it succeeds, so the lock is held only for the
    /// lookup and the return, never across a call into wgpu; a plan whose
    /// run failed after submission (or panicked) is dropped, never reused.
    pub(crate) plans: Plans,
    /// Each dispatch's GPU nanoseconds in the latest profiled run (empty
    /// until one ran on a device with timestamps inside passes).
    pub(crate) dispatch_gpu_ns: Mutex<Vec<u64>>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.program.spec.name)
            .field("nodes", &self.program.spec.nodes.len())
            .field("buffers", &self.program.spec.buffers.len())
            .field("pipelines", &self.program.pipelines.len())
            .finish_non_exhaustive()
    }
}

impl Graph {
    /// Validate `spec`, compile its kernels, and build every pipeline.
    ///
    /// # Errors
    /// [`BackendError::BindingMismatch`] when a node's bindings do not match
    /// its kernel, [`BackendError::InvalidProgram`] for any other
    /// inconsistency (unknown kernel or buffer, an input written, an
    /// intermediate read before it is written, an output never written),
    /// [`BackendError::KernelCompileFailed`] when WGSL does not compile,
    /// [`BackendError::BackendPanicked`] when wgpu or naga panicked while
    /// compiling a kernel the validator accepted (caught: `gpu` stays
    /// usable), [`BackendError::UnsupportedFeature`] when the device lacks
    /// a feature of [`GraphSpec::features`](crate::spec::GraphSpec::features).
    ///
    /// Not on wasm32: use [`Graph::new_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(gpu: &Gpu, spec: GraphSpec) -> Result<Self> {
        Self::with_cache_capacity(gpu, spec, DEFAULT_PLAN_CACHE_CAPACITY)
    }

    /// As [`Graph::new`], awaiting the device's verdict on each kernel
    /// instead of blocking on it: the way to build a graph in a browser
    /// (wasm32), where compilation errors arrive later; natively the same
    /// code, ready at once.
    ///
    /// ```no_run
    /// # async fn f(gpu: &vyre_graph::Gpu, spec: vyre_graph::spec::GraphSpec) -> vyre_graph::Result<()> {
    /// let graph = vyre_graph::Graph::new_async(gpu, spec).await?;
    /// println!("{} pipelines", graph.pipeline_count());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Graph::new`].
    pub async fn new_async(gpu: &Gpu, spec: GraphSpec) -> Result<Self> {
        Self::with_cache_capacity_async(gpu, spec, DEFAULT_PLAN_CACHE_CAPACITY).await
    }

    /// As [`Graph::new`], keeping at most `capacity` launch plans (one per
    /// problem size; 0 plans and allocates on every run).
    ///
    /// Not on wasm32: use [`Graph::with_cache_capacity_async`].
    ///
    /// # Errors
    /// As [`Graph::new`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn with_cache_capacity(gpu: &Gpu, spec: GraphSpec, capacity: usize) -> Result<Self> {
        block_on(Self::with_cache_capacity_async(gpu, spec, capacity))
    }

    /// As [`Graph::with_cache_capacity`], awaiting the device's verdicts
    /// (see [`Graph::new_async`]).
    ///
    /// # Errors
    /// As [`Graph::new`].
    pub async fn with_cache_capacity_async(
        gpu: &Gpu,
        spec: GraphSpec,
        capacity: usize,
    ) -> Result<Self> {
        let (_name, _nodes) = (spec.name.clone(), spec.nodes.len());
        let build = Program::build(gpu, spec);
        let program = instrument!(build, "Graph::new", graph = %_name, nodes = _nodes).await?;
        Ok(Self::assemble(gpu, program, capacity))
    }

    pub(crate) fn assemble(gpu: &Gpu, program: Program, capacity: usize) -> Self {
        Graph {
            gpu: gpu.clone(),
            program,
            plans: Plans::new(capacity),
            dispatch_gpu_ns: Mutex::new(Vec::new()),
        }
    }

    /// The description it was built from.
    #[must_use]
    pub fn spec(&self) -> &GraphSpec {
        &self.program.spec
    }

    /// Its dependency analysis: edges, levels, live ranges, slots.
    #[must_use]
    pub fn analysis(&self) -> &Analysis {
        &self.program.analysis
    }

    /// The device it runs on.
    #[must_use]
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Compute pipelines built (one per distinct kernel and override set, and
    /// one per fused group with a grid-stride loop).
    #[must_use]
    pub fn pipeline_count(&self) -> usize {
        self.program.pipelines.len()
    }

    /// Infer the problem size `n` from the host inputs: the first input or
    /// inout buffer whose length is `K * n` decides.
    ///
    /// # Errors
    /// [`BackendError::InputCountMismatch`], [`BackendError::MisalignedInput`],
    /// or [`BackendError::InvalidProblemSize`] when `n` would be 0 or no
    /// input determines it.
    pub fn infer_problem_size(&self, feeds: &[Feed<'_>]) -> Result<u64> {
        self.program.infer_problem_size(feeds)
    }

    /// Bytes of buffer `buffer` at problem size `n`: its header, then its
    /// elements (for an append buffer, its capacity, which `grow` may have
    /// raised for `n`).
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] for an unknown buffer index.
    pub fn buffer_bytes(&self, buffer: usize, n: u64) -> Result<u64> {
        self.buffer_spec(buffer)?;
        Ok(self.program.buffer_bytes(buffer, n))
    }

    /// Whether `error`, from a run of problem size `n`, is an overflow of an
    /// append buffer declared `grow` whose capacity for `n` has since grown
    /// to hold the count: then the same run, with outputs sized anew
    /// ([`Graph::buffer_bytes`]), fits. The typed API of `graph!` repeats
    /// such a run once by itself. Growth stops at the device's storage
    /// limit and the run's memory budget: an overflow that even they cannot
    /// hold names the limit (`AppendOverflow::limit`) and grows nothing, and
    /// this says `false`.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, e: &vyre_graph::BackendError) {
    /// if graph.grew_for(e, 1000) { /* size the sinks anew and run again */ }
    /// # }
    /// ```
    #[must_use]
    pub fn grew_for(&self, error: &BackendError, n: u64) -> bool {
        self.program.grew_for(error, n)
    }

    /// Elements of buffer `buffer` for problem size `n`.
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] for an unknown buffer index,
    /// [`BackendError::BufferTooLarge`] when the count does not fit `usize`.
    pub fn buffer_len(&self, buffer: usize, n: u64) -> Result<usize> {
        let spec = self.buffer_spec(buffer)?;
        let len = self.program.buffer_elements(buffer, n);
        usize::try_from(len).map_err(|_| BackendError::BufferTooLarge {
            buffer: spec.name.to_string(),
            bytes: self.program.buffer_bytes(buffer, n),
            limit: "this host's address space",
            max: usize::MAX as u64,
        })
    }

    /// A zeroed resident buffer sized for buffer `buffer` at problem size `n`
    /// (e.g. to receive an output with [`Sink::Device`]).
    ///
    /// # Errors
    /// As [`Graph::buffer_len`], and [`BackendError::BufferTooLarge`] over
    /// the device's limit.
    pub fn create_buffer(&self, buffer: usize, n: u64) -> Result<GpuBufferHandle> {
        self.create_resident(buffer, n, &DispatchConfig::default())
    }

    /// As [`Graph::create_buffer`], with the config's
    /// [`resident_usage`](DispatchConfig::resident_usage) added.
    ///
    /// # Errors
    /// As [`Graph::create_buffer`].
    pub fn create_resident(
        &self,
        buffer: usize,
        n: u64,
        config: &DispatchConfig,
    ) -> Result<GpuBufferHandle> {
        self.buffer_spec(buffer)?;
        GpuBufferHandle::zeroed_with_usage(
            &self.gpu,
            self.program.buffer_bytes(buffer, n),
            config.resident_usage,
        )
    }

    /// A resident texture for graph texture `buffer` at problem size `n`
    /// (its format and size; usages to sample, store and copy in and out),
    /// e.g. to receive an output with [`Sink::Texture`] and feed it to
    /// another graph with [`Feed::Texture`].
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] when `buffer` is not a texture,
    /// [`BackendError::InvalidProblemSize`] for an empty texture,
    /// [`BackendError::TextureTooLarge`] over the device's texture limits,
    /// [`BackendError::UnsupportedTexture`] for a shape the device's
    /// backend mishandles.
    pub fn create_texture(&self, buffer: usize, n: u64) -> Result<GpuTextureHandle> {
        let spec = self.buffer_spec(buffer)?;
        let Some(shape) = spec.texture_shape() else {
            return Err(BackendError::InvalidProgram {
                graph: self.program.spec.name.to_string(),
                reason: format!(
                    "`{}` is not a texture; use `create_buffer` for buffers",
                    spec.name
                ),
            });
        };
        checked_bytes(&self.gpu, &spec.name, shape, n)?;
        let slot = create_texture(&self.gpu, &spec.name, shape, n);
        Ok(GpuTextureHandle::from_wgpu(&self.gpu, slot.texture))
    }

    fn buffer_spec(&self, buffer: usize) -> Result<&BufferSpec> {
        self.program
            .spec
            .buffers
            .get(buffer)
            .ok_or_else(|| BackendError::InvalidProgram {
                graph: self.program.spec.name.to_string(),
                reason: format!(
                    "buffer index {buffer} is out of range ({} buffers)",
                    self.program.spec.buffers.len()
                ),
            })
    }

    /// Run the graph for problem size `n`: upload `feeds` (one per host
    /// input, in declaration order), record every node into one encoder,
    /// submit once, and deliver each output to its `sink` (one per output,
    /// in declaration order), mapping all readbacks after a single wait.
    ///
    /// The launch plan for `n` (grids, buffers, bind groups) comes from the
    /// cache when it is there; a cached run creates no buffer and no bind
    /// group.
    ///
    /// At `n = 0`, when every output is empty there or has a value there
    /// ([`BufferSpec::empty_value`](crate::spec::BufferSpec::empty_value):
    /// a reduction's identity over an empty source), the run writes them
    /// without planning or submitting anything; otherwise `n = 0` is
    /// [`BackendError::InvalidProblemSize`] naming the output that has no
    /// value there. Every other way to run ([`Graph::record`], resident
    /// sinks, batches, streams, the typed API) follows the same rule
    /// (`docs/api.md`, "Size 0").
    ///
    /// # Errors
    /// Every input, size, limit and budget problem is reported before
    /// anything is encoded or submitted: [`BackendError::InputCountMismatch`],
    /// [`BackendError::OutputCountMismatch`], [`BackendError::MisalignedInput`],
    /// [`BackendError::LengthMismatch`], [`BackendError::InvalidHandle`],
    /// [`BackendError::InvalidProblemSize`], [`BackendError::GridTooLarge`],
    /// [`BackendError::BufferTooLarge`], [`BackendError::DeviceOutOfMemory`],
    /// [`BackendError::OutputTooLarge`], [`BackendError::InvalidTexture`],
    /// [`BackendError::TextureMismatch`]. After submission:
    /// [`BackendError::DispatchFailed`], [`BackendError::ReadbackFailed`],
    /// [`BackendError::AppendOverflow`] (see [`Graph::grew_for`]).
    ///
    /// # Panics
    /// Never on user input.
    ///
    /// Not on wasm32: use [`Graph::run_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run(
        &self,
        config: &DispatchConfig,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &mut [Sink<'_>],
    ) -> Result<RunReport> {
        let run = self.run_with(config, n, feeds, sinks, Waiting::Block(config.timeout));
        block_on(instrument!(run, "run", graph = %self.program.spec.name, n))
    }

    /// As [`Graph::run`], as a future that never blocks the thread: it
    /// checks, plans, records and submits when first polled, then waits for
    /// the results through the future and copies them out.
    ///
    /// Several runs may be in flight at once, of one graph (each problem size
    /// in flight has its own plan; two runs of one size use two plans) or of
    /// several graphs on one device. On native backends a background thread
    /// of the [`Gpu`] polls the device while runs wait (started on demand,
    /// gone when none waits); no executor is assumed: `pollster`, tokio or a
    /// hand-written loop all drive it. In a browser (wasm32) it is the way
    /// to run: the page's event loop delivers the results
    /// (`wasm_bindgen_futures::spawn_local` or an `async` test drives it),
    /// and two runs in flight on the page's one thread are both right.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, x: &[u32], y: &mut [u32]) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Sink};
    /// let feeds = [Feed::Host(bytemuck::cast_slice(x))];
    /// let mut sinks = [Sink::Host(bytemuck::cast_slice_mut(y))];
    /// let config = DispatchConfig::default();
    /// let run = graph.run_async(&config, x.len() as u64, &feeds, &mut sinks);
    /// let report = pollster::block_on(run)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Graph::run`]; [`DispatchConfig::timeout`] does not apply (drop
    /// the future to stop waiting: its plan is dropped, never reused); in a
    /// browser a timeout set is refused
    /// ([`BackendError::TimeoutUnsupported`]).
    pub async fn run_async(
        &self,
        config: &DispatchConfig,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &mut [Sink<'_>],
    ) -> Result<RunReport> {
        let run = self.run_with(config, n, feeds, sinks, Waiting::Async);
        instrument!(run, "run_async", graph = %self.program.spec.name, n).await
    }

    /// [`Graph::run`] (`Waiting::Block`) and [`Graph::run_async`]: one
    /// run, as a straight line of steps. A blocking run waits inside the
    /// future's first poll, so `block_on` finds it ready at once.
    pub(crate) async fn run_with(
        &self,
        config: &DispatchConfig,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &mut [Sink<'_>],
        waiting: Waiting,
    ) -> Result<RunReport> {
        // At n = 0 a graph whose outputs are then empty or a reduction's
        // identity has them without a run.
        if n == 0 && self.program.runs_empty() {
            return crate::run::empty::run_empty(&self.gpu, &self.program, feeds, sinks, config);
        }
        // Device errors of this run (uploads, bind groups, commands,
        // submission) are this run's error, never the error handler's.
        let scope = self.gpu.catch_errors();
        let mut encoder = encoder(&self.gpu, &self.program, config);
        // 1-4. Check, plan, bind, encode.
        let io = Io {
            feeds,
            sinks,
            stacked: None,
        };
        let started = self.start(
            &mut encoder,
            n,
            io,
            config,
            Scopes::default(),
            EncoderUse::Own,
        );
        // 5. Submit once.
        let started = started.map(|mut run| {
            let submission = run.submit(encoder);
            (run, submission)
        });
        // Popped before the first await: a scope belongs to its thread.
        let error = scope.pop();
        let (run, submission) = started?;
        if let Some(error) = error.await {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        // 6. Read back, after one wait: blocking for at most the config's
        // timeout, or through the future.
        let wait = waiting.wait(submission);
        run.read_back(sinks, None, config.profile, wait).await
    }

    /// Record a run into the caller's `encoder` instead of submitting it: for
    /// a graph inside an application's frame. Inputs are uploaded through
    /// the queue (they land before the next submission of any encoder);
    /// nothing is submitted and nothing waits.
    ///
    /// Submit the encoder, then hand the submission to
    /// [`RecordedRun::read`] (host outputs, blocking; native only),
    /// [`RecordedRun::read_async`], or [`RecordedRun::finish`] /
    /// [`RecordedRun::finish_async`] (resident outputs only). Until then the run's launch plan stays reserved for
    /// it; a `RecordedRun` dropped unfinished releases its plan without
    /// reusing it. A cached plan makes recording allocate nothing: no
    /// buffer, no bind group.
    ///
    /// At `n = 0` the rule of [`Graph::run`] holds: a graph whose outputs
    /// are then empty or a reduction's identity records nothing (its
    /// resident sinks are written through the queue, its host sinks when
    /// the run is read); any other graph is refused.
    ///
    /// ```no_run
    /// # fn f(gpu: &vyre_graph::Gpu, graph: &vyre_graph::Graph, x: &vyre_graph::GpuBufferHandle, y: &vyre_graph::GpuBufferHandle) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Sink};
    /// let mut encoder = gpu.device().create_command_encoder(&Default::default());
    /// let recorded = graph.record(&mut encoder, &DispatchConfig::default(), 1000, &[Feed::Device(x)], &[Sink::Device(y)])?;
    /// // ... the application records its own passes that read `y` ...
    /// let submission = gpu.queue().submit([encoder.finish()]);
    /// let report = recorded.finish(&submission);
    /// # Ok(()) }
    /// ```
    ///
    /// Recording never waits, also in a browser. There the device's
    /// verdict on the recorded commands comes later: a device error while
    /// recording is then reported by [`RecordedRun::read_async`] (or
    /// [`RecordedRun::finish_async`]) as [`BackendError::DispatchFailed`],
    /// never lost; natively it is known at once and `record` returns it.
    ///
    /// # Errors
    /// As the checks of [`Graph::run`], before anything is recorded; a
    /// device error while recording is [`BackendError::DispatchFailed`].
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        config: &DispatchConfig,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
    ) -> Result<RecordedRun<'_>> {
        self.record_with(encoder, n, feeds, sinks, config, Scopes::default())
    }

    /// As [`Graph::record`], with scopes in the application's own
    /// `wgpu-profiler`, nested under `scope.parent` (feature `profiler`): a
    /// scope per dispatch (named as the node, or the fused group) where the
    /// device has `TIMESTAMP_QUERY_INSIDE_PASSES`, else one for the pass
    /// (named as the run's label; none when the run also profiles itself
    /// with [`DispatchConfig::with_profile`], whose timer then has the
    /// pass's timestamp writes). See [`ProfilerScope`](crate::ProfilerScope)
    /// for an example.
    ///
    /// # Errors
    /// As [`Graph::record`].
    #[cfg(feature = "profiler")]
    pub fn record_profiled(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        config: &DispatchConfig,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        scope: crate::ProfilerScope<'_>,
    ) -> Result<RecordedRun<'_>> {
        self.record_with(encoder, n, feeds, sinks, config, Some(scope))
    }

    /// [`Graph::record`] and `record_profiled`.
    fn record_with(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
        scopes: Scopes<'_>,
    ) -> Result<RecordedRun<'_>> {
        let _span = enter!("record", graph = %self.program.spec.name, n);
        // At n = 0 a graph whose outputs are then empty or a reduction's
        // identity records nothing; reading the run gives them.
        if n == 0 && self.program.runs_empty() {
            let report =
                crate::run::empty::record_empty(&self.gpu, &self.program, feeds, sinks, config)?;
            return Ok(RecordedRun::empty(
                &self.gpu,
                &self.program,
                report,
                sinks,
                config,
            ));
        }
        let scope = self.gpu.catch_errors();
        // 1-4. Check, plan, bind, encode, into the caller's encoder.
        let io = Io {
            feeds,
            sinks,
            stacked: None,
        };
        let started = self.start(encoder, n, io, config, scopes, EncoderUse::Shared);
        // Natively the scopes answer at once; a browser answers later, and
        // the answer goes with the run to its first await (`read_async`).
        let deferred =
            scope
                .pop_deferred()
                .now()
                .map_err(|error| BackendError::DispatchFailed {
                    reason: error.to_string(),
                })?;
        Ok(RecordedRun::new(started?, encoder, sinks, config, deferred))
    }

    /// Steps 1 to 4 of a run: check (the device, the inputs and outputs,
    /// this run's grids), plan (the cached plan of `n`, or a new one, ours
    /// until the run succeeds), bind (uploads and bind-group changes) and
    /// encode into `encoder`. `use_of_encoder` says whether the run has it
    /// to itself, submitted by the runtime right after (then large inputs
    /// may go through the plan's staging buffers, mapped again after the
    /// submission). A stacked run (`run_batch`) gives its instances' host
    /// bytes in `io.stacked` (see [`Io`]).
    pub(crate) fn start(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        n: u64,
        io: Io<'_, '_>,
        config: &DispatchConfig,
        scopes: Scopes<'_>,
        use_of_encoder: EncoderUse,
    ) -> Result<Started<'_>> {
        let (gpu, program) = (&self.gpu, &self.program);
        let Io {
            feeds,
            sinks,
            stacked,
        } = io;
        // 1. Check (a stacked run's instances were checked one by one,
        // and its size by `run_batch`).
        let checked = Instant::now();
        let override_grids = {
            let _span = enter!("check");
            match stacked {
                Some(_) => program.check_stacked(gpu, n, config)?,
                None => program.check_run(gpu, n, feeds, sinks, config)?,
            }
        };
        let check_ns = elapsed_ns(checked);
        // 2. Plan.
        let planned = Instant::now();
        let checkout = {
            let _span = enter!("plan");
            self.plans.checkout(gpu, program, n, config)?
        };
        let phases = RunPhases {
            check_ns,
            plan_ns: elapsed_ns(planned),
            ..RunPhases::default()
        };
        let mut run = Started::new(
            gpu,
            program,
            &self.dispatch_gpu_ns,
            checkout,
            phases,
            checked,
        );
        if program.spec.nodes.is_empty() {
            return Ok(run);
        }
        // 3. Bind.
        let copies = {
            let _span = enter!("bind");
            run.bind(feeds, stacked, config, use_of_encoder)
        };
        // 4. Encode.
        let _span = enter!("encode");
        let grids = override_grids.as_deref();
        run.encode(encoder, io, &copies, grids, config, scopes);
        Ok(run)
    }

    /// Check problem size `n` against every limit a run would check before
    /// allocating (buffer and binding sizes, grids, the memory budget, and
    /// `max_output_bytes` for reading every output back), allocating
    /// nothing. The typed API of `graph!` calls it before it sizes host
    /// vectors or resident buffers.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph) {
    /// use vyre_graph::{BackendError, DispatchConfig};
    /// let err = graph.check_problem_size(&DispatchConfig::default(), 1 << 40);
    /// assert!(matches!(err, Err(BackendError::BufferTooLarge { .. })));
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`BackendError::InvalidProblemSize`], [`BackendError::BufferTooLarge`],
    /// [`BackendError::GridTooLarge`], [`BackendError::GridNotFoldable`],
    /// [`BackendError::DeviceOutOfMemory`], [`BackendError::OutputTooLarge`].
    pub fn check_problem_size(&self, config: &DispatchConfig, n: u64) -> Result<()> {
        self.plans
            .check_problem_size(&self.gpu, &self.program, n, config)
    }

    /// The launch plan for problem size `n`, computed (and cached, buffers
    /// allocated) if needed, without running anything.
    ///
    /// # Errors
    /// As the planning errors of [`Graph::run`].
    pub fn plan(&self, config: &DispatchConfig, n: u64) -> Result<BatchDispatchPlan> {
        let checkout = self.plans.checkout(&self.gpu, &self.program, n, config)?;
        let plan = checkout.plan.plan;
        checkout.succeeded();
        Ok(plan)
    }

    /// Launch plans in the cache.
    #[must_use]
    pub fn cached_plans(&self) -> usize {
        self.plans.lock().len()
    }

    /// The graph's schedule: nodes with levels and dependencies, buffers
    /// with slots and live ranges, and every dependency edge.
    #[must_use]
    pub fn describe(&self) -> Description {
        describe::describe(&self.program, &self.node_times())
    }

    /// The schedule as a Graphviz DOT graph (`dot -Tsvg` draws it): nodes
    /// with their levels (and GPU times once profiled), buffers coloured by
    /// class with the memory they share, fused groups and loops as clusters
    /// (a loop as its first iteration). `docs/pictures/graphs.sh` draws
    /// every example's.
    #[must_use]
    pub fn to_dot(&self) -> String {
        crate::dot::to_dot(&self.program, &self.node_times())
    }

    /// Each node's GPU nanoseconds in the latest profiled run, in node
    /// order; the members of a fused group share the group's one dispatch
    /// and show its time. Empty until a run profiled on a device with
    /// timestamps inside passes, and after a profiled run that timed its
    /// pass only ([`DispatchConfig::with_dispatch_times`]).
    #[must_use]
    pub fn node_times(&self) -> Vec<u64> {
        let dispatches = self
            .dispatch_gpu_ns
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        describe::node_times(&self.program, &dispatches)
    }

    /// Device bytes for problem size `n` with and without aliasing of
    /// intermediates, and the largest live set (readback buffers excluded).
    #[must_use]
    pub fn peak_bytes(&self, n: u64) -> PeakBytes {
        let bytes: Vec<u64> = self
            .program
            .spec
            .buffers
            .iter()
            .map(|b| b.bytes(n).max(4).next_multiple_of(4))
            .collect();
        self.program.analysis.peak_bytes(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::spec::{
        BindingKind, BindingSpec, BufferClass, BufferSpec, DispatchSize, Extent, GridFold,
        KernelSpec, NodeBinding, NodeSpec,
    };

    const DOUBLE: &str = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2u; }
        }";

    fn double() -> GraphSpec {
        let buffer = |name: &'static str, class| BufferSpec {
            name: name.into(),
            class,
            element_size: 4,
            len: Extent::N,
            header_bytes: 0,
            texture: None,
            append: None,
            empty_value: None,
        };
        GraphSpec {
            name: "double".into(),
            kernels: vec![KernelSpec {
                label: "double".into(),
                source: DOUBLE.into(),
                entry_point: "main".into(),
                workgroup_size: [64, 1, 1],
                bindings: vec![
                    BindingSpec::storage("src", 0, 0, BindingKind::ReadOnlyStorage, 4),
                    BindingSpec::storage("dst", 0, 1, BindingKind::ReadWriteStorage, 4),
                ]
                .into(),
                fold: GridFold::XOnly,
            }]
            .into(),
            buffers: vec![
                buffer("x", BufferClass::Input),
                buffer("y", BufferClass::Output),
            ]
            .into(),
            nodes: vec![NodeSpec {
                label: "double".into(),
                kernel: 0,
                bindings: vec![
                    NodeBinding {
                        group: 0,
                        binding: 0,
                        buffer: 0,
                    },
                    NodeBinding {
                        group: 0,
                        binding: 1,
                        buffer: 1,
                    },
                ]
                .into(),
                overrides: Cow::Borrowed(&[]),
                workgroup_size: None,
                size: DispatchSize::Invocations(Extent::N),
            }]
            .into(),
            features: Cow::Borrowed(&[]),
            schedule: None,
            fused: Cow::Borrowed(&[]),
            loops: Cow::Borrowed(&[]),
        }
    }

    fn run_double(graph: &Graph, n: u32) -> Result<Vec<u32>> {
        let x: Vec<u32> = (0..n).collect();
        let mut y = vec![0u32; n as usize];
        graph.run(
            &DispatchConfig::default(),
            u64::from(n),
            &[Feed::Host(bytemuck::cast_slice(&x))],
            &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
        )?;
        Ok(y)
    }

    /// A thread that panics while holding the plan cache poisons its lock:
    /// the next user drops the cached plans (never trusting them) and goes
    /// on with an empty, working cache.
    #[test]
    fn a_poisoned_plan_cache_recovers_empty_and_runs_again() {
        let gpu = match Gpu::new() {
            Ok(gpu) => gpu,
            Err(e) => panic!("no GPU for this test: {e}"),
        };
        let graph = Graph::new(&gpu, double()).expect("graph");
        let want: Vec<u32> = (0..1000).map(|i| i * 2).collect();
        assert_eq!(run_double(&graph, 1000).expect("run"), want);
        assert_eq!(graph.cached_plans(), 1);
        let poisoned = std::thread::scope(|s| {
            s.spawn(|| {
                let _held = graph.plans.cache.lock();
                panic!("a panic while the plan cache is held");
            })
            .join()
        });
        assert!(poisoned.is_err());
        assert!(graph.plans.cache.is_poisoned());
        assert_eq!(
            graph.cached_plans(),
            0,
            "plans of a poisoned cache are dropped"
        );
        assert!(!graph.plans.cache.is_poisoned());
        assert_eq!(run_double(&graph, 1000).expect("run after poison"), want);
        assert_eq!(graph.cached_plans(), 1);
    }
}
