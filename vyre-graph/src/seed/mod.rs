//! The seed API, on top of everything:
//! [`GpuDispatchGraph`](crate::GpuDispatchGraph), an ordered list of ops (a
//! compiled kernel and its input) dispatched with one submission, and
//! [`LaunchAccounting`](crate::LaunchAccounting).
//!
//! It imports `graph.rs` and the layers below it: each dispatch describes
//! its ops as a graph and runs it as any graph runs. Nothing imports it
//! but the crate root. This `mod.rs` only declares.

pub(crate) mod dispatch;
