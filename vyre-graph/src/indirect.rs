//! Data-dependent graphs on the device: append buffers' counts, indirect
//! dispatches (`over count(b)`, `grid indirect(b)`) and loops that stop
//! themselves (`repeat up to K .. until ..`), all without a host round trip.
//!
//! One runtime-owned WGSL module ([`SOURCE`]) does every small step: each
//! step is one single-invocation dispatch recorded in the same compute pass,
//! right before the dispatch it serves. A step binds three `array<u32>`:
//! `src` (the graph buffer it reads or resets: an append buffer's count, a
//! loop's flag, a grid), `ctl` (its own 64-byte control block: parameters
//! written when the plan is made, and the indirect arguments it writes) and
//! `state` (its loop's state: a sticky stopped bit and the iterations that
//! ran; a zeroed dummy outside loops). The steps:
//!
//! * `COUNT`: `ctl[0..3]` = the folded grid of `min(count, capacity)`
//!   invocations (zero workgroups for zero items, or when the loop stopped);
//! * `RESET`: the count set to 0 before a node appends to a buffer some node
//!   read since the last append (skipped once the loop stopped); a count
//!   over the capacity is remembered first and reported after the run as
//!   an overflow, so an overflow in an early loop iteration is never lost;
//! * `GATE_EMPTY` / `GATE_ZERO`: one per loop iteration, before its first
//!   node: evaluates the condition, keeps the stopped bit, counts the
//!   iteration, for `zero` sets the flag to 0, and writes the indirect
//!   arguments of the iteration's host-sized nodes (their planned grid, or
//!   zero once stopped);
//! * `GRID`: `grid indirect(b)`: copies `b[0..3]`, or writes zero and an
//!   error flag when a dimension exceeds the device limit (reported after the
//!   run, never a silently skipped dispatch).
//!
//! After the pass the counts, loop states and error flags are copied into one
//! small status buffer that is read back with the outputs: overflow and
//! loop reports cost no extra submission.
//!
//! The steps are worked out in `steps.rs`; loops' analysis and reports are
//! in `loops.rs`.

use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::launch::LaunchPlan;
pub(crate) use crate::loops::LoopReport;
use crate::program::Program;
use crate::spec::GridFold;
use crate::steps::{COUNT, CTL_WORDS, RESET, Step, Steps};

/// The control kernel (one entry point; the mode is in the control block).
pub(crate) const SOURCE: &str = r"
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> ctl: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;

fn div_ceil(a: u32, b: u32) -> u32 {
    return a / b + select(0u, 1u, a % b != 0u);
}

fn zero_args() {
    ctl[0] = 0u; ctl[1] = 0u; ctl[2] = 0u;
}

// The host's fold (`grid::fold_grid`): x first, then y, then z.
fn fold(total: u32, limit: u32) {
    if total == 0u { zero_args(); return; }
    if total <= limit { ctl[0] = total; ctl[1] = 1u; ctl[2] = 1u; return; }
    let y = min(div_ceil(total, limit), limit);
    let z = div_ceil(total, limit * y);
    ctl[0] = limit; ctl[1] = y; ctl[2] = z;
}

// A gate writes the arguments of its iteration's host-sized nodes: each
// has 8 words from word 16, the arguments then the planned grid; zero once
// the loop stopped.
fn iteration_args() {
    let running = state[0] == 0u;
    for (var j = 0u; j < ctl[14]; j = j + 1u) {
        let at = 16u + 8u * j;
        if running {
            ctl[at] = ctl[at + 4u]; ctl[at + 1u] = ctl[at + 5u]; ctl[at + 2u] = ctl[at + 6u];
        } else {
            ctl[at] = 0u; ctl[at + 1u] = 0u; ctl[at + 2u] = 0u;
        }
    }
}

@compute @workgroup_size(1)
fn main() {
    let mode = ctl[3];
    let stopped = state[0] != 0u;
    let limit = ctl[7];
    ctl[11] = 0u;
    if mode == 0u {
        // COUNT: min(count, capacity) invocations of workgroup size ctl[4].
        if stopped { zero_args(); return; }
        let words = arrayLength(&src);
        var capacity = 0u;
        if words > ctl[5] { capacity = (words - ctl[5]) / max(ctl[6], 1u); }
        let items = min(src[0], capacity);
        let total = div_ceil(items, max(ctl[4], 1u));
        if ctl[13] != 0u && total > limit {
            // A kernel that may index with x alone: never fold it.
            zero_args(); ctl[11] = total; return;
        }
        fold(total, limit);
    } else if mode == 2u {
        // RESET: an overflow is remembered before the count is cleared.
        if !stopped {
            let words = arrayLength(&src);
            var capacity = 0u;
            if words > ctl[5] { capacity = (words - ctl[5]) / max(ctl[6], 1u); }
            if src[0] > capacity { ctl[11] = src[0]; }
            src[0] = 0u;
        }
    } else if mode == 3u {
        // GATE_EMPTY: stop before an iteration when the count is 0.
        if !stopped && src[0] == 0u { state[0] = 1u; }
        if state[0] == 0u { state[1] = state[1] + 1u; }
        iteration_args();
    } else if mode == 4u {
        // GATE_ZERO: do-while; stop after an iteration that left the flag 0.
        if !stopped && ctl[12] != 0u && src[0] == 0u { state[0] = 1u; }
        if state[0] == 0u { state[1] = state[1] + 1u; src[0] = 0u; }
        iteration_args();
    } else {
        // GRID
        if stopped { zero_args(); return; }
        let x = src[0]; let y = src[1]; let z = src[2];
        if x > limit || y > limit || z > limit {
            zero_args(); ctl[11] = max(max(x, y), z); return;
        }
        ctl[0] = x; ctl[1] = y; ctl[2] = z;
    }
}
";

/// The control pipeline, made once per graph that needs it.
pub(crate) struct Control {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

impl Control {
    /// The pipeline, when `steps` has any step.
    ///
    /// # Errors
    /// [`BackendError::KernelCompileFailed`] when the device rejects the
    /// control kernel (a bug of vyre's, reported rather than left to the
    /// device's error handler).
    pub(crate) fn new(gpu: &Gpu, steps: &Steps) -> Result<Option<Self>> {
        if steps.steps.is_empty() {
            return Ok(None);
        }
        let device = gpu.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let entry = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("vyre control"),
            entries: &[entry(0), entry(1), entry(2)],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("vyre control"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("vyre control"),
            source: wgpu::ShaderSource::Wgsl(SOURCE.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("vyre control"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        gpu.count_pipeline();
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BackendError::KernelCompileFailed {
                kernel: "vyre control (runtime-generated)".to_string(),
                message: format!("{error}; please report this"),
            });
        }
        Ok(Some(Control { layout, pipeline }))
    }
}

/// A plan's control resources: a control block per step, a state per loop
/// (and a zeroed one for steps outside loops), their bind groups, and the
/// status read back after the run.
pub(crate) struct ControlPlan {
    ctl: Vec<wgpu::Buffer>,
    states: Vec<wgpu::Buffer>,
    bind_groups: Vec<wgpu::BindGroup>,
    /// Counts, then loop states (stopped, iterations), then error flags.
    pub(crate) status: wgpu::Buffer,
    pub(crate) status_bytes: u64,
}

impl ControlPlan {
    /// Every buffer it owns, to free with the plan.
    pub(crate) fn buffers(&self) -> impl Iterator<Item = &wgpu::Buffer> {
        self.ctl
            .iter()
            .chain(&self.states)
            .chain(std::iter::once(&self.status))
    }
}

/// Makes the control resources of `plan`, when the program has any.
pub(crate) fn build(gpu: &Gpu, program: &Program, plan: &LaunchPlan) -> Option<ControlPlan> {
    let steps = &program.steps;
    if steps.is_empty() {
        return None;
    }
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let ctl: Vec<wgpu::Buffer> = steps
        .steps
        .iter()
        .map(|step| {
            let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre control block"),
                size: (step.words() * 4) as u64,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let words = control_block(program, plan, step, max);
            gpu.write_buffer(&buffer, 0, bytemuck::cast_slice(&words));
            buffer
        })
        .collect();
    let states: Vec<wgpu::Buffer> = (0..=program.spec.loops.len())
        .map(|_| {
            gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre loop state"),
                size: 16,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })
        .collect();
    let words = steps.appends.len() + 2 * program.spec.loops.len() + steps.reporting.len();
    let status_bytes = (words.max(1) * 4) as u64;
    let status = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre status"),
        size: status_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut control = ControlPlan {
        ctl,
        states,
        bind_groups: Vec::new(),
        status,
        status_bytes,
    };
    control.bind_groups = (0..steps.steps.len())
        .map(|s| bind_group(gpu, program, plan, &control, s))
        .collect();
    Some(control)
}

/// The parameters of one step's control block.
fn control_block(program: &Program, plan: &LaunchPlan, step: &Step, max: u32) -> Vec<u32> {
    let mut w = vec![0u32; step.words()];
    w[3] = step.mode;
    w[4] = program.dispatch_workgroup_size(step.dispatch)[0];
    if let Some(b) = step.src.and_then(|b| program.spec.buffers.get(b)) {
        w[5] = b.header_bytes / 4;
        w[6] = (b.element_size / 4).max(1);
    }
    w[7] = max;
    w[12] = step.iteration;
    let kernel = &program.spec.kernels[program.dispatch(step.dispatch).kernel];
    w[13] = u32::from(kernel.fold == GridFold::XOnly);
    w[14] = step.fixed.len() as u32;
    for (j, &d) in step.fixed.iter().enumerate() {
        if let Some(grid) = plan.grids.get(d) {
            let at = CTL_WORDS + 8 * j + 4;
            w[at..at + 3].copy_from_slice(grid);
        }
    }
    w
}

fn bind_group(
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    control: &ControlPlan,
    s: usize,
) -> wgpu::BindGroup {
    let step = &program.steps.steps[s];
    let state = &control.states[step.lp.unwrap_or(program.spec.loops.len())];
    fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(buffer.as_entire_buffer_binding())
    }
    let src = match step.src {
        Some(b) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: plan.buffer_of(program, b),
            offset: 0,
            size: plan.binding_size(program, b),
        }),
        None => whole(state),
    };
    let Some(layout) = program.control.as_ref().map(|c| &c.layout) else {
        unreachable!("a program with steps has a control pipeline")
    };
    gpu.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("vyre control"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src,
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: whole(&control.ctl[s]),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: whole(state),
            },
        ],
    })
}

/// Rebuilds the bind groups of steps that read buffer `b` (a resident input
/// now bound in place, or back at the plan's own buffer).
pub(crate) fn rebind(gpu: &Gpu, program: &Program, plan: &mut LaunchPlan, b: usize) {
    let Some(control) = plan.control.take() else {
        return;
    };
    let mut control = control;
    for (s, step) in program.steps.steps.iter().enumerate() {
        if step.src == Some(b) {
            control.bind_groups[s] = bind_group(gpu, program, plan, &control, s);
        }
    }
    plan.control = Some(control);
}

/// Before the pass: counts and loop states start at 0.
pub(crate) fn encode_start(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
) {
    let Some(control) = &plan.control else {
        return;
    };
    for &b in &program.steps.appends {
        encoder.clear_buffer(plan.buffer_of(program, b), 0, Some(4));
    }
    for state in &control.states {
        encoder.clear_buffer(state, 0, None);
    }
}

/// Records the steps before dispatch `d`; returns the buffer (and byte
/// offset) of its indirect arguments when it is dispatched indirectly.
pub(crate) fn encode_before<'p>(
    pass: &mut wgpu::ComputePass<'_>,
    program: &Program,
    plan: &'p LaunchPlan,
    d: usize,
) -> Option<(&'p wgpu::Buffer, u64)> {
    let control = plan.control.as_ref()?;
    let pipeline = &program.control.as_ref()?.pipeline;
    let range = program.steps.before.get(d)?.clone();
    if !range.is_empty() {
        pass.set_pipeline(pipeline);
        for s in range {
            pass.set_bind_group(0, &control.bind_groups[s], &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
    }
    program
        .steps
        .args
        .get(d)
        .copied()
        .flatten()
        .map(|(s, offset)| (&control.ctl[s], offset))
}

/// After the pass: counts, loop states and error flags into the status.
pub(crate) fn encode_status(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
) {
    let Some(control) = &plan.control else {
        return;
    };
    let mut at = 0u64;
    for &b in &program.steps.appends {
        encoder.copy_buffer_to_buffer(plan.buffer_of(program, b), 0, &control.status, at, 4);
        at += 4;
    }
    for state in &control.states[..program.spec.loops.len()] {
        encoder.copy_buffer_to_buffer(state, 0, &control.status, at, 8);
        at += 8;
    }
    for &s in &program.steps.reporting {
        encoder.copy_buffer_to_buffer(&control.ctl[s], 44, &control.status, at, 4);
        at += 4;
    }
}

/// The capacity of append buffer `b` in `plan`.
pub(crate) fn capacity(program: &Program, plan: &LaunchPlan, b: usize) -> u64 {
    let spec = &program.spec.buffers[b];
    plan.bytes[b].saturating_sub(u64::from(spec.header_bytes)) / u64::from(spec.element_size.max(1))
}

/// Reads the status back into the loop reports, and the first problem it
/// shows: an overflowing append buffer, an indirect grid over the limit.
pub(crate) fn finish(
    program: &Program,
    plan: &LaunchPlan,
    status: &[u8],
    max: u32,
    loops: &mut Vec<LoopReport>,
) -> Result<()> {
    let words: Vec<u32> = status
        .chunks_exact(4)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    let word = |i: usize| u64::from(words.get(i).copied().unwrap_or(0));
    let appends = &program.steps.appends;
    let mut at = appends.len();
    loops.clear();
    for _ in program.spec.loops.iter() {
        loops.push(LoopReport {
            stopped: word(at) != 0,
            iterations: word(at + 1) as u32,
        });
        at += 2;
    }
    for &s in &program.steps.reporting {
        let flag = word(at);
        at += 1;
        if flag == 0 {
            continue;
        }
        let step = &program.steps.steps[s];
        let node = program.dispatch(step.dispatch);
        if step.mode == RESET
            && let Some(b) = step.src
        {
            // A count over the capacity before a later append reset it.
            return Err(BackendError::AppendOverflow {
                buffer: program.spec.buffers[b].name.to_string(),
                count: flag,
                capacity: capacity(program, plan, b),
            });
        }
        return Err(if step.mode == COUNT {
            BackendError::GridNotFoldable {
                node: node.label.to_string(),
                kernel: program.spec.kernels[node.kernel].label.to_string(),
                workgroups: flag,
                max,
            }
        } else {
            BackendError::GridTooLarge {
                node: node.label.to_string(),
                workgroups: flag,
                max,
            }
        });
    }
    for (k, &b) in appends.iter().enumerate() {
        let count = word(k);
        let capacity = capacity(program, plan, b);
        if count > capacity {
            return Err(BackendError::AppendOverflow {
                buffer: program.spec.buffers[b].name.to_string(),
                count,
                capacity,
            });
        }
    }
    Ok(())
}
