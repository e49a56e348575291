//! [`Program`]: the compiled, immutable part of a graph (its description,
//! analysis, layouts and pipelines), and the checks that need nothing else:
//! the description's consistency at build time and a run's inputs and
//! outputs before anything is planned.

use std::sync::Arc;

use vyre_analysis::{Analysis, Problem, Use};

use crate::config::DispatchConfig;
use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::pipeline::KernelLayout;
use crate::resource::{Feed, Sink, round4};
use crate::spec::{Access, BindingKind, BindingSpec, BufferClass, GraphSpec, NodeSpec};

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
    /// Control steps for append counts, indirect dispatches and loops
    /// (`indirect.rs`).
    pub(crate) steps: crate::steps::Steps,
    /// The control pipeline, when there are steps.
    pub(crate) control: Option<crate::indirect::Control>,
    /// Append capacities grown by `grow` (`append.rs`).
    pub(crate) grown: crate::append::Grown,
}

impl Program {
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
        let steps = crate::steps::plan_steps(&spec, &dispatches);
        Program {
            spec,
            analysis,
            layouts,
            pipelines,
            node_pipeline,
            dispatches,
            host_inputs,
            host_outputs,
            bound,
            steps,
            control: None,
            grown: crate::append::Grown::default(),
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

    /// The effective workgroup size of dispatch `d`.
    pub(crate) fn dispatch_workgroup_size(&self, d: usize) -> [u32; 3] {
        let spec = self.dispatch(d);
        spec.workgroup_size
            .or_else(|| self.spec.kernels.get(spec.kernel).map(|k| k.workgroup_size))
            .unwrap_or([1, 1, 1])
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

    pub(crate) fn zero_problem_size(&self) -> BackendError {
        BackendError::InvalidProblemSize {
            reason: format!(
                "graph `{}` was asked to run with problem size 0; pass at least one element",
                self.spec.name
            ),
        }
    }

    /// Check the feeds and sinks that do not depend on the plan.
    pub(crate) fn check_io(
        &self,
        gpu: &Gpu,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<()> {
        self.check_feed_count(feeds.len())?;
        if sinks.len() != self.host_outputs.len() {
            return Err(BackendError::OutputCountMismatch {
                graph: self.spec.name.to_string(),
                expected: self.host_outputs.len(),
                given: sinks.len(),
                names: self.names(&self.host_outputs),
            });
        }
        if n == 0 {
            return Err(self.zero_problem_size());
        }
        for (feed, &b) in feeds.iter().zip(&self.host_inputs) {
            let spec = &self.spec.buffers[b];
            let expected = spec.bytes(n);
            match feed {
                Feed::Host(bytes) => {
                    let body = (bytes.len() as u64).saturating_sub(u64::from(spec.header_bytes));
                    checked_element_count(&spec.name, body, spec.element_size)?;
                    if bytes.len() as u64 != expected {
                        return Err(BackendError::LengthMismatch {
                            buffer: spec.name.to_string(),
                            n,
                            expected,
                            actual: bytes.len() as u64,
                        });
                    }
                }
                Feed::Device(h) => {
                    // An `Input` handle is bound in place; others are copied.
                    let usage = if spec.class == BufferClass::Input {
                        wgpu::BufferUsages::STORAGE
                    } else {
                        wgpu::BufferUsages::COPY_SRC
                    };
                    h.check(gpu, &spec.name, expected, usage)?;
                }
            }
        }
        let mut readback = 0u64;
        for (sink, &b) in sinks.iter().zip(&self.host_outputs) {
            let spec = &self.spec.buffers[b];
            let expected = self.buffer_bytes(b, n);
            match sink {
                Sink::Host(dst) => {
                    if dst.len() as u64 != expected {
                        return Err(BackendError::LengthMismatch {
                            buffer: spec.name.to_string(),
                            n,
                            expected,
                            actual: dst.len() as u64,
                        });
                    }
                    readback = readback.saturating_add(expected);
                }
                Sink::Device(h) => h.check(
                    gpu,
                    &spec.name,
                    round4(expected),
                    wgpu::BufferUsages::COPY_DST,
                )?,
                Sink::Skip => {}
            }
        }
        if let Some(limit) = config.max_output_bytes
            && readback > limit
        {
            return Err(BackendError::OutputTooLarge {
                requested: readback,
                limit,
            });
        }
        Ok(())
    }
}

/// One dispatch of a run: a node, or a fused group in place of its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dispatch {
    /// `spec.nodes[i]`.
    Node(usize),
    /// `spec.fused[i].dispatch`, recorded where its first member would run.
    Fused(usize),
}

/// The dispatches of `spec` in program order (its groups already checked by
/// [`validate`]).
fn dispatches(spec: &GraphSpec) -> Vec<Dispatch> {
    let mut group_of = vec![None; spec.nodes.len()];
    for (g, group) in spec.fused.iter().enumerate() {
        for &n in group.nodes.iter() {
            if let Some(slot) = group_of.get_mut(n) {
                *slot = Some(g);
            }
        }
    }
    let mut out = Vec::with_capacity(spec.nodes.len());
    for (n, group) in group_of.iter().enumerate() {
        match group {
            None => out.push(Dispatch::Node(n)),
            Some(g) if spec.fused[*g].nodes.first() == Some(&n) => out.push(Dispatch::Fused(*g)),
            Some(_) => {}
        }
    }
    out
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
    let mut uses: Vec<Use> = node
        .bindings
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
        .collect();
    // `over count(b)` and `grid indirect(b)` read `b` (its count, its grid).
    if let Some(b) = node.size.device_source() {
        match uses.iter_mut().find(|u| u.buffer == b) {
            Some(u) => u.access = u.access.union(Access::Read),
            None => uses.push(Use::read(b)),
        }
    }
    uses
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
        check_node(spec, node)?;
    }
    check_fused(spec)?;
    let classes: Vec<BufferClass> = spec.buffers.iter().map(|b| b.class).collect();
    let mut uses: Vec<Vec<Use>> = spec.nodes.iter().map(|n| node_uses(spec, n)).collect();
    crate::loops::check_spec(spec)?;
    crate::loops::add_gate_uses(spec, &mut uses);
    let analysis = vyre_analysis::analyse(&classes, &uses);
    if let Some(schedule) = &spec.schedule
        && (*schedule.levels != *analysis.levels || *schedule.slots != *analysis.slots)
    {
        return Err(invalid(format!(
            "its schedule (levels {:?}, slots {:?}) disagrees with the runtime's analysis of its nodes (levels {:?}, slots {:?}); it was made by another version of vyre-macros: use matching versions of vyre-graph and vyre-macros, or set `schedule: None`",
            schedule.levels, schedule.slots, analysis.levels, analysis.slots
        )));
    }
    // Inside a fused dispatch the members' accesses interleave per element:
    // two of its buffers sharing device memory would overwrite each other.
    for group in spec.fused.iter() {
        let slots: Vec<(usize, usize)> = group
            .dispatch
            .bindings
            .iter()
            .map(|nb| {
                (
                    nb.buffer,
                    analysis.slots.get(nb.buffer).copied().unwrap_or(usize::MAX),
                )
            })
            .collect();
        if let Some((a, b)) = slots.iter().enumerate().find_map(|(i, &(a, sa))| {
            slots[..i]
                .iter()
                .find(|&&(b, sb)| b != a && sb == sa)
                .map(|&(b, _)| (a, b))
        }) {
            return Err(invalid(format!(
                "fused group `{}` binds buffers {b} and {a}, which share device memory; fuse only nodes whose buffers are all live at once",
                group.dispatch.label
            )));
        }
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
            // A `zero` loop's gate sets its flag before the first node.
            Problem::ReadBeforeWrite { node: n, buffer: b }
                if crate::loops::written_by_gate(spec, n, b) =>
            {
                continue;
            }
            // The first append reads a count the runtime set to 0.
            Problem::ReadBeforeWrite { node: n, buffer: b }
                if spec.buffers.get(b).is_some_and(|x| x.append.is_some())
                    && uses
                        .get(n)
                        .is_some_and(|u| u.iter().any(|u| u.buffer == b && u.access.writes())) =>
            {
                continue;
            }
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

/// Check one node's (or fused dispatch's) bindings against its kernel.
fn check_node(spec: &GraphSpec, node: &NodeSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
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
    Ok(())
}

/// Check the fused groups: members exist, are consecutive and belong to
/// one group; each dispatch binds its kernel and only its members' buffers.
fn check_fused(spec: &GraphSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    let mut seen = vec![false; spec.nodes.len()];
    for group in spec.fused.iter() {
        let label = &group.dispatch.label;
        let consecutive = group.nodes.windows(2).all(|w| w[1] == w[0] + 1);
        if group.nodes.len() < 2 || !consecutive {
            return Err(invalid(format!(
                "fused group `{label}` has nodes {:?}; a group holds at least two consecutive nodes, in order",
                group.nodes
            )));
        }
        for &n in group.nodes.iter() {
            match seen.get_mut(n) {
                None => {
                    return Err(invalid(format!(
                        "fused group `{label}` names node {n} but the graph has {} nodes",
                        spec.nodes.len()
                    )));
                }
                Some(true) => {
                    return Err(invalid(format!(
                        "node {n} is in two fused groups; a node belongs to at most one"
                    )));
                }
                Some(s) => *s = true,
            }
        }
        check_node(spec, &group.dispatch)?;
        let foreign = group.dispatch.bindings.iter().find(|nb| {
            !group
                .nodes
                .iter()
                .any(|&n| spec.nodes[n].bindings.iter().any(|m| m.buffer == nb.buffer))
        });
        if let Some(nb) = foreign {
            return Err(invalid(format!(
                "fused group `{label}` binds buffer {}, which none of its nodes binds",
                nb.buffer
            )));
        }
    }
    Ok(())
}

/// Check every kernel against the device's limits before anything is
/// created, so that a device adopted with low limits (or opened with
/// WebGPU's defaults) refuses a graph with a named limit, not a wgpu error.
/// Refuses a device without a feature the graph declares, before anything
/// is created.
pub(crate) fn check_features(gpu: &Gpu, spec: &GraphSpec) -> Result<()> {
    let device = gpu.device().features();
    match spec.features.iter().find(|f| !device.contains(f.wgpu())) {
        Some(f) => Err(BackendError::UnsupportedFeature {
            graph: spec.name.to_string(),
            feature: f.name(),
            wgpu: f.wgpu_name(),
        }),
        None => Ok(()),
    }
}

pub(crate) fn check_limits(gpu: &Gpu, spec: &GraphSpec) -> Result<()> {
    let limits = gpu.limits();
    let exceeded = |kernel: &str, limit: &'static str, needed: u64, available: u64| {
        BackendError::LimitExceeded {
            kernel: kernel.to_string(),
            limit,
            needed,
            available,
        }
    };
    let sizes = spec
        .kernels
        .iter()
        .map(|k| (&*k.label, k.workgroup_size))
        .chain(spec.nodes.iter().filter_map(|n| {
            let kernel = spec.kernels.get(n.kernel)?;
            n.workgroup_size.map(|size| (&*kernel.label, size))
        }));
    for (label, size) in sizes {
        if size.contains(&0) {
            return Err(BackendError::InvalidProgram {
                graph: spec.name.to_string(),
                reason: format!(
                    "kernel `{label}` has workgroup size {size:?}; every dimension must be at least 1"
                ),
            });
        }
        let per_dimension = [
            (
                "max_compute_workgroup_size_x",
                limits.max_compute_workgroup_size_x,
            ),
            (
                "max_compute_workgroup_size_y",
                limits.max_compute_workgroup_size_y,
            ),
            (
                "max_compute_workgroup_size_z",
                limits.max_compute_workgroup_size_z,
            ),
        ];
        for (&d, (name, max)) in size.iter().zip(per_dimension) {
            if d > max {
                return Err(exceeded(label, name, d.into(), max.into()));
            }
        }
        let invocations = size.iter().map(|&d| u64::from(d)).product::<u64>();
        let max = limits.max_compute_invocations_per_workgroup;
        if invocations > u64::from(max) {
            return Err(exceeded(
                label,
                "max_compute_invocations_per_workgroup",
                invocations,
                max.into(),
            ));
        }
    }
    for kernel in spec.kernels.iter() {
        let count =
            |kind: BindingKind| kernel.bindings.iter().filter(|b| b.kind == kind).count() as u64;
        let storage = count(BindingKind::ReadOnlyStorage) + count(BindingKind::ReadWriteStorage);
        let checks = [
            (
                "max_storage_buffers_per_shader_stage",
                storage,
                limits.max_storage_buffers_per_shader_stage,
            ),
            (
                "max_uniform_buffers_per_shader_stage",
                count(BindingKind::Uniform),
                limits.max_uniform_buffers_per_shader_stage,
            ),
            (
                "max_bind_groups",
                kernel
                    .bindings
                    .iter()
                    .map(|b| u64::from(b.group) + 1)
                    .max()
                    .unwrap_or(0),
                limits.max_bind_groups,
            ),
        ];
        for (name, needed, available) in checks {
            if needed > u64::from(available) {
                return Err(exceeded(&kernel.label, name, needed, available.into()));
            }
        }
    }
    Ok(())
}
