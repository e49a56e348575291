//! The run layer: one run of a graph whose plan is checked out, from its
//! bound inputs to its report.
//!
//! - `started.rs`: [`Started`](started::Started), the run in flight: bind,
//!   encode, submit, read back, each one method, in that order; reading
//!   back is one future for blocking and async runs alike, parameterised
//!   by how it waits;
//! - `encode.rs`: recording into one encoder and one compute pass, with
//!   `control.rs` recording the control steps (append counts, loop gates,
//!   indirect arguments);
//! - `readback.rs`: what a run maps (host outputs, timestamps, status) and
//!   the recorded run's stamp check; `counted.rs`: append outputs read by
//!   their count, in a second small submission after the status; `status.rs`: the status check after
//!   the wait (append overflows, loop reports, indirect grids);
//! - `batch.rs`: [`Instance`](crate::Instance) and
//!   [`BatchReport`](crate::BatchReport), and a stacked batch's host side
//!   (gathering inputs, scattering outputs);
//! - `empty.rs`: a run at problem size 0 whose outputs are empty or a
//!   reduction's identity there: checked, then filled, nothing submitted;
//! - `recorded.rs`: [`RecordedRun`](crate::RecordedRun), a run recorded
//!   into the caller's encoder; `report.rs`:
//!   [`RunReport`](crate::RunReport) and its parts.
//!
//! It imports `spec/`, `device/` and `plan/`, and changes no plan's
//! sizing: a run uses the plan it was given and hands it back (or drops
//! it). It never names `Graph`: `graph.rs`, above it, calls these steps in
//! order. This `mod.rs` only declares.

pub(crate) mod batch;
pub(crate) mod control;
pub(crate) mod counted;
pub(crate) mod empty;
pub(crate) mod encode;
#[cfg(feature = "profiler")]
pub(crate) mod profiler;
pub(crate) mod readback;
pub(crate) mod recorded;
pub(crate) mod report;
pub(crate) mod started;
pub(crate) mod status;
pub(crate) mod trace;
