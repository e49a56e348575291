//! [`Cluster`]: an [`Engine`] whose batches are spread over the ranks of
//! an MPI job, each rank running its share on its own local engine (one
//! [`Graph`](vyre_graph::Graph) or a device set). Rank 0's side of a batch
//! is in `root.rs`, every other rank's in `member.rs`; this file holds the
//! type, its options and reports, and the [`Engine`] methods.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use vyre_graph::{
    BatchReport, DispatchConfig, Engine, Feed, Instance, Result, RunReport, spec::GraphSpec,
};

use crate::error::MpiError;
use crate::link::Link;
use crate::shares::Throughput;

/// How a [`Cluster`] waits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterOptions {
    /// How long a rank waits for any one message of a batch before it
    /// decides the other rank died or hangs and ends the job (60 s by
    /// default). A rank waiting for the batch's outcome waits while the
    /// others run their shares, so this must exceed the longest share's
    /// run time.
    pub timeout: Duration,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            timeout: Duration::from_secs(60),
        }
    }
}

impl ClusterOptions {
    /// These options with another [`ClusterOptions::timeout`].
    ///
    /// ```
    /// let options = vyre_mpi::ClusterOptions::default().with_timeout(std::time::Duration::from_secs(5));
    /// assert_eq!(options.timeout.as_secs(), 5);
    /// ```
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// What one rank did in a batch ([`ClusterReport::shares`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShareReport {
    /// The rank.
    pub rank: usize,
    /// Instances it ran.
    pub instances: usize,
    /// Host nanoseconds its local engine took for them.
    pub engine_ns: u64,
}

/// Where the time of the latest batch went ([`Cluster::last_report`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterReport {
    /// The batch's number (from 1) on this cluster.
    pub batch: u64,
    /// Ranks in the job.
    pub ranks: usize,
    /// Host nanoseconds of the whole batch on this rank.
    pub batch_ns: u64,
    /// On rank 0: from the start until every rank had its share (the
    /// join, the split, the sends). 0 elsewhere.
    pub scatter_ns: u64,
    /// On rank 0: from the end of its own share until the outcome was
    /// sent (waiting for the others, writing their outputs). 0 elsewhere.
    pub gather_ns: u64,
    /// On rank 0 every rank's share; elsewhere only this rank's.
    pub shares: Vec<ShareReport>,
}

impl ClusterReport {
    /// What MPI added to the batch: its time less the longest any rank's
    /// engine took (the scatter, the gather, and waiting on each other).
    #[must_use]
    pub fn overhead_ns(&self) -> u64 {
        let longest = self.shares.iter().map(|s| s.engine_ns).max().unwrap_or(0);
        self.batch_ns.saturating_sub(longest)
    }
}

/// A fault the tests inject into one rank (not an API: it may change).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The rank exits (`process::exit(3)`) after receiving its share.
    Exit,
    /// The rank sleeps for ever after receiving its share.
    Stall,
    /// The rank panics after receiving its share.
    Panic,
    /// The first feed of the rank's share loses its last byte, so its
    /// engine refuses it.
    CorruptFeed,
}

/// What a cluster keeps between batches.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) batch: u64,
    pub(crate) throughput: Throughput,
    pub(crate) last: Option<ClusterReport>,
    pub(crate) fault: Option<(usize, Fault)>,
}

/// An [`Engine`] over every rank of an MPI job: rank 0's instances are
/// split over the ranks by each rank's measured throughput (per size
/// class, equal at first), every rank runs its share on its local engine,
/// and rank 0 gets the results back in order. Every rank calls the same
/// methods collectively: rank 0 with the batch, every other rank with an
/// empty slice (it gets an empty report back).
///
/// A failure anywhere (a rank's engine or one instance failing, a rank
/// passing instances of its own, a resident handle in the batch) fails
/// the batch on every rank with one [`MpiError`] naming the rank and the
/// cause; a rank that does not answer within [`ClusterOptions::timeout`]
/// ends the job (`MPI_Abort`), as does a panic once [`init`](crate::init)
/// installed its hook.
///
/// Outputs may go into slices (`Sink::Host`) or vectors (`Sink::Vector`,
/// what `graph!`'s typed `run_batch` reads into): another rank reads a
/// vector's output into bytes (its header too, for a `Headed`) and rank 0
/// fills the vector with them ([`VecSink::fill`](vyre_graph::VecSink::fill)).
/// Only an instance with a vector whose header is over 128 bytes or not a
/// whole number of 4-byte words stays on rank 0.
///
/// ```no_run
/// use vyre_graph::{DispatchConfig, Engine, Feed, Gpu, Graph, Instance, Sink};
/// # fn f(spec: vyre_graph::spec::GraphSpec) -> Result<(), Box<dyn std::error::Error>> {
/// let universe = vyre_mpi::init()?;
/// let cluster = vyre_mpi::Cluster::new(&universe, Graph::new(&Gpu::new()?, spec)?);
/// let x: Vec<u32> = (0..1000).collect();
/// let mut y = vec![0u32; 1000];
/// let mut batch = Vec::new();
/// if cluster.rank() == 0 {
///     batch.push(Instance::new(1000, vec![Feed::Host(vyre_graph::bytemuck::cast_slice(&x))],
///         vec![Sink::Host(vyre_graph::bytemuck::cast_slice_mut(&mut y))]));
/// }
/// // Every rank calls it; rank 0's instances are the batch.
/// cluster.run_batch(&DispatchConfig::default(), &mut batch)?;
/// # Ok(()) }
/// ```
pub struct Cluster<E: Engine> {
    pub(crate) local: E,
    pub(crate) world: SimpleCommunicator,
    pub(crate) options: ClusterOptions,
    pub(crate) state: Mutex<State>,
}

impl<E: Engine> std::fmt::Debug for Cluster<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("rank", &self.rank())
            .field("ranks", &self.size())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<E: Engine> Cluster<E> {
    /// A cluster of every rank of `universe`'s world, running shares on
    /// `local` (this rank's engine), with default [`ClusterOptions`].
    #[must_use]
    pub fn new(universe: &Universe, local: E) -> Self {
        Self::with_options(universe, local, ClusterOptions::default())
    }

    /// As [`Cluster::new`], with these options.
    #[must_use]
    pub fn with_options(universe: &Universe, local: E, options: ClusterOptions) -> Self {
        Cluster {
            local,
            world: universe.world(),
            options,
            state: Mutex::new(State::default()),
        }
    }

    /// This process's rank.
    #[must_use]
    pub fn rank(&self) -> usize {
        usize::try_from(self.world.rank()).unwrap_or(0)
    }

    /// Ranks in the job.
    #[must_use]
    pub fn size(&self) -> usize {
        usize::try_from(self.world.size()).unwrap_or(1)
    }

    /// This rank's engine.
    #[must_use]
    pub fn local(&self) -> &E {
        &self.local
    }

    /// Its options.
    #[must_use]
    pub fn options(&self) -> &ClusterOptions {
        &self.options
    }

    /// Where the time of the latest batch went, on this rank (`None`
    /// before the first).
    #[must_use]
    pub fn last_report(&self) -> Option<ClusterReport> {
        self.state().last.clone()
    }

    /// Makes `rank` fail the next batch with `fault` (for the tests of
    /// failures; every rank makes the same call).
    #[doc(hidden)]
    pub fn inject_fault(&self, rank: usize, fault: Fault) {
        self.state().fault = Some((rank, fault));
    }

    /// Runs a batch over the ranks (collectively: see [`Cluster`]),
    /// returning the MPI error itself where [`Engine::run_batch`] gives a
    /// [`BackendError`](vyre_graph::BackendError).
    ///
    /// # Errors
    /// An [`MpiError`] naming the rank and the cause, the same on every
    /// rank: see [`Cluster`].
    pub fn run(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> std::result::Result<BatchReport, MpiError> {
        if mpi::environment::is_finalized() {
            return Err(MpiError::Finalized);
        }
        let batch = {
            let mut state = self.state();
            state.batch += 1;
            state.batch
        };
        if self.world.rank() == 0 {
            self.run_root(batch, config, instances)
        } else {
            self.run_member(batch, config, instances)
        }
    }

    /// The state, whatever a panic elsewhere left in it.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn link(&self) -> Link<'_> {
        Link {
            world: &self.world,
            timeout: self.options.timeout,
        }
    }

    /// The fault to inject on this rank in this batch, taken (once).
    pub(crate) fn take_fault(&self) -> Option<Fault> {
        let mut state = self.state();
        match state.fault {
            Some((rank, fault)) if rank == self.rank() => {
                state.fault = None;
                Some(fault)
            }
            Some(_) => {
                state.fault = None;
                None
            }
            None => None,
        }
    }

    /// As [`Cluster::run`], one result per instance (on a rank other than
    /// 0, whose batch is empty, a failure is one error).
    fn run_each(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        match self.run(config, instances) {
            Ok(report) => report.runs,
            Err(error) => (0..instances.len().max(1))
                .map(|_| Err(error.to_backend()))
                .collect(),
        }
    }
}

/// The batch API of a graph over every rank: see [`Cluster`]. The `async`
/// methods block while the ranks talk (MPI has no futures).
impl<E: Engine> Engine for Cluster<E> {
    fn spec(&self) -> &GraphSpec {
        self.local.spec()
    }

    fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> Result<u64> {
        self.local.instance_size(index, feeds)
    }

    fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        self.run(config, instances).map_err(|e| e.to_backend())
    }

    async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        self.run(config, instances).map_err(|e| e.to_backend())
    }

    /// As [`Cluster::run`] (the instances of a cluster's stream run as one
    /// batch over the ranks, `depth` applying on each rank's engine only
    /// through its own batching).
    fn run_many(
        &self,
        config: &DispatchConfig,
        _depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        self.run_each(config, instances)
    }

    async fn run_many_async(
        &self,
        config: &DispatchConfig,
        _depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        self.run_each(config, instances)
    }
}
