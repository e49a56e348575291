//! Bounded waits: every send and receive of a batch is an immediate MPI
//! operation polled with `test` until a deadline, so a rank that died or
//! hangs is noticed and named instead of blocking the others for ever.
//! Past the deadline the job cannot be saved (a message half sent cannot
//! be taken back), so the rank that noticed prints the error and calls
//! `MPI_Abort`, which ends every rank.

use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

/// The exit code of a job ended because a rank did not answer in time
/// (not 124, which `timeout` gives a job it had to stop).
pub const TIMEOUT_EXIT_CODE: i32 = 75;

/// Sends and receives on the world communicator, each bounded by `timeout`.
pub(crate) struct Link<'w> {
    pub(crate) world: &'w SimpleCommunicator,
    pub(crate) timeout: Duration,
}

/// Sleeps between polls: short at first (a reply is often nearly there),
/// longer later so that waiting ranks leave the cores to working ones.
struct Backoff(u32);

impl Backoff {
    fn pause(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 < 64 {
            std::thread::yield_now();
        } else {
            let micros = u64::from(self.0.min(2_000) / 10).max(10);
            std::thread::sleep(Duration::from_micros(micros));
        }
    }
}

impl Link<'_> {
    fn rank(&self) -> i32 {
        self.world.rank()
    }

    /// Ends the job: a wait that ran out. Prints which ranks did not answer.
    fn give_up(&self, doing: &str, ranks: &[i32], batch: u64) -> ! {
        let names: Vec<String> = ranks.iter().map(i32::to_string).collect();
        say(&format!(
            "vyre-mpi: rank {me}: rank(s) {who} did not {doing} within {t:?} (batch {batch}; ClusterOptions::timeout): a rank that died or hangs cannot be waited out, so rank {me} ends the job (MPI_Abort, exit code {TIMEOUT_EXIT_CODE})",
            me = self.rank(),
            who = names.join(", "),
            t = self.timeout,
        ));
        self.world.abort(TIMEOUT_EXIT_CODE)
    }

    /// Sends each `(rank, message)`, waiting until every send has completed.
    pub(crate) fn send_all(&self, messages: &[(i32, Vec<u8>)], tag: i32, doing: &str, batch: u64) {
        if messages.is_empty() {
            return;
        }
        let deadline = Instant::now() + self.timeout;
        mpi::request::scope(|scope| {
            let mut pending: Vec<_> = messages
                .iter()
                .map(|(rank, message)| {
                    let request = self.world.process_at_rank(*rank).immediate_send_with_tag(
                        scope,
                        &message[..],
                        tag,
                    );
                    (*rank, Some(request))
                })
                .collect();
            let mut backoff = Backoff(0);
            loop {
                for (_, slot) in &mut pending {
                    if let Some(request) = slot.take()
                        && let Err(request) = request.test()
                    {
                        *slot = Some(request);
                    }
                }
                let waiting: Vec<i32> = pending
                    .iter()
                    .filter(|(_, slot)| slot.is_some())
                    .map(|(rank, _)| *rank)
                    .collect();
                if waiting.is_empty() {
                    return;
                }
                if Instant::now() > deadline {
                    self.give_up(doing, &waiting, batch);
                }
                backoff.pause();
            }
        });
    }

    /// Receives one message with `tag` from each of `ranks`, in `ranks`' order.
    pub(crate) fn receive_all(
        &self,
        ranks: &[i32],
        tag: i32,
        doing: &str,
        batch: u64,
    ) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + self.timeout;
        let mut got: Vec<Option<Vec<u8>>> = vec![None; ranks.len()];
        let mut backoff = Backoff(0);
        loop {
            for (slot, &rank) in got.iter_mut().zip(ranks) {
                if slot.is_none() {
                    *slot = self.try_receive(rank, tag, deadline, doing, batch);
                }
            }
            let waiting: Vec<i32> = got
                .iter()
                .zip(ranks)
                .filter(|(slot, _)| slot.is_none())
                .map(|(_, rank)| *rank)
                .collect();
            if waiting.is_empty() {
                return got.into_iter().flatten().collect();
            }
            if Instant::now() > deadline {
                self.give_up(doing, &waiting, batch);
            }
            backoff.pause();
        }
    }

    /// The message with `tag` from `rank`, if one has arrived (received
    /// whole, within `deadline`).
    fn try_receive(
        &self,
        rank: i32,
        tag: i32,
        deadline: Instant,
        doing: &str,
        batch: u64,
    ) -> Option<Vec<u8>> {
        let process = self.world.process_at_rank(rank);
        let (message, status) = process.immediate_matched_probe_with_tag(tag)?;
        let len = usize::try_from(status.count(u8::equivalent_datatype())).unwrap_or(0);
        let mut buffer = vec![0u8; len];
        mpi::request::scope(|scope| {
            let mut request = message.immediate_matched_receive_into(scope, &mut buffer[..]);
            let mut backoff = Backoff(0);
            loop {
                match request.test() {
                    Ok(_) => return,
                    Err(again) => request = again,
                }
                if Instant::now() > deadline {
                    self.give_up(doing, &[rank], batch);
                }
                backoff.pause();
            }
        });
        Some(buffer)
    }
}

use mpi::datatype::Equivalence;

/// Prints `line` to stderr in one write, so that mpirun, which forwards
/// each rank's output as it reads it, cannot cut it with its own messages
/// (such as its report of an `MPI_Abort` that follows).
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    // Nothing to do if stderr is gone: the job ends anyway.
    let _ = stderr.write_all(format!("{line}\n").as_bytes());
    let _ = stderr.flush();
}
