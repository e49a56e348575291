//! [`MpiError`]: what can go wrong when a batch is spread over ranks, each
//! variant naming the rank and the cause.

use vyre_graph::BackendError;

/// An error of a batch run over MPI ranks ([`Cluster`](crate::Cluster)).
/// Every rank of the batch returns it (the same message), so that no rank
/// goes on alone. Through [`Engine`](vyre_graph::Engine) (the typed API of
/// `graph!` types) it arrives as a [`BackendError`] carrying this message
/// (see [`MpiError::into_backend`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpiError {
    /// MPI was initialised already in this process (`mpi::initialize` may
    /// be called once).
    #[error(
        "MPI is already initialised in this process: call vyre_mpi::init() once, at the start of main, and keep the Universe it returns"
    )]
    AlreadyInitialised,
    /// MPI was finalised (the `Universe` dropped) before the batch.
    #[error(
        "MPI was finalised before this batch (the Universe from vyre_mpi::init() was dropped): keep it alive while any Cluster runs"
    )]
    Finalized,
    /// A rank other than 0 passed instances: the batch is rank 0's.
    #[error(
        "rank {rank} passed {instances} instance(s) to the batch, but only rank 0's instances are the batch: every other rank calls run_batch with an empty slice"
    )]
    NotRankZero {
        /// The rank that passed instances.
        rank: usize,
        /// How many it passed.
        instances: usize,
    },
    /// An instance of rank 0's batch cannot cross processes.
    #[error(
        "instance {index} of the batch has {what}: a resident buffer or texture belongs to one process's device and cannot be sent to another rank; pass host data (Feed::Host, Sink::Host, Sink::from(&mut vec) or Sink::Skip)"
    )]
    NotHost {
        /// The instance, in the batch's order.
        index: usize,
        /// Which feed or sink (e.g. "feed 1 on the device").
        what: String,
    },
    /// A rank's local engine failed the whole share it was given (a device
    /// error, a check that failed before anything ran).
    #[error("rank {rank} failed its share of the batch: {cause}")]
    Rank {
        /// The rank whose engine failed.
        rank: usize,
        /// Its engine's error, as that rank rendered it.
        cause: String,
    },
    /// One instance failed on the rank that ran it.
    #[error("instance {index} of the batch failed on rank {rank}: {cause}")]
    Instance {
        /// The rank that ran it.
        rank: usize,
        /// The instance, in the batch's order.
        index: usize,
        /// Its error, as that rank rendered it.
        cause: String,
    },
    /// A rank's results do not fit the instance they are for (a sink of
    /// another length, a message cut short): ranks running different
    /// builds or graphs.
    #[error(
        "rank {rank} sent results that do not fit the batch ({reason}); every rank must run the same program with the same graph"
    )]
    Protocol {
        /// The rank whose message did not fit.
        rank: usize,
        /// What did not fit.
        reason: String,
    },
    /// An output another rank sent does not fit rank 0's vector sink for
    /// it (a vector of another element type than the output's).
    #[error(
        "output {output} of instance {index} (run on rank {rank}) does not fit its vector sink on rank 0: {cause}"
    )]
    Output {
        /// The instance, in the batch's order.
        index: usize,
        /// The output.
        output: usize,
        /// The rank that ran it.
        rank: usize,
        /// Why it does not fit.
        cause: String,
    },
    /// A message is larger than one MPI message can carry.
    #[error(
        "the share for rank {rank} is {bytes} bytes, more than one MPI message carries (2 GiB - 1): split the batch into smaller batches"
    )]
    TooLarge {
        /// The rank it was for.
        rank: usize,
        /// Its size.
        bytes: usize,
    },
    /// Rank 0 told this rank that the batch failed: one of the errors
    /// above, as rank 0 rendered it.
    #[error("{message}")]
    Remote {
        /// The rank that failed, when the error is a rank's failure.
        rank: Option<usize>,
        /// That rank's own error (what [`BackendError::RankFailed`]
        /// carries); the whole message otherwise.
        reason: String,
        /// Rank 0's message.
        message: String,
    },
}

impl MpiError {
    /// The rank this error blames and its failure, for
    /// [`BackendError::RankFailed`]; `None` for an error of the batch
    /// itself or of MPI (no rank to blame).
    ///
    /// ```
    /// let error = vyre_mpi::MpiError::Rank { rank: 2, cause: "device lost".into() };
    /// assert_eq!(error.blame(), Some((2, "device lost".to_string())));
    /// ```
    #[must_use]
    pub fn blame(&self) -> Option<(usize, String)> {
        match self {
            MpiError::Rank { rank, cause } => Some((*rank, cause.clone())),
            MpiError::Instance { rank, index, cause } => {
                Some((*rank, format!("instance {index} of the batch: {cause}")))
            }
            MpiError::Protocol { rank, reason } => Some((
                *rank,
                format!(
                    "it sent results that do not fit the batch ({reason}); every rank must run the same program with the same graph"
                ),
            )),
            MpiError::NotRankZero { rank, instances } => Some((
                *rank,
                format!(
                    "it passed {instances} instance(s) to the batch, but only rank 0's instances are the batch: every other rank calls run_batch with an empty slice"
                ),
            )),
            MpiError::Remote {
                rank: Some(rank),
                reason,
                ..
            } => Some((*rank, reason.clone())),
            MpiError::AlreadyInitialised
            | MpiError::Finalized
            | MpiError::NotHost { .. }
            | MpiError::TooLarge { .. }
            | MpiError::Output { .. }
            | MpiError::Remote { rank: None, .. } => None,
        }
    }

    /// As a [`BackendError`], for [`Engine`](vyre_graph::Engine)'s methods
    /// (the typed API of `graph!` types): the one mapping from this type.
    /// A rank's failure (see [`MpiError::blame`]) is a
    /// [`BackendError::RankFailed`] naming the rank and its error; any other
    /// error a [`BackendError::DispatchFailed`] whose reason is this error's
    /// message.
    ///
    /// ```
    /// use vyre_graph::BackendError;
    /// let error = vyre_mpi::MpiError::Rank { rank: 2, cause: "device lost".into() };
    /// let backend = error.to_backend();
    /// assert!(matches!(backend, BackendError::RankFailed { rank: 2, .. }));
    /// assert_eq!(backend.to_string(), "rank 2 of the MPI job failed: device lost");
    /// ```
    #[must_use]
    pub fn to_backend(&self) -> BackendError {
        match self.blame() {
            Some((rank, reason)) => BackendError::RankFailed { rank, reason },
            None => BackendError::DispatchFailed {
                reason: format!("vyre-mpi: {self}"),
            },
        }
    }

    /// As [`MpiError::to_backend`], taking the error.
    #[must_use]
    pub fn into_backend(self) -> BackendError {
        self.to_backend()
    }
}

impl From<MpiError> for BackendError {
    fn from(error: MpiError) -> Self {
        error.to_backend()
    }
}
