//! Mapping readback buffers: every buffer of a run is mapped after a single
//! wait (or, for an async run, a single future), copied out, and unmapped.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

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
    /// The task of an async run waiting for the mappings.
    waker: Mutex<Option<Waker>>,
}

impl MapSlots {
    /// Room for `count` readback buffers.
    pub(crate) fn new(count: usize) -> Arc<Self> {
        Arc::new(MapSlots {
            slots: (0..count).map(|_| AtomicU8::new(PENDING)).collect(),
            error: Mutex::new(None),
            waker: Mutex::new(None),
        })
    }

    fn wake(&self) {
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// What a run reads back: each host sink's readback buffer, and the pass's
/// timestamps when it profiles.
pub(crate) struct Targets<'a> {
    list: SmallVec<[(&'a wgpu::Buffer, &'a mut [u8]); 4]>,
    /// For each target read from a texture, `(row bytes, padded row
    /// bytes)`: its padding is stripped while copying.
    rows: SmallVec<[Option<(usize, usize)>; 4]>,
}

/// Host room for a run's status (append counts, loop reports, indirect
/// grid errors: a few words a graph), on the stack unless a graph has
/// unusually many, so a run allocates nothing for it.
pub(crate) type StatusBytes = SmallVec<[u8; 256]>;

/// The targets of a run of `plan` into `sinks`; `stamps` receives the
/// timestamps when `profiling`, `status` the run's status when the graph
/// has control steps.
pub(crate) fn targets<'a>(
    plan: &'a LaunchPlan,
    sinks: &'a mut [Sink<'_>],
    profiling: bool,
    stamps: &'a mut Vec<u8>,
    status: &'a mut StatusBytes,
) -> Targets<'a> {
    let mut list: SmallVec<[(&wgpu::Buffer, &mut [u8]); 4]> = SmallVec::new();
    let mut rows = SmallVec::new();
    for (k, sink) in sinks.iter_mut().enumerate() {
        if let Sink::Host(dst) = sink {
            list.push((&plan.readback[k], &mut **dst));
            rows.push(plan.texture_rows.get(k).copied().flatten());
        }
    }
    if let Some(t) = plan.timer.as_ref().filter(|_| profiling) {
        stamps.resize(t.count as usize * 8, 0);
        list.push((&t.read, &mut stamps[..]));
        rows.push(None);
    }
    // Append counts, loop reports and indirect-grid errors.
    if let Some(c) = plan.control.as_ref() {
        status.resize(c.status_bytes as usize, 0);
        list.push((&c.status, &mut status[..]));
        rows.push(None);
    }
    Targets { list, rows }
}

impl<'a> Targets<'a> {
    /// One staging buffer into `dst`.
    pub(crate) fn one(buffer: &'a wgpu::Buffer, dst: &'a mut [u8]) -> Self {
        let mut list = SmallVec::new();
        list.push((buffer, dst));
        let mut rows = SmallVec::new();
        rows.push(None);
        Targets { list, rows }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
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

/// Map the first `dst.len()` bytes of each target after `submission`
/// completes, copy them into `dst`, and unmap. One wait for all.
pub(crate) fn map_and_copy(
    gpu: &Gpu,
    slots: &Arc<MapSlots>,
    submission: Option<wgpu::SubmissionIndex>,
    timeout: Option<Duration>,
    targets: &mut Targets<'_>,
) -> Result<u64> {
    if targets.is_empty() {
        return Ok(0);
    }
    request(slots, &targets.list, &targets.rows)?;
    gpu.wait(submission, timeout)?;
    // Another thread's poll may have taken this run's map completions and
    // be about to call their callbacks: give it the time to.
    let deadline = Instant::now() + timeout.unwrap_or(Duration::from_secs(60));
    while pending(slots, targets.list.len()) && Instant::now() < deadline {
        gpu.poll_once();
        std::thread::yield_now();
    }
    finish(gpu, slots, targets)
}

/// As [`map_and_copy`] for an async run: resolves when every mapping has
/// reported, never blocking the thread. On native backends the device is
/// polled by [`Gpu`]'s poller thread while the future waits; in a browser
/// the event loop delivers the callbacks.
pub(crate) async fn map_and_copy_async(
    gpu: &Gpu,
    slots: &Arc<MapSlots>,
    targets: &mut Targets<'_>,
) -> Result<u64> {
    if targets.is_empty() {
        return Ok(0);
    }
    request(slots, &targets.list, &targets.rows)?;
    MapWait {
        gpu,
        slots,
        count: targets.list.len(),
        _in_flight: gpu.begin_async(),
    }
    .await;
    finish(gpu, slots, targets)
}

/// Reset the slots and ask wgpu to map every target.
fn request(
    slots: &Arc<MapSlots>,
    targets: &[(&wgpu::Buffer, &mut [u8])],
    rows: &[Option<(usize, usize)>],
) -> Result<()> {
    if slots.slots.len() < targets.len() {
        return Err(BackendError::ReadbackFailed {
            reason: "more readback buffers than map slots; this is a bug in vyre, please report it"
                .into(),
        });
    }
    for slot in slots.slots.iter() {
        slot.store(PENDING, Ordering::Relaxed);
    }
    for (i, (buffer, dst)) in targets.iter().enumerate() {
        let slots = Arc::clone(slots);
        let len = match rows.get(i).copied().flatten() {
            // A texture's readback buffer holds padded rows: map all of it.
            Some(_) => buffer.size(),
            None => map_len(dst.len()),
        };
        buffer
            .slice(..len)
            .map_async(wgpu::MapMode::Read, move |r| {
                let state = match r {
                    Ok(()) => MAPPED,
                    Err(e) => {
                        slots
                            .error
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert_with(|| e.to_string());
                        FAILED
                    }
                };
                if let Some(slot) = slots.slots.get(i) {
                    slot.store(state, Ordering::Release);
                }
                slots.wake();
            });
    }
    Ok(())
}

fn states(slots: &MapSlots, count: usize) -> impl Iterator<Item = u8> + '_ {
    slots.slots[..count]
        .iter()
        .map(|s| s.load(Ordering::Acquire))
}

fn pending(slots: &MapSlots, count: usize) -> bool {
    states(slots, count).any(|s| s == PENDING)
}

/// Copy every mapped target out and unmap it; on any failure, unmap what
/// was mapped (so the next run can map it again) and report. Returns the
/// nanoseconds spent copying.
fn finish(gpu: &Gpu, slots: &MapSlots, targets: &mut Targets<'_>) -> Result<u64> {
    let start = std::time::Instant::now();
    let count = targets.list.len();
    if states(slots, count).any(|s| s != MAPPED) {
        for ((buffer, _), state) in targets.list.iter().zip(states(slots, count)) {
            if state == MAPPED {
                buffer.unmap();
            }
        }
        let reason = if states(slots, count).any(|s| s == FAILED) {
            slots
                .error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .unwrap_or_else(|| "mapping a readback buffer failed".into())
        } else {
            "the buffer was not mapped after the wait".into()
        };
        return Err(BackendError::ReadbackFailed { reason });
    }
    let mut total = 0u64;
    for ((buffer, dst), rows) in targets.list.iter_mut().zip(&targets.rows) {
        {
            let len = match rows {
                Some(_) => buffer.size(),
                None => map_len(dst.len()),
            };
            let view = buffer.slice(..len).get_mapped_range().map_err(|e| {
                BackendError::ReadbackFailed {
                    reason: e.to_string(),
                }
            })?;
            match rows {
                Some((row, padded)) => crate::texture::strip_rows(&view, dst, *row, *padded),
                None => dst.copy_from_slice(&view[..dst.len()]),
            }
        }
        buffer.unmap();
        total += dst.len() as u64;
    }
    gpu.count_read_back(total);
    Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// Resolves when every slot has reported.
struct MapWait<'a> {
    gpu: &'a Gpu,
    slots: &'a MapSlots,
    count: usize,
    _in_flight: crate::gpu::InFlight,
}

impl Future for MapWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !pending(self.slots, self.count) {
            return Poll::Ready(());
        }
        // Register before the last look, so that a callback between the
        // look and the registration still wakes us.
        *self
            .slots
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
        self.gpu.poll_once();
        if pending(self.slots, self.count) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Mapped ranges must be a multiple of 4 bytes.
fn map_len(len: usize) -> u64 {
    (len as u64).max(4).next_multiple_of(4)
}
