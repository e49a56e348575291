//! The device layer: an open GPU and what lives on it, independent of any
//! graph's plan.
//!
//! - `gpu.rs`: [`Gpu`](crate::Gpu) (adapter, device, queue, limits,
//!   blocking waits), with `adapter.rs`, choosing the adapter (natively
//!   from the environment, in a browser WebGPU's), `scopes.rs`, the error
//!   scopes around the runtime's work and their deferred answers,
//!   `counters.rs`, the runtime's counters
//!   ([`GpuCounters`](crate::GpuCounters)), and `poller.rs`, the thread
//!   that polls the device while async runs wait (never in a browser);
//! - `map.rs`: reading device memory back (one wait or one future for many
//!   buffers, blocking and async through one implementation);
//! - `transfer.rs`: the host copies into and out of mapped memory, split
//!   over the device's worker pool when large, and the crate's only
//!   `unsafe` (reading into a vector's spare capacity);
//! - `pipeline.rs`: compiled kernels with explicit layouts
//!   ([`WgpuPipeline`](crate::WgpuPipeline));
//! - `buffer.rs`, `texture_handle.rs`: resident buffers and textures
//!   ([`GpuBufferHandle`](crate::GpuBufferHandle),
//!   [`GpuTextureHandle`](crate::GpuTextureHandle)); `texture.rs`: creating
//!   textures and samplers, and their limits;
//! - `io.rs`: what a run takes and gives on the host side
//!   ([`Feed`](crate::Feed), [`Sink`](crate::Sink), [`Input`](crate::Input)
//!   and their typed forms).
//!
//! It imports only `spec/`. It never names a graph's program, plan or run
//! (`plan/`, `run/`, above it): a handle reads itself back through
//! `map.rs` as a run does, not through the run. This `mod.rs` only declares
//! and re-exports.

pub(crate) mod adapter;
pub(crate) mod buffer;
pub(crate) mod counters;
pub(crate) mod gpu;
pub(crate) mod io;
pub(crate) mod map;
pub(crate) mod pipeline;
pub(crate) mod poller;
pub(crate) mod scopes;
pub(crate) mod texture;
pub(crate) mod texture_handle;
pub(crate) mod transfer;
