//! The plain types of a graph's description that both the `graph!` macro
//! and the runtime spell: sizes ([`Extent`]), texel formats and texture
//! dimensions ([`TexelFormat`], [`TextureDimension`], ...), how a kernel
//! binds a resource ([`BindingKind`]), how it copes with a folded grid
//! ([`GridFold`]), how many workgroups a node launches ([`DispatchSize`]),
//! graph textures and samplers ([`TextureShape`], [`SamplerSpec`],
//! [`TextureResource`]) and the device features a graph may declare
//! ([`Feature`]).
//!
//! They are defined here once: the macro checks and emits them, the
//! runtime (`vyre_graph::spec`) re-exports them. Everything here is plain
//! data with `const` or pure methods; nothing names wgpu, naga or a
//! proc-macro type (the runtime maps them to wgpu itself). Where a fact
//! comes from wgpu's own tables (texel sizes, sample types, which storage
//! bindings WebGPU guarantees), this crate's tests check it against
//! `wgpu-types`.

mod extent;
mod feature;
mod kernel;
mod node;
mod texel;
mod texture;

pub use extent::Extent;
pub use feature::Feature;
pub use kernel::{BindingKind, GridFold};
pub use node::DispatchSize;
pub use texel::{SampleType, TexelFormat, TextureAccess, TextureDimension};
pub use texture::{AddressMode, Filter, SamplerSpec, TextureResource, TextureShape};

#[cfg(test)]
mod tests;
