//! A batch as every rank but 0 sees it: say it joined (and how many
//! instances it was given, which must be none), receive its share, run it
//! on the local engine, send back the results and its time, and return
//! what rank 0 says the outcome was.

use std::time::Instant;

use vyre_graph::{BackendError, BatchReport, DispatchConfig, Engine, Feed, Instance, Sink};

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
            Ok(Err(reason)) => return Err(MpiError::Remote(reason)),
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
        outcome.map_err(MpiError::Remote)?;
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
    fn before_share(&self, work: &mut [Work]) {
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
                    feed.pop();
                }
            }
        }
    }

    /// Runs a share on the local engine: the reply for rank 0 and the
    /// engine's report.
    fn run_share(&self, config: &DispatchConfig, work: &[Work]) -> (Reply, Option<BatchReport>) {
        let mut outputs: Vec<Vec<Vec<u8>>> = Vec::with_capacity(work.len());
        for item in work {
            let mut bufs = Vec::with_capacity(item.sinks.len());
            for sink in &item.sinks {
                let len = match *sink {
                    SinkKind::Skip => 0,
                    SinkKind::Host(len) => len,
                };
                match zeroed(len) {
                    Some(buf) => bufs.push(buf),
                    None => {
                        let reason = format!(
                            "rank {} cannot allocate {len} bytes for an output of instance {}",
                            self.rank(),
                            item.index
                        );
                        return (
                            Reply {
                                wall_ns: 0,
                                runs: Err(reason),
                            },
                            None,
                        );
                    }
                }
            }
            outputs.push(bufs);
        }
        let mut instances: Vec<Instance<'_>> = work
            .iter()
            .zip(outputs.iter_mut())
            .map(|(item, bufs)| {
                let feeds = item.feeds.iter().map(|f| Feed::Host(f)).collect();
                let sinks = item
                    .sinks
                    .iter()
                    .zip(bufs.iter_mut())
                    .map(|(kind, buf)| match kind {
                        SinkKind::Skip => Sink::Skip,
                        SinkKind::Host(_) => Sink::Host(buf),
                    })
                    .collect();
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
                    .map(|(run, outputs)| match run {
                        Ok(run) => Done::Ok {
                            device: run.device as u64,
                            outputs,
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
