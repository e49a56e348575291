//! Host copies into and out of mapped memory, split over a worker pool for
//! large transfers ([`Copier`]), and the one place where the runtime writes
//! into memory it has not initialised ([`receive_vec`]).
//!
//! On a discrete GPU the bus is not what limits a large upload or
//! read-back: one host thread copying into or out of mapped memory is
//! (8.6 GB/s filling, 5.6 GB/s reading on the H200 machine, against 80 GB/s
//! for the device's own copies). So copies of at least
//! [`TransferOptions::parallel_min_bytes`] are split into pieces of at least
//! [`TransferOptions::piece_bytes`] over a [`rayon`] pool that
//! the [`Gpu`](crate::Gpu) owns ([`TransferPool`]), made on the first copy
//! that splits. It is a pool of its own rather than rayon's global one so
//! that an application whose global pool is busy with long jobs does not
//! hold a run's copies behind them, and so that
//! [`TransferOptions::threads`] can size it (0 or 1: no pool at all).
//!
//! # Soundness
//! Writing into a mapped staging buffer needs no `unsafe`: each piece takes
//! its own [`wgpu::BufferViewMut`] of a disjoint range (wgpu allows several
//! views of non-overlapping ranges at once, and checks it), on the thread
//! that copies it. Reading out of a mapped buffer into a `&mut [u8]` is
//! safe slice code. The `unsafe` of this module, all of it below, is the
//! read into a vector's spare capacity ([`receive_vec`]), which skips
//! zero-filling memory that is about to be overwritten:
//! - the spare capacity of a `Vec<T>` seen as `MaybeUninit<u8>`: the same
//!   memory, with an alignment (1) that every `T` satisfies;
//! - `copy_nonoverlapping` into those bytes from a shared slice: a `&[u8]`
//!   and a `&mut [MaybeUninit<u8>]` that exist at once cannot overlap, and
//!   each piece copies exactly its own length;
//! - `set_len` after every byte of the new elements was written, for
//!   `T: Pod`, for which every byte pattern is a valid value.
// The crate denies `unsafe` everywhere else.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use bytemuck::Pod;
#[cfg(not(target_arch = "wasm32"))]
use rayon::{ThreadPool, prelude::*};
#[cfg(target_arch = "wasm32")]
use serial::*;

use crate::spec::transfer::TransferOptions;

/// In a browser there are no threads to split copies over: rayon's names
/// used here, as plain iterators on the calling thread, and a pool type
/// that is never made ([`TransferPool::pool`] is always `None` there).
#[cfg(target_arch = "wasm32")]
mod serial {
    /// `into_par_iter`, as `into_iter`.
    pub(super) trait IntoParallelIterator: IntoIterator + Sized {
        fn into_par_iter(self) -> Self::IntoIter {
            self.into_iter()
        }
    }
    impl<I: IntoIterator> IntoParallelIterator for I {}

    /// `par_chunks`, as `chunks`.
    pub(super) trait ParallelSlice<T> {
        fn par_chunks(&self, size: usize) -> std::slice::Chunks<'_, T>;
    }
    impl<T> ParallelSlice<T> for [T] {
        fn par_chunks(&self, size: usize) -> std::slice::Chunks<'_, T> {
            self.chunks(size)
        }
    }

    /// `par_chunks_mut`, as `chunks_mut`.
    pub(super) trait ParallelSliceMut<T> {
        fn par_chunks_mut(&mut self, size: usize) -> std::slice::ChunksMut<'_, T>;
    }
    impl<T> ParallelSliceMut<T> for [T] {
        fn par_chunks_mut(&mut self, size: usize) -> std::slice::ChunksMut<'_, T> {
            self.chunks_mut(size)
        }
    }

    /// A pool that cannot exist (no value of it is ever made).
    #[derive(Debug)]
    pub(crate) enum ThreadPool {}

    impl ThreadPool {
        pub(super) fn install<R>(&self, _work: impl FnOnce() -> R) -> R {
            match *self {}
        }
    }
}

/// Mapped ranges start at multiples of 8 bytes (`wgpu::MAP_ALIGNMENT`);
/// pieces also start on cache lines.
const PIECE_ALIGN: usize = 64;

/// The worker pool of one [`Gpu`](crate::Gpu)'s transfers: `threads`
/// workers, made on the first copy that splits (never when `threads` is 0
/// or 1, or when the system refuses threads: then every copy runs on the
/// calling thread).
#[derive(Debug)]
pub(crate) struct TransferPool {
    threads: usize,
    pool: OnceLock<Option<ThreadPool>>,
    /// Copies split over threads so far (for `GpuCounters`).
    split: AtomicU64,
}

impl TransferPool {
    pub(crate) fn new(threads: usize) -> Self {
        TransferPool {
            threads,
            pool: OnceLock::new(),
            split: AtomicU64::new(0),
        }
    }

    /// Copies split over threads so far.
    pub(crate) fn split_copies(&self) -> u64 {
        self.split.load(Ordering::Relaxed)
    }

    fn pool(&self) -> Option<&ThreadPool> {
        if self.threads < 2 {
            return None;
        }
        self.pool.get_or_init(|| self.make_pool()).as_ref()
    }

    /// The pool, when the system gives its threads.
    #[cfg(not(target_arch = "wasm32"))]
    fn make_pool(&self) -> Option<ThreadPool> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .thread_name(|i| format!("vyre-transfer-{i}"))
            .build()
            .ok()
    }

    /// No pool in a browser: every copy runs on the calling thread.
    #[cfg(target_arch = "wasm32")]
    fn make_pool(&self) -> Option<ThreadPool> {
        None
    }
}

/// A pool and the options of one run: what every host copy of the run
/// goes through.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Copier<'p> {
    pub(crate) pool: &'p TransferPool,
    pub(crate) options: TransferOptions,
}

/// Where the bytes of a read come from: a plain run of bytes, or a
/// texture's rows `padded` bytes apart of which the first `row` bytes are
/// texels.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source<'a> {
    Plain(&'a [u8]),
    Rows {
        src: &'a [u8],
        row: usize,
        padded: usize,
    },
}

impl Source<'_> {
    /// Bytes it yields.
    pub(crate) fn len(&self, dst_len: usize) -> Option<usize> {
        match *self {
            Source::Plain(src) => Some(src.len()),
            Source::Rows { src, row, padded } => {
                if row == 0 {
                    return Some(0);
                }
                let rows = dst_len / row;
                // The last row needs only its texels, not its padding.
                let needed = rows.checked_sub(1).map_or(0, |r| r * padded + row);
                (dst_len.is_multiple_of(row) && src.len() >= needed).then_some(dst_len)
            }
        }
    }
}

impl Copier<'_> {
    /// Pieces a copy of `bytes` is split into here.
    fn pieces(&self, bytes: usize) -> usize {
        let pieces = self
            .options
            .pieces(bytes as u64)
            .min(self.pool.threads.max(1));
        if pieces > 1 && self.pool.pool().is_some() {
            pieces
        } else {
            1
        }
    }

    /// Run `copy` over `pieces` pieces: on the pool when there are several.
    fn split(&self, pieces: usize, copy: impl FnOnce() + Send) {
        match self.pool.pool().filter(|_| pieces > 1) {
            Some(pool) => {
                self.pool.split.fetch_add(1, Ordering::Relaxed);
                pool.install(copy);
            }
            None => copy(),
        }
    }

    /// Run `work` on each of `items`, which move `bytes` in all: spread
    /// over the pool when a copy of that many bytes would be split (a
    /// batch's inputs gathered into one run's, its outputs handed to each
    /// instance), else one after another here.
    pub(crate) fn each<T: Send>(
        &self,
        bytes: usize,
        items: Vec<T>,
        work: impl Fn(T) + Send + Sync,
    ) {
        let pieces = self.pieces(bytes);
        if pieces == 1 || items.len() < 2 {
            items.into_iter().for_each(work);
            return;
        }
        self.split(pieces, || items.into_par_iter().for_each(work));
    }

    /// Copy `src` into `dst` (the same length).
    pub(crate) fn read(&self, src: &[u8], dst: &mut [u8]) {
        let len = src.len().min(dst.len());
        let (src, dst) = (&src[..len], &mut dst[..len]);
        let pieces = self.pieces(len);
        if pieces == 1 {
            dst.copy_from_slice(src);
            return;
        }
        let chunk = piece_len(len, pieces);
        self.split(pieces, || {
            dst.par_chunks_mut(chunk)
                .zip(src.par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
    }

    /// Write bytes `range` of `src` at the start of `buffer`'s mapped
    /// range, zero-padding them to a whole number of 4-byte words (the
    /// buffer must hold that many). The mapped range is cut into aligned
    /// pieces (one per thread when large), each gathered from whichever of
    /// `src`'s parts it covers, so parts of any length (a stacked run's
    /// instances of odd byte sizes) land in one copy each.
    ///
    /// # Errors
    /// wgpu's message when a piece of the range cannot be viewed (the
    /// buffer is not mapped, or is smaller).
    pub(crate) fn fill(
        &self,
        buffer: &wgpu::Buffer,
        src: Pieces<'_, '_>,
        range: std::ops::Range<usize>,
    ) -> Result<(), String> {
        let (from, to) = (range.start, range.end);
        let len = to.saturating_sub(from);
        let total = len.next_multiple_of(4);
        if total as u64 > buffer.size() {
            return Err(format!(
                "a staging buffer of {} bytes cannot take {total}",
                buffer.size()
            ));
        }
        if total == 0 {
            return Ok(());
        }
        let pieces = self.pieces(total);
        let chunk = piece_len(total, pieces);
        let write = |i: usize| -> Result<(), String> {
            let start = (i * chunk).min(total);
            let end = (start + chunk).min(total);
            if start == end {
                return Ok(());
            }
            let mut view = buffer
                .slice(start as u64..end as u64)
                .get_mapped_range_mut()
                .map_err(|e| e.to_string())?;
            let data = end.min(len).saturating_sub(start);
            let (mut body, mut tail) = view.slice(..).split_at(data);
            src.each_part(from + start, data, |at, bytes| {
                body.slice(at..at + bytes.len()).copy_from_slice(bytes);
            });
            tail.fill(0);
            Ok(())
        };
        if pieces == 1 {
            return write(0);
        }
        let mut result = Ok(());
        self.split(pieces, || {
            result = (0..pieces).into_par_iter().try_for_each(write);
        });
        result
    }

    /// Copy `src` into `dst` (uninitialised), writing every byte of `dst`;
    /// `src` yields exactly `dst.len()` bytes ([`Source::len`]).
    fn write_uninit(&self, src: Source<'_>, dst: &mut [MaybeUninit<u8>]) {
        match src {
            Source::Plain(src) => {
                let pieces = self.pieces(dst.len());
                let chunk = piece_len(dst.len(), pieces);
                let copy = |(d, s): (&mut [MaybeUninit<u8>], &[u8])| copy_uninit(s, d);
                if pieces == 1 {
                    copy((dst, src));
                } else {
                    self.split(pieces, || {
                        dst.par_chunks_mut(chunk)
                            .zip(src.par_chunks(chunk))
                            .for_each(copy);
                    });
                }
            }
            Source::Rows { src, row, padded } => {
                for (i, out) in dst.chunks_mut(row.max(1)).enumerate() {
                    let start = i * padded;
                    copy_uninit(&src[start..start + out.len()], out);
                }
            }
        }
    }
}

/// A stacked run's host inputs: for each, its instances' bytes in order
/// (each input's [`Pieces`]).
pub(crate) type Stacked<'p> = [Vec<&'p [u8]>];

/// Bytes laid end to end in parts: a host input's bytes (one part), or a
/// stacked run's input, each instance's bytes one after another, never
/// gathered into one host buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pieces<'p, 'a> {
    parts: &'p [&'a [u8]],
}

impl<'p, 'a> Pieces<'p, 'a> {
    /// These parts, in order.
    pub(crate) fn new(parts: &'p [&'a [u8]]) -> Self {
        Pieces { parts }
    }

    /// Bytes in all.
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    /// Hand `write` the bytes `from..from + len` part by part, each with
    /// its offset from `from` (bytes past the end are not handed).
    pub(crate) fn each_part(&self, from: usize, len: usize, mut write: impl FnMut(usize, &[u8])) {
        let (mut at, mut out) = (0usize, 0usize);
        for part in self.parts {
            if out == len {
                break;
            }
            let end = at + part.len();
            if end > from + out {
                let start = from + out - at;
                let n = (part.len() - start).min(len - out);
                write(out, &part[start..start + n]);
                out += n;
            }
            at = end;
        }
    }
}

/// Piece length for `len` bytes in `pieces` pieces: aligned, so that every
/// piece of a mapped range starts where wgpu allows a view to start.
fn piece_len(len: usize, pieces: usize) -> usize {
    len.div_ceil(pieces.max(1))
        .next_multiple_of(PIECE_ALIGN)
        .max(PIECE_ALIGN)
}

/// Copy `src` into `dst`, which has the same length (a shorter one of the
/// two bounds the copy; callers pass equal lengths).
fn copy_uninit(src: &[u8], dst: &mut [MaybeUninit<u8>]) {
    let len = src.len().min(dst.len());
    // SAFETY: `src` is valid for reading `len` bytes and `dst` for writing
    // them (both are slices at least that long); they cannot overlap, since
    // a shared and a mutable borrow of the same memory cannot coexist; `u8`
    // and `MaybeUninit<u8>` have the same layout, alignment 1.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), len);
    }
}

/// A host vector filled from mapped memory in place (`graph!`'s typed
/// outputs): no zero-filling of memory about to be overwritten, no
/// intermediate buffer.
pub(crate) trait Receive: Send + Sync {
    /// Bytes of one element.
    fn element_size(&self) -> usize;

    /// Bytes of the leading fields it keeps (0 for a plain vector).
    fn header_size(&self) -> usize;

    /// Replace the contents: the header from `header` (exactly
    /// [`Receive::header_size`] bytes), then the elements that `body`
    /// yields (`elements` of them, `elements * element_size` bytes). The
    /// vector's capacity is kept when it is enough.
    ///
    /// # Errors
    /// `Err(bytes)` when the host cannot allocate `bytes` bytes; the
    /// contents are then empty.
    fn receive(
        &mut self,
        copier: &Copier<'_>,
        header: &[u8],
        body: Source<'_>,
        elements: usize,
    ) -> Result<(), u64>;
}

/// Replace `v`'s contents with the `elements` elements that `body` yields,
/// written straight into its spare capacity.
///
/// # Errors
/// `Err(bytes)` when the host cannot allocate them (`v` is then empty), or
/// `body` yields fewer bytes than `elements` need (`v` is then empty too;
/// the caller sized both, so this is a bug it reports).
pub(crate) fn receive_vec<T: Pod + Send>(
    v: &mut Vec<T>,
    copier: &Copier<'_>,
    body: Source<'_>,
    elements: usize,
) -> Result<(), u64> {
    let size = size_of::<T>();
    let bytes = elements.saturating_mul(size);
    v.clear();
    if v.try_reserve_exact(elements).is_err() {
        return Err(bytes as u64);
    }
    let Some(spare) = v.spare_capacity_mut().get_mut(..elements) else {
        return Err(bytes as u64);
    };
    if body.len(bytes).is_none_or(|have| have < bytes) {
        return Err(bytes as u64);
    }
    let body = match body {
        Source::Plain(src) => Source::Plain(&src[..bytes]),
        rows => rows,
    };
    // SAFETY: the first `elements` slots of the spare capacity, seen as
    // their `bytes` bytes: the same memory (`size_of::<T>()` bytes each,
    // no padding between slice elements) as `MaybeUninit<u8>`, whose
    // alignment of 1 every `T` satisfies, borrowed mutably from `v` as
    // `spare` is for the whole of this function.
    let raw: &mut [MaybeUninit<u8>] =
        unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), bytes) };
    copier.write_uninit(body, raw);
    // SAFETY: `write_uninit` wrote every one of the `bytes` bytes of the
    // first `elements` elements (`body` yields exactly that many, checked
    // above), the capacity holds them (reserved above), and `T: Pod` makes
    // any bytes a valid `T`.
    unsafe { v.set_len(elements) };
    Ok(())
}

impl<T: Pod + Send + Sync> Receive for Vec<T> {
    fn element_size(&self) -> usize {
        size_of::<T>()
    }

    fn header_size(&self) -> usize {
        0
    }

    fn receive(
        &mut self,
        copier: &Copier<'_>,
        _header: &[u8],
        body: Source<'_>,
        elements: usize,
    ) -> Result<(), u64> {
        receive_vec(self, copier, body, elements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copier(pool: &TransferPool, threads: usize) -> Copier<'_> {
        Copier {
            pool,
            options: TransferOptions::default()
                .with_threads(threads)
                .with_parallel_min_bytes(1),
        }
    }

    /// Every length around the piece and thread boundaries, split or not,
    /// reads into a vector element by element.
    #[test]
    fn reads_into_spare_capacity_at_every_boundary() {
        let pool = TransferPool::new(3);
        let piece = 4096;
        let src: Vec<u8> = (0..(3 * piece + 200))
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        for threads in [0, 2, 3] {
            let mut c = copier(&pool, threads);
            c.options = c.options.with_piece_bytes(piece as u64);
            for len in [
                0,
                1,
                4,
                63,
                64,
                65,
                piece - 4,
                piece,
                piece + 4,
                2 * piece + 12,
                3 * piece + 200,
            ] {
                let mut v: Vec<u32> = vec![7; 3];
                let elements = len / 4;
                receive_vec(&mut v, &c, Source::Plain(&src[..len]), elements).expect("receive");
                let want: Vec<u32> = src[..elements * 4]
                    .chunks_exact(4)
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                assert_eq!(v, want, "{len} bytes on {threads} threads");
                let mut bytes = vec![0u8; len];
                c.read(&src[..len], &mut bytes);
                assert_eq!(bytes, &src[..len]);
            }
        }
        assert!(pool.split_copies() > 0, "some copies were split");
    }

    /// Rows are stripped of their padding; a source too short is refused,
    /// leaving the vector empty.
    #[test]
    fn rows_and_short_sources() {
        let pool = TransferPool::new(0);
        let c = copier(&pool, 0);
        let src: Vec<u8> = (0..12).collect();
        let mut v: Vec<u8> = Vec::new();
        let rows = Source::Rows {
            src: &src,
            row: 3,
            padded: 4,
        };
        receive_vec(&mut v, &c, rows, 9).expect("rows");
        assert_eq!(v, [0, 1, 2, 4, 5, 6, 8, 9, 10]);
        let mut w: Vec<u32> = vec![1, 2];
        assert_eq!(receive_vec(&mut w, &c, Source::Plain(&src[..7]), 2), Err(8));
        assert!(w.is_empty());
    }
}
