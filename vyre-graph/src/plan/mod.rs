//! Launch plans and the launch-plan cache.
//!
//! Planning a graph for a problem size (how many worker groups its largest
//! node needs, how many invocations that grid covers, how much device memory
//! the run will hold at its peak) is done once per problem size and cached.
//! The runtime turns a [`LaunchRecommendation`] and a [`PlanConfig`] into a
//! [`BatchDispatchPlan`], and keeps plans (or richer values that own GPU
//! buffers) in a [`PlanCache`]: a least-recently-used cache keyed by problem
//! size. Of these only [`BatchDispatchPlan`] (what `Graph::plan` returns)
//! and its [`Topology`] are public, at the crate's root; the cache is the
//! crate's own.
//!
//! # The planning layer
//!
//! Inside the runtime this folder holds everything a run of one problem
//! size needs before it is recorded (the data types above are plain data
//! of `spec/`, re-exported here):
//!
//! - the compiled, immutable part of a graph: `program.rs` (`Program`,
//!   built once by `Graph::new`), checked by `validate.rs` (the description
//!   against itself) and `support.rs` (against the device); `dispatch.rs`
//!   and `steps.rs` (what a run records, and the control steps of
//!   data-dependent graphs), `control.rs` (the control kernel), `stride.rs`
//!   (grid-stride pipelines);
//! - one run's checks before planning: `check.rs`;
//! - sizing a problem size (`sizing.rs`), allocating its launch plan
//!   (`launch.rs`, with `control_block.rs`, `timer.rs`, `stamp.rs`),
//!   caching it (`plans.rs`), binding a run's inputs to it (`bind.rs`,
//!   with `staging.rs`: the staging buffers of large host inputs), and
//!   growing append buffers after an overflow (`append.rs`), and learning
//!   how many iterations of each loop to record (`trips.rs`).
//!
//! It imports `spec/` and `device/`. It never records or submits commands
//! and never reads results back: that is `run/`, above it. This `mod.rs`
//! only declares and re-exports.

mod append;
mod bind;
pub(crate) mod check;
pub(crate) mod control;
pub(crate) mod control_block;
pub(crate) mod dispatch;
pub(crate) mod launch;
pub(crate) mod plans;
pub(crate) mod program;
mod sizing;
pub(crate) mod staging;
pub(crate) mod stamp;
pub(crate) mod steps;
pub(crate) mod stride;
mod support;
pub(crate) mod timer;
pub(crate) mod tracks;
pub(crate) mod trips;
pub(crate) mod validate;

pub(crate) use crate::spec::plan::{BatchDispatchPlan, DEFAULT_PLAN_CACHE_CAPACITY};
