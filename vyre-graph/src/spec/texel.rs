//! Texel formats and texture dimensions of graph textures (defined in
//! `vyre-analysis`, shared with `graph!`; their wgpu values are `wgpu.rs`).

pub use vyre_analysis::spec::{SampleType, TexelFormat, TextureAccess, TextureDimension};
