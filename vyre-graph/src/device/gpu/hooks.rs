//! vyre's own fault injection on a [`Gpu`] (the hidden test hooks of
//! `__private`): poller faults, backend panics, deferred error scopes, and
//! a device destroyed as lost after some submissions.

use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use super::super::poller::PollerFaults;
use super::Gpu;

impl Gpu {
    /// Replaces the poller faults still to come (see [`PollerFaults`]).
    pub(crate) fn inject_poller_faults(&self, faults: PollerFaults) {
        self.inner.poller.inject(faults);
    }

    /// Makes the next `count` shader-module creations panic where wgpu's
    /// own call would, inside the catch that turns such a panic into
    /// [`BackendError::BackendPanicked`] (for vyre's own tests).
    pub(crate) fn inject_backend_panics(&self, count: usize) {
        self.inner.backend_panics.store(count, Ordering::Release);
    }

    /// Makes popped error scopes answer later, as a browser's do, also
    /// where wgpu answers at once (for vyre's own tests of the deferred
    /// path, see [`CaughtErrors::pop_deferred`]).
    pub(crate) fn defer_scope_errors(&self, on: bool) {
        self.inner.defer_scopes.store(on, Ordering::Release);
    }

    /// Whether an injected backend panic is due now (one is used up).
    pub(crate) fn take_backend_panic(&self) -> bool {
        self.inner
            .backend_panics
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Destroy the device as lost when an injected loss is due after this
    /// submission ([`Gpu::inject_device_loss`]).
    pub(super) fn lose_if_due(&self) {
        let due = self
            .inner
            .lose_after
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |k| match k {
                0 => None,
                k => Some(k - 1),
            })
            .is_ok_and(|k| k == 1);
        if due {
            self.destroy_as_lost();
        }
    }

    /// Makes the device lost after `submissions` more submissions (0: at
    /// once, before the next one): it is destroyed, as a driver reset
    /// would leave it, and runs report [`BackendError::DeviceLost`]
    /// (for vyre's own tests of device sets).
    pub(crate) fn inject_device_loss(&self, submissions: usize) {
        self.inner.lose_after.store(submissions, Ordering::Release);
        if submissions == 0 {
            self.destroy_as_lost();
        }
    }

    /// Destroy the device, recording the injected loss as its reason.
    fn destroy_as_lost(&self) {
        *self
            .inner
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(
            "destroyed by vyre's test hook `inject_device_loss`, as a driver reset would".into(),
        );
        self.inner.device.destroy();
    }
}
