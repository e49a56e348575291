//! A launch plan's staging buffers: one `MAP_WRITE | COPY_SRC` buffer per
//! large host input, kept mapped between runs, so that an upload is one
//! host copy (split over the transfer threads) straight into memory the
//! device copies from, in the run's own command buffer.
//!
//! `Queue::write_buffer` copies into a fresh staging allocation every call
//! (new memory, on lavapipe touched page by page) on the calling thread;
//! for small inputs that is still the cheapest path, so only inputs of at
//! least [`TransferOptions::staging_min_bytes`] are staged.
//!
//! The cycle of one staging buffer: made mapped (`mapped_at_creation`),
//! filled by a run, unmapped, copied from by that run's commands, and
//! mapped again right after the run's submission (`map_async`); the run's
//! own wait for its results completes that mapping, so the next run finds
//! it mapped. A run never waits for it: when it is not mapped yet (a run
//! that read nothing back, so never waited), the input goes through
//! `Queue::write_buffer` for that run, counted in
//! [`GpuCounters::staging_fallbacks`](crate::GpuCounters::staging_fallbacks).
//!
//! An input larger than
//! [`TransferOptions::overlap_chunk_bytes`](crate::TransferOptions::overlap_chunk_bytes)
//! is staged in chunks, one buffer each: a chunk's device copy is submitted
//! as soon as it is filled, so the device copies it while the host fills
//! the next.
//!
//! This file holds the buffer and its state ([`Staging`]); a plan's use of
//! them is `bind.rs`'s (`LaunchPlan::stage`, `encode_staged`,
//! `remap_staging`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::device::buffer::round4;
use crate::device::gpu::Gpu;

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// One staging buffer: a whole input's, or one chunk of it (see
/// [`TransferOptions::overlap_chunk_bytes`](crate::TransferOptions::overlap_chunk_bytes)).
#[derive(Debug)]
pub(crate) struct Staging {
    pub(crate) buffer: wgpu::Buffer,
    /// Where its bytes go in the input's device buffer.
    pub(crate) offset: u64,
    /// Where its map callback reports ([`MAPPED`] or [`FAILED`]).
    state: Arc<AtomicU8>,
    /// Filled by this run: its copy is recorded (or was submitted), and it
    /// is mapped again after the run's submission.
    pub(crate) armed: bool,
    /// Its copy was submitted on its own as soon as it was filled (a chunk
    /// of an input staged in several), not recorded in the run's encoder.
    pub(crate) submitted: bool,
}

impl Staging {
    /// A staging buffer of `bytes` bytes (a whole number of words) for the
    /// input's bytes from `offset` on, mapped.
    pub(crate) fn new(gpu: &Gpu, offset: u64, bytes: u64) -> Self {
        let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre staging"),
            size: round4(bytes),
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        });
        Staging {
            buffer,
            offset,
            state: Arc::new(AtomicU8::new(MAPPED)),
            armed: false,
            submitted: false,
        }
    }

    /// The chunks of an input of `size` bytes (a whole number of words)
    /// staged in pieces of `chunk` bytes (`u64::MAX`: one piece): `(offset,
    /// bytes)` of each, offsets and sizes whole numbers of words.
    pub(crate) fn layout(size: u64, chunk: u64) -> impl Iterator<Item = (u64, u64)> + Clone {
        let chunk = if chunk >= size {
            size.max(4)
        } else {
            chunk.max(256).next_multiple_of(256)
        };
        (0..size.div_ceil(chunk).max(1))
            .map(move |i| (i * chunk, chunk.min(size - (i * chunk).min(size)).max(4)))
    }

    /// Whether it is mapped now, after at most one non-blocking poll of
    /// the device.
    pub(crate) fn mapped(&self, gpu: &Gpu) -> bool {
        match self.state.load(Ordering::Acquire) {
            MAPPED => true,
            PENDING => {
                gpu.poll_once();
                self.state.load(Ordering::Acquire) == MAPPED
            }
            _ => false,
        }
    }

    pub(crate) fn failed(&self) -> bool {
        self.state.load(Ordering::Acquire) == FAILED
    }

    /// Ask wgpu to map it again; its callback reports.
    pub(crate) fn remap(&mut self) {
        self.armed = false;
        self.submitted = false;
        self.state.store(PENDING, Ordering::Release);
        let state = Arc::clone(&self.state);
        self.buffer
            .slice(..)
            .map_async(wgpu::MapMode::Write, move |r| {
                state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
            });
    }
}
