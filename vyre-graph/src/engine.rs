//! [`Engine`]: what a typed graph runs its batches on. One [`Graph`] on
//! one device is the engine `graph!` types use by default; a device set
//! ([`GraphSet`](crate::GraphSet), above this level) and `vyre-mpi`'s
//! cluster are others, so that one typed `run_batch` spreads over devices
//! and processes without another API.
//!
//! Beside `graph.rs` and `batch.rs`, on the same level: it names `Graph`'s
//! batch methods, nothing below them.

use crate::device::io::Feed;
use crate::graph::Graph;
use crate::run::batch::{BatchReport, Instance};
use crate::run::report::RunReport;
use crate::spec::GraphSpec;
use crate::spec::config::DispatchConfig;
use crate::spec::error::Result;

/// What runs a graph's batches and streams: one [`Graph`], a device set
/// ([`GraphSet`](crate::GraphSet)), or a cluster of processes
/// (`vyre-mpi`). A type made by `graph!` takes any engine as its type
/// parameter (`Affine<E = Graph>`): its typed `run_batch` and `run_many`
/// turn each instance's arguments into an [`Instance`] and hand the batch
/// to the engine.
///
/// Every method has [`Graph`]'s meaning: results in the batch's order, the
/// same checks before anything runs, the same errors.
///
/// ```no_run
/// use vyre_graph::{DispatchConfig, Engine, Graph, Instance, Result};
/// // Code written once for one GPU, a device set or a cluster.
/// fn run_all<E: Engine>(engine: &E, instances: &mut [Instance<'_>]) -> Result<usize> {
///     let report = engine.run_batch(&DispatchConfig::default(), instances)?;
///     Ok(report.runs.iter().filter(|r| r.is_ok()).count())
/// }
/// ```
#[allow(
    async_fn_in_trait,
    reason = "the futures borrow the batch and are awaited where they are made; a browser's are not Send"
)]
pub trait Engine {
    /// The graph it runs.
    fn spec(&self) -> &GraphSpec;

    /// The problem size of instance `index` of a batch, inferred from its
    /// feeds (see [`Graph::instance_size`]).
    ///
    /// # Errors
    /// As [`Graph::instance_size`].
    fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> Result<u64>;

    /// Runs independent instances (see [`Graph::run_batch`]).
    ///
    /// # Errors
    /// As [`Graph::run_batch`].
    #[cfg(not(target_arch = "wasm32"))]
    fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport>;

    /// As [`Engine::run_batch`], as a future (see [`Graph::run_batch_async`]).
    ///
    /// # Errors
    /// As [`Graph::run_batch`].
    async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport>;

    /// Runs the instances as a stream with up to `depth` in flight (see
    /// [`Graph::run_many`]).
    #[cfg(not(target_arch = "wasm32"))]
    fn run_many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>>;

    /// As [`Engine::run_many`], as a future (see [`Graph::run_many_async`]).
    async fn run_many_async(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>>;
}

impl Engine for Graph {
    fn spec(&self) -> &GraphSpec {
        Graph::spec(self)
    }

    fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> Result<u64> {
        Graph::instance_size(self, index, feeds)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        Graph::run_batch(self, config, instances)
    }

    async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        Graph::run_batch_async(self, config, instances).await
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn run_many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        Graph::run_many(self, config, depth, instances)
    }

    async fn run_many_async(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        Graph::run_many_async(self, config, depth, instances).await
    }
}
