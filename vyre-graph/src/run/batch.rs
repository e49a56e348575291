//! Batches of independent runs ([`Instance`], [`BatchReport`]) and what a
//! stacked batch does on the host: whether a graph may stack its instances
//! ([`stackable`]), each instance's host input bytes ([`host_bytes`],
//! uploaded one after another at their offsets by `plan/bind.rs`), and
//! where each instance's part of the one read-back goes ([`scatter`], read
//! straight from the mapped buffer by `readback.rs`). `batch.rs` beside `graph.rs` decides how a batch
//! runs and calls these.

use super::readback::Scatter;
use crate::device::io::{Feed, Sink};
use crate::plan::program::Program;
use crate::run::report::RunReport;
use crate::spec::error::{BackendError, Result};
use crate::spec::{BufferClass, DispatchSize, Extent};

/// One instance of a batch: a problem size, one feed per host input and
/// one sink per output, in declaration order (as [`Graph::run`](crate::Graph::run)
/// takes them).
///
/// ```no_run
/// # fn f(x: &[u32], y: &mut [u32]) {
/// use vyre_graph::{Feed, Instance, Sink};
/// let instance = Instance::new(
///     x.len() as u64,
///     vec![Feed::Host(bytemuck::cast_slice(x))],
///     vec![Sink::Host(bytemuck::cast_slice_mut(y))],
/// );
/// # }
/// ```
#[derive(Debug)]
pub struct Instance<'a> {
    /// Its problem size (0 only for a graph whose outputs are then empty
    /// or a reduction's identity: see [`Graph::run`](crate::Graph::run)).
    pub n: u64,
    /// One feed per host input, in declaration order.
    pub feeds: Vec<Feed<'a>>,
    /// One sink per output, in declaration order.
    pub sinks: Vec<Sink<'a>>,
}

impl<'a> Instance<'a> {
    /// An instance of problem size `n` with these feeds and sinks.
    #[must_use]
    pub fn new(n: u64, feeds: Vec<Feed<'a>>, sinks: Vec<Sink<'a>>) -> Self {
        Instance { n, feeds, sinks }
    }

    /// Whether it can join a stacked run: host feeds only, and sinks read
    /// back to the host (or skipped).
    pub(crate) fn host_only(&self) -> bool {
        self.feeds.iter().all(|f| matches!(f, Feed::Host(_)))
            && self
                .sinks
                .iter()
                .all(|s| matches!(s, Sink::Host(_) | Sink::Vector(_) | Sink::Skip))
    }
}

/// What a batch did ([`Graph::run_batch`](crate::Graph::run_batch)).
#[derive(Debug)]
#[non_exhaustive]
pub struct BatchReport {
    /// Each instance's result, in the batch's order. Instances that ran
    /// stacked each get a copy of their stacked run's report with their
    /// own `n` (its phases, submissions and dispatches are the stacked
    /// run's, shared); an error after submission is that instance's own
    /// ([`BackendError::BatchInstance`] naming it).
    pub runs: Vec<Result<RunReport>>,
    /// Queue submissions the whole batch made: one per chunk (see
    /// [`BatchReport::chunks`]), plus one for each instance whose append
    /// outputs were read by their count.
    pub submissions: u32,
    /// Chunks the batch ran as: stacked runs and submissions of recorded
    /// copies. More than one chunk per size when the device's limits or
    /// the memory budget could not hold the whole batch at once.
    pub chunks: u32,
    /// Instances that ran stacked (as part of one run over `B × n`).
    pub stacked: usize,
}

/// Whether `program`'s instances may run stacked: `graph!` said so
/// ([`ScheduleSpec::stackable`](crate::spec::ScheduleSpec::stackable)), and
/// the spec still has the shape that makes it true (every buffer exactly
/// `n` plain elements, every node over `n`, no loop, no fused group over
/// another size), in case it was edited by hand.
pub(crate) fn stackable(program: &Program) -> bool {
    let spec = &program.spec;
    let said = spec.schedule.as_ref().is_some_and(|s| s.stackable);
    let over_n = |size: &DispatchSize| *size == DispatchSize::Invocations(Extent::N);
    said && spec.loops.is_empty()
        && spec.buffers.iter().all(|b| {
            b.len == Extent::N
                && b.header_bytes == 0
                && b.texture.is_none()
                && b.append.is_none()
                && b.class != BufferClass::Uniform
        })
        && spec.nodes.iter().all(|n| over_n(&n.size))
        && spec.fused.iter().all(|g| over_n(&g.dispatch.size))
}

/// The bytes of a host feed (empty for any other).
pub(crate) fn host_bytes<'a>(feed: &Feed<'a>) -> &'a [u8] {
    match feed {
        Feed::Host(bytes) => bytes,
        Feed::Device(_) | Feed::Texture(_) => &[],
    }
}

/// Where a stacked run's outputs go: for each host output, each instance's
/// part (its bytes at size `n`, its sink) in order, read straight from the
/// mapped read-back buffer (`readback.rs`).
pub(crate) fn scatter<'s, 'a>(
    program: &Program,
    n: u64,
    instances: &'s mut [&mut Instance<'a>],
) -> Scatter<'s, 'a> {
    let outputs = program.host_outputs.len();
    let mut scatter: Scatter<'s, 'a> = (0..outputs)
        .map(|_| Vec::with_capacity(instances.len()))
        .collect();
    for instance in instances.iter_mut() {
        for (k, sink) in instance.sinks.iter_mut().enumerate() {
            let b = program.host_outputs[k];
            let len = usize::try_from(program.buffer_bytes(b, n)).unwrap_or(usize::MAX);
            if let Some(parts) = scatter.get_mut(k) {
                parts.push((len, sink));
            }
        }
    }
    scatter
}

/// `error` as the error of instance `index`, unless it already names one.
pub(crate) fn of_instance(index: usize, error: BackendError) -> BackendError {
    match error {
        BackendError::BatchInstance { .. } => error,
        error => BackendError::BatchInstance {
            index,
            source: Box::new(error),
        },
    }
}

/// Each instance's result in order, an instance left without one (`None`)
/// reported as `what` not having run it: a bug in vyre, said so.
pub(crate) fn in_order(
    results: Vec<Option<Result<RunReport>>>,
    what: &str,
) -> Vec<Result<RunReport>> {
    results
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            r.unwrap_or_else(|| {
                Err(of_instance(
                    index,
                    BackendError::DispatchFailed {
                        reason: format!(
                            "{what} did not run the instance (a bug in vyre: please report it)"
                        ),
                    },
                ))
            })
        })
        .collect()
}

/// An error shared by every instance of a chunk: the first keeps it, the
/// others get its message (a `BackendError` is not `Clone`).
pub(crate) fn shared_error(indices: &[usize], error: BackendError) -> Vec<Result<RunReport>> {
    let reason = error.to_string();
    let mut error = Some(error);
    indices
        .iter()
        .map(|&index| {
            let own = error
                .take()
                .unwrap_or_else(|| BackendError::DispatchFailed {
                    reason: reason.clone(),
                });
            Err(of_instance(index, own))
        })
        .collect()
}
