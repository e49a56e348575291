//! What a run reads back: its host outputs (into slices, or straight into
//! vectors), its timestamps and its status (the [`Targets`] of one map), the stamp that proves a recorded run ran,
//! and the pass's GPU times. The mapping itself is `device/map.rs`.

use smallvec::SmallVec;

use crate::device::gpu::Gpu;
use crate::device::io::{Sink, VecSink};
use crate::device::map::{Body, Dest, Piece, Targets};
use crate::plan::control_block::capacity;
use crate::plan::launch::LaunchPlan;
use crate::plan::program::Program;
use crate::spec::error::{BackendError, Result};

/// Host room for a run's status (append counts, loop reports, indirect
/// grid errors: a few words a graph), on the stack unless a graph has
/// unusually many, so a run allocates nothing for it.
pub(crate) type StatusBytes = SmallVec<[u8; 256]>;

/// What one run reads back, besides its sinks: its program and plan,
/// which outputs are read by their count later (`counted.rs`), and whether
/// it profiles.
pub(crate) struct Reading<'a> {
    pub(crate) program: &'a Program,
    pub(crate) plan: &'a LaunchPlan,
    pub(crate) by_count: &'a [bool],
    pub(crate) profiling: bool,
}

/// The targets of a run into `sinks` (but the outputs read by their count
/// later); `stamps` receives the timestamps when profiling, `status` the
/// run's status when the graph has control steps, then the [`Stamp`] of a
/// recorded run.
///
/// [`Stamp`]: crate::plan::stamp::Stamp
pub(crate) fn targets<'a>(
    reading: &Reading<'a>,
    sinks: &'a mut [Sink<'_>],
    scatter: Option<&'a mut Scatter<'_, '_>>,
    stamps: &'a mut Vec<u8>,
    status: &'a mut StatusBytes,
) -> Targets<'a> {
    let (program, plan) = (reading.program, reading.plan);
    let mut targets = Targets::new();
    let mut scatter = scatter.map(|s| s.iter_mut());
    for (k, sink) in sinks.iter_mut().enumerate() {
        let parts = scatter.as_mut().and_then(Iterator::next);
        if let Some(parts) = parts.filter(|_| !matches!(sink, Sink::Skip)) {
            let pieces = parts
                .iter_mut()
                .map(|(len, sink)| piece(program, k, *len, sink));
            targets.push_to(&plan.readback[k], Dest::Pieces(pieces.collect()), None);
            continue;
        }
        if reading.by_count.get(k) == Some(&true) {
            continue;
        }
        let rows = plan.texture_rows.get(k).copied().flatten();
        match sink {
            Sink::Host(dst) => targets.push(&plan.readback[k], dst, rows),
            Sink::Vector(v) => {
                let dest = vec_dest(program, plan, program.host_outputs[k], v, None);
                targets.push_to(&plan.readback[k], dest, rows);
            }
            Sink::Device(_) | Sink::Texture(_) | Sink::Skip => {}
        }
    }
    if let Some(t) = plan.timer.as_ref().filter(|_| reading.profiling) {
        stamps.resize(t.written as usize * 8, 0);
        targets.push(&t.read, &mut stamps[..], None);
    }
    // Append counts, loop reports and indirect-grid errors, then the
    // stamp of a recorded run: both in `status`.
    let control = plan.control.as_ref().map_or(0, |c| c.status_bytes as usize);
    let stamp = plan.stamp.as_ref().filter(|s| s.expected.is_some());
    status.resize(control + if stamp.is_some() { 4 } else { 0 }, 0);
    let (counts, proof) = status.split_at_mut(control);
    if let Some(c) = plan.control.as_ref() {
        targets.push(&c.status, counts, None);
    }
    if let Some(s) = stamp {
        targets.push(&s.read, proof, None);
    }
    targets
}

/// A stacked run's sinks: for each host output, each instance's part of it
/// (its bytes, its sink) in order. The run reads each part straight from
/// the mapped read-back buffer into the instance's sink.
pub(crate) type Scatter<'s, 'a> = Vec<Vec<(usize, &'s mut Sink<'a>)>>;

/// Where one instance's `len` bytes of output `k` of a stacked run go.
fn piece<'a>(program: &'a Program, k: usize, len: usize, sink: &'a mut Sink<'_>) -> Piece<'a> {
    let dest = match sink {
        Sink::Host(dst) => {
            let len = len.min(dst.len());
            Some(Dest::Bytes(&mut dst[..len]))
        }
        Sink::Vector(v) => Some(Dest::Vec {
            sink: &mut *v.target,
            header: 0,
            body: Body::Bytes(len),
            name: &program.spec.buffers[program.host_outputs[k]].name,
        }),
        Sink::Device(_) | Sink::Texture(_) | Sink::Skip => None,
    };
    Piece { len, dest }
}

/// Where vector sink `v` of output `b` receives: the buffer's header, then
/// its elements: all of them, or for an append buffer those its count says
/// (`count` when it is known already; else the count in the header).
pub(crate) fn vec_dest<'a>(
    program: &'a Program,
    plan: &LaunchPlan,
    b: usize,
    v: &'a mut VecSink<'_>,
    count: Option<u64>,
) -> Dest<'a> {
    let spec = &program.spec.buffers[b];
    let size = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
    let item = spec.element_size as usize;
    let (header, body) = if spec.texture.is_some() {
        (0, Body::Bytes(size(program.buffer_bytes(b, plan.n))))
    } else if spec.append.is_some() {
        let body = match count {
            Some(count) => Body::Bytes(size(count).saturating_mul(item)),
            None => Body::Counted {
                capacity: size(capacity(program, plan, b)),
                item,
            },
        };
        (spec.header_bytes as usize, body)
    } else {
        let header = u64::from(spec.header_bytes);
        let body = program.buffer_bytes(b, plan.n).saturating_sub(header);
        (size(header), Body::Bytes(size(body)))
    };
    Dest::Vec {
        sink: &mut *v.target,
        header,
        body,
        name: &spec.name,
    }
}

/// After a read of `plan` into `status` (see [`targets`]): whether the run's
/// recorded commands ran, when it has a stamp to check.
///
/// # Errors
/// [`BackendError::NotSubmitted`] when the stamp read back is not the run's.
pub(crate) fn check_stamp(plan: &LaunchPlan, status: &[u8]) -> Result<()> {
    let Some(expected) = plan.stamp.as_ref().and_then(|s| s.expected) else {
        return Ok(());
    };
    let found = status
        .len()
        .checked_sub(4)
        .and_then(|at| status.get(at..))
        .map(bytemuck::pod_read_unaligned::<u32>);
    if found == Some(expected) {
        Ok(())
    } else {
        Err(BackendError::NotSubmitted)
    }
}

/// The pass's GPU nanoseconds and each dispatch's (empty without
/// per-dispatch timestamps) from the timestamps read back into `stamps`.
pub(crate) fn gpu_ns(gpu: &Gpu, stamps: &[u8]) -> (u64, Vec<u64>) {
    let period = f64::from(gpu.queue().get_timestamp_period());
    let ticks: Vec<u64> = stamps
        .chunks_exact(8)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    let ns = |from: u64, to: u64| (to.saturating_sub(from) as f64 * period) as u64;
    let pass = match ticks.as_slice() {
        [begin, end, ..] => ns(*begin, *end),
        _ => 0,
    };
    let nodes = ticks
        .get(2..)
        .unwrap_or(&[])
        .windows(2)
        .map(|w| ns(w[0], w[1]))
        .collect();
    (pass, nodes)
}
