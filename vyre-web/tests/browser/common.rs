//! Helpers of the browser suite: the device, a join of two futures (no
//! executor crate on the web), the data and the comparisons.
#![allow(dead_code)]

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use vyre_graph::{Gpu, GpuOptions};

thread_local! {
    static GPU: RefCell<Option<Gpu>> = const { RefCell::new(None) };
}

/// The suite's shared device, opened on first use. A test never skips:
/// without WebGPU it panics with the error, which says there is no adapter.
pub async fn gpu() -> Gpu {
    if let Some(gpu) = GPU.with(|g| g.borrow().clone()) {
        return gpu;
    }
    let gpu = own_gpu().await;
    GPU.with(|g| *g.borrow_mut() = Some(gpu.clone()));
    gpu
}

/// A device of the test's own, for tests that read its counters.
pub async fn own_gpu() -> Gpu {
    match Gpu::new_async(GpuOptions::default()).await {
        Ok(gpu) => gpu,
        Err(e) => panic!("no GPU for the browser tests: {e}"),
    }
}

/// Both futures' outputs; both are polled before either has to finish, so
/// two runs started this way are in flight together.
pub async fn join<A, B>(a: A, b: B) -> (A::Output, B::Output)
where
    A: Future,
    B: Future,
    A::Output: Unpin,
    B::Output: Unpin,
{
    struct Join<A: Future, B: Future> {
        a: Pin<Box<A>>,
        b: Pin<Box<B>>,
        a_out: Option<A::Output>,
        b_out: Option<B::Output>,
    }
    impl<A: Future, B: Future> Future for Join<A, B>
    where
        A::Output: Unpin,
        B::Output: Unpin,
    {
        type Output = (A::Output, B::Output);
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let this = self.get_mut();
            if this.a_out.is_none()
                && let Poll::Ready(v) = this.a.as_mut().poll(cx)
            {
                this.a_out = Some(v);
            }
            if this.b_out.is_none()
                && let Poll::Ready(v) = this.b.as_mut().poll(cx)
            {
                this.b_out = Some(v);
            }
            match (this.a_out.take(), this.b_out.take()) {
                (Some(a), Some(b)) => Poll::Ready((a, b)),
                (a, b) => {
                    this.a_out = a;
                    this.b_out = b;
                    Poll::Pending
                }
            }
        }
    }
    Join {
        a: Box::pin(a),
        b: Box::pin(b),
        a_out: None,
        b_out: None,
    }
    .await
}

/// A deterministic pseudo-random sequence.
pub fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

/// Element by element, naming the first difference.
pub fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: element {i} is {:?}, the CPU says {:?}",
            got[i], want[i]
        );
    }
}

/// Element by element within `tolerance` relative to `max(|want|, 1)`.
pub fn assert_close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let error = (g - w).abs() / w.abs().max(1.0);
        assert!(
            error <= tolerance,
            "{what}: element {i} is {g}, the CPU says {w} (relative error {error:e})"
        );
    }
}
