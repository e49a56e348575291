//! [`join_all`]: futures of one type run concurrently on the task that
//! awaits them (a device set's async shares), with no thread and no
//! executor of its own.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Await every future of `futures` at once: each poll polls every one not
/// yet finished; the outputs come in the futures' order.
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::join_all;

    /// A future pending `polls` times (waking itself), then `value`.
    async fn after(polls: usize, value: usize) -> usize {
        let mut left = polls;
        std::future::poll_fn(|cx| {
            if left == 0 {
                std::task::Poll::Ready(value)
            } else {
                left -= 1;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        })
        .await
    }

    #[test]
    fn outputs_come_in_order_whatever_finishes_first() {
        let futures: Vec<_> = [3, 0, 5, 1]
            .into_iter()
            .enumerate()
            .map(|(i, p)| after(p, i))
            .collect();
        assert_eq!(pollster::block_on(join_all(futures)), [0, 1, 2, 3]);
        let none: Vec<std::future::Ready<u8>> = Vec::new();
        assert!(pollster::block_on(join_all(none)).is_empty());
    }
}
