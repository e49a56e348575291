//! Reading device memory back to the host: every buffer of a read is
//! mapped after a single wait (or, for an async run, a single future),
//! copied out, and unmapped. Runs and resident handles read through here
//! alike, with [`map_and_copy`]: one implementation, parameterised by how
//! it waits ([`Wait`]: block the thread, or resolve as a future), and
//! [`block_on`] to drive it from blocking code. The copies out of mapped
//! memory go through `transfer.rs` (split over threads when large), into a
//! slice or straight into a vector's spare capacity ([`Dest`]).
//!
//! wgpu reports each mapping through a callback; [`MapSlots`] is where they
//! report, reused by a launch plan every run so that reading back
//! allocates nothing of ours. A callback that wgpu drops unfired (a panic
//! inside its device poll, see `poller.rs`) still reports, so nobody waits
//! for it forever.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use web_time::Instant;

use smallvec::SmallVec;

use super::gpu::{Gpu, InFlight};
use super::transfer::{Copier, Receive, Source};
use crate::spec::error::{BackendError, Result};

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;
/// The callback was dropped without being called: a panic inside wgpu's
/// device poll dropped the callbacks it had collected, after mapping their
/// buffers. [`finish`] reads such a buffer if it is mapped.
const DROPPED: u8 = 3;

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

/// Where one mapped buffer's bytes go.
pub(crate) enum Dest<'a> {
    /// Into this slice: its length is what is read.
    Bytes(&'a mut [u8]),
    /// Into a vector (a [`VecSink`](crate::device::io::VecSink)): the
    /// buffer's `header` bytes, then its elements as `body` says. `name`
    /// names the output in errors.
    Vec {
        sink: &'a mut (dyn Receive + 'static),
        header: usize,
        body: Body,
        name: &'a str,
    },
    /// Laid end to end, each into its own destination (`None`: skipped):
    /// a stacked run's output, each instance's part straight into that
    /// instance's sink.
    Pieces(Vec<Piece<'a>>),
}

/// One part of a [`Dest::Pieces`]: `len` bytes, and where they go.
pub(crate) struct Piece<'a> {
    pub(crate) len: usize,
    pub(crate) dest: Option<Dest<'a>>,
}

impl Dest<'_> {
    /// Bytes it takes from a mapped buffer.
    fn len(&self) -> usize {
        match self {
            Dest::Bytes(dst) => dst.len(),
            Dest::Vec { header, body, .. } => header.saturating_add(body.mapped()),
            Dest::Pieces(pieces) => pieces.iter().map(|p| p.len).sum(),
        }
    }
}

/// How many bytes of elements a vector destination receives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Body {
    /// This many.
    Bytes(usize),
    /// An append buffer read whole: as many items of `item` bytes as the
    /// count (the header's first word) says, at most `capacity`.
    Counted { capacity: usize, item: usize },
}

impl Body {
    /// Bytes mapped for it (a counted body maps its whole capacity).
    fn mapped(self) -> usize {
        match self {
            Body::Bytes(bytes) => bytes,
            Body::Counted { capacity, item } => capacity.saturating_mul(item),
        }
    }
}

/// One mapped buffer of a read and where its bytes go. `rows` is `(row
/// bytes, padded row bytes)` for a buffer holding a texture's padded rows
/// (stripped while copying).
struct Target<'a> {
    buffer: &'a wgpu::Buffer,
    dest: Dest<'a>,
    rows: Option<(usize, usize)>,
}

impl Target<'_> {
    /// Bytes to map: the whole buffer for a texture's padded rows.
    fn map_len(&self) -> u64 {
        if self.rows.is_some() {
            return self.buffer.size();
        }
        map_len(self.dest.len())
    }
}

/// What one read maps: staging buffers, each copied into a host slice or
/// vector (a run's host sinks, its timestamps and its status; a handle's
/// one staging buffer).
pub(crate) struct Targets<'a> {
    list: SmallVec<[Target<'a>; 4]>,
}

impl<'a> Targets<'a> {
    /// Nothing to read yet.
    pub(crate) fn new() -> Self {
        Targets {
            list: SmallVec::new(),
        }
    }

    /// One staging buffer into `dest`.
    pub(crate) fn one(buffer: &'a wgpu::Buffer, dest: Dest<'a>) -> Self {
        let mut targets = Targets::new();
        targets.push_to(buffer, dest, None);
        targets
    }

    /// Read `buffer` into `dst`; `rows` is `(row bytes, padded row bytes)`
    /// for a buffer holding a texture's padded rows (stripped while
    /// copying), `None` for a plain copy of `dst.len()` bytes.
    pub(crate) fn push(
        &mut self,
        buffer: &'a wgpu::Buffer,
        dst: &'a mut [u8],
        rows: Option<(usize, usize)>,
    ) {
        self.push_to(buffer, Dest::Bytes(dst), rows);
    }

    /// Read `buffer` into `dest` (`rows` as for [`Targets::push`]).
    pub(crate) fn push_to(
        &mut self,
        buffer: &'a wgpu::Buffer,
        dest: Dest<'a>,
        rows: Option<(usize, usize)>,
    ) {
        self.list.push(Target { buffer, dest, rows });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// How a run waits for its results, whichever submission it waits for:
/// what [`Wait`] is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waiting {
    /// Blocking the thread for at most `timeout` (the blocking API; never
    /// in a browser, where it is not compiled).
    #[cfg(not(target_arch = "wasm32"))]
    Block(Option<std::time::Duration>),
    /// Through the future, never blocking.
    Async,
}

impl Waiting {
    /// The wait for `submission`.
    pub(crate) fn wait(self, submission: wgpu::SubmissionIndex) -> Wait {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            Waiting::Block(timeout) => Wait::Block {
                submission: Some(submission),
                timeout,
            },
            Waiting::Async => {
                let _ = submission;
                Wait::Async
            }
        }
    }
}

/// How a read waits for its mappings.
#[derive(Debug)]
pub(crate) enum Wait {
    /// Block the thread: wait for `submission` (everything submitted when
    /// `None`) for at most `timeout` ([`BackendError::Timeout`] after it),
    /// then poll until every mapping has reported. Not in a browser.
    #[cfg(not(target_arch = "wasm32"))]
    Block {
        submission: Option<wgpu::SubmissionIndex>,
        timeout: Option<std::time::Duration>,
    },
    /// Never block: resolve when every mapping has reported. On native
    /// backends [`Gpu`]'s poller thread polls the device meanwhile; in a
    /// browser the event loop delivers the callbacks.
    Async,
}

impl Wait {
    /// How a later read of the same run waits for its own submission: the
    /// same way (blocking with the same timeout, or async).
    pub(crate) fn again(&self) -> impl FnOnce(wgpu::SubmissionIndex) -> Wait + use<> {
        let waiting = self.waiting();
        move |submission| waiting.wait(submission)
    }

    /// How it waits, whichever submission for.
    pub(crate) fn waiting(&self) -> Waiting {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            Wait::Block { timeout, .. } => Waiting::Block(*timeout),
            Wait::Async => Waiting::Async,
        }
    }
}

/// Map the first bytes of each target that its destination takes (the
/// whole buffer for a texture's padded rows), copy them into it through
/// `copier` (split over threads when large), and unmap: one wait for all,
/// as `wait` says. Returns the nanoseconds spent copying.
///
/// With [`Wait::Block`] the future is ready when first polled (it blocks
/// inside that poll): drive it with [`block_on`].
///
/// # Errors
/// [`BackendError::Timeout`] (blocking only), [`BackendError::ReadbackFailed`]
/// when a mapping fails or a buffer is not mapped after the wait.
pub(crate) async fn map_and_copy(
    gpu: &Gpu,
    copier: Copier<'_>,
    slots: &Arc<MapSlots>,
    targets: &mut Targets<'_>,
    wait: Wait,
) -> Result<u64> {
    if targets.is_empty() {
        return Ok(0);
    }
    request(slots, &targets.list)?;
    let count = targets.list.len();
    match wait {
        #[cfg(not(target_arch = "wasm32"))]
        Wait::Block {
            submission,
            timeout,
        } => {
            let _span = enter!("wait");
            block_until_mapped(gpu, slots, count, submission, timeout)?;
        }
        Wait::Async => {
            let mapped = MapWait {
                gpu,
                slots,
                count,
                _in_flight: gpu.begin_async(),
            };
            instrument!(mapped, "wait").await;
        }
    }
    let _span = enter!("copy-out");
    finish(gpu, copier, slots, targets)
}

/// [`map_and_copy`] for one staging buffer: a resident handle's read after
/// its `submission`, waiting as `waiting` says (blocking without a
/// timeout, or async).
///
/// # Errors
/// As [`map_and_copy`].
pub(crate) async fn read_staging<'a>(
    gpu: &Gpu,
    staging: &'a wgpu::Buffer,
    submission: wgpu::SubmissionIndex,
    dest: Dest<'a>,
    waiting: Waiting,
) -> Result<u64> {
    let mut targets = Targets::one(staging, dest);
    let copier = gpu.copier(None);
    let slots = MapSlots::new(1);
    let wait = waiting.wait(submission);
    map_and_copy(gpu, copier, &slots, &mut targets, wait).await
}

/// Run `future` to its end on this thread. A future that never waits
/// (every blocking path: [`Wait::Block`] blocks inside its poll, and
/// wgpu-core's error scopes answer at once) is ready at its first poll,
/// which allocates nothing; any other is driven by `pollster`. Native
/// only: nothing blocks in a browser.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => pollster::block_on(future),
    }
}

/// [`Wait::Block`]: wait for the submission, then give the map callbacks
/// the time to report (another thread's poll may have taken this read's
/// map completions and be about to call their callbacks).
#[cfg(not(target_arch = "wasm32"))]
fn block_until_mapped(
    gpu: &Gpu,
    slots: &MapSlots,
    count: usize,
    submission: Option<wgpu::SubmissionIndex>,
    timeout: Option<std::time::Duration>,
) -> Result<()> {
    gpu.wait(submission, timeout)?;
    let deadline = Instant::now() + timeout.unwrap_or(std::time::Duration::from_secs(60));
    while pending(slots, count) && Instant::now() < deadline {
        gpu.poll_once();
        std::thread::yield_now();
    }
    Ok(())
}

/// Copy padded rows (`padded` bytes apart) into tightly packed `dst` rows of
/// `row` bytes. Layers and z slices follow each other row after row, so
/// one pass covers every dimension.
pub(crate) fn strip_rows(src: &[u8], dst: &mut [u8], row: usize, padded: usize) {
    if row == 0 {
        return;
    }
    for (i, out) in dst.chunks_mut(row).enumerate() {
        let start = i * padded;
        if let Some(src) = src.get(start..start + out.len()) {
            out.copy_from_slice(src);
        }
    }
}

/// Reset the slots and ask wgpu to map every target.
fn request(slots: &Arc<MapSlots>, targets: &[Target<'_>]) -> Result<()> {
    if slots.slots.len() < targets.len() {
        return Err(BackendError::ReadbackFailed {
            reason: "more readback buffers than map slots; this is a bug in vyre, please report it"
                .into(),
        });
    }
    for slot in slots.slots.iter() {
        slot.store(PENDING, Ordering::Relaxed);
    }
    for (i, target) in targets.iter().enumerate() {
        let report = Report {
            slots: Arc::clone(slots),
            index: i,
            sent: false,
        };
        target
            .buffer
            .slice(..target.map_len())
            .map_async(wgpu::MapMode::Read, move |r| {
                let state = match r {
                    Ok(()) => MAPPED,
                    Err(e) => {
                        report
                            .slots
                            .error
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert_with(|| e.to_string());
                        FAILED
                    }
                };
                report.send(state);
            });
    }
    Ok(())
}

/// A map callback's way to its slot. Dropped without [`Report::send`] (wgpu
/// dropped the callback unfired), it reports [`DROPPED`], so that nobody
/// waits for a callback that will never come.
struct Report {
    slots: Arc<MapSlots>,
    index: usize,
    sent: bool,
}

impl Report {
    fn send(mut self, state: u8) {
        self.sent = true;
        self.store(state);
    }

    fn store(&self, state: u8) {
        if let Some(slot) = self.slots.slots.get(self.index) {
            slot.store(state, Ordering::Release);
        }
        self.slots.wake();
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if !self.sent {
            self.store(DROPPED);
        }
    }
}

fn states(slots: &MapSlots, count: usize) -> impl Iterator<Item = u8> + '_ {
    slots
        .slots
        .iter()
        .take(count)
        .map(|s| s.load(Ordering::Acquire))
}

fn pending(slots: &MapSlots, count: usize) -> bool {
    states(slots, count).any(|s| s == PENDING)
}

/// Copy every mapped target out and unmap it; on any failure, unmap what
/// was mapped (so the next run can map it again) and report. Returns the
/// nanoseconds spent copying.
fn finish(
    gpu: &Gpu,
    copier: Copier<'_>,
    slots: &MapSlots,
    targets: &mut Targets<'_>,
) -> Result<u64> {
    let start = Instant::now();
    let count = targets.list.len();
    // A dropped callback's buffer is read if it is mapped (`get_mapped_range`
    // below says so).
    if states(slots, count).any(|s| s != MAPPED && s != DROPPED) {
        for (target, state) in targets.list.iter().zip(states(slots, count)) {
            if state == MAPPED {
                target.buffer.unmap();
            }
        }
        if let Some(reason) = gpu.lost() {
            return Err(BackendError::DeviceLost { reason });
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
    let mut failed = None;
    for target in targets.list.iter_mut() {
        let copied = target
            .buffer
            .slice(..target.map_len())
            .get_mapped_range()
            .map_err(|e| BackendError::ReadbackFailed {
                reason: e.to_string(),
            })
            .and_then(|view| copy_out(&copier, &view, &mut target.dest, target.rows));
        // Unmapped whatever happened, so that the next run can map it.
        target.buffer.unmap();
        match copied {
            Ok(bytes) => total += bytes,
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    gpu.count_read_back(total);
    match failed {
        Some(e) => Err(e),
        None => Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// Copy one mapped buffer (`view`) into its destination; returns the bytes
/// copied.
fn copy_out(
    copier: &Copier<'_>,
    view: &[u8],
    dest: &mut Dest<'_>,
    rows: Option<(usize, usize)>,
) -> Result<u64> {
    match dest {
        Dest::Bytes(dst) => {
            match rows {
                Some((row, padded)) => strip_rows(view, dst, row, padded),
                None => copier.read(view, dst),
            }
            Ok(dst.len() as u64)
        }
        Dest::Vec {
            sink,
            header,
            body,
            name,
        } => {
            let head = view.get(..*header).unwrap_or(&[]);
            let body_bytes = match *body {
                Body::Bytes(bytes) => bytes,
                Body::Counted { capacity, item } => {
                    let count = head.get(..4).map_or(0, bytemuck::pod_read_unaligned::<u32>);
                    (count as usize).min(capacity).saturating_mul(item)
                }
            };
            let source = match rows {
                Some((row, padded)) => Source::Rows {
                    src: view,
                    row,
                    padded,
                },
                None => Source::Plain(view.get(*header..).unwrap_or(&[])),
            };
            let elements = body_bytes / sink.element_size().max(1);
            let header_part = head.get(..sink.header_size()).unwrap_or(head);
            sink.receive(copier, header_part, source, elements)
                .map_err(|bytes| BackendError::HostAllocationFailed {
                    buffer: (*name).to_string(),
                    bytes,
                })?;
            Ok((*header + body_bytes) as u64)
        }
        Dest::Pieces(pieces) => copy_pieces(copier, view, pieces),
    }
}

/// Copy each piece of `view` into its own destination, the pieces spread
/// over the transfer threads when the whole is large.
fn copy_pieces(copier: &Copier<'_>, view: &[u8], pieces: &mut [Piece<'_>]) -> Result<u64> {
    let mut rest = view;
    let mut parts = Vec::with_capacity(pieces.len());
    for piece in pieces.iter_mut() {
        let (part, tail) = rest.split_at(piece.len.min(rest.len()));
        rest = tail;
        if let Some(dest) = piece.dest.as_mut() {
            parts.push((part, dest));
        }
    }
    let bytes: usize = parts.iter().map(|(p, _)| p.len()).sum();
    let failed = Mutex::new(None);
    copier.each(bytes, parts, |(part, dest)| {
        if let Err(e) = copy_out(copier, part, dest, None) {
            failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(e);
        }
    });
    match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some(e) => Err(e),
        None => Ok(bytes as u64),
    }
}

/// Resolves when every slot has reported.
struct MapWait<'a> {
    gpu: &'a Gpu,
    slots: &'a MapSlots,
    count: usize,
    _in_flight: InFlight,
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
        // With a poller thread alive, it polls the device and the callbacks
        // wake this task. Without one (the system refused a thread), this
        // task polls the device itself and asks to be polled again: a future
        // that returns `Pending` is always woken by someone.
        let alone = !self.gpu.poller_alive();
        if alone {
            self.gpu.poll_once();
        }
        if !pending(self.slots, self.count) {
            return Poll::Ready(());
        }
        // In a browser no thread polls: the event loop calls the callbacks.
        if alone && cfg!(not(target_arch = "wasm32")) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// Mapped ranges must be a multiple of 4 bytes.
fn map_len(len: usize) -> u64 {
    (len as u64).max(4).next_multiple_of(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its wakes.
    struct Count(std::sync::atomic::AtomicUsize);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A map callback that wgpu drops unfired (what a panic inside its
    /// device poll does to the callbacks it collected) reports `DROPPED`
    /// and wakes the waiting task, so nobody waits for it forever; a sent
    /// report is not reported again when it drops.
    #[test]
    fn a_dropped_map_callback_reports_and_wakes() {
        let slots = MapSlots::new(2);
        let woken = Arc::new(Count(std::sync::atomic::AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&woken));
        *slots.waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(waker.clone());
        let report = |index| Report {
            slots: Arc::clone(&slots),
            index,
            sent: false,
        };
        report(0).send(MAPPED);
        assert_eq!(states(&slots, 2).collect::<Vec<_>>(), [MAPPED, PENDING]);
        *slots.waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(waker);
        let callback = {
            let report = report(1);
            move |state: u8| report.send(state)
        };
        drop(callback);
        assert_eq!(states(&slots, 2).collect::<Vec<_>>(), [MAPPED, DROPPED]);
        assert!(!pending(&slots, 2));
        assert_eq!(woken.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn rows_are_stripped_of_their_padding() {
        let src: Vec<u8> = (0..12).collect();
        let mut dst = [0u8; 6];
        strip_rows(&src, &mut dst, 3, 4);
        assert_eq!(dst, [0, 1, 2, 4, 5, 6]);
    }

    /// A buffer whose callback was dropped but which wgpu did map is read
    /// as usual: the run gets its data, not an error.
    #[test]
    fn a_mapped_buffer_whose_callback_was_dropped_is_read() {
        let gpu = match Gpu::new() {
            Ok(gpu) => gpu,
            Err(e) => panic!("no GPU for this test: {e}"),
        };
        let data: Vec<u8> = (0..64u8).collect();
        let source = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("source"),
            size: 64,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.write_buffer(&source, 0, &data);
        let read = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read"),
            size: 64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&source, 0, &read, 0, 64);
        let index = gpu.submit(encoder.finish());
        let slots = MapSlots::new(1);
        let mut out = vec![0u8; 64];
        let mut targets = Targets::one(&read, Dest::Bytes(&mut out));
        request(&slots, &targets.list).expect("request");
        gpu.wait(Some(index), None).expect("wait");
        while pending(&slots, 1) {
            gpu.poll_once();
        }
        // As if the callback had been dropped instead of called.
        slots.slots[0].store(DROPPED, Ordering::Release);
        finish(&gpu, gpu.copier(None), &slots, &mut targets).expect("a mapped buffer is read");
        drop(targets);
        assert_eq!(out, data);
    }
}
