//! A run at problem size 0 whose outputs need no run
//! (`Program::runs_empty`): every output is empty at n = 0 or holds its
//! `empty_value` there (a reduction's identity over an empty source). The
//! run is a straight line of two steps: check, then fill the sinks.
//! Nothing is planned, allocated or submitted. A run recorded into the
//! caller's encoder at n = 0 (`record_empty`, then `read_empty`) records
//! nothing: its resident sinks are written through the queue, its host
//! sinks when it is read.

use std::sync::Arc;

use super::report::{RunPhases, RunReport, elapsed_ns};
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::device::transfer::Source;
use crate::plan::program::Program;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::plan::BatchDispatchPlan;
use crate::spec::transfer::TransferOptions;

/// Check the feeds and sinks at n = 0, then write each output's value.
///
/// # Errors
/// As `Program::check_io` at n = 0; [`BackendError::HostAllocationFailed`] when a
/// vector sink cannot grow.
pub(crate) fn run_empty(
    gpu: &Gpu,
    program: &Program,
    feeds: &[Feed<'_>],
    sinks: &mut [Sink<'_>],
    config: &DispatchConfig,
) -> Result<RunReport> {
    let started = web_time::Instant::now();
    // 1. Check: the same checks as any run, at n = 0.
    program.check_io(gpu, 0, feeds, sinks, config)?;
    let check_ns = elapsed_ns(started);
    // 2. Fill: each output's elements, all its empty value.
    fill(gpu, program, sinks, config.transfer, Resident::Write)?;
    Ok(empty_report(program, config, started, check_ns))
}

/// `Graph::record` at n = 0 (see [`run_empty`]): the checks, then each
/// resident sink's value written through the queue (it lands before the
/// caller's submission, as a recorded run's uploads do). Nothing is
/// recorded into the caller's encoder; the host sinks are filled when the
/// run is read ([`read_empty`]).
///
/// # Errors
/// As `Program::check_io` at n = 0.
pub(crate) fn record_empty(
    gpu: &Gpu,
    program: &Program,
    feeds: &[Feed<'_>],
    sinks: &[Sink<'_>],
    config: &DispatchConfig,
) -> Result<RunReport> {
    let started = web_time::Instant::now();
    program.check_io(gpu, 0, feeds, sinks, config)?;
    let check_ns = elapsed_ns(started);
    for (sink, &b) in sinks.iter().zip(&program.host_outputs) {
        if let Sink::Device(h) = sink {
            let (_, bytes) = empty_bytes(program, b);
            if !bytes.is_empty() {
                gpu.queue().write_buffer(h.buffer(), 0, &bytes);
            }
        }
    }
    Ok(empty_report(program, config, started, check_ns))
}

/// The read of a run recorded at n = 0 ([`record_empty`]): each host
/// sink's value (the resident ones were written when it was recorded).
///
/// # Errors
/// [`BackendError::HostAllocationFailed`] when a vector sink cannot grow.
pub(crate) fn read_empty(
    gpu: &Gpu,
    program: &Program,
    sinks: &mut [Sink<'_>],
    transfer: Option<TransferOptions>,
) -> Result<()> {
    fill(gpu, program, sinks, transfer, Resident::Leave)
}

/// Output `b`'s elements at n = 0 and their bytes: each its empty value.
fn empty_bytes(program: &Program, b: usize) -> (usize, Vec<u8>) {
    let spec = &program.spec.buffers[b];
    let elements = usize::try_from(spec.len.eval(0)).unwrap_or(usize::MAX);
    let value = spec.empty_value.as_deref().unwrap_or(&[]);
    let bytes: Vec<u8> = if elements == 0 {
        Vec::new()
    } else {
        value.repeat(elements)
    };
    (elements, bytes)
}

/// What [`fill`] does with resident sinks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resident {
    /// Writes their value through the queue (a run).
    Write,
    /// Leaves them (reading a recorded run, whose recording wrote them).
    Leave,
}

/// Write each output's value at n = 0 into its sink (resident sinks as
/// `resident` says).
fn fill(
    gpu: &Gpu,
    program: &Program,
    sinks: &mut [Sink<'_>],
    transfer: Option<TransferOptions>,
    resident: Resident,
) -> Result<()> {
    let copier = gpu.copier(transfer);
    for (sink, &b) in sinks.iter_mut().zip(&program.host_outputs) {
        let spec = &program.spec.buffers[b];
        let (elements, bytes) = empty_bytes(program, b);
        match sink {
            Sink::Host(dst) => dst.copy_from_slice(&bytes),
            Sink::Vector(v) => {
                let header = vec![0u8; v.target.header_size()];
                v.target
                    .receive(&copier, &header, Source::Plain(&bytes), elements)
                    .map_err(|bytes| BackendError::HostAllocationFailed {
                        buffer: spec.name.to_string(),
                        bytes,
                    })?;
            }
            Sink::Device(h) if resident == Resident::Write && !bytes.is_empty() => {
                gpu.queue().write_buffer(h.buffer(), 0, &bytes);
            }
            Sink::Device(_) | Sink::Skip => {}
            Sink::Texture(_) => {
                return Err(BackendError::InvalidProgram {
                    graph: program.spec.name.to_string(),
                    reason: format!(
                        "output `{}` is a texture: it has no value at n = 0",
                        spec.name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The report of a run at n = 0: nothing planned, submitted or dispatched.
fn empty_report(
    program: &Program,
    config: &DispatchConfig,
    started: web_time::Instant,
    check_ns: u64,
) -> RunReport {
    let nothing = RunReport::elsewhere(0, 0, 0);
    RunReport {
        plan: BatchDispatchPlan {
            device_memory_budget_bytes: config.device_memory_budget_bytes,
            ..nothing.plan
        },
        phases: RunPhases {
            check_ns,
            copy_ns: elapsed_ns(started).saturating_sub(check_ns),
            ..RunPhases::default()
        },
        tracks: Arc::clone(&program.tracks),
        started: Some(started),
        profiled: config.profile,
        ..nothing
    }
}
