//! Planning a problem size (grids, buffers, bind groups) and recording a run:
//! validate everything, then one encoder, one compute pass, one submission,
//! one wait for all readbacks.

use std::num::NonZeroU64;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::config::DispatchConfig;
use crate::error::{BackendError, Result};
use crate::graph::{Graph, RunReport, checked_element_count};
use crate::grid::{check_grid, fold_grid, workgroups_for};
use crate::plan::{BatchDispatchPlan, LaunchRecommendation, PlanCache, PlanConfig, Topology};
use crate::readback::MapSlots;
use crate::resource::{Feed, GpuBufferHandle, Sink};
use crate::spec::{BufferClass, DispatchSize, GridFold};

/// Everything a run of one problem size needs, made once and cached.
pub(crate) struct LaunchPlan {
    pub(crate) plan: BatchDispatchPlan,
    /// Workgroup grid of each node.
    grids: Vec<[u32; 3]>,
    /// Logical bytes of each graph buffer (unrounded).
    bytes: Vec<u64>,
    /// One device buffer per analysis slot.
    slots: Vec<wgpu::Buffer>,
    /// Bind groups of each node, one per kernel group.
    bind_groups: Vec<SmallVec<[wgpu::BindGroup; 2]>>,
    /// Readback buffer of each host output.
    readback: Vec<wgpu::Buffer>,
    /// Where the readback buffers' map callbacks report, reused every run
    /// (one more slot for the timestamps).
    map_slots: Arc<MapSlots>,
    /// Timestamp queries around the pass, made by the first run that asks
    /// for profiling on a device that has them.
    timer: Option<PassTimer>,
    /// The resident handle each input's bind groups currently point at, if
    /// any (kept alive so its identity cannot be reused).
    bound_handles: Vec<Option<GpuBufferHandle>>,
}

impl Drop for LaunchPlan {
    fn drop(&mut self) {
        // Free device memory now rather than when wgpu gets round to it.
        for b in self.slots.iter().chain(&self.readback) {
            b.destroy();
        }
    }
}

/// Two timestamps (pass begin and end), resolved and read back with the
/// outputs when a run asks for profiling.
struct PassTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl PassTimer {
    fn new(gpu: &crate::gpu::Gpu) -> Option<Self> {
        if !gpu.has_timestamps() {
            return None;
        }
        let queries = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("vyre pass timer"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let buffer = |usage| {
            gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre pass timer"),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            queries,
            resolve: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            read: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
        })
    }
}

fn round4(bytes: u64) -> u64 {
    bytes.max(4).next_multiple_of(4)
}

/// Grids and sizes for `n`, checked against the device limits and the budget
/// before any device memory is allocated.
struct Sizing {
    grids: Vec<[u32; 3]>,
    bytes: Vec<u64>,
    slot_bytes: Vec<u64>,
    recommendation: LaunchRecommendation,
    workgroup_size_x: u32,
}

fn node_grid(graph: &Graph, node: usize, n: u64, config: &DispatchConfig) -> Result<[u32; 3]> {
    let spec = &graph.spec.nodes[node];
    let max = graph.gpu.limits().max_compute_workgroups_per_dimension;
    let too_large = |workgroups: u64| BackendError::GridTooLarge {
        node: spec.label.to_string(),
        workgroups,
        max,
    };
    if let Some(grid) = config.grid_override {
        return check_grid(grid.map(u64::from), max).map_err(|e| too_large(e.workgroups));
    }
    match spec.size {
        DispatchSize::Invocations(extent) => {
            let wg = config
                .workgroup_override
                .unwrap_or(graph.spec.node_workgroup_size(node)[0]);
            let total = workgroups_for(extent.eval(n), wg);
            let grid = fold_grid(total, max).map_err(|e| too_large(e.workgroups))?;
            let kernel = &graph.spec.kernels[spec.kernel];
            if grid[0] == max && total > u64::from(max) && kernel.fold == GridFold::XOnly {
                return Err(BackendError::GridNotFoldable {
                    node: spec.label.to_string(),
                    kernel: kernel.label.to_string(),
                    workgroups: total,
                    max,
                });
            }
            Ok(grid)
        }
        DispatchSize::Workgroups(extents) => {
            check_grid(extents.map(|e| e.eval(n)), max).map_err(|e| too_large(e.workgroups))
        }
    }
}

fn size(graph: &Graph, n: u64, config: &DispatchConfig) -> Result<Sizing> {
    if n == 0 {
        return Err(zero_problem_size(graph));
    }
    let limits = graph.gpu.limits();
    let mut bytes = Vec::with_capacity(graph.spec.buffers.len());
    for b in graph.spec.buffers.iter() {
        let logical = b.bytes(n);
        let max = if b.class == BufferClass::Uniform {
            limits.max_uniform_buffer_binding_size
        } else {
            limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size)
        };
        if logical == 0 {
            return Err(BackendError::InvalidProblemSize {
                reason: format!(
                    "buffer `{}` ({} elements) is empty for problem size {n}; choose n so that every buffer holds at least one element",
                    b.name, b.len
                ),
            });
        }
        if round4(logical) > max {
            return Err(BackendError::BufferTooLarge {
                buffer: b.name.to_string(),
                bytes: logical,
                max,
            });
        }
        bytes.push(logical);
    }
    // The plan is cached and reused by later runs: plan the nodes' own grids,
    // never this run's overrides (`run` computes those for its run only).
    let planned = DispatchConfig {
        grid_override: None,
        workgroup_override: None,
        ..config.clone()
    };
    let mut grids = Vec::with_capacity(graph.spec.nodes.len());
    let mut worker_groups = 0u64;
    let mut workgroup_size_x = 1;
    for node in 0..graph.spec.nodes.len() {
        let grid = node_grid(graph, node, n, &planned)?;
        let total = grid.iter().map(|&d| u64::from(d)).product::<u64>();
        if total > worker_groups {
            worker_groups = total;
            workgroup_size_x = graph.spec.node_workgroup_size(node)[0];
        }
        grids.push(grid);
    }
    let rounded: Vec<u64> = bytes.iter().map(|&b| round4(b)).collect();
    let slot_bytes = graph.analysis.slot_bytes(&rounded);
    let readback_bytes: u64 = graph.host_outputs.iter().map(|&b| rounded[b]).sum();
    let peak = slot_bytes
        .iter()
        .sum::<u64>()
        .saturating_add(readback_bytes);
    let widths: Vec<usize> = graph
        .analysis
        .nodes_by_level()
        .iter()
        .map(Vec::len)
        .collect();
    let recommendation = LaunchRecommendation {
        worker_groups: u32::try_from(worker_groups).unwrap_or(u32::MAX),
        hit_capacity: worker_groups.saturating_mul(u64::from(workgroup_size_x)),
        estimated_peak_device_bytes: peak,
        topology: Topology::classify(&widths),
    };
    Ok(Sizing {
        grids,
        bytes,
        slot_bytes,
        recommendation,
        workgroup_size_x,
    })
}

fn zero_problem_size(graph: &Graph) -> BackendError {
    BackendError::InvalidProblemSize {
        reason: format!(
            "graph `{}` was asked to run with problem size 0; pass at least one element",
            graph.spec.name
        ),
    }
}

fn check_budget(plan: &BatchDispatchPlan) -> Result<()> {
    if plan.fits_budget() {
        Ok(())
    } else {
        Err(BackendError::DeviceOutOfMemory {
            requested: plan.estimated_peak_device_bytes,
            available: plan.device_memory_budget_bytes,
        })
    }
}

fn usage_of(class: BufferClass) -> wgpu::BufferUsages {
    match class {
        BufferClass::Uniform => wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        _ => {
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC
        }
    }
}

impl LaunchPlan {
    fn build(graph: &Graph, sizing: Sizing, plan: BatchDispatchPlan) -> Self {
        let gpu = &graph.gpu;
        let analysis = &graph.analysis;
        let mut usages = vec![wgpu::BufferUsages::empty(); analysis.slot_count];
        for (b, spec) in graph.spec.buffers.iter().enumerate() {
            usages[analysis.slots[b]] |= usage_of(spec.class);
        }
        let slots: Vec<wgpu::Buffer> = sizing
            .slot_bytes
            .iter()
            .zip(&usages)
            .map(|(&size, &usage)| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&graph.spec.name),
                    size: round4(size),
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let readback: Vec<wgpu::Buffer> = graph
            .host_outputs
            .iter()
            .map(|&b| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&graph.spec.buffers[b].name),
                    size: round4(sizing.bytes[b]),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut plan = LaunchPlan {
            plan,
            grids: sizing.grids,
            bytes: sizing.bytes,
            slots,
            bind_groups: Vec::new(),
            map_slots: MapSlots::new(readback.len() + 1),
            timer: None,
            readback,
            bound_handles: vec![None; graph.spec.buffers.len()],
        };
        plan.bind_groups = (0..graph.spec.nodes.len())
            .map(|node| plan.make_bind_groups(graph, node))
            .collect();
        plan
    }

    /// The device buffer graph buffer `b` lives in for this run.
    fn buffer_of(&self, graph: &Graph, b: usize) -> &wgpu::Buffer {
        match &self.bound_handles[b] {
            Some(h) => h.buffer(),
            None => &self.slots[graph.analysis.slots[b]],
        }
    }

    /// The size to bind buffer `b` with: its own bytes, so that
    /// `arrayLength` sees the buffer and not a larger aliased slot or
    /// resident handle; the whole buffer (`None`) when that is the same.
    fn binding_size(&self, graph: &Graph, b: usize) -> Option<NonZeroU64> {
        let bytes = round4(self.bytes[b]);
        if self.buffer_of(graph, b).size() == bytes {
            None
        } else {
            NonZeroU64::new(bytes)
        }
    }

    fn make_bind_groups(&self, graph: &Graph, node: usize) -> SmallVec<[wgpu::BindGroup; 2]> {
        let spec = &graph.spec.nodes[node];
        let layout = &graph.layouts[spec.kernel];
        layout
            .groups
            .iter()
            .enumerate()
            .map(|(group, bgl)| {
                let entries: SmallVec<[wgpu::BindGroupEntry<'_>; 8]> = spec
                    .bindings
                    .iter()
                    .filter(|nb| nb.group as usize == group)
                    .map(|nb| wgpu::BindGroupEntry {
                        binding: nb.binding,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: self.buffer_of(graph, nb.buffer),
                            offset: 0,
                            size: self.binding_size(graph, nb.buffer),
                        }),
                    })
                    .collect();
                graph.gpu.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&spec.label),
                    layout: bgl,
                    entries: &entries,
                })
            })
            .collect()
    }

    /// Point input `b`'s bindings at `handle` (or back at the plan's own
    /// buffer), rebuilding only the bind groups of nodes that use it, and
    /// only when it changed.
    fn bind_input(&mut self, graph: &Graph, b: usize, handle: Option<&GpuBufferHandle>) {
        let same = match (&self.bound_handles[b], handle) {
            (None, None) => true,
            (Some(old), Some(new)) => std::ptr::eq(old.buffer(), new.buffer()),
            _ => false,
        };
        if same {
            return;
        }
        self.bound_handles[b] = handle.cloned();
        for node in 0..graph.spec.nodes.len() {
            if graph.spec.nodes[node]
                .bindings
                .iter()
                .any(|nb| nb.buffer == b)
            {
                self.bind_groups[node] = self.make_bind_groups(graph, node);
            }
        }
    }
}

/// Plan `n` (from the cache, or sized, budget-checked and allocated) and
/// hand it to `f` with the cache locked.
fn with_plan<T>(
    graph: &Graph,
    n: u64,
    config: &DispatchConfig,
    f: impl FnOnce(&mut LaunchPlan, bool, usize) -> Result<T>,
) -> Result<T> {
    let mut cache = graph
        .cache
        .lock()
        .map_err(|_| BackendError::DispatchFailed {
            reason: "a previous run panicked while holding the plan cache".into(),
        })?;
    let budget = config.device_memory_budget_bytes;
    if cache.contains(n) {
        let entries = cache.len();
        let plan = cached(&mut cache, n)?;
        plan.plan.device_memory_budget_bytes = budget;
        check_budget(&plan.plan)?;
        return f(plan, true, entries);
    }
    let sizing = size(graph, n, config)?;
    let plan_config = PlanConfig::default()
        .with_workgroup_size_x(sizing.workgroup_size_x)
        .with_device_memory_budget_bytes(budget);
    let plan = BatchDispatchPlan::new(n, &sizing.recommendation, &plan_config);
    check_budget(&plan)?;
    let mut launch = LaunchPlan::build(graph, sizing, plan);
    if cache.capacity() == 0 {
        return f(&mut launch, false, 0);
    }
    // Evicted plans are dropped here, which frees their device buffers.
    drop(cache.insert(n, launch));
    let entries = cache.len();
    f(cached(&mut cache, n)?, false, entries)
}

/// The cached plan of `n`, marked most recently used.
fn cached(cache: &mut PlanCache<LaunchPlan>, n: u64) -> Result<&mut LaunchPlan> {
    cache
        .get_mut(n)
        .ok_or_else(|| BackendError::DispatchFailed {
            reason: "the plan just cached is missing; please report this".into(),
        })
}

pub(crate) fn plan_only(
    graph: &Graph,
    n: u64,
    config: &DispatchConfig,
) -> Result<BatchDispatchPlan> {
    with_plan(graph, n, config, |plan, _, _| Ok(plan.plan))
}

/// Check the feeds and sinks that do not depend on the plan.
fn check_io(
    graph: &Graph,
    n: u64,
    feeds: &[Feed<'_>],
    sinks: &[Sink<'_>],
    config: &DispatchConfig,
) -> Result<()> {
    graph.check_feed_count(feeds.len())?;
    if sinks.len() != graph.host_outputs.len() {
        return Err(BackendError::OutputCountMismatch {
            graph: graph.spec.name.to_string(),
            expected: graph.host_outputs.len(),
            given: sinks.len(),
            names: graph.names(&graph.host_outputs),
        });
    }
    if n == 0 {
        return Err(zero_problem_size(graph));
    }
    for (feed, &b) in feeds.iter().zip(&graph.host_inputs) {
        let spec = &graph.spec.buffers[b];
        let expected = spec.bytes(n);
        match feed {
            Feed::Host(bytes) => {
                checked_element_count(&spec.name, bytes.len() as u64, spec.element_size)?;
                if bytes.len() as u64 != expected {
                    return Err(BackendError::LengthMismatch {
                        buffer: spec.name.to_string(),
                        n,
                        expected,
                        actual: bytes.len() as u64,
                    });
                }
            }
            Feed::Device(h) => h.check(&graph.gpu, &spec.name, expected)?,
        }
    }
    let mut readback = 0u64;
    for (sink, &b) in sinks.iter().zip(&graph.host_outputs) {
        let spec = &graph.spec.buffers[b];
        let expected = spec.bytes(n);
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
            Sink::Device(h) => h.check(&graph.gpu, &spec.name, round4(expected))?,
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

pub(crate) fn run(
    graph: &Graph,
    n: u64,
    feeds: &[Feed<'_>],
    sinks: &mut [Sink<'_>],
    config: &DispatchConfig,
) -> Result<RunReport> {
    check_io(graph, n, feeds, sinks, config)?;
    // Grids that the config overrides are computed for this run only, and
    // checked before anything is planned or allocated.
    let override_grids: Option<Vec<[u32; 3]>> =
        if config.grid_override.is_some() || config.workgroup_override.is_some() {
            Some(
                (0..graph.spec.nodes.len())
                    .map(|node| node_grid(graph, node, n, config))
                    .collect::<Result<_>>()?,
            )
        } else {
            None
        };
    with_plan(graph, n, config, |plan, cache_hit, cache_entries| {
        let mut report = RunReport {
            n,
            plan: plan.plan,
            cache_hit,
            cache_entries,
            submissions: 0,
            record_ns: 0,
            gpu_ns: None,
        };
        if graph.spec.nodes.is_empty() {
            return Ok(report);
        }
        let gpu = &graph.gpu;
        // Inputs: resident `Input` handles are bound in place; everything
        // else is written into the plan's buffers.
        let mut copies: SmallVec<[(usize, &GpuBufferHandle); 4]> = SmallVec::new();
        for (feed, &b) in feeds.iter().zip(&graph.host_inputs) {
            let class = graph.spec.buffers[b].class;
            match feed {
                Feed::Device(h) if class == BufferClass::Input => {
                    plan.bind_input(graph, b, Some(h))
                }
                Feed::Device(h) => {
                    plan.bind_input(graph, b, None);
                    copies.push((b, h));
                }
                Feed::Host(bytes) => {
                    plan.bind_input(graph, b, None);
                    crate::resource::upload(gpu, plan.buffer_of(graph, b), bytes);
                }
            }
        }
        let label = config.label.as_deref().unwrap_or(&graph.spec.name);
        if config.profile && plan.timer.is_none() {
            plan.timer = PassTimer::new(gpu);
        }
        let timer = plan.timer.as_ref().filter(|_| config.profile);
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let record_start = std::time::Instant::now();
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        for &(b, h) in &copies {
            encoder.copy_buffer_to_buffer(
                h.buffer(),
                0,
                plan.buffer_of(graph, b),
                0,
                round4(plan.bytes[b]),
            );
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: timer.map(|t| wgpu::ComputePassTimestampWrites {
                    query_set: &t.queries,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            let grids = override_grids.as_deref().unwrap_or(&plan.grids);
            // Pipeline state persists across dispatches in a pass: set it
            // only when it changes (a chain of one kernel sets it once).
            let mut current = usize::MAX;
            for (node, grid) in grids.iter().enumerate() {
                if grid.contains(&0) {
                    continue;
                }
                let pipeline = graph.node_pipeline[node];
                if pipeline != current {
                    pass.set_pipeline(&graph.pipelines[pipeline]);
                    current = pipeline;
                }
                for (group, bind_group) in plan.bind_groups[node].iter().enumerate() {
                    pass.set_bind_group(group as u32, bind_group, &[]);
                }
                pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
            }
        }
        let mut reads_back = false;
        for (k, (sink, &b)) in sinks.iter().zip(&graph.host_outputs).enumerate() {
            let src = plan.buffer_of(graph, b);
            let bytes = round4(plan.bytes[b]);
            match sink {
                Sink::Host(_) => {
                    encoder.copy_buffer_to_buffer(src, 0, &plan.readback[k], 0, bytes);
                    reads_back = true;
                }
                Sink::Device(h) => encoder.copy_buffer_to_buffer(src, 0, h.buffer(), 0, bytes),
                Sink::Skip => {}
            }
        }
        if let Some(t) = timer {
            encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, 16);
        }
        let command = encoder.finish();
        report.record_ns = u64::try_from(record_start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let index = gpu.submit(command);
        report.submissions = 1;
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        if !reads_back && timer.is_none() {
            return Ok(report);
        }
        let mut stamps = [0u8; 16];
        let mut targets: SmallVec<[(&wgpu::Buffer, &mut [u8]); 4]> = SmallVec::new();
        let readback = &plan.readback;
        let plan_slots = &plan.map_slots;
        for (k, sink) in sinks.iter_mut().enumerate() {
            if let Sink::Host(dst) = sink {
                targets.push((&readback[k], &mut **dst));
            }
        }
        if let Some(t) = timer {
            targets.push((&t.read, &mut stamps[..]));
        }
        crate::readback::map_and_copy(gpu, plan_slots, Some(index), config.timeout, &mut targets)?;
        drop(targets);
        if timer.is_some() {
            let [begin, end]: [u64; 2] = bytemuck::pod_read_unaligned(&stamps);
            let period = f64::from(gpu.queue().get_timestamp_period());
            report.gpu_ns = Some((end.saturating_sub(begin) as f64 * period) as u64);
        }
        Ok(report)
    })
}
