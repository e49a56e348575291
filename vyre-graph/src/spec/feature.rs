//! [`Feature`]: the device features a graph may declare (defined in
//! `vyre-analysis`; their wgpu flags are `wgpu.rs`).

pub use vyre_analysis::spec::Feature;
