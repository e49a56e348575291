//! The static description of a graph: kernels, buffers and nodes.
//!
//! `graph!` emits one [`GraphSpec`] per graph as plain data (every string and
//! slice is [`Cow::Borrowed`](std::borrow::Cow::Borrowed) from `'static`
//! memory), and code that builds graphs by hand fills the same types with
//! owned data. The runtime consumes nothing else: validation, analysis,
//! planning and recording all start from a `GraphSpec`.
//!
//! # The ground layer
//!
//! Inside the runtime this folder is the bottom layer: plain data and pure
//! functions that every other layer may use. Besides the description
//! (`kernel.rs`, `buffer.rs`, `node.rs`, `graph.rs`, and the types shared
//! with `graph!` that `vyre-analysis` defines, re-exported here: extents,
//! features, texel formats, textures and samplers) it holds a run's options
//! ([`DispatchConfig`](crate::DispatchConfig) and
//! [`GridStride`](crate::GridStride), `config.rs`; how its data moves in
//! and out, [`TransferOptions`](crate::TransferOptions), `transfer.rs`),
//! every error ([`BackendError`](crate::BackendError), `error.rs`),
//! workgroup grid arithmetic ([`grid`]) and the launch-plan data and cache
//! (`plan.rs`: [`BatchDispatchPlan`](crate::BatchDispatchPlan) is public,
//! the cache is the crate's own).
//!
//! It imports nothing else of the crate (only `std`, `wgpu`'s plain types
//! and `vyre-analysis`); it must never name a device, a buffer that exists
//! on one, or a run: those are `device/`, `plan/` and `run/`, above it.
//! This `mod.rs` only declares and re-exports.

mod buffer;
pub(crate) mod config;
pub(crate) mod error;
mod graph;
#[doc(hidden)]
pub mod grid;
mod kernel;
mod node;
pub(crate) mod plan;
pub(crate) mod transfer;
mod wgpu;

pub use buffer::{AppendSpec, BufferSpec};
pub use graph::{GraphSpec, LoopIteration, LoopSpec, Until};
pub use kernel::{BindingKind, BindingSpec, GridFold, KernelSpec, OverrideValue};
pub(crate) use node::GRID_STRIDE_GROUP;
pub use node::{DispatchSize, FusedGroup, NodeBinding, NodeSpec, ScheduleSpec};
// Defined in `vyre-analysis`, shared with `graph!`: sizes as functions of
// the problem size (`Extent`), device features (`Feature`, their wgpu
// flags in `wgpu.rs`), texel formats and texture dimensions (their wgpu
// values in `wgpu.rs`), textures and samplers, how a node touches a buffer
// and what a buffer is for.
pub use vyre_analysis::spec::{
    AddressMode, Extent, Feature, Filter, SampleType, SamplerSpec, TexelFormat, TextureAccess,
    TextureDimension, TextureResource, TextureShape,
};
pub use vyre_analysis::{Access, BufferClass};
pub(crate) use wgpu::{FormatFlag, ToWgpu, ViewDimension, all_wgpu_features};
