//! The control resources of one launch plan (see `control.rs` for what
//! the control kernel does): a control block per control dispatch, written
//! once when the plan is made (its steps' table and the gates' planned
//! grids), the loop states and error words, the status buffer read back
//! after the run, and their bind groups, rebuilt when a resident input
//! they bind changes.

use super::control::ControlPlan;
use super::launch::LaunchPlan;
use super::program::Program;
use super::steps::{ENTRY_WORDS, EXIT, Exit, Group, HEAD_WORDS, NONE};
use crate::device::gpu::Gpu;
use crate::spec::GridFold;

/// Makes the control resources of `plan`, when the program has any.
pub(crate) fn build(gpu: &Gpu, program: &Program, plan: &LaunchPlan) -> Option<ControlPlan> {
    let steps = &program.steps;
    if steps.is_empty() {
        return None;
    }
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let ctl: Vec<wgpu::Buffer> = steps
        .groups
        .iter()
        .map(|group| {
            let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre control block"),
                size: (group.words * 4) as u64,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let words = control_block(program, plan, group, max);
            gpu.write_buffer(&buffer, 0, bytemuck::cast_slice(&words));
            buffer
        })
        .collect();
    let state_words = steps.state_words();
    let state_bytes = (state_words * 4) as u64;
    let state = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre loop state"),
        size: state_bytes.max(16),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let slots = program.control.as_ref().map_or(1, |c| c.slots.max(1));
    let spare = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre control spare"),
        size: spare_stride(gpu) * slots as u64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let words = steps.appends.len() + state_words;
    let status_bytes = (words.max(1) * 4) as u64;
    let status = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre status"),
        size: status_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut control = ControlPlan {
        ctl,
        state,
        state_bytes,
        spare,
        bind_groups: Vec::new(),
        exits: Vec::new(),
        status,
        status_bytes,
    };
    control.bind_groups = (0..steps.groups.len())
        .map(|g| {
            let group = &steps.groups[g];
            bind_group(gpu, program, plan, &control, &control.ctl[g], &group.srcs)
        })
        .collect();
    control.exits = (0..steps.loops.len())
        .map(|l| exit_block(gpu, program, plan, &control, l))
        .collect();
    Some(control)
}

/// The word of the loop states that says which loop holds the run, or
/// [`NONE`] for a graph without loops (read by every control dispatch).
fn hold_word(program: &Program) -> u32 {
    if program.steps.loops.is_empty() {
        NONE
    } else {
        program.steps.hold_word() as u32
    }
}

/// The control block and bind group of loop `l`'s exit, when the graph may
/// record loops in part: a header, one `EXIT` entry (its loop, `K`), then
/// the slot of each iteration's condition buffer.
fn exit_block(
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    control: &ControlPlan,
    l: usize,
) -> Option<(wgpu::Buffer, wgpu::BindGroup)> {
    let steps = &program.steps;
    let exit = steps.loops[l].exit.as_ref().filter(|_| steps.partial)?;
    let mut w = vec![0u32; exit.words()];
    w[0] = 1;
    w[1] = gpu.limits().max_compute_workgroups_per_dimension;
    w[2] = hold_word(program);
    w[HEAD_WORDS] = EXIT;
    w[HEAD_WORDS + 2] = l as u32;
    w[HEAD_WORDS + 6] = exit.slots.len() as u32;
    w[Exit::TABLE_AT..].copy_from_slice(&exit.slots);
    let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre loop exit"),
        size: (w.len() * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    gpu.write_buffer(&buffer, 0, bytemuck::cast_slice(&w));
    let bind = bind_group(gpu, program, plan, control, &buffer, &exit.srcs);
    Some((buffer, bind))
}

/// The control block of one control dispatch: its header, a table entry per
/// step (see [`source`]) and the gates' planned grids.
fn control_block(program: &Program, plan: &LaunchPlan, group: &Group, max: u32) -> Vec<u32> {
    let steps = &program.steps;
    let loops = program.spec.loops.len();
    let mut w = vec![0u32; group.words];
    w[0] = group.steps.len() as u32;
    w[1] = max;
    w[2] = hold_word(program);
    for &s in &group.steps {
        let step = &steps.steps[s];
        let e = &mut w[step.entry..step.entry + ENTRY_WORDS];
        e[0] = step.mode;
        e[1] = step.slot;
        e[2] = step.lp.map_or(NONE, |l| l as u32);
        e[3] = program.dispatch_workgroup_size(step.dispatch)[0];
        if let Some(b) = step.src.and_then(|b| program.spec.buffers.get(b)) {
            e[4] = b.header_bytes / 4;
            e[5] = (b.element_size / 4).max(1);
        }
        e[6] = step.iteration;
        let kernel = &program.spec.kernels[program.dispatch(step.dispatch).kernel];
        e[7] = u32::from(kernel.fold == GridFold::XOnly);
        e[8] = steps
            .reporting
            .iter()
            .position(|&r| r == s)
            .map_or(NONE, |r| (2 * loops + r) as u32);
        e[9] = step.fixed.len() as u32;
        e[10] = step.fixed_at as u32;
        for (j, &d) in step.fixed.iter().enumerate() {
            if let Some(grid) = plan.grids.get(d) {
                let at = step.fixed_at + 8 * j + 4;
                w[at..at + 3].copy_from_slice(grid);
            }
        }
    }
    w
}

/// The bytes of one unused slot's range of the spare buffer.
const SPARE_BYTES: u64 = 16;

/// Where each unused slot's range starts: a multiple of the device's
/// storage offset alignment, so that the ranges never overlap.
fn spare_stride(gpu: &Gpu) -> u64 {
    u64::from(gpu.limits().min_storage_buffer_offset_alignment).max(SPARE_BYTES)
}

fn bind_group(
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    control: &ControlPlan,
    ctl: &wgpu::Buffer,
    srcs: &[usize],
) -> wgpu::BindGroup {
    fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(buffer.as_entire_buffer_binding())
    }
    let Some((layout, slots)) = program.control.as_ref().map(|c| (&c.layout, c.slots)) else {
        unreachable!("a program with steps has a control pipeline")
    };
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: 0,
            resource: whole(ctl),
        },
        wgpu::BindGroupEntry {
            binding: 1,
            resource: whole(&control.state),
        },
    ];
    for k in 0..slots {
        // An unused slot (never read there) binds its own range of the
        // spare buffer: binding the loop states again would alias a
        // writable binding, which WebGPU refuses.
        let resource = match srcs.get(k) {
            Some(&b) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: plan.buffer_of(program, b),
                offset: 0,
                size: plan.binding_size(program, b, 0),
            }),
            None => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &control.spare,
                offset: spare_stride(gpu) * k as u64,
                size: wgpu::BufferSize::new(SPARE_BYTES),
            }),
        };
        entries.push(wgpu::BindGroupEntry {
            binding: 2 + k as u32,
            resource,
        });
    }
    gpu.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("vyre control"),
        layout,
        entries: &entries,
    })
}

/// Rebuilds the bind groups of control dispatches that bind buffer `b` (a
/// resident input now bound in place, or back at the plan's own buffer).
pub(crate) fn rebind(gpu: &Gpu, program: &Program, plan: &mut LaunchPlan, b: usize) {
    let Some(control) = plan.control.take() else {
        return;
    };
    let mut control = control;
    for (g, group) in program.steps.groups.iter().enumerate() {
        if group.srcs.contains(&b) {
            let bind = bind_group(gpu, program, plan, &control, &control.ctl[g], &group.srcs);
            control.bind_groups[g] = bind;
        }
    }
    for (l, layout) in program.steps.loops.iter().enumerate() {
        let srcs = layout.exit.as_ref().map_or(&[][..], |e| &e.srcs);
        if srcs.contains(&b)
            && let Some(Some((buffer, _))) = control.exits.get(l)
        {
            let bind = bind_group(gpu, program, plan, &control, buffer, srcs);
            if let Some(Some((_, old))) = control.exits.get_mut(l) {
                *old = bind;
            }
        }
    }
    plan.control = Some(control);
}

/// The capacity of append buffer `b` in `plan`.
pub(crate) fn capacity(program: &Program, plan: &LaunchPlan, b: usize) -> u64 {
    let spec = &program.spec.buffers[b];
    plan.bytes[b].saturating_sub(u64::from(spec.header_bytes)) / u64::from(spec.element_size.max(1))
}
