//! Sizing a problem size before anything is allocated: each dispatch's
//! workgroup grid (folded past the per-dimension limit where the kernel
//! can see it), each buffer's bytes against the device's binding limits,
//! the peak device memory against the run's budget, and the
//! [`BatchDispatchPlan`] that records it. What passes here is what
//! `launch.rs` allocates.

use super::program::Program;
use crate::device::buffer::round4;
use crate::device::gpu::Gpu;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::grid::{check_grid, fold_grid, workgroups_for};
use crate::spec::plan::{BatchDispatchPlan, LaunchRecommendation, PlanConfig, Topology};
use crate::spec::{BufferClass, DispatchSize, GridFold};

/// Grids and sizes for `n`, checked against the device limits and the budget
/// before any device memory is allocated.
pub(crate) struct Sizing {
    /// Workgroup grid of each dispatch.
    pub(crate) grids: Vec<[u32; 3]>,
    /// Logical bytes of each graph buffer.
    pub(crate) bytes: Vec<u64>,
    /// Bytes of each analysis slot.
    pub(crate) slot_bytes: Vec<u64>,
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
        // Sized on the device, right before the dispatch (`control.rs`).
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
        if b.is_sampler() {
            bytes.push(4);
            continue;
        }
        if let Some(shape) = b.texture_shape() {
            bytes.push(crate::device::texture::checked_bytes(
                gpu, &b.name, shape, n,
            )?);
            continue;
        }
        let logical = program.buffer_bytes(i, n);
        let (limit, max) = if b.class == BufferClass::Uniform {
            (
                "the device's `max_uniform_buffer_binding_size`",
                limits.max_uniform_buffer_binding_size,
            )
        } else {
            storage_limit(limits)
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
    let readback_bytes: u64 = program
        .host_outputs
        .iter()
        .map(|&b| readback_size(program, b, n, rounded[b]))
        .sum();
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

/// The most bytes a storage buffer may have on this device, and the limit
/// that says so: it is bound whole, so the smaller of the binding and the
/// buffer limits.
pub(crate) fn storage_limit(limits: &wgpu::Limits) -> (&'static str, u64) {
    if limits.max_storage_buffer_binding_size <= limits.max_buffer_size {
        (
            "the device's `max_storage_buffer_binding_size`",
            limits.max_storage_buffer_binding_size,
        )
    } else {
        ("the device's `max_buffer_size`", limits.max_buffer_size)
    }
}

/// Bytes of the readback buffer of output `b`: padded rows for a texture.
pub(crate) fn readback_size(program: &Program, b: usize, n: u64, rounded: u64) -> u64 {
    match program.spec.buffers[b].texture_shape() {
        Some(shape) => crate::device::texture::readback_bytes(shape, n),
        None => rounded,
    }
}

/// Size `n` and check it against every device limit and the budget,
/// allocating nothing: what a run would do before it allocates. When `n`
/// fails with capacities that `grow` raised (a smaller budget than the run
/// that grew them had), they are dropped and `n` is sized at the declared
/// capacities: a grown size never fails where the declared one would not.
pub(crate) fn check(
    gpu: &Gpu,
    program: &Program,
    n: u64,
    config: &DispatchConfig,
) -> Result<(Sizing, BatchDispatchPlan)> {
    match check_sized(gpu, program, n, config) {
        Err(_) if program.forget_growth(n) => check_sized(gpu, program, n, config),
        checked => checked,
    }
}

fn check_sized(
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

pub(crate) fn check_budget(plan: &BatchDispatchPlan) -> Result<()> {
    if plan.fits_budget() {
        Ok(())
    } else {
        Err(BackendError::DeviceOutOfMemory {
            requested: plan.estimated_peak_device_bytes,
            available: plan.device_memory_budget_bytes,
        })
    }
}

/// The grids of a run whose config overrides them, computed for that run
/// only (the cached plan keeps the nodes' own); `None` for a run without
/// overrides.
///
/// # Errors
/// As [`node_grid`].
pub(crate) fn override_grids(
    gpu: &Gpu,
    program: &Program,
    n: u64,
    config: &DispatchConfig,
) -> Result<Option<Vec<[u32; 3]>>> {
    if config.grid_override.is_none() && config.workgroup_override.is_none() {
        return Ok(None);
    }
    (0..program.dispatches.len())
        .map(|node| node_grid(gpu, program, node, n, config))
        .collect::<Result<_>>()
        .map(Some)
}
