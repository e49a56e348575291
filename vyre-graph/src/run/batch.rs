//! Batches of independent runs ([`Instance`], [`BatchReport`]) and what a
//! stacked batch does on the host: whether a graph may stack its instances
//! ([`stackable`]), gathering their host inputs into one feed per input
//! ([`Gathered`]) and scattering the one read-back to each instance's
//! sinks ([`scatter`]). `batch.rs` beside `graph.rs` decides how a batch
//! runs and calls these.

use std::sync::{Mutex, PoisonError};

use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::device::transfer::{Receive, Source};
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
    /// Its problem size (at least 1).
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
    /// stacked share their stacked run's report (its `n` is the stacked
    /// size); an error after submission is that instance's own
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

/// The host inputs of several instances, each input's bytes one after
/// another in instance order: the feeds of one stacked run.
pub(crate) struct Gathered {
    inputs: Vec<Vec<u8>>,
}

impl Gathered {
    /// Gather the host feeds of `instances` (each checked by the caller:
    /// one host feed per input, of its instance's length), the copies
    /// spread over the transfer threads when large.
    pub(crate) fn new(gpu: &Gpu, instances: &[&Instance<'_>]) -> Self {
        let copier = gpu.copier(None);
        let count = instances.first().map_or(0, |i| i.feeds.len());
        let inputs = (0..count)
            .map(|j| {
                let bytes = instances
                    .iter()
                    .map(|i| feed_bytes(&i.feeds[j]).len())
                    .sum();
                let mut all = vec![0u8; bytes];
                let mut rest = &mut all[..];
                let mut pairs = Vec::with_capacity(instances.len());
                for instance in instances {
                    let src = feed_bytes(&instance.feeds[j]);
                    let (dst, tail) = std::mem::take(&mut rest).split_at_mut(src.len());
                    rest = tail;
                    pairs.push((src, dst));
                }
                copier.each(bytes, pairs, |(src, dst)| dst.copy_from_slice(src));
                all
            })
            .collect();
        Gathered { inputs }
    }

    /// The stacked run's feeds.
    pub(crate) fn feeds(&self) -> Vec<Feed<'_>> {
        self.inputs.iter().map(|b| Feed::Host(b)).collect()
    }
}

fn feed_bytes<'a>(feed: &Feed<'a>) -> &'a [u8] {
    match feed {
        Feed::Host(bytes) => bytes,
        Feed::Device(_) | Feed::Texture(_) => &[],
    }
}

/// Copy each stacked output (`outputs[k]`, output `k` of every instance
/// one after another) into the instances' sinks, the copies spread over
/// the transfer threads when large.
///
/// # Errors
/// [`BackendError::HostAllocationFailed`] when the host cannot allocate a
/// vector sink's elements, naming the instance.
pub(crate) fn scatter(
    gpu: &Gpu,
    program: &Program,
    outputs: &[Vec<u8>],
    instances: &mut [&mut Instance<'_>],
    first_index: &[usize],
) -> Result<()> {
    let copier = gpu.copier(None);
    let mut parts = Vec::with_capacity(instances.len() * outputs.len());
    let mut bytes = 0usize;
    let mut at = vec![0usize; outputs.len()];
    for (instance, &index) in instances.iter_mut().zip(first_index) {
        let n = instance.n;
        for (k, sink) in instance.sinks.iter_mut().enumerate() {
            let b = program.host_outputs[k];
            let len = usize::try_from(program.buffer_bytes(b, n)).unwrap_or(usize::MAX);
            let start = at[k];
            at[k] = start.saturating_add(len);
            let part = outputs[k].get(start..at[k]).unwrap_or(&[]);
            bytes = bytes.saturating_add(part.len());
            match sink {
                Sink::Host(dst) => parts.push((index, part, Part::Bytes(&mut dst[..]))),
                Sink::Vector(v) => parts.push((index, part, Part::Vec(&mut *v.target))),
                _ => {}
            }
        }
    }
    let failed = Mutex::new(None);
    copier.each(bytes, parts, |(index, part, dst)| match dst {
        Part::Bytes(dst) => {
            let len = part.len().min(dst.len());
            dst[..len].copy_from_slice(&part[..len]);
        }
        Part::Vec(sink) => {
            let elements = part.len() / sink.element_size().max(1);
            if let Err(bytes) = sink.receive(&copier, &[], Source::Plain(part), elements) {
                let mut failed = failed.lock().unwrap_or_else(PoisonError::into_inner);
                failed.get_or_insert((index, bytes));
            }
        }
    });
    match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some((index, bytes)) => Err(BackendError::BatchInstance {
            index,
            source: Box::new(BackendError::HostAllocationFailed {
                buffer: "an output of the batch".into(),
                bytes,
            }),
        }),
        None => Ok(()),
    }
}

/// Where one instance's part of a stacked output goes.
enum Part<'a> {
    Bytes(&'a mut [u8]),
    Vec(&'a mut (dyn Receive + 'static)),
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
