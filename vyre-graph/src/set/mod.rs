//! Device sets on one host: [`Gpus`] (the devices: every adapter that
//! matches a [`GpuFilter`], or a given list) and [`GraphSet`] (one graph
//! per device, batches spread over them in proportion to each device's
//! learned throughput, a failed device's instances run again on the
//! others). See `docs/device-sets.md`.
//!
//! The layer above `Graph` (`graph.rs`, `batch.rs`, `engine.rs`): it runs
//! each device's share through that device's own `Graph`. Not compiled on
//! wasm32: a browser offers one adapter.
//!
//! - `gpus.rs`: [`Gpus`], [`GpuFilter`];
//! - `learn.rs`: throughput per device and size class, and the split of a
//!   batch into shares (plain data);
//! - `graph_set.rs`: [`GraphSet`], device status, retry, where resident
//!   data must run;
//! - `join.rs`: the async twins' join of futures;
//! - `spread.rs`: [`Engine`](crate::Engine) for `GraphSet`: checks, shares,
//!   rounds, failover.

pub(crate) mod gpus;
pub(crate) mod graph_set;
pub(crate) mod join;
pub(crate) mod learn;
pub(crate) mod spread;

pub use gpus::{GpuFilter, Gpus};
pub use graph_set::{DeviceStatus, GraphSet};
pub use learn::Throughput;
