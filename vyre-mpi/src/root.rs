//! A batch as rank 0 sees it: hear every rank join, check the batch, split
//! it by learned throughput, send each rank its share, run its own, gather
//! the others' results into the sinks in order, learn from each rank's
//! time, and tell every rank the outcome.

use std::time::Instant;

use vyre_graph::{
    BackendError, BatchReport, DispatchConfig, Engine, Feed, Instance, Result, RunReport, Sink,
};

use crate::cluster::{Cluster, ClusterReport, ShareReport};
use crate::error::MpiError;
use crate::member::{cause, elapsed_ns, readable_header};
use crate::wire::{self, Done, Reply, SinkKind, Work, tag};

/// The largest message MPI's `int` count carries.
const MAX_MESSAGE: usize = i32::MAX as usize;

impl<E: Engine> Cluster<E> {
    /// Rank 0's side of batch `batch` (see the module's docs).
    pub(crate) fn run_root(
        &self,
        batch: u64,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> std::result::Result<BatchReport, MpiError> {
        let start = Instant::now();
        let link = self.link();
        let others: Vec<i32> = (1..self.world_size()).collect();
        let joins = link.receive_all(&others, tag::JOIN, "join the batch", batch);
        let shares = check_joins(&joins, batch)
            .and_then(|()| check_host(instances))
            .and_then(|()| self.split(batch, instances));
        let (owners, messages) = match shares {
            Ok(split) => split,
            Err(error) => {
                let stop = wire::write_share(batch, Err(&error));
                let all: Vec<(i32, Vec<u8>)> = others.iter().map(|&r| (r, stop.clone())).collect();
                link.send_all(
                    &all,
                    tag::SHARE,
                    "take the news that the batch stops",
                    batch,
                );
                return Err(error);
            }
        };
        let sent: Vec<(i32, Vec<u8>)> = others.iter().copied().zip(messages).collect();
        link.send_all(&sent, tag::SHARE, "take its share", batch);
        drop(sent);
        let scatter_ns = elapsed_ns(start);

        let mine: Vec<usize> = (0..owners.len())
            .filter(|&i| owners.get(i) == Some(&0))
            .collect();
        let local_start = Instant::now();
        let local = run_subset(&self.local, config, instances, &mine);
        let local_ns = elapsed_ns(local_start).max(1);
        let gather_start = Instant::now();

        let replies = link.receive_all(&others, tag::REPLY, "send its results", batch);
        let mut runs: Vec<Option<Result<RunReport>>> = (0..instances.len()).map(|_| None).collect();
        let (mut report, mut failure) = take_local(local, &mine, &mut runs);
        let mut shares = vec![ShareReport {
            rank: 0,
            instances: mine.len(),
            engine_ns: local_ns,
        }];
        for (&rank, message) in others.iter().zip(&replies) {
            let rank = usize::try_from(rank).unwrap_or(0);
            let theirs: Vec<usize> = (0..owners.len())
                .filter(|&i| owners.get(i) == Some(&rank))
                .collect();
            let reply = wire::read_reply(message, batch)
                .map_err(|reason| MpiError::Protocol { rank, reason });
            let engine_ns = reply.as_ref().map_or(0, |r| r.wall_ns);
            shares.push(ShareReport {
                rank,
                instances: theirs.len(),
                engine_ns,
            });
            if let Err(error) =
                reply.and_then(|reply| gather(rank, reply, &theirs, instances, &mut runs))
            {
                failure.get_or_insert(error);
            }
        }
        let outcome = wire::write_note(batch, failure.as_ref().map_or(Ok(0), Err));
        let all: Vec<(i32, Vec<u8>)> = others.iter().map(|&r| (r, outcome.clone())).collect();
        link.send_all(&all, tag::OUTCOME, "take the batch's outcome", batch);

        if failure.is_none() {
            self.learn(&owners, instances, &shares);
        }
        self.state().last = Some(ClusterReport {
            batch,
            ranks: self.size(),
            batch_ns: elapsed_ns(start),
            scatter_ns,
            gather_ns: elapsed_ns(gather_start),
            shares,
        });
        if let Some(error) = failure {
            return Err(error);
        }
        let mut report = report.take().ok_or(MpiError::Rank {
            rank: 0,
            cause: "its engine gave no report".into(),
        })?;
        report.runs = runs
            .into_iter()
            .map(|run| {
                run.unwrap_or_else(|| {
                    Err(BackendError::DispatchFailed {
                        reason: "vyre-mpi: an instance no rank ran".into(),
                    })
                })
            })
            .collect();
        Ok(report)
    }

    fn world_size(&self) -> i32 {
        i32::try_from(self.size()).unwrap_or(1)
    }

    /// Which rank runs each instance, and each other rank's share as a
    /// message.
    fn split(
        &self,
        batch: u64,
        instances: &[Instance<'_>],
    ) -> std::result::Result<(Vec<usize>, Vec<Vec<u8>>), MpiError> {
        let sizes: Vec<u64> = instances.iter().map(|i| i.n).collect();
        // A vector whose header another rank cannot read stays here.
        let pinned: Vec<bool> = instances
            .iter()
            .map(|i| {
                i.sinks
                    .iter()
                    .any(|s| matches!(s, Sink::Vector(v) if !readable_header(v.header_size())))
            })
            .collect();
        let owners = self.state().throughput.assign(self.size(), &sizes, &pinned);
        let mut messages = Vec::with_capacity(self.size().saturating_sub(1));
        for rank in 1..self.size() {
            let work: Vec<Work> = instances
                .iter()
                .zip(&owners)
                .enumerate()
                .filter(|(_, (_, owner))| **owner == rank)
                .map(|(index, (instance, _))| work_of(index, instance))
                .collect();
            let message = wire::write_share(batch, Ok(&work));
            if message.len() > MAX_MESSAGE {
                return Err(MpiError::TooLarge {
                    rank,
                    bytes: message.len(),
                });
            }
            messages.push(message);
        }
        Ok((owners, messages))
    }

    /// Learns each rank's throughput from its time for its share.
    fn learn(&self, owners: &[usize], instances: &[Instance<'_>], shares: &[ShareReport]) {
        let mut state = self.state();
        for share in shares {
            let sizes: Vec<u64> = instances
                .iter()
                .zip(owners)
                .filter(|&(_, &owner)| owner == share.rank)
                .map(|(i, _)| i.n)
                .collect();
            state.throughput.learn(share.rank, &sizes, share.engine_ns);
        }
    }
}

/// Every other rank joined this batch with no instances of its own.
fn check_joins(joins: &[Vec<u8>], batch: u64) -> std::result::Result<(), MpiError> {
    for (k, join) in joins.iter().enumerate() {
        let rank = k + 1;
        match wire::read_note(join, batch) {
            Ok(Ok(0)) => {}
            Ok(Ok(count)) => {
                return Err(MpiError::NotRankZero {
                    rank,
                    instances: usize::try_from(count).unwrap_or(usize::MAX),
                });
            }
            Ok(Err(error)) => {
                return Err(MpiError::Protocol {
                    rank,
                    reason: error.to_string(),
                });
            }
            Err(reason) => return Err(MpiError::Protocol { rank, reason }),
        }
    }
    Ok(())
}

/// Every feed and sink of the batch is host data.
fn check_host(instances: &[Instance<'_>]) -> std::result::Result<(), MpiError> {
    for (index, instance) in instances.iter().enumerate() {
        for (k, feed) in instance.feeds.iter().enumerate() {
            let what = match feed {
                Feed::Host(_) => continue,
                Feed::Device(_) => format!("a resident buffer as feed {k}"),
                Feed::Texture(_) => format!("a resident texture as feed {k}"),
            };
            return Err(MpiError::NotHost { index, what });
        }
        for (k, sink) in instance.sinks.iter().enumerate() {
            let what = match sink {
                Sink::Device(_) => format!("a resident buffer as sink {k}"),
                Sink::Texture(_) => format!("a resident texture as sink {k}"),
                _ => continue,
            };
            return Err(MpiError::NotHost { index, what });
        }
    }
    Ok(())
}

/// What a remote rank needs of instance `index`.
fn work_of<'a>(index: usize, instance: &'a Instance<'_>) -> Work<'a> {
    Work {
        index: index as u64,
        n: instance.n,
        feeds: instance
            .feeds
            .iter()
            .map(|f| match f {
                Feed::Host(bytes) => *bytes,
                Feed::Device(_) | Feed::Texture(_) => &[],
            })
            .collect(),
        sinks: instance
            .sinks
            .iter()
            .map(|s| match s {
                Sink::Host(dst) => SinkKind::Host(dst.len() as u64),
                Sink::Vector(v) => SinkKind::Vector {
                    header: v.header_size() as u64,
                },
                Sink::Device(_) | Sink::Texture(_) | Sink::Skip => SinkKind::Skip,
            })
            .collect(),
    }
}

/// Runs the instances at `indices` on `engine` (moved out of the batch and
/// back).
fn run_subset<E: Engine>(
    engine: &E,
    config: &DispatchConfig,
    instances: &mut [Instance<'_>],
    indices: &[usize],
) -> Result<BatchReport> {
    let mut taken: Vec<Instance<'_>> = Vec::with_capacity(indices.len());
    for &i in indices {
        if let Some(slot) = instances.get_mut(i) {
            taken.push(std::mem::replace(
                slot,
                Instance::new(0, Vec::new(), Vec::new()),
            ));
        }
    }
    let result = engine.run_batch(config, &mut taken);
    for (&i, instance) in indices.iter().zip(taken) {
        if let Some(slot) = instances.get_mut(i) {
            *slot = instance;
        }
    }
    result
}

/// Rank 0's own results into `runs`: its engine's report, and the first
/// failure.
fn take_local(
    local: Result<BatchReport>,
    mine: &[usize],
    runs: &mut [Option<Result<RunReport>>],
) -> (Option<BatchReport>, Option<MpiError>) {
    let mut report = match local {
        Ok(report) => report,
        Err(error) => {
            let global: Vec<u64> = mine.iter().map(|&i| i as u64).collect();
            return (
                None,
                Some(MpiError::Rank {
                    rank: 0,
                    cause: cause(&error, &global),
                }),
            );
        }
    };
    let mut failure = None;
    for (&index, run) in mine.iter().zip(std::mem::take(&mut report.runs)) {
        let run = match run {
            Ok(mut run) => {
                run.rank = 0;
                Ok(run)
            }
            Err(error) => {
                failure.get_or_insert(MpiError::Instance {
                    rank: 0,
                    index,
                    cause: cause(&error, &[]),
                });
                Err(error)
            }
        };
        if let Some(slot) = runs.get_mut(index) {
            *slot = Some(run);
        }
    }
    (Some(report), failure)
}

/// A remote rank's reply into the batch: outputs into the sinks, reports
/// into `runs`.
fn gather(
    rank: usize,
    reply: Reply<&[u8]>,
    theirs: &[usize],
    instances: &mut [Instance<'_>],
    runs: &mut [Option<Result<RunReport>>],
) -> std::result::Result<(), MpiError> {
    let done = reply.runs.map_err(|cause| MpiError::Rank { rank, cause })?;
    if done.len() != theirs.len() {
        return Err(MpiError::Protocol {
            rank,
            reason: format!("{} results for a share of {}", done.len(), theirs.len()),
        });
    }
    let mut failure = None;
    for (&index, done) in theirs.iter().zip(done) {
        let Some(instance) = instances.get_mut(index) else {
            continue;
        };
        let run = match done {
            Done::Failed(cause) => {
                let error = MpiError::Instance { rank, index, cause };
                let run = Err(error.to_backend());
                failure.get_or_insert(error);
                run
            }
            Done::Ok { device, outputs } => {
                write_sinks(rank, index, &mut instance.sinks, &outputs)?;
                Ok(RunReport::elsewhere(
                    instance.n,
                    rank,
                    usize::try_from(device).unwrap_or(0),
                ))
            }
        };
        if let Some(slot) = runs.get_mut(index) {
            *slot = Some(run);
        }
    }
    failure.map_or(Ok(()), Err)
}

/// One instance's outputs from `rank` into its sinks.
fn write_sinks(
    rank: usize,
    index: usize,
    sinks: &mut [Sink<'_>],
    outputs: &[&[u8]],
) -> std::result::Result<(), MpiError> {
    if sinks.len() != outputs.len() {
        return Err(MpiError::Protocol {
            rank,
            reason: format!(
                "{} outputs for instance {index}, which has {} sinks",
                outputs.len(),
                sinks.len()
            ),
        });
    }
    for (k, (sink, bytes)) in sinks.iter_mut().zip(outputs).enumerate() {
        let misfit = |what: String| MpiError::Protocol {
            rank,
            reason: format!("output {k} of instance {index}: {what}"),
        };
        match sink {
            Sink::Host(dst) => {
                if dst.len() != bytes.len() {
                    return Err(misfit(format!(
                        "{} bytes for a sink that holds {}",
                        bytes.len(),
                        dst.len()
                    )));
                }
                dst.copy_from_slice(bytes);
            }
            Sink::Vector(v) => {
                let (header, body) = bytes.split_at_checked(v.header_size()).ok_or_else(|| {
                    misfit(format!("{} bytes, less than its header", bytes.len()))
                })?;
                v.fill(header, body).map_err(|error| MpiError::Output {
                    index,
                    output: k,
                    rank,
                    cause: error.to_string(),
                })?;
            }
            Sink::Device(_) | Sink::Texture(_) | Sink::Skip => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vyre_graph::Headed;

    #[test]
    fn outputs_from_another_rank_fill_slices_vectors_and_headed_vectors() {
        let words: Vec<u8> = [1u32, 2, 3].iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut headed_bytes = vec![7, 0, 0, 0, 9, 0, 0, 0];
        headed_bytes.extend_from_slice(&words);
        let (mut slice, mut vector) = (vec![0u8; 12], vec![5u32; 40]);
        let mut headed: Headed<[u32; 2], u32> = Headed::default();
        let mut sinks = vec![
            Sink::Host(&mut slice),
            Sink::from(&mut vector),
            Sink::from(&mut headed),
            Sink::Skip,
        ];
        let outputs: [&[u8]; 4] = [&words, &words, &headed_bytes, &[]];
        write_sinks(1, 4, &mut sinks, &outputs).expect("the outputs fit");
        drop(sinks);
        assert_eq!(slice, words);
        assert_eq!(vector, [1, 2, 3]);
        assert_eq!((headed.header, headed.elements), ([7, 9], vec![1, 2, 3]));
    }

    #[test]
    fn outputs_that_do_not_fit_are_errors_naming_the_rank_and_instance() {
        // Another count of outputs, another slice length: the ranks differ.
        let mut slice = vec![0u8; 8];
        let misfit = write_sinks(2, 3, &mut [Sink::Host(&mut slice)], &[&[0; 12]]);
        assert!(
            matches!(&misfit, Err(MpiError::Protocol { rank: 2, reason }) if reason.contains("output 0 of instance 3")),
            "{misfit:?}"
        );
        assert!(matches!(
            write_sinks(2, 3, &mut [Sink::Skip], &[]),
            Err(MpiError::Protocol { rank: 2, .. })
        ));
        // Fewer bytes than the vector's header.
        let mut headed: Headed<[u32; 2], u32> = Headed::default();
        let short = write_sinks(1, 0, &mut [Sink::from(&mut headed)], &[&[0; 4]]);
        assert!(
            matches!(short, Err(MpiError::Protocol { rank: 1, .. })),
            "{short:?}"
        );
        // A vector of another element type: the sink's own error, the
        // vector left as a run would leave it.
        let mut wide: Vec<u64> = vec![1];
        let error = write_sinks(3, 5, &mut [Sink::from(&mut wide)], &[&[0; 12]])
            .expect_err("12 bytes are not whole u64s");
        assert!(
            matches!(&error, MpiError::Output { index: 5, output: 0, rank: 3, cause } if cause.contains("8-byte")),
            "{error:?}"
        );
        assert_eq!(error.blame(), None);
        // The same sink takes bytes that fit afterwards.
        write_sinks(
            3,
            5,
            &mut [Sink::from(&mut wide)],
            &[&[1, 0, 0, 0, 0, 0, 0, 0]],
        )
        .expect("whole u64s");
        assert_eq!(wide, [1]);
    }
}
