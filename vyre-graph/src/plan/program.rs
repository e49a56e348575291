//! [`Program`]: the compiled, immutable part of a graph (its description,
//! analysis, layouts and pipelines, the grid-stride pipelines, samplers and
//! control pipeline, the control steps), built once by `Graph::new`
//! ([`Program::build`]); and what a run records, in order ([`Dispatch`]).

use std::sync::{Arc, Mutex, PoisonError};

use vyre_analysis::Analysis;

use super::control::Control;
use super::dispatch::{Dispatch, dispatches};
use super::steps::{Steps, plan_steps};
use super::stride::StridePipelines;
use super::support::{check_features, check_limits};
use super::validate::validate;
use crate::device::gpu::Gpu;
use crate::device::pipeline::{KernelLayout, build_pipeline};
use crate::device::texture::create_samplers;
use crate::spec::error::Result;
use crate::spec::{GraphSpec, NodeSpec, OverrideValue};

/// What a run reads and never changes: made once by `Graph::new`.
pub(crate) struct Program {
    pub(crate) spec: GraphSpec,
    pub(crate) analysis: Analysis,
    pub(crate) layouts: Vec<Arc<KernelLayout>>,
    pub(crate) pipelines: Vec<wgpu::ComputePipeline>,
    /// Pipeline index of each node, then of each fused group (in
    /// `spec.fused` order).
    pub(crate) node_pipeline: Vec<usize>,
    /// What a run records, in order: the nodes, each fused group in place
    /// of its members (see [`Dispatch`]).
    pub(crate) dispatches: Vec<Dispatch>,
    /// Host inputs, in run order (indices into `spec.buffers`).
    pub(crate) host_inputs: Vec<usize>,
    /// Host outputs, in run order.
    pub(crate) host_outputs: Vec<usize>,
    /// Whether a dispatch binds each buffer. One that none binds (an
    /// intermediate a fused group keeps in registers) is never allocated at
    /// its size.
    pub(crate) bound: Vec<bool>,
    /// The sampler of each graph resource that is a sampler, made once per
    /// graph.
    pub(crate) samplers: Vec<Option<wgpu::Sampler>>,
    /// Control steps for append counts, indirect dispatches and loops
    /// (`steps.rs`, `control.rs`).
    pub(crate) steps: Steps,
    /// The control pipeline, when there are steps.
    pub(crate) control: Option<Control>,
    /// Append capacities grown by `grow` (`append.rs`).
    pub(crate) grown: Grown,
    /// Iterations each loop needed in the last runs, by size (`trips.rs`).
    pub(crate) trips: super::trips::Trips,
    /// The fused groups' grid-stride pipelines (set by `Program::build`).
    pub(crate) stride: StridePipelines,
    /// How a trace shows its dispatches (`tracks.rs`), shared with every
    /// run's report.
    pub(crate) tracks: Arc<super::tracks::Tracks>,
}

impl Program {
    /// Validate `spec` against itself and the device, compile its kernels
    /// and build every pipeline: one per distinct (kernel, overrides) of
    /// the nodes, then of the fused groups' dispatches, then the fused
    /// groups' grid-stride loops; the graph's samplers and its control
    /// pipeline.
    ///
    /// # Errors
    /// As [`Graph::new`](crate::Graph::new).
    ///
    /// Every device verdict (each kernel's compilation) is awaited: natively
    /// it is known at once, a browser answers later. No lock is held.
    pub(crate) async fn build(gpu: &Gpu, spec: GraphSpec) -> Result<Program> {
        let analysis = validate(&spec)?;
        check_features(gpu, &spec)?;
        check_limits(gpu, &spec)?;
        let mut layouts = Vec::with_capacity(spec.kernels.len());
        for kernel in spec.kernels.iter() {
            layouts.push(Arc::new(KernelLayout::new(gpu, kernel).await?));
        }
        let (keys, node_pipeline) = pipeline_keys(&spec);
        let mut pipelines = Vec::with_capacity(keys.len());
        for (k, overrides) in &keys {
            let (Some(kernel), Some(layout)) = (spec.kernels.get(*k), layouts.get(*k)) else {
                return Err(crate::spec::error::BackendError::InvalidProgram {
                    graph: spec.name.to_string(),
                    reason: format!("a node names kernel {k}, which does not exist"),
                });
            };
            pipelines.push(build_pipeline(gpu, kernel, layout, overrides).await?);
        }
        let stride = super::stride::build(gpu, &spec, &layouts, &mut pipelines).await?;
        let mut program = Program::new(spec, analysis, layouts, pipelines, node_pipeline);
        program.stride = stride;
        program.samplers = create_samplers(gpu, &program.spec);
        program.control = Control::new(gpu, &program.steps).await?;
        Ok(program)
    }

    pub(crate) fn new(
        spec: GraphSpec,
        analysis: Analysis,
        layouts: Vec<Arc<KernelLayout>>,
        pipelines: Vec<wgpu::ComputePipeline>,
        node_pipeline: Vec<usize>,
    ) -> Self {
        let host_inputs = spec.host_inputs().collect();
        let host_outputs = spec.host_outputs().collect();
        let dispatches = dispatches(&spec);
        let mut bound = vec![false; spec.buffers.len()];
        for d in &dispatches {
            let node = match *d {
                Dispatch::Node(n) => spec.nodes.get(n),
                Dispatch::Fused(g) => spec.fused.get(g).map(|g| &g.dispatch),
            };
            for nb in node.map_or(&[][..], |n| &n.bindings) {
                if let Some(b) = bound.get_mut(nb.buffer) {
                    *b = true;
                }
            }
        }
        // Host inputs and outputs are written and read whatever binds them.
        for b in spec.host_inputs().chain(spec.host_outputs()) {
            if let Some(b) = bound.get_mut(b) {
                *b = true;
            }
        }
        // Counts and indirect grids are read from buffers too.
        for d in &dispatches {
            if let Dispatch::Node(n) = *d
                && let Some(b) = spec.nodes[n].size.device_source()
                && let Some(b) = bound.get_mut(b)
            {
                *b = true;
            }
        }
        let steps = plan_steps(&spec, &dispatches);
        let tracks = Arc::new(super::tracks::Tracks::new(&spec, &dispatches, &steps));
        Program {
            tracks,
            spec,
            analysis,
            layouts,
            pipelines,
            node_pipeline,
            dispatches,
            host_inputs,
            host_outputs,
            bound,
            samplers: Vec::new(),
            steps,
            control: None,
            grown: Grown::default(),
            trips: super::trips::Trips::default(),
            stride: StridePipelines::default(),
        }
    }

    /// The node (or fused group's dispatch) that dispatch `d` records.
    pub(crate) fn dispatch(&self, d: usize) -> &NodeSpec {
        match self.dispatches[d] {
            Dispatch::Node(n) => &self.spec.nodes[n],
            Dispatch::Fused(g) => &self.spec.fused[g].dispatch,
        }
    }

    /// The pipeline of dispatch `d`.
    pub(crate) fn dispatch_pipeline(&self, d: usize) -> usize {
        match self.dispatches[d] {
            Dispatch::Node(n) => self.node_pipeline[n],
            Dispatch::Fused(g) => self.node_pipeline[self.spec.nodes.len() + g],
        }
    }

    /// The grid-stride pipeline of dispatch `d` and its adapter workgroup
    /// count, when it has one.
    pub(crate) fn stride_pipeline(&self, d: usize) -> Option<(usize, u32)> {
        match self.dispatches[d] {
            Dispatch::Node(_) => None,
            Dispatch::Fused(g) => self.stride.by_group.get(g).copied().flatten(),
        }
    }

    /// The effective workgroup size of dispatch `d`.
    pub(crate) fn dispatch_workgroup_size(&self, d: usize) -> [u32; 3] {
        let spec = self.dispatch(d);
        spec.workgroup_size
            .or_else(|| self.spec.kernels.get(spec.kernel).map(|k| k.workgroup_size))
            .unwrap_or([1, 1, 1])
    }

    /// Elements of buffer `b` at problem size `n` (an append buffer's grown
    /// capacity, when it grew).
    pub(crate) fn buffer_elements(&self, b: usize, n: u64) -> u64 {
        let spec = &self.spec.buffers[b];
        match spec.append.and_then(|_| self.grown.get(n, b)) {
            Some(capacity) => capacity.max(spec.elements(n)),
            None => spec.elements(n),
        }
    }

    /// Bytes of buffer `b` at problem size `n`, header included.
    pub(crate) fn buffer_bytes(&self, b: usize, n: u64) -> u64 {
        let spec = &self.spec.buffers[b];
        self.buffer_elements(b, n)
            .saturating_mul(u64::from(spec.element_size))
            .saturating_add(u64::from(spec.header_bytes))
    }

    /// Drops the capacities grown for problem size `n` (see
    /// `sizing::check`); whether there were any.
    pub(crate) fn forget_growth(&self, n: u64) -> bool {
        self.grown.forget(n)
    }
}

/// The distinct (kernel, overrides) pairs of `spec`'s nodes and then its
/// fused groups' dispatches, each one pipeline, and the pipeline of each
/// (`Program::node_pipeline`); members of a fused group are never recorded
/// and get none (`usize::MAX`).
fn pipeline_keys(spec: &GraphSpec) -> (Vec<(usize, &[OverrideValue])>, Vec<usize>) {
    let mut keys: Vec<(usize, &[OverrideValue])> = Vec::new();
    let mut node_pipeline = Vec::with_capacity(spec.nodes.len());
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
    (keys, node_pipeline)
}

/// Capacities grown by `grow`: `(n, buffer, capacity)`.
#[derive(Debug, Default)]
pub(crate) struct Grown(Mutex<Vec<(u64, usize, u64)>>);

impl Grown {
    pub(crate) fn get(&self, n: u64, buffer: usize) -> Option<u64> {
        let grown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        grown
            .iter()
            .find(|&&(m, b, _)| m == n && b == buffer)
            .map(|&(_, _, c)| c)
    }

    pub(crate) fn set(&self, n: u64, buffer: usize, capacity: u64) {
        let mut grown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        grown.retain(|&(m, b, _)| !(m == n && b == buffer));
        grown.push((n, buffer, capacity));
    }

    /// Drops every capacity grown for `n`; whether there was one.
    pub(crate) fn forget(&self, n: u64) -> bool {
        let mut grown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let before = grown.len();
        grown.retain(|&(m, _, _)| m != n);
        grown.len() != before
    }
}
