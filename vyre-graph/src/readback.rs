//! Mapping readback buffers: every buffer of a run is mapped after a single
//! wait, copied out, and unmapped.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::launch::LaunchPlan;
use crate::resource::Sink;

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// Where map callbacks report, one slot per readback buffer. A launch plan
/// keeps one and reuses it every run, so reading back allocates nothing of
/// ours (the callbacks only clone the `Arc`).
#[derive(Debug)]
pub(crate) struct MapSlots {
    slots: Box<[AtomicU8]>,
    /// The first mapping error's text (only written on failure).
    error: Mutex<Option<String>>,
}

impl MapSlots {
    /// Room for `count` readback buffers.
    pub(crate) fn new(count: usize) -> Arc<Self> {
        Arc::new(MapSlots {
            slots: (0..count).map(|_| AtomicU8::new(PENDING)).collect(),
            error: Mutex::new(None),
        })
    }
}

/// Wait for `submission`, then copy every host output of the run out of the
/// plan's readback buffers (and the pass's timestamps, when `profiling`).
/// Returns the pass's GPU nanoseconds when profiled.
pub(crate) fn collect(
    gpu: &Gpu,
    plan: &LaunchPlan,
    sinks: &mut [Sink<'_>],
    profiling: bool,
    submission: wgpu::SubmissionIndex,
    timeout: Option<std::time::Duration>,
) -> Result<Option<u64>> {
    let timer = plan.timer.as_ref().filter(|_| profiling);
    let mut stamps = [0u8; 16];
    let mut targets: SmallVec<[(&wgpu::Buffer, &mut [u8]); 4]> = SmallVec::new();
    for (k, sink) in sinks.iter_mut().enumerate() {
        if let Sink::Host(dst) = sink {
            targets.push((&plan.readback[k], &mut **dst));
        }
    }
    if let Some(t) = timer {
        targets.push((&t.read, &mut stamps[..]));
    }
    map_and_copy(
        gpu,
        &plan.map_slots,
        Some(submission),
        timeout,
        &mut targets,
    )?;
    drop(targets);
    Ok(timer.map(|_| {
        let [begin, end]: [u64; 2] = bytemuck::pod_read_unaligned(&stamps);
        let period = f64::from(gpu.queue().get_timestamp_period());
        (end.saturating_sub(begin) as f64 * period) as u64
    }))
}

/// Map the first `dst.len()` bytes of each staging buffer after
/// `submission` completes, copy them into `dst`, and unmap. One wait for all.
/// `slots` must have room for every target.
pub(crate) fn map_and_copy(
    gpu: &Gpu,
    slots: &Arc<MapSlots>,
    submission: Option<wgpu::SubmissionIndex>,
    timeout: Option<std::time::Duration>,
    targets: &mut [(&wgpu::Buffer, &mut [u8])],
) -> Result<()> {
    if targets.is_empty() {
        return Ok(());
    }
    if slots.slots.len() < targets.len() {
        return Err(BackendError::ReadbackFailed {
            reason: "more readback buffers than map slots; please report this".into(),
        });
    }
    for slot in slots.slots.iter() {
        slot.store(PENDING, Ordering::Relaxed);
    }
    for (i, (buffer, dst)) in targets.iter().enumerate() {
        let slots = Arc::clone(slots);
        buffer
            .slice(..map_len(dst.len()))
            .map_async(wgpu::MapMode::Read, move |r| {
                let state = match r {
                    Ok(()) => MAPPED,
                    Err(e) => {
                        if let Ok(mut error) = slots.error.lock() {
                            error.get_or_insert_with(|| e.to_string());
                        }
                        FAILED
                    }
                };
                if let Some(slot) = slots.slots.get(i) {
                    slot.store(state, Ordering::Release);
                }
            });
    }
    gpu.wait(submission, timeout)?;
    let states = || {
        slots.slots[..targets.len()]
            .iter()
            .map(|s| s.load(Ordering::Acquire))
    };
    // Another thread's poll may have taken this run's map completions and
    // be about to call their callbacks: give it the time to.
    let deadline =
        std::time::Instant::now() + timeout.unwrap_or(std::time::Duration::from_secs(60));
    while states().any(|s| s == PENDING) && std::time::Instant::now() < deadline {
        gpu.poll_once();
        std::thread::yield_now();
    }
    if states().any(|s| s != MAPPED) {
        // Leave no buffer mapped, so the next run can map it again.
        for ((buffer, _), state) in targets.iter().zip(states()) {
            if state == MAPPED {
                buffer.unmap();
            }
        }
        let reason = if states().any(|s| s == FAILED) {
            slots
                .error
                .lock()
                .ok()
                .and_then(|mut e| e.take())
                .unwrap_or_else(|| "mapping a readback buffer failed".into())
        } else {
            "the buffer was not mapped after the wait".into()
        };
        return Err(BackendError::ReadbackFailed { reason });
    }
    let mut total = 0u64;
    for (buffer, dst) in targets.iter_mut() {
        {
            let view = buffer
                .slice(..map_len(dst.len()))
                .get_mapped_range()
                .map_err(|e| BackendError::ReadbackFailed {
                    reason: e.to_string(),
                })?;
            dst.copy_from_slice(&view[..dst.len()]);
        }
        buffer.unmap();
        total += dst.len() as u64;
    }
    gpu.count_read_back(total);
    Ok(())
}

/// Mapped ranges must be a multiple of 4 bytes.
fn map_len(len: usize) -> u64 {
    (len as u64).max(4).next_multiple_of(4)
}
