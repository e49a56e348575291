//! Device errors caught in error scopes around the runtime's own work
//! ([`CaughtErrors`]), and their answer when it cannot be awaited where the
//! scopes are popped ([`Popped`], [`Deferred`]): natively wgpu answers at
//! once; a browser answers later, and a synchronous call (`Graph::record`)
//! hands the answer on to the run's next await.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Error scopes that catch every kind of device error raised on this thread
/// between `Gpu::catch_errors` and [`CaughtErrors::pop`]: validation,
/// internal (a backend that refuses a valid pipeline, e.g. OpenGL's one
/// sampler per texture) and out-of-memory. With validation alone, the
/// others would reach the device's uncaptured-error handler while the call
/// that caused them returned `Ok`.
///
/// Scopes must be popped innermost first, also when a `?` drops them
/// unpopped: fields drop in declaration order, so the innermost scope
/// (pushed last) is declared first.
pub(crate) struct CaughtErrors {
    validation: wgpu::ErrorScopeGuard,
    internal: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
    /// Answer [`CaughtErrors::pop_deferred`] later even when the answer is
    /// known now (vyre's own tests, `Gpu::defer_scope_errors`).
    defer: bool,
}

impl CaughtErrors {
    /// Start catching every device error of `device` (see
    /// [`CaughtErrors`]); `defer`: answer [`CaughtErrors::pop_deferred`]
    /// later even when the answer is known now (vyre's own tests).
    pub(crate) fn push(device: &wgpu::Device, defer: bool) -> Self {
        // Pushed outermost first (a struct literal evaluates in the order
        // written).
        CaughtErrors {
            memory: device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            internal: device.push_error_scope(wgpu::ErrorFilter::Internal),
            validation: device.push_error_scope(wgpu::ErrorFilter::Validation),
            defer,
        }
    }

    /// Stop catching (the scopes are popped now, on this thread, innermost
    /// first) and resolve to the first error caught, if any.
    pub(crate) fn pop(self) -> impl std::future::Future<Output = Option<wgpu::Error>> {
        let validation = self.validation.pop();
        let internal = self.internal.pop();
        let memory = self.memory.pop();
        async move {
            let validation = validation.await;
            let internal = internal.await;
            let memory = memory.await;
            validation.or(internal).or(memory)
        }
    }

    /// [`CaughtErrors::pop`] for a call that must return before the
    /// answer can be awaited (`Graph::record`): the answer when it is known
    /// at once (natively it always is: wgpu-core checks every call as it is
    /// made), else the future that will give it (in a browser, which
    /// answers a popped scope later), for the next async point to await.
    pub(crate) fn pop_deferred(self) -> Popped {
        let defer = self.defer;
        let mut future = Box::pin(self.pop());
        if defer {
            return Popped::Later(Deferred::new(future));
        }
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(error) => Popped::Now(error),
            Poll::Pending => Popped::Later(Deferred::new(future)),
        }
    }
}

/// What [`CaughtErrors::pop_deferred`] found.
pub(crate) enum Popped {
    /// The first error caught, if any.
    Now(Option<wgpu::Error>),
    /// Not known yet.
    Later(Deferred),
}

/// The answer of error scopes popped before it can be awaited. `Send`
/// (natively, and in a browser through wgpu's
/// `fragile-send-sync-non-atomic-wasm`) and, through its mutex (never
/// locked: only taken apart), `Sync`, so that what keeps it (a
/// [`RecordedRun`](crate::RecordedRun)) stays both.
pub(crate) struct Deferred(Mutex<ScopeFuture>);

/// A popped scope's answer to come.
type ScopeFuture = Pin<Box<dyn Future<Output = Option<wgpu::Error>> + Send>>;

impl Deferred {
    fn new(future: ScopeFuture) -> Self {
        Deferred(Mutex::new(future))
    }

    /// The first error caught, if any.
    pub(crate) async fn error(self) -> Option<wgpu::Error> {
        let future = self.0.into_inner().unwrap_or_else(PoisonError::into_inner);
        future.await
    }
}

impl Popped {
    /// The error now, or the future of it, as a run keeps it: `Ok(None)`
    /// without error, `Ok(Some(deferred))` when not known yet.
    pub(crate) fn now(self) -> std::result::Result<Option<Deferred>, wgpu::Error> {
        match self {
            Popped::Now(None) => Ok(None),
            Popped::Now(Some(error)) => Err(error),
            Popped::Later(deferred) => Ok(Some(deferred)),
        }
    }
}
