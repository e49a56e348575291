//! The control resources of one launch plan (see `control.rs` for what
//! the control kernel does): a control block per control dispatch, written
//! once when the plan is made (its steps' table and the gates' planned
//! grids), the loop states and error words, the status buffer read back
//! after the run, and their bind groups, rebuilt when a resident input
//! they bind changes.

use super::control::ControlPlan;
use super::launch::LaunchPlan;
use super::program::Program;
use super::steps::{ENTRY_WORDS, Group, NONE};
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
    let state_words = 2 * program.spec.loops.len() + steps.reporting.len();
    let state_bytes = (state_words * 4) as u64;
    let state = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vyre loop state"),
        size: state_bytes.max(16),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
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
        bind_groups: Vec::new(),
        status,
        status_bytes,
    };
    control.bind_groups = (0..steps.groups.len())
        .map(|g| bind_group(gpu, program, plan, &control, g))
        .collect();
    Some(control)
}

/// The control block of one control dispatch: its header, a table entry per
/// step (see [`source`]) and the gates' planned grids.
fn control_block(program: &Program, plan: &LaunchPlan, group: &Group, max: u32) -> Vec<u32> {
    let steps = &program.steps;
    let loops = program.spec.loops.len();
    let mut w = vec![0u32; group.words];
    w[0] = group.steps.len() as u32;
    w[1] = max;
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

fn bind_group(
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    control: &ControlPlan,
    g: usize,
) -> wgpu::BindGroup {
    let group = &program.steps.groups[g];
    fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(buffer.as_entire_buffer_binding())
    }
    let Some((layout, slots)) = program.control.as_ref().map(|c| (&c.layout, c.slots)) else {
        unreachable!("a program with steps has a control pipeline")
    };
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: 0,
            resource: whole(&control.ctl[g]),
        },
        wgpu::BindGroupEntry {
            binding: 1,
            resource: whole(&control.state),
        },
    ];
    for k in 0..slots {
        // An unused slot binds the loop states again (never read there).
        let resource = match group.srcs.get(k) {
            Some(&b) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: plan.buffer_of(program, b),
                offset: 0,
                size: plan.binding_size(program, b),
            }),
            None => whole(&control.state),
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
            control.bind_groups[g] = bind_group(gpu, program, plan, &control, g);
        }
    }
    plan.control = Some(control);
}

/// The capacity of append buffer `b` in `plan`.
pub(crate) fn capacity(program: &Program, plan: &LaunchPlan, b: usize) -> u64 {
    let spec = &program.spec.buffers[b];
    plan.bytes[b].saturating_sub(u64::from(spec.header_bytes)) / u64::from(spec.element_size.max(1))
}
