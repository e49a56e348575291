//! The messages of one batch, as bytes: what rank 0 sends each rank (its
//! share, or the news that the batch failed before anything ran), what
//! each rank sends back (per instance its outputs or its error, and its
//! wall time), and the outcome rank 0 sends everyone at the end.
//!
//! Every message starts with the batch's number, so a rank that called
//! `run_batch` a different number of times is caught, not misread.
//! Integers are little-endian `u64`s; bytes and strings carry their length
//! first.

use crate::error::MpiError;

/// The tag of each message kind.
pub(crate) mod tag {
    /// Rank r to 0: "I am in batch b, with k instances of my own".
    pub(crate) const JOIN: i32 = 0x7601;
    /// 0 to rank r: its share, or why the batch will not run.
    pub(crate) const SHARE: i32 = 0x7602;
    /// Rank r to 0: its results.
    pub(crate) const REPLY: i32 = 0x7603;
    /// 0 to rank r: whether the batch succeeded.
    pub(crate) const OUTCOME: i32 = 0x7604;
}

/// A sink as a remote rank sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SinkKind {
    /// Not read back.
    Skip,
    /// Read back into this many bytes.
    Host(u64),
    /// Read back into a vector keeping this many header bytes: the rank
    /// sends the header, then the elements (as many as the run gives, for
    /// an append output only those counted).
    Vector {
        /// Bytes of the header rank 0's vector keeps (0 for a plain one).
        header: u64,
    },
}

impl SinkKind {
    /// As two numbers: its kind, then its length or header.
    fn code(self) -> (u64, u64) {
        match self {
            SinkKind::Skip => (0, 0),
            SinkKind::Host(len) => (1, len),
            SinkKind::Vector { header } => (2, header),
        }
    }

    /// From [`SinkKind::code`]'s two numbers.
    fn from_code(kind: u64, value: u64) -> Option<Self> {
        match kind {
            0 => Some(SinkKind::Skip),
            1 => Some(SinkKind::Host(value)),
            2 => Some(SinkKind::Vector { header: value }),
            _ => None,
        }
    }
}

/// One instance of a share, its feeds borrowed (from rank 0's batch when
/// written, from the message when read: no copies besides the message).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Work<'a> {
    /// Its index in rank 0's batch.
    pub(crate) index: u64,
    /// Its problem size.
    pub(crate) n: u64,
    /// Each host feed's bytes.
    pub(crate) feeds: Vec<&'a [u8]>,
    /// Each sink.
    pub(crate) sinks: Vec<SinkKind>,
}

/// What a rank did with one instance; its outputs are `B`: owned where
/// written, borrowed from the message where read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Done<B> {
    /// It ran on this device of the rank; each sink's bytes (empty for a
    /// skipped one; for a vector, its header's bytes then its elements').
    Ok { device: u64, outputs: Vec<B> },
    /// It failed with this message.
    Failed(String),
}

/// A rank's reply (outputs as in [`Done`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reply<B> {
    /// Host nanoseconds its engine took for the share.
    pub(crate) wall_ns: u64,
    /// Per instance of the share, or the engine's error for the whole.
    pub(crate) runs: Result<Vec<Done<B>>, String>,
}

/// Writes a message.
#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn new(batch: u64) -> Self {
        let mut w = Writer(Vec::new());
        w.u64(batch);
        w
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// An error: its message, then the rank it blames (`u64::MAX` for
    /// none) and that rank's own error.
    pub(crate) fn failure(&mut self, error: &MpiError) {
        self.str(&error.to_string());
        match error.blame() {
            Some((rank, reason)) => {
                self.u64(rank as u64);
                self.str(&reason);
            }
            None => {
                self.u64(u64::MAX);
                self.str("");
            }
        }
    }
}

/// Reads a message; every read fails (`None`) past its end.
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// A reader of `message`, after checking it is of batch `batch`.
    pub(crate) fn new(message: &'a [u8], batch: u64) -> Result<Self, String> {
        let mut r = Reader(message);
        match r.u64() {
            Some(b) if b == batch => Ok(r),
            Some(b) => Err(format!(
                "a message of its batch {b} arrived during batch {batch}: every rank must call run_batch the same number of times"
            )),
            None => Err("an empty message".into()),
        }
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(head)
    }

    pub(crate) fn string(&mut self) -> Option<String> {
        Some(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    /// An error written by [`Writer::failure`], as this rank hears it.
    pub(crate) fn failure(&mut self) -> Option<MpiError> {
        let message = self.string()?;
        let rank = self.u64()?;
        let reason = self.string()?;
        let rank = usize::try_from(rank).ok().filter(|_| rank != u64::MAX);
        Some(MpiError::Remote {
            rank,
            reason: if rank.is_some() {
                reason
            } else {
                message.clone()
            },
            message,
        })
    }

    /// A count of items that each take at least `min` bytes, checked
    /// against what is left (so a corrupt count cannot allocate much).
    pub(crate) fn count(&mut self, min: usize) -> Option<usize> {
        let count = usize::try_from(self.u64()?).ok()?;
        (count.saturating_mul(min.max(1)) <= self.0.len()).then_some(count)
    }

    pub(crate) fn is_done(&self) -> bool {
        self.0.is_empty()
    }
}

/// A share: `Ok` work, or `Err` why the batch stops before running.
pub(crate) fn write_share(batch: u64, share: Result<&[Work], &MpiError>) -> Vec<u8> {
    let mut w = Writer::new(batch);
    match share {
        Err(error) => {
            w.u64(0);
            w.failure(error);
        }
        Ok(work) => {
            w.u64(1);
            w.u64(work.len() as u64);
            for item in work {
                w.u64(item.index);
                w.u64(item.n);
                w.u64(item.feeds.len() as u64);
                for feed in &item.feeds {
                    w.bytes(feed);
                }
                w.u64(item.sinks.len() as u64);
                for sink in &item.sinks {
                    let (kind, value) = sink.code();
                    w.u64(kind);
                    w.u64(value);
                }
            }
        }
    }
    w.0
}

/// Reads a share written by [`write_share`]: `Ok(Ok(work))`, `Ok(Err(error))`
/// for a batch that stops, `Err` for a message that does not parse.
pub(crate) fn read_share(
    message: &[u8],
    batch: u64,
) -> Result<Result<Vec<Work<'_>>, MpiError>, String> {
    let mut r = Reader::new(message, batch)?;
    let bad = || "a share that does not parse".to_string();
    if r.u64().ok_or_else(bad)? == 0 {
        let error = r.failure().ok_or_else(bad)?;
        return if r.is_done() {
            Ok(Err(error))
        } else {
            Err(bad())
        };
    }
    let count = r.count(32).ok_or_else(bad)?;
    let mut work = Vec::with_capacity(count);
    for _ in 0..count {
        let index = r.u64().ok_or_else(bad)?;
        let n = r.u64().ok_or_else(bad)?;
        let feeds = (0..r.count(8).ok_or_else(bad)?)
            .map(|_| r.bytes())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let sinks = (0..r.count(16).ok_or_else(bad)?)
            .map(|_| SinkKind::from_code(r.u64()?, r.u64()?))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        work.push(Work {
            index,
            n,
            feeds,
            sinks,
        });
    }
    if !r.is_done() {
        return Err(bad());
    }
    Ok(Ok(work))
}

/// A reply.
pub(crate) fn write_reply<B: AsRef<[u8]>>(batch: u64, reply: &Reply<B>) -> Vec<u8> {
    let mut w = Writer::new(batch);
    w.u64(reply.wall_ns);
    match &reply.runs {
        Err(reason) => {
            w.u64(0);
            w.str(reason);
        }
        Ok(runs) => {
            w.u64(1);
            w.u64(runs.len() as u64);
            for run in runs {
                match run {
                    Done::Failed(reason) => {
                        w.u64(0);
                        w.str(reason);
                    }
                    Done::Ok { device, outputs } => {
                        w.u64(1);
                        w.u64(*device);
                        w.u64(outputs.len() as u64);
                        for out in outputs {
                            w.bytes(out.as_ref());
                        }
                    }
                }
            }
        }
    }
    w.0
}

/// Reads a reply written by [`write_reply`].
pub(crate) fn read_reply(message: &[u8], batch: u64) -> Result<Reply<&[u8]>, String> {
    let mut r = Reader::new(message, batch)?;
    let bad = || "a reply that does not parse".to_string();
    let wall_ns = r.u64().ok_or_else(bad)?;
    if r.u64().ok_or_else(bad)? == 0 {
        let reason = r.string().ok_or_else(bad)?;
        return Ok(Reply {
            wall_ns,
            runs: Err(reason),
        });
    }
    let count = r.count(16).ok_or_else(bad)?;
    let mut runs = Vec::with_capacity(count);
    for _ in 0..count {
        if r.u64().ok_or_else(bad)? == 0 {
            runs.push(Done::Failed(r.string().ok_or_else(bad)?));
            continue;
        }
        let device = r.u64().ok_or_else(bad)?;
        let outputs = (0..r.count(8).ok_or_else(bad)?)
            .map(|_| r.bytes())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        runs.push(Done::Ok { device, outputs });
    }
    if !r.is_done() {
        return Err(bad());
    }
    Ok(Reply {
        wall_ns,
        runs: Ok(runs),
    })
}

/// A join or an outcome: a number (instances) or the batch's error.
pub(crate) fn write_note(batch: u64, note: Result<u64, &MpiError>) -> Vec<u8> {
    let mut w = Writer::new(batch);
    match note {
        Ok(v) => {
            w.u64(1);
            w.u64(v);
        }
        Err(error) => {
            w.u64(0);
            w.failure(error);
        }
    }
    w.0
}

/// Reads a note written by [`write_note`].
pub(crate) fn read_note(message: &[u8], batch: u64) -> Result<Result<u64, MpiError>, String> {
    let mut r = Reader::new(message, batch)?;
    let bad = || "a message that does not parse".to_string();
    let note = if r.u64().ok_or_else(bad)? == 1 {
        Ok(r.u64().ok_or_else(bad)?)
    } else {
        Err(r.failure().ok_or_else(bad)?)
    };
    if !r.is_done() {
        return Err(bad());
    }
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_replies_and_notes_round_trip() {
        let work = vec![
            Work {
                index: 7,
                n: 3,
                feeds: vec![&[1, 2, 3], &[]],
                sinks: vec![
                    SinkKind::Host(12),
                    SinkKind::Skip,
                    SinkKind::Vector { header: 0 },
                    SinkKind::Vector { header: 8 },
                ],
            },
            Work {
                index: 9,
                n: 0,
                feeds: vec![],
                sinks: vec![],
            },
        ];
        let message = write_share(4, Ok(&work));
        assert!(matches!(read_share(&message, 4), Ok(Ok(w)) if w == work));
        let no = MpiError::Rank {
            rank: 2,
            cause: "no".into(),
        };
        let Ok(Err(heard)) = read_share(&write_share(4, Err(&no)), 4) else {
            panic!("the stop did not read back");
        };
        assert_eq!(heard.to_string(), no.to_string());
        assert_eq!(heard.blame(), Some((2, "no".to_string())));
        assert_eq!(heard.to_backend().to_string(), no.to_backend().to_string());
        let reply = Reply {
            wall_ns: 5,
            runs: Ok(vec![
                Done::Ok {
                    device: 1,
                    outputs: vec![vec![9u8; 12], vec![]],
                },
                Done::Failed("bad".into()),
            ]),
        };
        let heard = Reply {
            wall_ns: 5,
            runs: Ok(vec![
                Done::Ok {
                    device: 1,
                    outputs: vec![&[9u8; 12][..], &[]],
                },
                Done::Failed("bad".into()),
            ]),
        };
        assert_eq!(read_reply(&write_reply(4, &reply), 4), Ok(heard));
        assert!(matches!(read_note(&write_note(4, Ok(3)), 4), Ok(Ok(3))));
        let finalized = MpiError::Finalized;
        let Ok(Err(heard)) = read_note(&write_note(4, Err(&finalized)), 4) else {
            panic!("the outcome did not read back");
        };
        assert_eq!(heard.to_string(), finalized.to_string());
        assert_eq!(heard.blame(), None);
    }

    #[test]
    fn another_batch_or_a_cut_message_is_an_error_not_a_misreading() {
        let message = write_share(4, Err(&MpiError::Finalized));
        assert!(read_share(&message, 5).unwrap_err().contains("batch 4"));
        for len in 0..message.len() {
            assert!(read_share(&message[..len], 4).is_err(), "cut at {len}");
        }
        let mut long = write_note(1, Ok(2));
        long.push(0);
        assert!(read_note(&long, 1).is_err());
        // A huge count is refused before anything is allocated.
        let mut w = Writer::new(1);
        w.u64(1);
        w.u64(u64::MAX / 2);
        assert!(read_share(&w.0, 1).is_err());
    }
}
