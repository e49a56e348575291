//! Append outputs read by their count: the run's own submission copies
//! every append count into its status (as it always does) but not the
//! append buffer itself; after the wait, once the status is known good, a
//! second, small submission copies the header and only the items counted,
//! and only those are mapped and copied out.
//!
//! A second submission and wait costs about 50 µs on the H200 machine, and
//! reading back a capacity of 48 MB costs milliseconds, so outputs whose
//! capacity reads back at least
//! [`TransferOptions::count_first_min_bytes`] go this way; smaller ones are
//! read whole in the run's one submission (and only their counted items
//! are copied out of the mapping).

use super::readback::{Reading, vec_dest};
use crate::device::gpu::Gpu;
use crate::device::io::Sink;
use crate::device::map::{Dest, Targets, Wait, map_and_copy};
use crate::device::transfer::Copier;
use crate::plan::launch::LaunchPlan;
use crate::plan::program::Program;
use crate::spec::error::{BackendError, Result};
use crate::spec::transfer::TransferOptions;

/// For each host output of `program` with `sinks`: whether this run reads
/// it by its count.
pub(crate) fn read_by_count(
    program: &Program,
    plan: &LaunchPlan,
    sinks: &[Sink<'_>],
    options: &TransferOptions,
) -> smallvec::SmallVec<[bool; 4]> {
    program
        .host_outputs
        .iter()
        .zip(sinks)
        .enumerate()
        .map(|(k, (&b, sink))| {
            let spec = &program.spec.buffers[b];
            sink.is_host()
                && spec.append.is_some()
                && spec.texture.is_none()
                && plan.control.is_some()
                && program.steps.appends.contains(&b)
                && plan
                    .readback
                    .get(k)
                    .is_some_and(|r| r.size() >= options.count_first_min_bytes)
        })
        .collect()
}

/// The count of append buffer `b` in a run's `status` (read back after
/// the run: its first words are the append counts, in
/// `program.steps.appends` order).
fn count_of(program: &Program, status: &[u8], b: usize) -> u64 {
    program
        .steps
        .appends
        .iter()
        .position(|&a| a == b)
        .and_then(|j| status.get(j * 4..j * 4 + 4))
        .map_or(0, |w| u64::from(bytemuck::pod_read_unaligned::<u32>(w)))
}

/// After a run whose `status` was read and checked (every count within its
/// capacity): copy the header and counted items of every output `by_count`
/// marks into its read-back buffer, in one submission, then map and copy
/// them into their sinks, waiting as `wait` says. Returns the nanoseconds
/// spent copying.
///
/// # Errors
/// [`BackendError::DispatchFailed`] for a device error of the copies; as
/// [`map_and_copy`].
pub(crate) async fn read_counted(
    gpu: &Gpu,
    copier: Copier<'_>,
    reading: &Reading<'_>,
    sinks: &mut [Sink<'_>],
    status: &[u8],
    wait: impl FnOnce(wgpu::SubmissionIndex) -> Wait,
) -> Result<u64> {
    let Reading {
        program,
        plan,
        by_count,
        ..
    } = *reading;
    let scope = gpu.catch_errors();
    let mut encoder = gpu
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("vyre append read-back"),
        });
    let mut targets = Targets::new();
    for (k, sink) in sinks.iter_mut().enumerate() {
        if by_count.get(k) != Some(&true) {
            continue;
        }
        let b = program.host_outputs[k];
        let spec = &program.spec.buffers[b];
        let count = count_of(program, status, b);
        let bytes = u64::from(spec.header_bytes)
            .saturating_add(count.saturating_mul(u64::from(spec.element_size)))
            .min(plan.readback[k].size());
        let copied = bytes
            .max(4)
            .next_multiple_of(4)
            .min(plan.readback[k].size());
        encoder.copy_buffer_to_buffer(plan.buffer_of(program, b), 0, &plan.readback[k], 0, copied);
        gpu.count_read_by_count();
        match sink {
            Sink::Host(dst) => {
                let end = usize::try_from(bytes).unwrap_or(usize::MAX).min(dst.len());
                targets.push_to(&plan.readback[k], Dest::Bytes(&mut dst[..end]), None);
            }
            Sink::Vector(v) => {
                let dest = vec_dest(program, plan, b, v, Some(count));
                targets.push_to(&plan.readback[k], dest, None);
            }
            _ => {}
        }
    }
    let submission = gpu.submit(encoder.finish());
    // Popped before the wait's first await: a scope belongs to its thread.
    let error = scope.pop();
    if let Some(error) = error.await {
        return Err(BackendError::DispatchFailed {
            reason: error.to_string(),
        });
    }
    map_and_copy(gpu, copier, &plan.map_slots, &mut targets, wait(submission)).await
}
