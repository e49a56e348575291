//! A batch as every rank but 0 sees it: say it joined (and how many
//! instances it was given, which must be none), receive its share, run it
//! on the local engine, send back the results and its time, and return
//! what rank 0 says the outcome was.

use std::time::Instant;

use vyre_graph::bytemuck::{self, Pod};
use vyre_graph::{BackendError, BatchReport, DispatchConfig, Engine, Feed, Headed, Instance, Sink};

use crate::cluster::{Cluster, ClusterReport, Fault, ShareReport};
use crate::error::MpiError;
use crate::wire::{self, Done, Reply, SinkKind, Work, tag};

impl<E: Engine> Cluster<E> {
    /// This rank's side of batch `batch` (see the module's docs).
    pub(crate) fn run_member(
        &self,
        batch: u64,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport, MpiError> {
        let start = Instant::now();
        let link = self.link();
        let join = wire::write_note(batch, Ok(instances.len() as u64));
        link.send_all(&[(0, join)], tag::JOIN, "take this rank's join", batch);
        let message = link.receive_all(&[0], tag::SHARE, "send this rank its share", batch);
        let share = message.first().map_or_else(
            || Err("no share".to_string()),
            |m| wire::read_share(m, batch),
        );
        let (reply, report, ran) = match share {
            Ok(Err(error)) => return Err(error),
            Err(reason) => (
                Reply {
                    wall_ns: 0,
                    runs: Err(format!("its share from rank 0 did not parse: {reason}")),
                },
                None,
                0,
            ),
            Ok(Ok(mut work)) => {
                self.before_share(&mut work);
                let ran = work.len();
                let (reply, report) = self.run_share(config, &work);
                (reply, report, ran)
            }
        };
        let engine_ns = reply.wall_ns;
        let message = wire::write_reply(batch, &reply);
        link.send_all(
            &[(0, message)],
            tag::REPLY,
            "take this rank's results",
            batch,
        );
        let outcome = link.receive_all(&[0], tag::OUTCOME, "send the batch's outcome", batch);
        let outcome = outcome
            .first()
            .map_or_else(
                || Err("no outcome".to_string()),
                |m| wire::read_note(m, batch),
            )
            .map_err(|reason| MpiError::Protocol { rank: 0, reason })?;
        self.state().last = Some(ClusterReport {
            batch,
            ranks: self.size(),
            batch_ns: elapsed_ns(start),
            scatter_ns: 0,
            gather_ns: 0,
            shares: vec![ShareReport {
                rank: self.rank(),
                instances: ran,
                engine_ns,
            }],
        });
        outcome?;
        let mut report = match report {
            Some(report) => report,
            None => self
                .local
                .run_batch(config, &mut [])
                .map_err(|e| MpiError::Rank {
                    rank: self.rank(),
                    cause: e.to_string(),
                })?,
        };
        report.runs.clear();
        Ok(report)
    }

    /// The test hook: a fault injected into this rank acts now.
    fn before_share(&self, work: &mut [Work<'_>]) {
        let rank = self.rank();
        match self.take_fault() {
            None => {}
            Some(Fault::Exit) => {
                eprintln!(
                    "vyre-mpi test hook: rank {rank} exits (code 3) in the middle of the batch"
                );
                std::process::exit(3);
            }
            Some(Fault::Stall) => {
                eprintln!(
                    "vyre-mpi test hook: rank {rank} stops answering in the middle of the batch"
                );
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                }
            }
            Some(Fault::Panic) => {
                panic!("vyre-mpi test hook: rank {rank} panics in the middle of the batch")
            }
            Some(Fault::CorruptFeed) => {
                if let Some(feed) = work.first_mut().and_then(|w| w.feeds.first_mut()) {
                    *feed = feed.split_last().map_or(&[][..], |(_, rest)| rest);
                }
            }
        }
    }

    /// Runs a share on the local engine: the reply for rank 0 and the
    /// engine's report.
    fn run_share(
        &self,
        config: &DispatchConfig,
        work: &[Work<'_>],
    ) -> (Reply<Vec<u8>>, Option<BatchReport>) {
        let mut outputs: Vec<Vec<Out>> = Vec::with_capacity(work.len());
        for item in work {
            match item.sinks.iter().map(|&kind| Out::new(kind)).collect() {
                Ok(outs) => outputs.push(outs),
                Err(what) => {
                    let reason = format!(
                        "rank {} cannot read {what} for an output of instance {}",
                        self.rank(),
                        item.index
                    );
                    let runs = Err(reason);
                    return (Reply { wall_ns: 0, runs }, None);
                }
            }
        }
        let mut instances: Vec<Instance<'_>> = work
            .iter()
            .zip(outputs.iter_mut())
            .map(|(item, outs)| {
                let feeds = item.feeds.iter().map(|f| Feed::Host(f)).collect();
                let sinks = outs.iter_mut().map(Out::sink).collect();
                Instance::new(item.n, feeds, sinks)
            })
            .collect();
        let start = Instant::now();
        let result = self.local.run_batch(config, &mut instances);
        let wall_ns = elapsed_ns(start).max(1);
        drop(instances);
        let global: Vec<u64> = work.iter().map(|w| w.index).collect();
        match result {
            Err(error) => (
                Reply {
                    wall_ns,
                    runs: Err(cause(&error, &global)),
                },
                None,
            ),
            Ok(report) => {
                let runs = report
                    .runs
                    .iter()
                    .zip(outputs)
                    .map(|(run, outs)| match run {
                        Ok(run) => Done::Ok {
                            device: run.device as u64,
                            outputs: outs.into_iter().map(Out::into_bytes).collect(),
                        },
                        Err(error) => Done::Failed(cause(error, &[])),
                    })
                    .collect();
                (
                    Reply {
                        wall_ns,
                        runs: Ok(runs),
                    },
                    Some(report),
                )
            }
        }
    }
}

/// Where a rank reads one output of its share, as rank 0's sink asks.
enum Out {
    /// Not read.
    Skip,
    /// Into bytes of the sink's length.
    Host(Vec<u8>),
    /// Into a vector of bytes (no header).
    Vector(Vec<u8>),
    /// Into a vector of bytes behind a header.
    Headed(Box<dyn HeadedBytes>),
}

impl Out {
    /// The storage for a sink of kind `kind`, or what it cannot hold.
    fn new(kind: SinkKind) -> Result<Self, String> {
        match kind {
            SinkKind::Skip => Ok(Out::Skip),
            SinkKind::Host(len) => zeroed(len)
                .map(Out::Host)
                .ok_or_else(|| format!("{len} bytes (the host cannot allocate them)")),
            SinkKind::Vector { header: 0 } => Ok(Out::Vector(Vec::new())),
            SinkKind::Vector { header } => usize::try_from(header)
                .ok()
                .and_then(headed)
                .map(Out::Headed)
                .ok_or_else(|| format!("a vector with a {header}-byte header")),
        }
    }

    fn sink(&mut self) -> Sink<'_> {
        match self {
            Out::Skip => Sink::Skip,
            Out::Host(buf) => Sink::Host(buf),
            Out::Vector(v) => Sink::from(v),
            Out::Headed(h) => h.sink(),
        }
    }

    /// What rank 0 needs to fill its sink: the bytes read (a vector's
    /// header first).
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Out::Skip => Vec::new(),
            Out::Host(buf) | Out::Vector(buf) => buf,
            Out::Headed(h) => h.into_bytes(),
        }
    }
}

/// A [`Headed`] of bytes whose header is a whole number of words.
trait HeadedBytes: Send {
    fn sink(&mut self) -> Sink<'_>;
    fn into_bytes(self: Box<Self>) -> Vec<u8>;
}

impl<const W: usize> HeadedBytes for Headed<[u32; W], u8>
where
    [u32; W]: Pod,
{
    fn sink(&mut self) -> Sink<'_> {
        Sink::from(self)
    }

    fn into_bytes(self: Box<Self>) -> Vec<u8> {
        let mut bytes = bytemuck::bytes_of(&self.header).to_vec();
        bytes.extend_from_slice(&self.elements);
        bytes
    }
}

/// The largest vector header (bytes) another rank reads; an instance with a
/// larger one, or one not a whole number of 4-byte words, runs on rank 0.
const MAX_HEADER: usize = 128;

/// Whether another rank reads a vector sink with a `header`-byte header.
pub(crate) fn readable_header(header: usize) -> bool {
    header.is_multiple_of(4) && header <= MAX_HEADER
}

/// A headed vector of bytes whose header is `header` bytes (a multiple of
/// 4, at most [`MAX_HEADER`]; a WGSL struct's array starts at a multiple of
/// its 4-, 8- or 16-byte alignment), or `None`.
fn headed(header: usize) -> Option<Box<dyn HeadedBytes>> {
    macro_rules! words {
        ($($w:literal)*) => {
            match header / 4 {
                $($w => Some(Box::new(Headed::<[u32; $w], u8>::default())),)*
                _ => None,
            }
        };
    }
    if !readable_header(header) {
        return None;
    }
    words!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

/// What a share's engine said, with the instance it names (a position in
/// the share) renamed to its position in rank 0's batch (`global`); with no
/// `global`, an instance's own error without the instance (the caller
/// names it).
pub(crate) fn cause(error: &BackendError, global: &[u64]) -> String {
    match error {
        BackendError::BatchInstance { source, .. } if global.is_empty() => source.to_string(),
        BackendError::BatchInstance { index, source, .. } => match global.get(*index) {
            Some(g) => format!("instance {g} of the batch: {source}"),
            None => error.to_string(),
        },
        other => other.to_string(),
    }
}

/// `len` zero bytes, or `None` when the host cannot allocate them.
fn zeroed(len: u64) -> Option<Vec<u8>> {
    let len = usize::try_from(len).ok()?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).ok()?;
    buf.resize(len, 0);
    Some(buf)
}

/// Nanoseconds since `start`.
pub(crate) fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
