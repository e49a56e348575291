//! [`Graph`]: a validated, compiled graph of kernels over named buffers, run
//! with one submission per call and a launch-plan cache per problem size.

use std::sync::Mutex;

use vyre_analysis::{Analysis, Problem, Use};

use crate::config::DispatchConfig;
use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::pipeline::{KernelLayout, build_pipeline};
use crate::plan::{BatchDispatchPlan, DEFAULT_PLAN_CACHE_CAPACITY, PlanCache};
use crate::record::LaunchPlan;
use crate::resource::{Feed, GpuBufferHandle, Sink};
use crate::spec::{
    Access, BindingKind, BindingSpec, BufferClass, GraphSpec, NodeSpec, OverrideValue,
};

/// What one run did, for telemetry and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// CPU nanoseconds spent recording the command buffer (encoder creation
    /// to `finish`), for profiling the recording cost per node.
    pub record_ns: u64,
    /// GPU nanoseconds from the start to the end of the compute pass,
    /// measured with timestamp queries when the run asked for it
    /// ([`DispatchConfig::profile`](crate::DispatchConfig::profile)) and the
    /// device has them.
    pub gpu_ns: Option<u64>,
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
/// let buffer = |name: &'static str, class| BufferSpec { name: name.into(), class, element_size: 4, len: Extent::N };
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
///     schedule: None,
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
    pub(crate) spec: GraphSpec,
    pub(crate) analysis: Analysis,
    pub(crate) layouts: Vec<std::sync::Arc<KernelLayout>>,
    pub(crate) pipelines: Vec<wgpu::ComputePipeline>,
    /// Pipeline index of each node.
    pub(crate) node_pipeline: Vec<usize>,
    /// Host inputs, in run order (indices into `spec.buffers`).
    pub(crate) host_inputs: Vec<usize>,
    /// Host outputs, in run order.
    pub(crate) host_outputs: Vec<usize>,
    pub(crate) cache: Mutex<PlanCache<LaunchPlan>>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.spec.name)
            .field("nodes", &self.spec.nodes.len())
            .field("buffers", &self.spec.buffers.len())
            .field("pipelines", &self.pipelines.len())
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
    /// [`BackendError::KernelCompileFailed`] when WGSL does not compile.
    pub fn new(gpu: &Gpu, spec: GraphSpec) -> Result<Self> {
        Self::with_cache_capacity(gpu, spec, DEFAULT_PLAN_CACHE_CAPACITY)
    }

    /// As [`Graph::new`], keeping at most `capacity` launch plans (one per
    /// problem size; 0 plans and allocates on every run).
    ///
    /// # Errors
    /// As [`Graph::new`].
    pub fn with_cache_capacity(gpu: &Gpu, spec: GraphSpec, capacity: usize) -> Result<Self> {
        let analysis = validate(&spec)?;
        let layouts = spec
            .kernels
            .iter()
            .map(|k| KernelLayout::new(gpu, k).map(std::sync::Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let mut keys: Vec<(usize, &[OverrideValue])> = Vec::new();
        let mut node_pipeline = Vec::with_capacity(spec.nodes.len());
        for node in spec.nodes.iter() {
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
        let pipelines = keys
            .iter()
            .map(|(k, o)| build_pipeline(gpu, &spec.kernels[*k], &layouts[*k], o))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::assemble(
            gpu,
            spec,
            analysis,
            layouts,
            pipelines,
            node_pipeline,
            capacity,
        ))
    }

    pub(crate) fn assemble(
        gpu: &Gpu,
        spec: GraphSpec,
        analysis: Analysis,
        layouts: Vec<std::sync::Arc<KernelLayout>>,
        pipelines: Vec<wgpu::ComputePipeline>,
        node_pipeline: Vec<usize>,
        capacity: usize,
    ) -> Self {
        let host_inputs = spec.host_inputs().collect();
        let host_outputs = spec.host_outputs().collect();
        Graph {
            gpu: gpu.clone(),
            spec,
            analysis,
            layouts,
            pipelines,
            node_pipeline,
            host_inputs,
            host_outputs,
            cache: Mutex::new(PlanCache::new(capacity)),
        }
    }

    /// The description it was built from.
    #[must_use]
    pub fn spec(&self) -> &GraphSpec {
        &self.spec
    }

    /// Its dependency analysis: edges, levels, live ranges, slots.
    #[must_use]
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// The device it runs on.
    #[must_use]
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Compute pipelines built (one per distinct kernel and override set).
    #[must_use]
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    /// Infer the problem size `n` from the host inputs: the first input or
    /// inout buffer whose length is `K * n` decides.
    ///
    /// # Errors
    /// [`BackendError::InputCountMismatch`], [`BackendError::MisalignedInput`],
    /// or [`BackendError::InvalidProblemSize`] when `n` would be 0 or no
    /// input determines it.
    pub fn infer_problem_size(&self, feeds: &[Feed<'_>]) -> Result<u64> {
        self.check_feed_count(feeds.len())?;
        for (feed, &b) in feeds.iter().zip(&self.host_inputs) {
            let buffer = &self.spec.buffers[b];
            if buffer.class == BufferClass::Uniform {
                continue;
            }
            let elements = match feed {
                Feed::Host(bytes) => {
                    checked_element_count(&buffer.name, bytes.len() as u64, buffer.element_size)?
                }
                Feed::Device(h) => h.size() / u64::from(buffer.element_size.max(1)),
            };
            if let Some(n) = buffer.len.solve(elements) {
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
        }
        Err(BackendError::InvalidProblemSize {
            reason: format!(
                "no input of graph `{}` has a length of the form K*n, so the problem size cannot be inferred; pass n explicitly",
                self.spec.name
            ),
        })
    }

    /// Elements of buffer `buffer` for problem size `n`.
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] for an unknown buffer index,
    /// [`BackendError::BufferTooLarge`] when the count does not fit `usize`.
    pub fn buffer_len(&self, buffer: usize, n: u64) -> Result<usize> {
        let spec = self.buffer_spec(buffer)?;
        usize::try_from(spec.len.eval(n)).map_err(|_| BackendError::BufferTooLarge {
            buffer: spec.name.to_string(),
            bytes: spec.bytes(n),
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
        let spec = self.buffer_spec(buffer)?;
        GpuBufferHandle::zeroed(&self.gpu, spec.bytes(n))
    }

    fn buffer_spec(&self, buffer: usize) -> Result<&crate::spec::BufferSpec> {
        self.spec
            .buffers
            .get(buffer)
            .ok_or_else(|| BackendError::InvalidProgram {
                graph: self.spec.name.to_string(),
                reason: format!(
                    "buffer index {buffer} is out of range ({} buffers)",
                    self.spec.buffers.len()
                ),
            })
    }

    pub(crate) fn check_feed_count(&self, given: usize) -> Result<()> {
        if given != self.host_inputs.len() {
            return Err(BackendError::InputCountMismatch {
                graph: self.spec.name.to_string(),
                expected: self.host_inputs.len(),
                given,
                names: self.names(&self.host_inputs),
            });
        }
        Ok(())
    }

    pub(crate) fn names(&self, buffers: &[usize]) -> String {
        buffers
            .iter()
            .map(|&b| &*self.spec.buffers[b].name)
            .collect::<Vec<_>>()
            .join(", ")
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
        crate::record::run(self, n, feeds, sinks, config)
    }

    /// The launch plan for problem size `n`, computed (and cached, buffers
    /// allocated) if needed, without running anything.
    ///
    /// # Errors
    /// As the planning errors of [`Graph::run`].
    pub fn plan(&self, n: u64, config: &DispatchConfig) -> Result<BatchDispatchPlan> {
        crate::record::plan_only(self, n, config)
    }

    /// Launch plans in the cache.
    #[must_use]
    pub fn cached_plans(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
}

pub(crate) fn checked_element_count(name: &str, bytes: u64, element_size: u32) -> Result<u64> {
    let size = u64::from(element_size.max(1));
    if !bytes.is_multiple_of(size) {
        return Err(BackendError::MisalignedInput {
            buffer: name.to_string(),
            len: bytes,
            element_size,
        });
    }
    Ok(bytes / size)
}

/// The buffer uses of a node, from its kernel's reflected access.
pub(crate) fn node_uses(spec: &GraphSpec, node: &NodeSpec) -> Vec<Use> {
    let Some(kernel) = spec.kernels.get(node.kernel) else {
        return Vec::new();
    };
    node.bindings
        .iter()
        .filter_map(|nb| {
            let b = kernel
                .bindings
                .iter()
                .find(|b| b.group == nb.group && b.binding == nb.binding)?;
            let access = match b.kind {
                BindingKind::Uniform | BindingKind::ReadOnlyStorage => Access::Read,
                BindingKind::ReadWriteStorage => b.access,
            };
            Some(Use {
                buffer: nb.buffer,
                access,
            })
        })
        .collect()
}

fn describe_binding(b: &BindingSpec) -> String {
    let ty = if b.wgsl_type.is_empty() {
        format!("{}-byte elements", b.element_size)
    } else {
        b.wgsl_type.to_string()
    };
    format!(
        "{} (group {}, binding {}, {} {})",
        b.name,
        b.group,
        b.binding,
        b.kind.wgsl(),
        ty
    )
}

/// Check a spec for consistency and analyse it.
pub(crate) fn validate(spec: &GraphSpec) -> Result<Analysis> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    for (i, b) in spec.buffers.iter().enumerate() {
        if b.element_size == 0 {
            return Err(invalid(format!(
                "buffer `{}` has 0-byte elements; give it the size of its element type",
                b.name
            )));
        }
        if spec.buffers[..i].iter().any(|o| o.name == b.name) {
            return Err(invalid(format!(
                "two buffers are called `{}`; give each a unique name",
                b.name
            )));
        }
    }
    for node in spec.nodes.iter() {
        let Some(kernel) = spec.kernels.get(node.kernel) else {
            return Err(invalid(format!(
                "node `{}` uses kernel {} but the graph has {} kernels",
                node.label,
                node.kernel,
                spec.kernels.len()
            )));
        };
        let mismatch = |reason: String| BackendError::BindingMismatch {
            node: node.label.to_string(),
            kernel: kernel.label.to_string(),
            reason,
        };
        let declared = || {
            kernel
                .bindings
                .iter()
                .map(describe_binding)
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (i, nb) in node.bindings.iter().enumerate() {
            let Some(b) = kernel
                .bindings
                .iter()
                .find(|b| b.group == nb.group && b.binding == nb.binding)
            else {
                return Err(mismatch(format!(
                    "group {}, binding {} is not declared by the kernel, which declares: {}; bind only those",
                    nb.group,
                    nb.binding,
                    declared()
                )));
            };
            if node.bindings[..i]
                .iter()
                .any(|o| o.group == nb.group && o.binding == nb.binding)
            {
                return Err(mismatch(format!(
                    "`{}` is bound twice; bind each of the kernel's bindings once",
                    b.name
                )));
            }
            let Some(buffer) = spec.buffers.get(nb.buffer) else {
                return Err(mismatch(format!(
                    "`{}` is bound to buffer {} but the graph has {} buffers; use an index into `GraphSpec::buffers`",
                    b.name,
                    nb.buffer,
                    spec.buffers.len()
                )));
            };
            let uniform_binding = b.kind == BindingKind::Uniform;
            let uniform_buffer = buffer.class == BufferClass::Uniform;
            if uniform_binding != uniform_buffer {
                return Err(mismatch(format!(
                    "`{}` is {} but buffer `{}` is {}; bind uniform buffers to var<uniform> and the others to var<storage>",
                    b.name,
                    b.kind.wgsl(),
                    buffer.name,
                    if uniform_buffer {
                        "a uniform buffer"
                    } else {
                        "a storage buffer"
                    }
                )));
            }
            if b.element_size != buffer.element_size {
                return Err(mismatch(format!(
                    "`{}` has {}-byte elements but buffer `{}` has {}-byte elements; declare the buffer with the kernel's element type",
                    b.name, b.element_size, buffer.name, buffer.element_size
                )));
            }
        }
        if let Some(missing) = kernel.bindings.iter().find(|b| {
            !node
                .bindings
                .iter()
                .any(|nb| nb.group == b.group && nb.binding == b.binding)
        }) {
            return Err(mismatch(format!(
                "`{}` is not bound; bind every binding the kernel declares: {}",
                missing.name,
                declared()
            )));
        }
    }
    let classes: Vec<BufferClass> = spec.buffers.iter().map(|b| b.class).collect();
    let uses: Vec<Vec<Use>> = spec.nodes.iter().map(|n| node_uses(spec, n)).collect();
    let analysis = vyre_analysis::analyse(&classes, &uses);
    if let Some(schedule) = &spec.schedule
        && (*schedule.levels != *analysis.levels || *schedule.slots != *analysis.slots)
    {
        return Err(invalid(format!(
            "its schedule (levels {:?}, slots {:?}) disagrees with the runtime's analysis of its nodes (levels {:?}, slots {:?}); it was made by another version of vyre-macros: use matching versions of vyre-graph and vyre-macros, or set `schedule: None`",
            schedule.levels, schedule.slots, analysis.levels, analysis.slots
        )));
    }
    for problem in &analysis.problems {
        let buffer = |i: usize| spec.buffers.get(i).map_or("?", |b| &*b.name);
        let node = |i: usize| spec.nodes.get(i).map_or("?", |n| &*n.label);
        let reason = match *problem {
            Problem::Unused { .. } => continue,
            Problem::WritesReadOnly { node: n, buffer: b } => format!(
                "node `{}` writes `{}`, which is read-only ({}); declare it as an inout or intermediate buffer",
                node(n),
                buffer(b),
                classes
                    .get(b)
                    .map_or_else(|| "?".to_string(), |c| format!("{c:?}"))
            ),
            Problem::ReadBeforeWrite { node: n, buffer: b } => format!(
                "node `{}` reads `{}` before any node writes it; write it first or make it an input",
                node(n),
                buffer(b)
            ),
            Problem::OutputNeverWritten { buffer: b } => format!(
                "no node writes output `{}`; bind it to a kernel binding that writes it",
                buffer(b)
            ),
            Problem::NoSuchBuffer { node: n, buffer: b } => {
                format!("node `{}` uses buffer {b}, which does not exist", node(n))
            }
            Problem::DuplicateUse { node: n, buffer: b } => format!(
                "node `{}` binds `{}` twice; a buffer may appear once per node",
                node(n),
                buffer(b)
            ),
        };
        return Err(invalid(reason));
    }
    Ok(analysis)
}
