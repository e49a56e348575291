//! The status check after a run's wait: its append counts, loop reports
//! and the error words of its control steps, read back with the outputs,
//! become the run's [`LoopReport`]s and its first problem: an append buffer
//! that overflowed, an indirect grid over the device's limit, a count too
//! large for an x-only kernel.

use super::report::LoopReport;
use crate::plan::control_block::capacity;
use crate::plan::launch::LaunchPlan;
use crate::plan::program::Program;
use crate::plan::steps::{COUNT, RESET};
use crate::spec::error::{BackendError, Result};

/// The loop that held the run (`plan/trips.rs`) according to `status`: its
/// hold word, after the counts and the loop states.
pub(crate) fn held_loop(program: &Program, status: &[u8]) -> Option<usize> {
    let steps = &program.steps;
    if steps.loops.is_empty() || !steps.partial {
        return None;
    }
    let at = (steps.appends.len() + steps.hold_word()) * 4;
    let word = status
        .get(at..at + 4)
        .map_or(0, bytemuck::pod_read_unaligned::<u32>);
    (word as usize).checked_sub(1)
}

/// Reads the status back into the loop reports, and the first problem it
/// shows: an overflowing append buffer, an indirect grid over the limit.
/// Every append buffer whose count in `status` is over its capacity at
/// the end of the run, with its count (read on a failed run only).
pub(crate) fn overflowed(program: &Program, plan: &LaunchPlan, status: &[u8]) -> Vec<(usize, u64)> {
    let word = |i: usize| {
        status
            .get(i * 4..i * 4 + 4)
            .map_or(0, |b| u64::from(bytemuck::pod_read_unaligned::<u32>(b)))
    };
    (program.steps.appends.iter().enumerate())
        .map(|(k, &b)| (b, word(k)))
        .filter(|&(b, count)| count > capacity(program, plan, b))
        .collect()
}

pub(crate) fn check_status(
    program: &Program,
    plan: &LaunchPlan,
    status: &[u8],
    max: u32,
    loops: &mut Vec<LoopReport>,
) -> Result<()> {
    // Read in place: a run allocates nothing here.
    let word = |i: usize| {
        status
            .get(i * 4..i * 4 + 4)
            .map_or(0, |b| u64::from(bytemuck::pod_read_unaligned::<u32>(b)))
    };
    let appends = &program.steps.appends;
    let mut at = appends.len();
    loops.clear();
    for _ in program.spec.loops.iter() {
        loops.push(LoopReport {
            stopped: word(at) != 0,
            iterations: word(at + 1) as u32,
            recorded: 0,
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
                limit: None,
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
                limit: None,
            });
        }
    }
    Ok(())
}
