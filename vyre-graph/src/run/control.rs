//! Recording a run's control steps (see `plan/control.rs` for what the
//! control kernel does): before the pass, append counts, loop states and
//! error words cleared; before each dispatch that has steps, its control
//! dispatches (and the indirect arguments they write); a loop's exit when
//! it is recorded in part, and the hold cleared before a continuation
//! (`plan/trips.rs`); after the pass,
//! the counts and loop states copied into the status that is read back.

use crate::plan::launch::LaunchPlan;
use crate::plan::program::Program;

/// Before the pass: counts, loop states and error words start at 0.
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
    if control.state_bytes > 0 {
        encoder.clear_buffer(&control.state, 0, None);
    }
}

/// Before a continuation's pass (`plan/trips.rs`): the hold word cleared;
/// counts, loop states and error words go on from where the run left them.
pub(crate) fn encode_resume(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
) {
    if let Some(control) = &plan.control
        && !program.steps.loops.is_empty()
    {
        let at = (program.steps.hold_word() * 4) as u64;
        encoder.clear_buffer(&control.state, at, Some(4));
    }
}

/// Records loop `l`'s exit: after the last iteration a submission records
/// of it, its condition stops it or holds the run.
pub(crate) fn encode_exit(
    pass: &mut wgpu::ComputePass<'_>,
    program: &Program,
    plan: &LaunchPlan,
    l: usize,
) {
    let (Some(control), Some(c)) = (plan.control.as_ref(), program.control.as_ref()) else {
        return;
    };
    if let Some(Some((_, bind_group))) = control.exits.get(l) {
        pass.set_pipeline(&c.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
}

/// Records the control dispatches before dispatch `d`; returns the buffer
/// (and byte offset) of its indirect arguments when it is dispatched
/// indirectly.
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
        for g in range {
            pass.set_bind_group(0, &control.bind_groups[g], &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
    }
    program
        .steps
        .args
        .get(d)
        .copied()
        .flatten()
        .map(|(g, offset)| (&control.ctl[g], offset))
}

/// After the pass: counts, then loop states and error flags, into the
/// status.
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
    if control.state_bytes > 0 {
        encoder.copy_buffer_to_buffer(&control.state, 0, &control.status, at, control.state_bytes);
    }
}
