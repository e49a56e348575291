//! Textures and samplers as graph resources (`textures`), their dimensions
//! (`texture_dims`) and texel formats (`texture_formats`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod texture_dims;
mod texture_formats;
mod textures;
