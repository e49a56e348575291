//! [`Graph`]: a validated, compiled graph of kernels over named buffers, run
//! with one submission per call and a launch-plan cache per problem size.

use std::sync::{Mutex, MutexGuard};

use smallvec::SmallVec;

use vyre_analysis::Analysis;

use crate::config::DispatchConfig;
use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::launch::LaunchPlan;
use crate::pipeline::{KernelLayout, build_pipeline};
use crate::plan::{BatchDispatchPlan, DEFAULT_PLAN_CACHE_CAPACITY, PlanCache};
use crate::program::Program;
use crate::record::Recording;
use crate::resource::{Feed, GpuBufferHandle, Sink};
use crate::spec::{BufferClass, GraphSpec, OverrideValue};

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
    /// Queue submissions this run made (0 or 1).
    pub submissions: u32,
    /// Dispatches recorded into the run's compute pass: one per node or
    /// fused group, plus one control dispatch wherever append counts, loop
    /// gates or indirect arguments are worked out on the device (at most
    /// one per loop iteration and one per node sized by a count written in
    /// its own iteration).
    pub dispatches: u32,
    /// CPU nanoseconds spent recording the command buffer (encoder creation
    /// to `finish`), for profiling the recording cost per node.
    pub record_ns: u64,
    /// GPU nanoseconds from the start to the end of the compute pass,
    /// measured with timestamp queries when the run asked for it
    /// ([`DispatchConfig::profile`](crate::DispatchConfig::profile)) and the
    /// device has them.
    pub gpu_ns: Option<u64>,
    /// GPU nanoseconds of each dispatch, in recording order (a fused group
    /// of nodes is one dispatch), when the run profiled on a device with
    /// timestamps inside passes (`TIMESTAMP_QUERY_INSIDE_PASSES`); empty
    /// otherwise. [`Graph::node_times`], [`Graph::describe`] and
    /// [`Graph::to_dot`] show the latest per node.
    pub dispatch_gpu_ns: Vec<u64>,
    /// Host time of each phase of the run.
    pub phases: RunPhases,
    /// What each `repeat up to K .. until ..` loop did, in
    /// [`GraphSpec::loops`](crate::spec::GraphSpec::loops) order (read back
    /// with the outputs; empty for a run recorded and finished without
    /// waiting).
    pub loops: Vec<crate::LoopReport>,
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
/// let buffer = |name: &'static str, class| BufferSpec { name: name.into(), class, element_size: 4, len: Extent::N, header_bytes: 0, texture: None, append: None };
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
///     1000,
///     &[Feed::Host(bytemuck::cast_slice(&x))],
///     &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
///     &DispatchConfig::default(),
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
    pub(crate) cache: Mutex<PlanCache<LaunchPlan>>,
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
    /// [`BackendError::UnsupportedFeature`] when the device lacks a feature
    /// of [`GraphSpec::features`](crate::spec::GraphSpec::features).
    pub fn new(gpu: &Gpu, spec: GraphSpec) -> Result<Self> {
        Self::with_cache_capacity(gpu, spec, DEFAULT_PLAN_CACHE_CAPACITY)
    }

    /// As [`Graph::new`], keeping at most `capacity` launch plans (one per
    /// problem size; 0 plans and allocates on every run).
    ///
    /// # Errors
    /// As [`Graph::new`].
    pub fn with_cache_capacity(gpu: &Gpu, spec: GraphSpec, capacity: usize) -> Result<Self> {
        let analysis = crate::program::validate(&spec)?;
        crate::program::check_features(gpu, &spec)?;
        crate::program::check_limits(gpu, &spec)?;
        let layouts = spec
            .kernels
            .iter()
            .map(|k| KernelLayout::new(gpu, k).map(std::sync::Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let mut keys: Vec<(usize, &[OverrideValue])> = Vec::new();
        let mut node_pipeline = Vec::with_capacity(spec.nodes.len());
        // One pipeline per distinct (kernel, overrides) of the nodes, then
        // of the fused groups' dispatches (`Program::dispatch_pipeline`);
        // members of a fused group are never recorded and get none.
        let fused = spec.fused.iter().map(|g| &g.dispatch);
        for (i, node) in spec.nodes.iter().chain(fused).enumerate() {
            if spec.fused.iter().any(|g| g.nodes.contains(&i)) {
                node_pipeline.push(usize::MAX);
                continue;
            }
            let key = (node.kernel, &*node.overrides);
            let index = match keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    keys.push(key);
                    keys.len() - 1
                }
            };
            node_pipeline.push(index);
        }
        let mut pipelines = keys
            .iter()
            .map(|(k, o)| build_pipeline(gpu, &spec.kernels[*k], &layouts[*k], o))
            .collect::<Result<Vec<_>>>()?;
        let stride = crate::stride::build(gpu, &spec, &layouts, &mut pipelines)?;
        let mut program = Program::new(spec, analysis, layouts, pipelines, node_pipeline);
        program.stride = stride;
        program.samplers = crate::texture::create_samplers(gpu, &program.spec);
        program.control = crate::indirect::Control::new(gpu, &program.steps)?;
        Ok(Self::assemble(gpu, program, capacity))
    }

    pub(crate) fn assemble(gpu: &Gpu, program: Program, capacity: usize) -> Self {
        Graph {
            gpu: gpu.clone(),
            program,
            cache: Mutex::new(PlanCache::new(capacity)),
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
        self.program.check_feed_count(feeds.len())?;
        // The first input of the form K * n whose length is no such size: the
        // error to give when no input fixes n.
        let mut mismatch: Option<String> = None;
        for (feed, &b) in feeds.iter().zip(&self.program.host_inputs) {
            let buffer = &self.program.spec.buffers[b];
            if buffer.class == BufferClass::Uniform {
                continue;
            }
            if let (Some(shape), Feed::Texture(h)) = (buffer.texture_shape(), feed) {
                let [w, h] = h.size().map(u64::from);
                let n = match (shape.width.depends_on_n(), shape.height.depends_on_n()) {
                    (true, _) => shape.width.solve(w),
                    (false, true) => shape.height.solve(h),
                    _ => None,
                };
                match n {
                    Some(n) if n > 0 => return Ok(n),
                    _ => continue,
                }
            }
            if let (Some(shape), Feed::Host(bytes)) = (buffer.texture_shape(), feed) {
                let texel = u64::from(shape.format.texel_bytes());
                let texels = bytes.len() as u64 / texel;
                match shape.solve(texels) {
                    Some(n) if n > 0 && (bytes.len() as u64).is_multiple_of(texel) => return Ok(n),
                    _ if mismatch.is_none() && shape.solve(0).is_some() => {
                        mismatch = Some(format!(
                            "input texture `{}` is [{}, {}] texels ({}), but the run passed {} bytes ({texels} whole texels), which is no such size; pass width * height texels, row after row",
                            buffer.name,
                            shape.width,
                            shape.height,
                            shape.format.name(),
                            bytes.len()
                        ));
                    }
                    _ => {}
                }
                continue;
            }
            let elements = match feed {
                Feed::Host(bytes) => crate::program::checked_element_count(
                    &buffer.name,
                    (bytes.len() as u64).saturating_sub(u64::from(buffer.header_bytes)),
                    buffer.element_size,
                )?,
                Feed::Texture(_) => continue,
                Feed::Device(h) => {
                    h.size().saturating_sub(u64::from(buffer.header_bytes))
                        / u64::from(buffer.element_size.max(1))
                }
            };
            let Some(n) = buffer.len.solve(elements) else {
                if mismatch.is_none() && buffer.len.solve(0).is_some() {
                    mismatch = Some(format!(
                        "input `{}` holds {elements} elements, but its length is {}, so the problem size would not be whole; pass a multiple of {} elements",
                        buffer.name, buffer.len, buffer.len.mul
                    ));
                }
                continue;
            };
            if n == 0 {
                return Err(BackendError::InvalidProblemSize {
                    reason: format!(
                        "input `{}` is empty, so the problem size is 0; pass at least one element",
                        buffer.name
                    ),
                });
            }
            return Ok(n);
        }
        Err(BackendError::InvalidProblemSize {
            reason: mismatch.unwrap_or_else(|| {
                format!(
                    "no input of graph `{}` has a length of the form K*n, so the problem size cannot be inferred; pass n explicitly",
                    self.program.spec.name
                )
            }),
        })
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
        let spec = self.buffer_spec(buffer)?;
        let _ = spec;
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
    /// [`BackendError::BufferTooLarge`] over `max_texture_dimension_2d`.
    pub fn create_texture(&self, buffer: usize, n: u64) -> Result<crate::GpuTextureHandle> {
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
        crate::launch::texture_bytes(&self.gpu, &spec.name, shape, n)?;
        let slot = crate::texture::create(&self.gpu, &spec.name, shape, n);
        Ok(crate::GpuTextureHandle::from_wgpu(&self.gpu, slot.texture))
    }

    fn buffer_spec(&self, buffer: usize) -> Result<&crate::spec::BufferSpec> {
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
    /// # Errors
    /// Every input, size, limit and budget problem is reported before
    /// anything is encoded or submitted: [`BackendError::InputCountMismatch`],
    /// [`BackendError::OutputCountMismatch`], [`BackendError::MisalignedInput`],
    /// [`BackendError::LengthMismatch`], [`BackendError::InvalidHandle`],
    /// [`BackendError::InvalidProblemSize`], [`BackendError::GridTooLarge`],
    /// [`BackendError::BufferTooLarge`], [`BackendError::DeviceOutOfMemory`],
    /// [`BackendError::OutputTooLarge`]. After submission:
    /// [`BackendError::DispatchFailed`], [`BackendError::ReadbackFailed`].
    ///
    /// # Panics
    /// Never on user input.
    pub fn run(
        &self,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &mut [Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<RunReport> {
        let gpu = &self.gpu;
        // Device errors of this run (uploads, bind groups, commands,
        // submission) are this run's error, never the error handler's.
        let scope = gpu.catch_errors();
        // 1-4. Check, plan, bind, encode.
        let mut encoder = self.encoder(config);
        let mut started = self.start(&mut encoder, n, feeds, sinks, config)?;
        // 5. Submit once.
        let submission = self.submit(encoder, &mut started);
        if let Some(error) = scope.pop_now() {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        // 6. Read back, after one wait.
        started.read_back(sinks, config.profile, submission, config.timeout)
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
    /// hand-written loop all drive it.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, x: &[u32], y: &mut [u32]) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Sink};
    /// let feeds = [Feed::Host(bytemuck::cast_slice(x))];
    /// let mut sinks = [Sink::Host(bytemuck::cast_slice_mut(y))];
    /// let config = DispatchConfig::default();
    /// let run = graph.run_async(x.len() as u64, &feeds, &mut sinks, &config);
    /// let report = pollster::block_on(run)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Graph::run`]; [`DispatchConfig::timeout`] does not apply (drop
    /// the future to stop waiting: its plan is dropped, never reused).
    pub async fn run_async(
        &self,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &mut [Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<RunReport> {
        let gpu = &self.gpu;
        let scope = gpu.catch_errors();
        let mut encoder = self.encoder(config);
        let started = self.start(&mut encoder, n, feeds, sinks, config);
        let started = started.map(|mut started| {
            self.submit(encoder, &mut started);
            started
        });
        // Popped before the first await: a scope belongs to its thread.
        let error = scope.pop();
        let started = started?;
        if let Some(error) = error.await {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        started.read_back_async(sinks, config.profile).await
    }

    /// Record a run into the caller's `encoder` instead of submitting it: for
    /// a graph inside an application's frame. Inputs are uploaded through
    /// the queue (they land before the next submission of any encoder);
    /// nothing is submitted and nothing waits.
    ///
    /// Submit the encoder, then hand the submission to
    /// [`RecordedRun::read`] (host outputs, blocking),
    /// [`RecordedRun::read_async`], or [`RecordedRun::finish`] (resident
    /// outputs only). Until then the run's launch plan stays reserved for
    /// it; a `RecordedRun` dropped unfinished releases its plan without
    /// reusing it. A cached plan makes recording allocate nothing: no
    /// buffer, no bind group.
    ///
    /// ```no_run
    /// # fn f(gpu: &vyre_graph::Gpu, graph: &vyre_graph::Graph, x: &vyre_graph::GpuBufferHandle, y: &vyre_graph::GpuBufferHandle) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Sink};
    /// let mut encoder = gpu.device().create_command_encoder(&Default::default());
    /// let recorded = graph.record(&mut encoder, 1000, &[Feed::Device(x)], &[Sink::Device(y)], &DispatchConfig::default())?;
    /// // ... the application records its own passes that read `y` ...
    /// let submission = gpu.queue().submit([encoder.finish()]);
    /// let report = recorded.finish(&submission);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As the checks of [`Graph::run`], before anything is recorded; a
    /// device error while recording is [`BackendError::DispatchFailed`].
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<RecordedRun<'_>> {
        let scope = self.gpu.catch_errors();
        let started = self.start(encoder, n, feeds, sinks, config);
        if let Some(error) = scope.pop_now() {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        let mut started = started?;
        // The caller's command buffer names the plan's buffers: should this
        // run be dropped unfinished, its plan must not destroy them.
        started.checkout.plan.set_destroy_on_drop(false);
        let host_sinks = sinks.iter().map(|s| matches!(s, Sink::Host(_))).collect();
        Ok(RecordedRun {
            started,
            host_sinks,
            profile: config.profile,
            timeout: config.timeout,
        })
    }

    fn encoder(&self, config: &DispatchConfig) -> wgpu::CommandEncoder {
        let label = config.label.as_deref().unwrap_or(&self.program.spec.name);
        self.gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    /// Steps 1 to 4 of a run: check (the device, the inputs and outputs,
    /// this run's grids), plan (the cached plan of `n`, or a new one, ours
    /// until the run succeeds), bind (uploads and bind-group changes) and
    /// encode into `encoder`.
    fn start(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<Started<'_>> {
        let (gpu, program) = (&self.gpu, &self.program);
        let started_at = std::time::Instant::now();
        gpu.check_ready()?;
        program.check_io(gpu, n, feeds, sinks, config)?;
        let override_grids = self.override_grids(n, config)?;
        let check_ns = elapsed_ns(started_at);
        let planned = std::time::Instant::now();
        let checkout = self.checkout(n, config)?;
        let report = RunReport {
            n,
            plan: checkout.plan.plan,
            cache_hit: checkout.cache_hit,
            cache_entries: checkout.cache_entries,
            submissions: 0,
            dispatches: 0,
            record_ns: 0,
            gpu_ns: None,
            dispatch_gpu_ns: Vec::new(),
            loops: Vec::new(),
            phases: RunPhases {
                check_ns,
                plan_ns: elapsed_ns(planned),
                ..RunPhases::default()
            },
        };
        let mut started = Started {
            checkout,
            report,
            reads_back: false,
        };
        if program.spec.nodes.is_empty() {
            return Ok(started);
        }
        let bind_start = std::time::Instant::now();
        let plan = &mut started.checkout.plan;
        let copies = plan.bind_feeds(gpu, program, feeds);
        plan.timer(gpu, config.profile);
        let plan = &started.checkout.plan;
        started.report.phases.bind_ns = elapsed_ns(bind_start);
        let record_start = std::time::Instant::now();
        let recording = Recording {
            label: config.label.as_deref().unwrap_or(&program.spec.name),
            grids: override_grids.as_deref().unwrap_or(&plan.grids),
            // Overridden grids are the caller's: launched as given.
            grid_stride: override_grids.is_none().then_some(config.grid_stride),
            copies: &copies,
            feeds,
            sinks,
            timer: plan.timer.as_ref().filter(|_| config.profile),
        };
        started.reads_back = crate::record::encode(encoder, gpu, program, plan, &recording);
        started.report.dispatches = (recording.grids.len() + program.steps.groups.len()) as u32;
        started.report.record_ns = elapsed_ns(record_start);
        started.report.phases.encode_ns = started.report.record_ns;
        Ok(started)
    }

    /// Step 5: finish the encoder and submit it, once.
    fn submit(
        &self,
        encoder: wgpu::CommandEncoder,
        started: &mut Started<'_>,
    ) -> wgpu::SubmissionIndex {
        let start = std::time::Instant::now();
        let command = encoder.finish();
        started.report.submissions = 1;
        let index = self.gpu.submit(command);
        started.report.phases.submit_ns = elapsed_ns(start);
        index
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
    /// let err = graph.check_problem_size(1 << 40, &DispatchConfig::default());
    /// assert!(matches!(err, Err(BackendError::BufferTooLarge { .. })));
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`BackendError::InvalidProblemSize`], [`BackendError::BufferTooLarge`],
    /// [`BackendError::GridTooLarge`], [`BackendError::GridNotFoldable`],
    /// [`BackendError::DeviceOutOfMemory`], [`BackendError::OutputTooLarge`].
    pub fn check_problem_size(&self, n: u64, config: &DispatchConfig) -> Result<()> {
        if n == 0 {
            return Err(self.program.zero_problem_size());
        }
        let readback = self
            .program
            .host_outputs
            .iter()
            .map(|&b| self.program.buffer_bytes(b, n))
            .fold(0u64, u64::saturating_add);
        if let Some(limit) = config.max_output_bytes
            && readback > limit
        {
            return Err(BackendError::OutputTooLarge {
                requested: readback,
                limit,
            });
        }
        // A cached plan of `n` passed every size and grid check when it was
        // made: only this config's budget remains to check, with no
        // allocation (a steady-state typed run allocates nothing of ours).
        let cached = self.lock_cache().peek(n).map(|plan| plan.plan);
        match cached {
            Some(mut plan) => {
                plan.device_memory_budget_bytes = config.device_memory_budget_bytes;
                if !plan.fits_budget() {
                    return Err(BackendError::DeviceOutOfMemory {
                        requested: plan.estimated_peak_device_bytes,
                        available: plan.device_memory_budget_bytes,
                    });
                }
            }
            None => {
                crate::launch::check(&self.gpu, &self.program, n, config)?;
            }
        }
        self.override_grids(n, config).map(drop)
    }

    /// The grids of a run whose config overrides them, computed for that run
    /// only (the cached plan keeps the nodes' own).
    fn override_grids(&self, n: u64, config: &DispatchConfig) -> Result<Option<Vec<[u32; 3]>>> {
        if config.grid_override.is_none() && config.workgroup_override.is_none() {
            return Ok(None);
        }
        (0..self.program.dispatches.len())
            .map(|node| crate::launch::node_grid(&self.gpu, &self.program, node, n, config))
            .collect::<Result<_>>()
            .map(Some)
    }

    /// Take the plan of `n` out of the cache, or make one.
    fn checkout(&self, n: u64, config: &DispatchConfig) -> Result<Checkout<'_>> {
        let cached = {
            let mut cache = self.lock_cache();
            cache.remove(n).map(|plan| (plan, cache.len()))
        };
        let (mut plan, cache_hit, cache_entries) = match cached {
            Some((plan, others)) => (plan, true, others + 1),
            None => {
                let plan = crate::launch::prepare(&self.gpu, &self.program, n, config)?;
                let entries = self.lock_cache().len();
                (plan, false, (entries + 1).min(self.capacity()))
            }
        };
        if let Err(e) = crate::launch::recheck_budget(&self.gpu, &mut plan, config) {
            // The plan itself is fine: back in the cache for the next run.
            self.lock_cache().insert(n, plan);
            return Err(e);
        }
        Ok(Checkout {
            graph: self,
            n,
            plan,
            cache_hit,
            cache_entries,
        })
    }

    fn capacity(&self) -> usize {
        self.lock_cache().capacity()
    }

    /// The plan cache. It holds plain data and is only locked for lookups,
    /// inserts and removals; if a thread panicked while holding it anyway,
    /// its plans are dropped (never trusted) and the cache goes on empty.
    fn lock_cache(&self) -> MutexGuard<'_, PlanCache<LaunchPlan>> {
        self.cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            drop(cache.clear());
            self.cache.clear_poison();
            cache
        })
    }

    /// The launch plan for problem size `n`, computed (and cached, buffers
    /// allocated) if needed, without running anything.
    ///
    /// # Errors
    /// As the planning errors of [`Graph::run`].
    pub fn plan(&self, n: u64, config: &DispatchConfig) -> Result<BatchDispatchPlan> {
        let checkout = self.checkout(n, config)?;
        let plan = checkout.plan.plan;
        checkout.succeeded();
        Ok(plan)
    }

    /// Launch plans in the cache.
    #[must_use]
    pub fn cached_plans(&self) -> usize {
        self.lock_cache().len()
    }
}

fn elapsed_ns(since: std::time::Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A run that has been recorded: its plan, its report so far.
struct Started<'g> {
    checkout: Checkout<'g>,
    report: RunReport,
    reads_back: bool,
}

impl Started<'_> {
    /// Step 6: wait for `submission`, copy the host outputs into `sinks`,
    /// and finish the run.
    fn read_back(
        mut self,
        sinks: &mut [Sink<'_>],
        profiling: bool,
        submission: wgpu::SubmissionIndex,
        timeout: Option<std::time::Duration>,
    ) -> Result<RunReport> {
        let gpu = &self.checkout.graph.gpu;
        let plan = &self.checkout.plan;
        let mut stamps = Vec::new();
        let mut status = crate::readback::StatusBytes::new();
        let mut targets =
            crate::readback::targets(plan, sinks, profiling, &mut stamps, &mut status);
        let wait_start = std::time::Instant::now();
        let copy_ns = crate::readback::map_and_copy(
            gpu,
            &plan.map_slots,
            Some(submission),
            timeout,
            &mut targets,
        )?;
        drop(targets);
        if let Err(e) = self.check_status(&status) {
            return Err(self.failed_after_wait(e));
        }
        self.report.phases.wait_ns = elapsed_ns(wait_start).saturating_sub(copy_ns);
        self.report.phases.copy_ns = copy_ns;
        Ok(self.succeeded(gpu, profiling, &stamps))
    }

    /// As [`Started::read_back`], as a future that never blocks.
    async fn read_back_async(
        mut self,
        sinks: &mut [Sink<'_>],
        profiling: bool,
    ) -> Result<RunReport> {
        let gpu = &self.checkout.graph.gpu;
        let plan = &self.checkout.plan;
        let mut stamps = Vec::new();
        let mut status = crate::readback::StatusBytes::new();
        let mut targets =
            crate::readback::targets(plan, sinks, profiling, &mut stamps, &mut status);
        let wait_start = std::time::Instant::now();
        let copy_ns =
            crate::readback::map_and_copy_async(gpu, &plan.map_slots, &mut targets).await?;
        drop(targets);
        if let Err(e) = self.check_status(&status) {
            return Err(self.failed_after_wait(e));
        }
        self.report.phases.wait_ns = elapsed_ns(wait_start).saturating_sub(copy_ns);
        self.report.phases.copy_ns = copy_ns;
        Ok(self.succeeded(gpu, profiling, &stamps))
    }

    /// The device-side status of the run (append counts, loops, indirect
    /// grids): loop reports into the report, and an overflow or a grid over
    /// the limit as the run's error. The plan is fine either way: it goes
    /// back to the cache, so the next run of this size reuses it.
    fn check_status(&mut self, status: &[u8]) -> Result<()> {
        let graph = self.checkout.graph;
        let plan = &self.checkout.plan;
        if plan.control.is_none() {
            return Ok(());
        }
        let max = graph.gpu.limits().max_compute_workgroups_per_dimension;
        crate::indirect::finish(&graph.program, plan, status, max, &mut self.report.loops)
    }

    /// The run failed after a complete, successful wait (an append overflow,
    /// an indirect grid over the limit): the plan is sound and goes back to
    /// the cache.
    fn failed_after_wait(mut self, error: BackendError) -> BackendError {
        self.checkout.plan.set_destroy_on_drop(true);
        let graph = self.checkout.graph;
        if graph.program.grow_on(self.checkout.n, &error) {
            // Its buffers are too small now: dropped, the next run of this
            // size makes a plan with the grown capacity.
            return error;
        }
        self.checkout.succeeded();
        error
    }

    /// The run succeeded: its plan goes back to the cache.
    fn succeeded(mut self, gpu: &Gpu, profiled: bool, stamps: &[u8]) -> RunReport {
        self.checkout.plan.set_destroy_on_drop(true);
        let mut report = self.report;
        if profiled && self.checkout.plan.timer.is_some() {
            let (pass, nodes) = crate::readback::gpu_ns(gpu, stamps);
            report.gpu_ns = Some(pass);
            if !nodes.is_empty() {
                self.checkout
                    .graph
                    .dispatch_gpu_ns
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone_from(&nodes);
                report.dispatch_gpu_ns = nodes;
            }
        }
        self.checkout.succeeded();
        report
    }
}

/// A run recorded into the caller's encoder by [`Graph::record`], waiting
/// for the caller to submit it.
#[must_use = "a recorded run keeps its launch plan until it is read or finished"]
pub struct RecordedRun<'g> {
    started: Started<'g>,
    /// Which outputs were recorded as host sinks.
    host_sinks: SmallVec<[bool; 4]>,
    profile: bool,
    timeout: Option<std::time::Duration>,
}

impl std::fmt::Debug for RecordedRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedRun")
            .field("report", &self.started.report)
            .finish_non_exhaustive()
    }
}

impl RecordedRun<'_> {
    /// The run's report so far (plan, cache hit, recording time).
    #[must_use]
    pub fn report(&self) -> &RunReport {
        &self.started.report
    }

    /// Whether the run reads outputs back to the host (then call
    /// [`RecordedRun::read`] or [`RecordedRun::read_async`]).
    #[must_use]
    pub fn reads_back(&self) -> bool {
        self.started.reads_back
    }

    /// After the caller submitted the encoder (`submission`), wait for it
    /// and copy the host outputs into `sinks` (the same sinks, in the same
    /// order, as [`Graph::record`] got; `Sink::Host` slices receive data).
    ///
    /// # Errors
    /// [`BackendError::OutputCountMismatch`] or
    /// [`BackendError::LengthMismatch`] when `sinks` differ from the
    /// recorded ones, [`BackendError::Timeout`],
    /// [`BackendError::ReadbackFailed`].
    pub fn read(
        self,
        submission: wgpu::SubmissionIndex,
        sinks: &mut [Sink<'_>],
    ) -> Result<RunReport> {
        self.check_same_sinks(sinks)?;
        self.started
            .read_back(sinks, self.profile, submission, self.timeout)
    }

    /// As [`RecordedRun::read`], as a future that never blocks.
    ///
    /// # Errors
    /// As [`RecordedRun::read`].
    pub async fn read_async(self, sinks: &mut [Sink<'_>]) -> Result<RunReport> {
        self.check_same_sinks(sinks)?;
        self.started.read_back_async(sinks, self.profile).await
    }

    /// The sinks given to `read` must be those given to `record`: a host
    /// slice where a host sink was recorded, of the same length.
    fn check_same_sinks(&self, sinks: &[Sink<'_>]) -> Result<()> {
        let program = &self.started.checkout.graph.program;
        let n = self.started.report.n;
        if sinks.len() != self.host_sinks.len() {
            return Err(BackendError::OutputCountMismatch {
                graph: program.spec.name.to_string(),
                expected: self.host_sinks.len(),
                given: sinks.len(),
                names: program.names(&program.host_outputs),
            });
        }
        for ((sink, &host), &b) in sinks
            .iter()
            .zip(&self.host_sinks)
            .zip(&program.host_outputs)
        {
            let spec = &program.spec.buffers[b];
            match sink {
                Sink::Host(dst) if host && dst.len() as u64 != program.buffer_bytes(b, n) => {
                    return Err(BackendError::LengthMismatch {
                        buffer: spec.name.to_string(),
                        n,
                        expected: program.buffer_bytes(b, n),
                        actual: dst.len() as u64,
                    });
                }
                Sink::Host(_) if !host => {
                    return Err(BackendError::SinkMismatch {
                        buffer: spec.name.to_string(),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The caller submitted the encoder (`submission`) and reads nothing
    /// back (resident outputs only): the plan goes back to the cache for
    /// the next run, which the queue orders after this one. Nothing waits.
    pub fn finish(self, submission: &wgpu::SubmissionIndex) -> RunReport {
        let _ = submission;
        let graph = self.started.checkout.graph;
        self.started.succeeded(&graph.gpu, false, &[])
    }
}

/// A launch plan checked out of its graph's cache for one run. Dropped
/// without [`Checkout::succeeded`] (an error after submission, or a panic
/// anywhere in the run), it drops the plan: its buffers may be mapped or in
/// use by unfinished work, so the next run of that size builds a fresh one.
struct Checkout<'g> {
    graph: &'g Graph,
    n: u64,
    plan: LaunchPlan,
    cache_hit: bool,
    cache_entries: usize,
}

impl Checkout<'_> {
    /// The run succeeded: the plan goes back to the cache. Evicted plans
    /// (and a plan another run cached for the same size meanwhile) are
    /// dropped here, freeing their buffers.
    fn succeeded(self) {
        drop(self.graph.lock_cache().insert(self.n, self.plan));
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::spec::{
        BindingKind, BindingSpec, BufferSpec, DispatchSize, Extent, GridFold, KernelSpec,
        NodeBinding, NodeSpec,
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
            u64::from(n),
            &[Feed::Host(bytemuck::cast_slice(&x))],
            &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
            &DispatchConfig::default(),
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
                let _held = graph.cache.lock();
                panic!("a panic while the plan cache is held");
            })
            .join()
        });
        assert!(poisoned.is_err());
        assert!(graph.cache.is_poisoned());
        assert_eq!(
            graph.cached_plans(),
            0,
            "plans of a poisoned cache are dropped"
        );
        assert!(!graph.cache.is_poisoned());
        assert_eq!(run_double(&graph, 1000).expect("run after poison"), want);
        assert_eq!(graph.cached_plans(), 1);
    }
}
