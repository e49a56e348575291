//! The seed API: [`GpuDispatchGraph`], an ordered list of ops (a compiled
//! kernel plus its input) dispatched with one queue submission, and
//! [`LaunchAccounting`].
//!
//! It is a thin layer over [`Graph`]: each `dispatch` describes its ops as a
//! [`GraphSpec`] (one input and fresh outputs per op), reuses the ops'
//! compiled pipelines, and runs it once.

use std::borrow::Cow;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::device::gpu::Gpu;
use crate::device::io::{Feed, GpuResource, Sink};
use crate::device::map::Waiting;
use crate::device::pipeline::WgpuPipeline;
use crate::graph::Graph;
use crate::plan::check::checked_element_count;
use crate::plan::program::Program;
use crate::plan::validate::validate;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::{
    Access, BindingKind, BufferClass, BufferSpec, DispatchSize, Extent, GraphSpec, KernelSpec,
    NodeBinding, NodeSpec,
};

/// Submissions a batch of ops costs one at a time versus as one graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LaunchAccounting {
    /// One submission per op.
    pub sequential_submissions: u64,
    /// One submission for the whole graph (0 for no ops).
    pub graph_submissions: u64,
}

impl LaunchAccounting {
    /// `sequential / max(graph, 1)`.
    #[must_use]
    pub fn reduction_factor(&self) -> f64 {
        self.sequential_submissions as f64 / self.graph_submissions.max(1) as f64
    }
}

/// The arithmetic of one-submission graphs: `op_count` sequential
/// submissions versus one (none for zero ops).
///
/// ```
/// let a = vyre_graph::launch_accounting(16);
/// assert_eq!((a.sequential_submissions, a.graph_submissions), (16, 1));
/// assert_eq!(a.reduction_factor(), 16.0);
/// assert_eq!(vyre_graph::launch_accounting(0).graph_submissions, 0);
/// ```
#[must_use]
pub fn launch_accounting(op_count: usize) -> LaunchAccounting {
    LaunchAccounting {
        sequential_submissions: op_count as u64,
        graph_submissions: u64::from(op_count > 0),
    }
}

/// An ordered list of ops, each a compiled kernel and its input, run with a
/// single queue submission.
///
/// Each op's kernel reads its input through its first read-only storage
/// binding and writes one output of the same element count through each
/// read-write storage binding; `dispatch` returns, per op, the bytes of each
/// output. For dataflow between nodes (a node reading what an earlier node
/// wrote, on the device), use [`Graph`] or `graph!`.
#[derive(Clone, Debug, Default)]
pub struct GpuDispatchGraph {
    ops: SmallVec<[(WgpuPipeline, GpuResource); 8]>,
}

impl GpuDispatchGraph {
    /// An empty graph.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Append an op.
    pub fn push(&mut self, pipeline: &WgpuPipeline, input: impl Into<GpuResource>) {
        self.ops.push((pipeline.clone(), input.into()));
    }

    /// Number of ops.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no ops.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Run every op with one submission; the result is, per op, per output
    /// binding (in binding order), the bytes read back. An empty graph
    /// returns an empty vector and touches nothing.
    ///
    /// # Errors
    /// [`BackendError::BindingMismatch`] for a kernel without a read-only
    /// storage binding or with a uniform binding,
    /// [`BackendError::MisalignedInput`] for an input that is not whole
    /// elements, [`BackendError::InvalidHandle`] for a resident input from
    /// another device, and every error of [`Graph::run`]. Nothing is
    /// submitted when any op is invalid.
    ///
    /// Not on wasm32: use [`GpuDispatchGraph::dispatch_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn dispatch(&self, config: &DispatchConfig) -> Result<Vec<Vec<Vec<u8>>>> {
        let waiting = Waiting::Block(config.timeout);
        crate::device::map::block_on(self.dispatch_with(config, waiting))
    }

    /// As [`GpuDispatchGraph::dispatch`], as a future that never blocks
    /// (the way to dispatch in a browser).
    ///
    /// # Errors
    /// As [`GpuDispatchGraph::dispatch`], with [`Graph::run_async`]'s.
    pub async fn dispatch_async(&self, config: &DispatchConfig) -> Result<Vec<Vec<Vec<u8>>>> {
        self.dispatch_with(config, Waiting::Async).await
    }

    /// [`GpuDispatchGraph::dispatch`] and `dispatch_async`, waiting as
    /// `waiting` says.
    async fn dispatch_with(
        &self,
        config: &DispatchConfig,
        waiting: Waiting,
    ) -> Result<Vec<Vec<Vec<u8>>>> {
        let Some((first, _)) = self.ops.first() else {
            return Ok(Vec::new());
        };
        let gpu = first.gpu.clone();
        let mut ops = OpsSpec::default();
        for (i, (pipeline, input)) in self.ops.iter().enumerate() {
            if pipeline.gpu.id() != gpu.id() {
                return Err(op_mismatch(
                    i,
                    pipeline.kernel(),
                    "its pipeline was compiled on another Gpu than op 0's; compile every op on one Gpu",
                ));
            }
            ops.push(i, pipeline, input)?;
        }
        let outputs_per_op = std::mem::take(&mut ops.outputs_per_op);
        let graph = self.graph(&gpu, ops.spec())?;
        let feeds: Vec<Feed<'_>> = self
            .ops
            .iter()
            .map(|(_, input)| match input {
                GpuResource::Borrowed(bytes) => Feed::Host(bytes),
                GpuResource::Resident(h) => Feed::Device(h),
            })
            .collect();
        let mut results: Vec<Vec<u8>> = graph
            .program
            .host_outputs
            .iter()
            .map(|&b| vec![0u8; graph.program.spec.buffers[b].bytes(1) as usize])
            .collect();
        let mut sinks: Vec<Sink<'_>> = results.iter_mut().map(|r| Sink::Host(r)).collect();
        graph
            .run_with(config, 1, &feeds, &mut sinks, waiting)
            .await?;
        drop(sinks);
        let mut results = results.into_iter();
        Ok(outputs_per_op
            .iter()
            .map(|&count| results.by_ref().take(count).collect())
            .collect())
    }

    /// The graph of `spec`, whose kernels are the ops' (their compiled
    /// layouts and pipelines reused, in op order), caching no plan.
    fn graph(&self, gpu: &Gpu, spec: GraphSpec) -> Result<Graph> {
        let analysis = validate(&spec)?;
        let layouts = self
            .ops
            .iter()
            .map(|(p, _)| Arc::clone(&p.layout))
            .collect();
        let pipelines = self.ops.iter().map(|(p, _)| p.pipeline.clone()).collect();
        let node_pipeline = (0..self.ops.len()).collect();
        let program = Program::new(spec, analysis, layouts, pipelines, node_pipeline);
        Ok(Graph::assemble(gpu, program, 0))
    }
}

/// The graph description of a list of ops, built op by op: per op a
/// kernel, its input buffer and a fresh output per read-write binding, and
/// a node.
#[derive(Default)]
struct OpsSpec {
    kernels: Vec<KernelSpec>,
    buffers: Vec<BufferSpec>,
    nodes: Vec<NodeSpec>,
    /// Outputs of each op, in op order.
    outputs_per_op: Vec<usize>,
}

impl OpsSpec {
    /// Add op `i`: `pipeline`'s kernel over `input`.
    fn push(&mut self, i: usize, pipeline: &WgpuPipeline, input: &GpuResource) -> Result<()> {
        let kernel = pipeline.kernel();
        let mismatch = |reason: &str| op_mismatch(i, kernel, reason);
        if kernel
            .bindings
            .iter()
            .any(|b| b.kind == BindingKind::Uniform)
        {
            return Err(mismatch(
                "the seed API binds storage buffers only; build a Graph for kernels with uniforms",
            ));
        }
        let mut sorted: Vec<_> = kernel.bindings.iter().collect();
        sorted.sort_by_key(|b| (b.group, b.binding));
        let Some(src) = sorted
            .iter()
            .find(|b| b.kind == BindingKind::ReadOnlyStorage)
        else {
            return Err(mismatch(
                "the kernel has no read-only storage binding to receive the op's input",
            ));
        };
        let input_bytes = match input {
            GpuResource::Borrowed(bytes) => bytes.len() as u64,
            GpuResource::Resident(h) => h.size(),
        };
        let elements = checked_element_count(&src.name, input_bytes, src.element_size)?;
        let buffer = |name: &str, class, element_size| BufferSpec {
            name: Cow::Owned(format!("op{i}.{name}")),
            class,
            element_size,
            len: Extent::constant(elements),
            header_bytes: 0,
            texture: None,
            append: None,
            empty_value: None,
        };
        let mut bindings = Vec::with_capacity(sorted.len());
        let input_index = self.buffers.len();
        self.buffers
            .push(buffer(&src.name, BufferClass::Input, src.element_size));
        let mut outputs = 0;
        for b in &sorted {
            let index = if std::ptr::eq(*b, *src) {
                input_index
            } else if b.kind == BindingKind::ReadWriteStorage {
                self.buffers
                    .push(buffer(&b.name, BufferClass::Output, b.element_size));
                outputs += 1;
                self.buffers.len() - 1
            } else {
                return Err(mismatch(
                    "only the first read-only storage binding can take the op's input; build a Graph for kernels with several inputs",
                ));
            };
            bindings.push(NodeBinding {
                group: b.group,
                binding: b.binding,
                buffer: index,
            });
        }
        self.outputs_per_op.push(outputs);
        // Each output is a fresh, zero-filled buffer of this op alone, so
        // a read_write binding (which `BindingSpec::storage` counts as read
        // and write) reads zeros, not data a missing node should have
        // written: analyse it as a write, or validation rejects the op.
        let mut kernel = kernel.clone();
        for b in kernel.bindings.to_mut() {
            if b.kind == BindingKind::ReadWriteStorage {
                b.access = Access::Write;
            }
        }
        self.kernels.push(kernel);
        self.nodes.push(NodeSpec {
            label: Cow::Owned(format!("op {i}")),
            kernel: i,
            bindings: Cow::Owned(bindings),
            overrides: Cow::Borrowed(&[]),
            workgroup_size: None,
            size: DispatchSize::Invocations(Extent::constant(elements)),
        });
        Ok(())
    }

    /// The whole description.
    fn spec(self) -> GraphSpec {
        GraphSpec {
            name: Cow::Borrowed("GpuDispatchGraph"),
            kernels: Cow::Owned(self.kernels),
            buffers: Cow::Owned(self.buffers),
            nodes: Cow::Owned(self.nodes),
            features: Cow::Borrowed(&[]),
            schedule: None,
            fused: Cow::Borrowed(&[]),
            loops: Cow::Borrowed(&[]),
        }
    }
}

/// Op `i`'s kernel cannot be one of the seed API's ops.
fn op_mismatch(i: usize, kernel: &KernelSpec, reason: &str) -> BackendError {
    BackendError::BindingMismatch {
        node: format!("op {i}"),
        kernel: kernel.label.to_string(),
        reason: reason.to_string(),
    }
}
