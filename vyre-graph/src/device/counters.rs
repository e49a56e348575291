//! [`GpuCounters`]: what the runtime has done on a [`Gpu`](crate::Gpu)
//! (submissions, allocations, transfers and their paths), counted by the
//! runtime itself, and the atomic counters behind it.

use std::sync::atomic::{AtomicU64, Ordering};

use super::poller::PollerState;
use super::transfer::TransferPool;

/// What the runtime has done on a [`Gpu`](crate::Gpu), counted by the runtime itself.
///
/// Tests and benchmarks read it to prove claims such as "a cached run makes
/// no buffer and no bind group" and "a graph is one submission".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuCounters {
    /// `queue.submit` calls.
    pub submissions: u64,
    /// Buffers created (device, staging and readback).
    pub buffers_created: u64,
    /// Bind groups created.
    pub bind_groups_created: u64,
    /// Compute pipelines created.
    pub pipelines_created: u64,
    /// Bytes written from the host to the device.
    pub bytes_uploaded: u64,
    /// Bytes read from the device back to the host.
    pub bytes_read_back: u64,
    /// Bytes of device buffers the runtime has allocated and not yet freed
    /// (launch plans, readback staging, resident handles): flat in a steady
    /// state, back down when plans are evicted or handles dropped.
    pub live_buffer_bytes: u64,
    /// Panics inside wgpu that the runtime caught while polling the device
    /// (wgpu-core 30 can fail an internal assertion when a poll that timed
    /// out races another thread's poll). Each such poll is repeated; the
    /// runs waiting on it go on, so the count is for diagnostics only.
    pub poll_panics: u64,
    /// Device pollers started: one thread per burst of async runs, and one
    /// more start whenever a poller's loop ended by a panic while runs
    /// still waited (it starts again at once).
    pub pollers_started: u64,
    /// Host inputs uploaded through a launch plan's staging buffer (see
    /// [`TransferOptions::staging_min_bytes`](crate::TransferOptions::staging_min_bytes)).
    pub staged_uploads: u64,
    /// Host inputs that would have been staged but went through
    /// `Queue::write_buffer`, because their staging buffer was not mapped
    /// again yet (a run does not wait for it).
    pub staging_fallbacks: u64,
    /// Append outputs read by their count in a second, small submission
    /// (see [`TransferOptions::count_first_min_bytes`](crate::TransferOptions::count_first_min_bytes)).
    pub reads_by_count: u64,
    /// Host copies split over the transfer threads.
    pub split_copies: u64,
}

impl GpuCounters {
    /// Counts accumulated since `earlier` (saturating).
    #[must_use]
    pub fn since(&self, earlier: &GpuCounters) -> GpuCounters {
        GpuCounters {
            submissions: self.submissions.saturating_sub(earlier.submissions),
            buffers_created: self.buffers_created.saturating_sub(earlier.buffers_created),
            bind_groups_created: self
                .bind_groups_created
                .saturating_sub(earlier.bind_groups_created),
            pipelines_created: self
                .pipelines_created
                .saturating_sub(earlier.pipelines_created),
            bytes_uploaded: self.bytes_uploaded.saturating_sub(earlier.bytes_uploaded),
            bytes_read_back: self.bytes_read_back.saturating_sub(earlier.bytes_read_back),
            // A level, not a count: the later snapshot's.
            live_buffer_bytes: self.live_buffer_bytes,
            poll_panics: self.poll_panics.saturating_sub(earlier.poll_panics),
            pollers_started: self.pollers_started.saturating_sub(earlier.pollers_started),
            staged_uploads: self.staged_uploads.saturating_sub(earlier.staged_uploads),
            staging_fallbacks: self
                .staging_fallbacks
                .saturating_sub(earlier.staging_fallbacks),
            reads_by_count: self.reads_by_count.saturating_sub(earlier.reads_by_count),
            split_copies: self.split_copies.saturating_sub(earlier.split_copies),
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) submissions: AtomicU64,
    pub(crate) buffers_created: AtomicU64,
    pub(crate) bind_groups_created: AtomicU64,
    pub(crate) pipelines_created: AtomicU64,
    pub(crate) bytes_uploaded: AtomicU64,
    pub(crate) bytes_read_back: AtomicU64,
    pub(crate) bytes_allocated: AtomicU64,
    pub(crate) bytes_freed: AtomicU64,
    pub(crate) staged_uploads: AtomicU64,
    pub(crate) staging_fallbacks: AtomicU64,
    pub(crate) reads_by_count: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self, poller: &PollerState, pool: &TransferPool) -> GpuCounters {
        GpuCounters {
            submissions: self.submissions.load(Ordering::Relaxed),
            buffers_created: self.buffers_created.load(Ordering::Relaxed),
            bind_groups_created: self.bind_groups_created.load(Ordering::Relaxed),
            pipelines_created: self.pipelines_created.load(Ordering::Relaxed),
            bytes_uploaded: self.bytes_uploaded.load(Ordering::Relaxed),
            bytes_read_back: self.bytes_read_back.load(Ordering::Relaxed),
            live_buffer_bytes: self
                .bytes_allocated
                .load(Ordering::Relaxed)
                .saturating_sub(self.bytes_freed.load(Ordering::Relaxed)),
            poll_panics: poller.poll_panics.load(Ordering::Relaxed),
            pollers_started: poller.started.load(Ordering::Relaxed),
            staged_uploads: self.staged_uploads.load(Ordering::Relaxed),
            staging_fallbacks: self.staging_fallbacks.load(Ordering::Relaxed),
            reads_by_count: self.reads_by_count.load(Ordering::Relaxed),
            split_copies: pool.split_copies(),
        }
    }

    pub(crate) fn count_staged(&self, staged: bool) {
        let counter = if staged {
            &self.staged_uploads
        } else {
            &self.staging_fallbacks
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_read_by_count(&self) {
        self.reads_by_count.fetch_add(1, Ordering::Relaxed);
    }
}
