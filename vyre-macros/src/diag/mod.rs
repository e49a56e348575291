//! Diagnostics, used by every stage and using none of them (only
//! `model/`): the accumulator of an invocation's errors and its helpers
//! (`diagnostics.rs`), naga's errors rewritten for WGSL users
//! (`naga_errors.rs` for the front end's, `naga_validation.rs` for the
//! validator's, `naga_words.rs`; plain data: they run on the naga thread),
//! where the parts of a kernel
//! are in the user's source (`sites.rs`), code frames for literals and
//! files (`frame.rs`), "did you mean" (`suggest.rs`),
//! hints naming the node that could fix a mistake (`hints.rs`) and the
//! texture kinds a graph refuses, with why (`refused.rs`).
//!
//! This `mod.rs` only declares and re-exports.

pub mod diagnostics;
pub mod frame;
pub mod hints;
pub mod naga_errors;
pub mod naga_validation;
pub mod naga_words;
pub mod refused;
pub mod sites;
pub mod suggest;

pub use diagnostics::{Diagnostics, list, list_raw};
