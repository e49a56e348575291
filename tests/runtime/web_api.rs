//! The async API the web needs, run natively through `pollster` on the
//! test device: `Graph::new_async`, `Graph::record` then
//! `RecordedRun::read_async` (a device error of the recording deferred to
//! `read_async`, as in a browser, then the same graph right again), and two
//! `run_async` futures of one graph polled together on one thread, as two
//! runs in flight on a page. Every output is checked element by element
//! against the CPU.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use crate::common;

use common::{assert_same, bytes, bytes_mut, data, gpu, serial, two_step_cpu, two_step_spec};
use vyre_graph::spec::KernelSpec;
use vyre_graph::{BackendError, DispatchConfig, Feed, GpuBufferHandle, Graph, Sink};

/// Runs `a` and `b` to their ends on this thread, polling each in turn
/// whenever either is woken: two futures in flight at once, as on a page's
/// one thread.
fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    pollster::block_on(std::future::poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(out) = a.as_mut().poll(cx)
        {
            ra = Some(out);
        }
        if rb.is_none()
            && let Poll::Ready(out) = b.as_mut().poll(cx)
        {
            rb = Some(out);
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }));
    match (ra, rb) {
        (Some(a), Some(b)) => (a, b),
        _ => unreachable!("poll_fn returned before both were ready"),
    }
}

#[test]
fn new_async_builds_a_graph_that_runs_right_and_reports_a_broken_kernel() {
    let _serial = serial();
    let gpu = gpu();
    let graph =
        pollster::block_on(Graph::new_async(&gpu, two_step_spec("new_async"))).expect("new_async");
    assert_eq!(graph.pipeline_count(), 2);
    for n in [1usize, 63, 64, 65, 1000] {
        let x = data(n, n as u32);
        let y = run_async(&graph, &x).expect("run_async");
        assert_same(&y, &two_step_cpu(&x), &format!("n = {n}"));
    }
    // A kernel the device refuses: the error, awaited; the device goes on.
    let mut broken = two_step_spec("broken");
    let kernels: &mut Vec<KernelSpec> = broken.kernels.to_mut();
    kernels[1].source = "@compute @workgroup_size(64) fn main() { let x: u32 = 1.5; }".into();
    let err = pollster::block_on(Graph::new_async(&gpu, broken)).expect_err("a broken kernel");
    assert!(
        matches!(err, BackendError::KernelCompileFailed { .. }),
        "{err:?}"
    );
    let x = data(500, 9);
    let y = run_async(&graph, &x).expect("run after the broken graph");
    assert_same(&y, &two_step_cpu(&x), "after the broken graph");
}

/// `graph.run_async` over host input `x`, driven by `pollster`.
fn run_async(graph: &Graph, x: &[u32]) -> vyre_graph::Result<Vec<u32>> {
    let mut y = vec![0u32; x.len()];
    let config = DispatchConfig::default();
    let feeds = [Feed::Host(bytes(x))];
    let mut sinks = [Sink::Host(bytes_mut(&mut y))];
    pollster::block_on(graph.run_async(&config, x.len() as u64, &feeds, &mut sinks))?;
    Ok(y)
}

/// Records a run of `graph` over `feed` into a fresh encoder, submits it
/// and reads it back with `read_async`.
fn record_and_read(graph: &Graph, n: usize, feed: Feed<'_>) -> (Vec<u32>, vyre_graph::Result<()>) {
    let gpu = graph.gpu();
    let mut y = vec![0u32; n];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let feeds = [feed];
    let mut sinks = [Sink::Host(bytes_mut(&mut y))];
    let config = DispatchConfig::default();
    let read = match graph.record(&mut encoder, &config, n as u64, &feeds, &sinks) {
        Ok(recorded) => {
            gpu.queue().submit([encoder.finish()]);
            pollster::block_on(recorded.read_async(&mut sinks)).map(|_| ())
        }
        Err(e) => Err(e),
    };
    (y, read)
}

#[test]
fn a_recorded_run_reads_back_async_and_a_deferred_device_error_is_reported_there() {
    let _serial = serial();
    let gpu = gpu();
    let graph =
        pollster::block_on(Graph::new_async(&gpu, two_step_spec("recorded"))).expect("new_async");
    let x = data(1000, 4);
    let want = two_step_cpu(&x);
    let (y, read) = record_and_read(&graph, 1000, Feed::Host(bytes(&x)));
    read.expect("record + read_async");
    assert_same(&y, &want, "recorded, read async");

    // A resident input whose wgpu buffer the application destroyed: the
    // device rejects the recording. Natively `record` knows at once ...
    let broken = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    broken.buffer().destroy();
    let (_, now) = record_and_read(&graph, 1000, Feed::Device(&broken));
    assert!(
        matches!(now, Err(BackendError::DispatchFailed { .. })),
        "{now:?}"
    );
    // ... in a browser the verdict comes later: `record` returns the run and
    // `read_async` reports the error, never losing it.
    vyre_graph::__private::defer_scope_errors(&gpu, true);
    let mut y = vec![0u32; 1000];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let feeds = [Feed::Device(&broken)];
    let mut sinks = [Sink::Host(bytes_mut(&mut y))];
    let config = DispatchConfig::default();
    let recorded = graph.record(&mut encoder, &config, 1000, &feeds, &sinks);
    let deferred = recorded.map(|recorded| {
        gpu.queue().submit([encoder.finish()]);
        pollster::block_on(recorded.read_async(&mut sinks))
    });
    let (_, good) = record_and_read(&graph, 1000, Feed::Host(bytes(&x)));
    vyre_graph::__private::defer_scope_errors(&gpu, false);
    assert!(
        matches!(deferred, Ok(Err(BackendError::DispatchFailed { .. }))),
        "recorded, then read: {deferred:?}"
    );
    good.expect("a good run with deferred verdicts");

    // The same graph, the same size: right again, recorded and run.
    let (y, read) = record_and_read(&graph, 1000, Feed::Host(bytes(&x)));
    read.expect("record + read_async after the fault");
    assert_same(&y, &want, "recorded after the fault");
    let y = run_async(&graph, &x).expect("run_async after the fault");
    assert_same(&y, &want, "run after the fault");
}

#[test]
fn two_run_async_futures_of_one_graph_polled_together_are_both_right() {
    let _serial = serial();
    let gpu = gpu();
    let graph = pollster::block_on(Graph::new_async(&gpu, two_step_spec("two_in_flight")))
        .expect("new_async");
    let config = DispatchConfig::default();
    // One size (two plans of it in flight) and two sizes.
    for (na, nb) in [(4096usize, 4096usize), (1000, 77)] {
        let (xa, xb) = (data(na, 1), data(nb, 2));
        let (mut ya, mut yb) = (vec![0u32; na], vec![0u32; nb]);
        let (fa, fb) = ([Feed::Host(bytes(&xa))], [Feed::Host(bytes(&xb))]);
        let mut sa = [Sink::Host(bytes_mut(&mut ya))];
        let mut sb = [Sink::Host(bytes_mut(&mut yb))];
        let a = graph.run_async(&config, na as u64, &fa, &mut sa);
        let b = graph.run_async(&config, nb as u64, &fb, &mut sb);
        let (ra, rb) = join(a, b);
        ra.expect("run a");
        rb.expect("run b");
        assert_same(&ya, &two_step_cpu(&xa), &format!("run a of {na}"));
        assert_same(&yb, &two_step_cpu(&xb), &format!("run b of {nb}"));
    }
}

/// The futures of the async API are `Send` natively, so that a
/// multi-threaded executor (tokio's) can run them; a `RecordedRun` holding
/// a deferred verdict stays `Send + Sync`.
#[test]
fn the_async_api_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    fn send_sync<T: Send + Sync>() {}
    let _serial = serial();
    let gpu = gpu();
    let graph =
        pollster::block_on(Graph::new_async(&gpu, two_step_spec("send"))).expect("new_async");
    send(&Graph::new_async(&gpu, two_step_spec("send")));
    let config = DispatchConfig::default();
    let x = data(10, 1);
    let mut y = vec![0u32; 10];
    let feeds = [Feed::Host(bytes(&x))];
    let mut sinks = [Sink::Host(bytes_mut(&mut y))];
    send(&graph.run_async(&config, 10, &feeds, &mut sinks));
    let mut instances: Vec<vyre_graph::Instance<'_>> = Vec::new();
    send(&graph.run_batch_async(&config, &mut instances));
    send(&graph.run_many_async(&config, 2, &mut instances));
    send_sync::<vyre_graph::RecordedRun<'_>>();
}
