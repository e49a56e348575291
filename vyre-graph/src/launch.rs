//! A launch plan: everything a run of one problem size needs (grids, device
//! buffers, bind groups, readback buffers), sized and checked against the
//! device's limits and the budget before any memory is allocated, then kept
//! in the graph's cache. This is the runtime's resource tracking; recording
//! commands is `record.rs`'s job.

use std::num::NonZeroU64;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::config::DispatchConfig;
use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::grid::{check_grid, fold_grid, workgroups_for};
use crate::plan::{BatchDispatchPlan, LaunchRecommendation, PlanConfig, Topology};
use crate::program::Program;
use crate::readback::MapSlots;
use crate::resource::{BoundHandle, Feed, GpuBufferHandle, round4};
use crate::spec::{BufferClass, DispatchSize, GridFold};

/// Everything a run of one problem size needs, made once and cached.
pub(crate) struct LaunchPlan {
    /// The device, to free the plan's buffers when it is dropped.
    gpu: Gpu,
    /// Whether dropping the plan destroys its buffers at once (not while a
    /// caller's command buffer that names them may still be submitted).
    destroy_on_drop: bool,
    pub(crate) plan: BatchDispatchPlan,
    /// Workgroup grid of each dispatch (`Program::dispatches`).
    pub(crate) grids: Vec<[u32; 3]>,
    /// Logical bytes of each graph buffer (unrounded).
    pub(crate) bytes: Vec<u64>,
    /// One device buffer per analysis slot.
    pub(crate) slots: Vec<wgpu::Buffer>,
    /// Bind groups of each dispatch, one per kernel group.
    pub(crate) bind_groups: Vec<SmallVec<[wgpu::BindGroup; 2]>>,
    /// Readback buffer of each host output.
    pub(crate) readback: Vec<wgpu::Buffer>,
    /// Where the readback buffers' map callbacks report, reused every run
    /// (one more slot for the timestamps).
    pub(crate) map_slots: Arc<MapSlots>,
    /// Timestamp queries around the pass, made by the first run that asks
    /// for profiling on a device that has them.
    pub(crate) timer: Option<PassTimer>,
    /// The resident handle each input's bind groups currently point at, if
    /// any (a weak reference: a dropped handle's memory is freed at once).
    bound_handles: Vec<Option<BoundHandle>>,
    /// Control blocks, loop states and the status of a data-dependent
    /// graph (`indirect.rs`).
    pub(crate) control: Option<crate::indirect::ControlPlan>,
}

impl Drop for LaunchPlan {
    fn drop(&mut self) {
        // Free device memory now rather than when wgpu gets round to it.
        let timer = self.timer.iter().flat_map(|t| [&t.resolve, &t.read]);
        let control = self.control.iter().flat_map(|c| c.buffers());
        for b in self
            .slots
            .iter()
            .chain(&self.readback)
            .chain(timer)
            .chain(control)
        {
            if self.destroy_on_drop {
                self.gpu.free_buffer(b);
            } else {
                // wgpu frees it once nothing refers to it any more.
                self.gpu.forget_buffer(b);
            }
        }
    }
}

/// Timestamps of a profiled run, resolved and read back with the outputs:
/// the pass's begin and end (queries 0 and 1) and, where the device has
/// timestamps inside passes, one before each dispatch and one after the
/// last (queries 2 to 2 + dispatches).
pub(crate) struct PassTimer {
    pub(crate) queries: wgpu::QuerySet,
    pub(crate) resolve: wgpu::Buffer,
    pub(crate) read: wgpu::Buffer,
    /// Queries in the set.
    pub(crate) count: u32,
    /// Whether the set has per-dispatch queries.
    pub(crate) per_dispatch: bool,
}

impl PassTimer {
    fn new(gpu: &Gpu, dispatches: usize) -> Option<Self> {
        if !gpu.has_timestamps() {
            return None;
        }
        let per_dispatch = gpu
            .device()
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        let extra = if per_dispatch {
            u32::try_from(dispatches).ok()?.checked_add(1)?
        } else {
            0
        };
        let count = extra.checked_add(2)?.min(wgpu::QUERY_SET_MAX_QUERIES);
        let per_dispatch = per_dispatch && count == extra + 2;
        let queries = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("vyre pass timer"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let buffer = |usage| {
            gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre pass timer"),
                size: u64::from(count) * 8,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            queries,
            resolve: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            read: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            count,
            per_dispatch: per_dispatch && count > 2,
        })
    }
}

/// Grids and sizes for `n`, checked against the device limits and the budget
/// before any device memory is allocated.
pub(crate) struct Sizing {
    grids: Vec<[u32; 3]>,
    bytes: Vec<u64>,
    slot_bytes: Vec<u64>,
    recommendation: LaunchRecommendation,
    workgroup_size_x: u32,
}

/// The workgroup grid of dispatch `node` (an index into
/// `Program::dispatches`: a node, or a fused group) for problem size `n`:
/// its own, or the config's override. Refuses a grid with no workgroups (a node that would
/// silently not run), one past the device's limits, a fold of a kernel that
/// cannot see it, and more invocations than a `u32` index reaches.
pub(crate) fn node_grid(
    gpu: &Gpu,
    program: &Program,
    node: usize,
    n: u64,
    config: &DispatchConfig,
) -> Result<[u32; 3]> {
    let spec = program.dispatch(node);
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let too_large = |workgroups: u64| BackendError::GridTooLarge {
        node: spec.label.to_string(),
        workgroups,
        max,
    };
    let empty = |what: String| BackendError::InvalidProblemSize {
        reason: format!(
            "node `{}` would launch no workgroup ({what}) and so would not run; give every grid dimension at least 1",
            spec.label
        ),
    };
    if spec.size.device_source().is_some() {
        // Sized on the device, right before the dispatch (`indirect.rs`).
        return Ok([0, 1, 1]);
    }
    if let Some(grid) = config.grid_override {
        if grid.contains(&0) {
            return Err(empty(format!("`grid_override` is {grid:?}")));
        }
        return check_grid(grid.map(u64::from), max).map_err(|e| too_large(e.workgroups));
    }
    match spec.size {
        DispatchSize::Invocations(extent) => {
            let wg = config
                .workgroup_override
                .unwrap_or(program.dispatch_workgroup_size(node)[0])
                .max(1);
            let invocations = extent.eval(n);
            if invocations == 0 {
                return Err(empty(format!("`over {extent}` is 0 at n = {n}")));
            }
            let total = workgroups_for(invocations, wg);
            // `global_invocation_id.x` is a u32: past 2^32 invocations the
            // linear index a kernel sees would wrap.
            if total.saturating_mul(u64::from(wg)) > 1 << 32 {
                return Err(too_large(total));
            }
            let grid = fold_grid(total, max).map_err(|e| too_large(e.workgroups))?;
            let kernel = &program.spec.kernels[spec.kernel];
            if total > u64::from(max) && kernel.fold == GridFold::XOnly {
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
            let grid = extents.map(|e| e.eval(n));
            if grid.contains(&0) {
                return Err(empty(format!(
                    "grid [{}, {}, {}] is {grid:?} at n = {n}",
                    extents[0], extents[1], extents[2]
                )));
            }
            check_grid(grid, max).map_err(|e| too_large(e.workgroups))
        }
        DispatchSize::Count(_) | DispatchSize::Indirect(_) => Ok([0, 1, 1]),
    }
}

fn size(gpu: &Gpu, program: &Program, n: u64, config: &DispatchConfig) -> Result<Sizing> {
    if n == 0 {
        return Err(program.zero_problem_size());
    }
    let limits = gpu.limits();
    let mut bytes = Vec::with_capacity(program.spec.buffers.len());
    for (i, b) in program.spec.buffers.iter().enumerate() {
        if !program.bound[i] {
            // Kept in registers by a fused kernel: a placeholder word.
            bytes.push(4);
            continue;
        }
        let logical = program.buffer_bytes(i, n);
        let (limit, max) = if b.class == BufferClass::Uniform {
            (
                "the device's `max_uniform_buffer_binding_size`",
                limits.max_uniform_buffer_binding_size,
            )
        } else if limits.max_storage_buffer_binding_size <= limits.max_buffer_size {
            (
                "the device's `max_storage_buffer_binding_size`",
                limits.max_storage_buffer_binding_size,
            )
        } else {
            ("the device's `max_buffer_size`", limits.max_buffer_size)
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
                limit,
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
    let mut grids = Vec::with_capacity(program.dispatches.len());
    let mut worker_groups = 0u64;
    let mut workgroup_size_x = 1;
    for node in 0..program.dispatches.len() {
        let grid = node_grid(gpu, program, node, n, &planned)?;
        let total = grid.iter().map(|&d| u64::from(d)).product::<u64>();
        if total > worker_groups {
            worker_groups = total;
            workgroup_size_x = program.dispatch_workgroup_size(node)[0];
        }
        grids.push(grid);
    }
    let rounded: Vec<u64> = bytes.iter().map(|&b| round4(b)).collect();
    let slot_bytes = program.analysis.slot_bytes(&rounded);
    let readback_bytes: u64 = program.host_outputs.iter().map(|&b| rounded[b]).sum();
    let peak = slot_bytes
        .iter()
        .sum::<u64>()
        .saturating_add(readback_bytes);
    let widths: Vec<usize> = program
        .analysis
        .nodes_by_level()
        .iter()
        .map(Vec::len)
        .collect();
    // With append buffers, the results a run can emit are their capacities.
    let appended: u64 = (0..program.spec.buffers.len())
        .filter(|&b| program.spec.buffers[b].append.is_some())
        .map(|b| program.buffer_elements(b, n))
        .fold(0, u64::saturating_add);
    let has_appends = program.spec.buffers.iter().any(|b| b.append.is_some());
    let recommendation = LaunchRecommendation {
        worker_groups: u32::try_from(worker_groups).unwrap_or(u32::MAX),
        hit_capacity: if has_appends {
            appended
        } else {
            worker_groups.saturating_mul(u64::from(workgroup_size_x))
        },
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

/// Size `n` and check it against every device limit and the budget,
/// allocating nothing: what a run would do before it allocates.
pub(crate) fn check(
    gpu: &Gpu,
    program: &Program,
    n: u64,
    config: &DispatchConfig,
) -> Result<(Sizing, BatchDispatchPlan)> {
    let sizing = size(gpu, program, n, config)?;
    let plan_config = PlanConfig::default()
        .with_workgroup_size_x(sizing.workgroup_size_x)
        .with_device_memory_budget_bytes(config.device_memory_budget_bytes);
    let plan = BatchDispatchPlan::new(n, &sizing.recommendation, &plan_config);
    check_budget(&plan)?;
    Ok((sizing, plan))
}

/// A new launch plan for `n`: checked, then allocated.
pub(crate) fn prepare(
    gpu: &Gpu,
    program: &Program,
    n: u64,
    config: &DispatchConfig,
) -> Result<LaunchPlan> {
    let (sizing, plan) = check(gpu, program, n, config)?;
    Ok(LaunchPlan::build(gpu, program, sizing, plan))
}

/// A cached plan under this run's budget.
pub(crate) fn recheck_budget(plan: &mut LaunchPlan, config: &DispatchConfig) -> Result<()> {
    plan.plan.device_memory_budget_bytes = config.device_memory_budget_bytes;
    check_budget(&plan.plan)
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
    pub(crate) fn build(
        gpu: &Gpu,
        program: &Program,
        sizing: Sizing,
        plan: BatchDispatchPlan,
    ) -> Self {
        let analysis = &program.analysis;
        let mut usages = vec![wgpu::BufferUsages::empty(); analysis.slot_count];
        for (b, spec) in program.spec.buffers.iter().enumerate() {
            usages[analysis.slots[b]] |= usage_of(spec.class);
        }
        let slots: Vec<wgpu::Buffer> = sizing
            .slot_bytes
            .iter()
            .zip(&usages)
            .map(|(&size, &usage)| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&program.spec.name),
                    size: round4(size),
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let readback: Vec<wgpu::Buffer> = program
            .host_outputs
            .iter()
            .map(|&b| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&program.spec.buffers[b].name),
                    size: round4(sizing.bytes[b]),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut plan = LaunchPlan {
            gpu: gpu.clone(),
            destroy_on_drop: true,
            plan,
            grids: sizing.grids,
            bytes: sizing.bytes,
            slots,
            bind_groups: Vec::new(),
            // One more slot for the timestamps, one for the status.
            map_slots: MapSlots::new(readback.len() + 2),
            timer: None,
            readback,
            bound_handles: (0..program.spec.buffers.len()).map(|_| None).collect(),
            control: None,
        };
        plan.bind_groups = (0..program.dispatches.len())
            .map(|node| plan.make_bind_groups(gpu, program, node))
            .collect();
        plan.control = crate::indirect::build(gpu, program, &plan);
        plan
    }

    pub(crate) fn set_destroy_on_drop(&mut self, destroy: bool) {
        self.destroy_on_drop = destroy;
    }

    /// The device buffer graph buffer `b` lives in for this run.
    pub(crate) fn buffer_of(&self, program: &Program, b: usize) -> &wgpu::Buffer {
        match &self.bound_handles[b] {
            Some(h) => h.buffer(),
            None => &self.slots[program.analysis.slots[b]],
        }
    }

    /// The size to bind buffer `b` with: its own bytes, so that
    /// `arrayLength` sees the buffer and not a larger aliased slot or
    /// resident handle; the whole buffer (`None`) when that is the same.
    pub(crate) fn binding_size(&self, program: &Program, b: usize) -> Option<NonZeroU64> {
        let bytes = round4(self.bytes[b]);
        if self.buffer_of(program, b).size() == bytes {
            None
        } else {
            NonZeroU64::new(bytes)
        }
    }

    fn make_bind_groups(
        &self,
        gpu: &Gpu,
        program: &Program,
        node: usize,
    ) -> SmallVec<[wgpu::BindGroup; 2]> {
        let spec = program.dispatch(node);
        let layout = &program.layouts[spec.kernel];
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
                            buffer: self.buffer_of(program, nb.buffer),
                            offset: 0,
                            size: self.binding_size(program, nb.buffer),
                        }),
                    })
                    .collect();
                gpu.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&spec.label),
                    layout: bgl,
                    entries: &entries,
                })
            })
            .collect()
    }

    /// Bind this run's inputs: resident `Input` handles are bound in place
    /// (bind groups rebuilt only when the handle changes); host bytes are
    /// uploaded into the plan's buffers; other resident feeds are returned,
    /// to be copied by the recording.
    pub(crate) fn bind_feeds<'f>(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        feeds: &'f [Feed<'f>],
    ) -> SmallVec<[(usize, &'f GpuBufferHandle); 4]> {
        let mut copies = SmallVec::new();
        for (feed, &b) in feeds.iter().zip(&program.host_inputs) {
            let class = program.spec.buffers[b].class;
            match feed {
                Feed::Device(h) if class == BufferClass::Input => {
                    self.bind_input(gpu, program, b, Some(h));
                }
                Feed::Device(h) => {
                    self.bind_input(gpu, program, b, None);
                    copies.push((b, *h));
                }
                Feed::Host(bytes) => {
                    self.bind_input(gpu, program, b, None);
                    crate::resource::upload(gpu, self.buffer_of(program, b), bytes);
                }
            }
        }
        copies
    }

    /// The pass timer when this run profiles, made on first use.
    pub(crate) fn timer(&mut self, gpu: &Gpu, profile: bool) -> Option<&PassTimer> {
        if !profile {
            return None;
        }
        if self.timer.is_none() {
            self.timer = PassTimer::new(gpu, self.grids.len());
        }
        self.timer.as_ref()
    }

    /// Point input `b`'s bindings at `handle` (or back at the plan's own
    /// buffer), rebuilding only the bind groups of nodes that use it, and
    /// only when it changed.
    fn bind_input(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        b: usize,
        handle: Option<&GpuBufferHandle>,
    ) {
        let same = match (&self.bound_handles[b], handle) {
            (None, None) => true,
            (Some(old), Some(new)) => new.is(old),
            _ => false,
        };
        if same {
            return;
        }
        self.bound_handles[b] = handle.map(GpuBufferHandle::bound);
        for node in 0..program.dispatches.len() {
            if program
                .dispatch(node)
                .bindings
                .iter()
                .any(|nb| nb.buffer == b)
            {
                self.bind_groups[node] = self.make_bind_groups(gpu, program, node);
            }
        }
        crate::indirect::rebind(gpu, program, self, b);
    }
}
