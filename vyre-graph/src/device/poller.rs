//! The device poller: a background thread that polls a [`Gpu`](crate::Gpu)'s
//! device while async runs wait, so that their map callbacks fire (and wake
//! them) without anyone blocking; and every poll of the runtime, guarded
//! against panics inside wgpu.
//!
//! wgpu-core 30.0.2 asserts, after a poll whose wait timed out, that an
//! empty queue has reached the submission waited for; a submit or poll on
//! another thread can empty the queue in between, and the assertion fails
//! (`device/resource.rs`, "If the queue is empty, the current submission
//! index (..) should be at least the wait submission index (..)"). Nothing
//! is left locked, the next poll works, and the map callbacks that poll had
//! collected are dropped unfired with their buffers mapped (`map.rs`
//! reads them). So every poll here is caught ([`PollerState::poll_caught`]),
//! counted and repeated; the poller's loop starts again on its thread if
//! anything else panics in it; and a guard clears the running flag however
//! the thread ends.
//!
//! The state is [`PollerState`], held by the device's shared inner part
//! (which implements [`Polled`]); the thread holds that part only weakly,
//! so it never keeps a dropped `Gpu` alive.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// How often a poll that panicked inside wgpu is repeated before a blocking
/// wait gives up (the panic is a race that the next poll does not meet).
pub(crate) const POLL_ATTEMPTS: usize = 4;

/// What `device.poll` answers.
pub(crate) type PollResult = std::result::Result<wgpu::PollStatus, wgpu::PollError>;

/// A device the poller can poll: the shared inner part of a `Gpu`.
pub(crate) trait Polled: Send + Sync + 'static {
    /// The device to poll.
    fn device(&self) -> &wgpu::Device;
    /// Its poller's state.
    fn poller(&self) -> &PollerState;
}

/// A device's poller: whether its thread runs, the async runs waiting, and
/// what it counted.
#[derive(Debug, Default)]
pub(crate) struct PollerState {
    running: Mutex<bool>,
    in_flight: AtomicUsize,
    /// Panics inside wgpu caught while polling.
    pub(crate) poll_panics: AtomicU64,
    /// Poller threads started, and restarts of a poller's loop.
    pub(crate) started: AtomicU64,
    injected: InjectedFaults,
}

/// Faults for the poller to meet, counted down as they happen.
#[derive(Debug, Default)]
struct InjectedFaults {
    poll_panics: AtomicUsize,
    loop_panics: AtomicUsize,
    refused_spawns: AtomicUsize,
}

/// Faults to inject into a [`Gpu`](crate::Gpu)'s device poller, for vyre's
/// own tests (through `vyre_graph::__private`); not an API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PollerFaults {
    /// The poller's next polls that panic inside their catch, as a panic
    /// inside wgpu does.
    pub poll_panics: usize,
    /// The poller's next polls that panic outside that catch, ending the
    /// poller's loop (which starts again on its thread).
    pub loop_panics: usize,
    /// The next attempts to start a poller thread that fail, as when the
    /// system refuses a thread (the futures then poll the device
    /// themselves).
    pub refused_spawns: usize,
}

impl PollerState {
    /// `device.poll`, with a panic inside wgpu caught, counted and the poll
    /// repeated (up to [`POLL_ATTEMPTS`] times; `None` after that).
    pub(crate) fn poll_caught(
        &self,
        device: &wgpu::Device,
        poll: wgpu::PollType,
    ) -> Option<PollResult> {
        for _ in 0..POLL_ATTEMPTS {
            let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                device.poll(poll.clone())
            }));
            match polled {
                Ok(result) => return Some(result),
                Err(_) => {
                    self.poll_panics.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        None
    }

    /// An async run starts waiting.
    pub(crate) fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// An async run stops waiting.
    pub(crate) fn end(&self) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Replaces the faults still to come (see [`PollerFaults`]).
    pub(crate) fn inject(&self, faults: PollerFaults) {
        let injected = &self.injected;
        let store = |to: &AtomicUsize, n| to.store(n, Ordering::Release);
        store(&injected.poll_panics, faults.poll_panics);
        store(&injected.loop_panics, faults.loop_panics);
        store(&injected.refused_spawns, faults.refused_spawns);
    }

    /// The running flag, recovered from poisoning (a plain bool is valid
    /// whatever a panicking holder left).
    fn running(&self) -> MutexGuard<'_, bool> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn waiting(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// The poller's poll: [`PollerState::poll_caught`], after any injected
    /// fault (a panic where wgpu's would be).
    fn poller_poll(&self, device: &wgpu::Device) -> Option<PollResult> {
        let poll = wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(std::time::Duration::from_millis(2)),
        };
        if take_one(&self.injected.loop_panics) {
            // Outside the poll's catch: the poller's loop ends (and starts
            // again).
            std::panic::resume_unwind(Box::new("vyre: injected poller loop panic"));
        }
        if take_one(&self.injected.poll_panics) {
            let injected = std::panic::catch_unwind(|| {
                std::panic::resume_unwind(Box::new("vyre: injected poll panic"))
            });
            if injected.is_err() {
                self.poll_panics.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.poll_caught(device, poll)
    }
}

/// Takes one from `counter` when it is above 0.
fn take_one(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1))
        .is_ok()
}

/// Whether a poller thread runs for `inner`, starting one when none does
/// (native backends). `false` means the caller must poll the device
/// itself: the system refused a thread, or (in a browser) the event loop
/// delivers the callbacks.
pub(crate) fn ensure_poller<P: Polled>(inner: &Arc<P>) -> bool {
    if cfg!(target_arch = "wasm32") {
        return false;
    }
    let mut running = inner.poller().running();
    if !*running {
        *running = spawn_poller(inner);
    }
    *running
}

/// Starts a poller thread; whether it started. The caller holds the
/// running lock and stores the answer in it.
fn spawn_poller<P: Polled>(inner: &Arc<P>) -> bool {
    let state = inner.poller();
    if take_one(&state.injected.refused_spawns) {
        return false;
    }
    let weak = Arc::downgrade(inner);
    let spawned = std::thread::Builder::new()
        .name("vyre device poller".into())
        .spawn(move || poller_thread(&weak))
        .is_ok();
    if spawned {
        state.started.fetch_add(1, Ordering::Relaxed);
    }
    spawned
}

/// Clears the running flag however the poller thread ends; when it ends
/// while async runs still wait, it starts the next poller, so that their
/// wakers are still called.
struct PollerGuard<'a, P: Polled> {
    weak: &'a Weak<P>,
    /// Set when the loop decided to end (and cleared the flag itself).
    done: bool,
}

impl<P: Polled> Drop for PollerGuard<'_, P> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Some(inner) = self.weak.upgrade() else {
            return;
        };
        let state = inner.poller();
        let mut running = state.running();
        *running = state.waiting() && spawn_poller(&inner);
    }
}

/// The poller thread: [`poll_while_in_flight`], started again on this
/// thread whenever it panics (a panic inside wgpu is already caught around
/// each poll; this catches anything else), so that async runs that returned
/// `Pending` are still woken. [`PollerGuard`] covers any other end.
fn poller_thread<P: Polled>(weak: &Weak<P>) {
    let mut guard = PollerGuard { weak, done: false };
    loop {
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            poll_while_in_flight(weak);
        }));
        if ended.is_ok() {
            guard.done = true;
            return;
        }
        let Some(inner) = weak.upgrade() else { return };
        inner.poller().started.fetch_add(1, Ordering::Relaxed);
    }
}

/// The poller's loop: polls the device while async runs wait, and returns
/// after it has been idle a while (a thread per burst of runs, not per run:
/// spawning one costs more than a fast GPU takes for a small run), clearing
/// the running flag itself.
fn poll_while_in_flight<P: Polled>(weak: &Weak<P>) {
    const LINGER: std::time::Duration = std::time::Duration::from_millis(50);
    let mut idle_since: Option<web_time::Instant> = None;
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let state = inner.poller();
        if !state.waiting() {
            let since = *idle_since.get_or_insert_with(web_time::Instant::now);
            if since.elapsed() >= LINGER {
                let mut running = state.running();
                if !state.waiting() {
                    *running = false;
                    return;
                }
            }
            drop(inner);
            std::thread::sleep(std::time::Duration::from_micros(500));
            continue;
        }
        idle_since = None;
        let status = state.poller_poll(inner.device());
        drop(inner);
        if matches!(status, Some(Ok(wgpu::PollStatus::QueueEmpty)) | None) {
            // Nothing on the GPU (the futures are about to see their
            // results), or a poll that kept panicking: do not spin.
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}
