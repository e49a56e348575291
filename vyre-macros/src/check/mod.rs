//! Stage 2: each kernel on its own. Takes the [`GraphInput`]'s kernel
//! declarations and produces, for each, its [`KernelInterface`] (or the
//! errors that stop it, plus what its bindings hold for the error stub):
//!
//! ```text
//! KernelDecl -> LoadedKernel     load.rs      literal | file | tokens, with a source map
//!            -> ValidatedKernel  validate.rs  naga's front end and validator, on worker.rs's thread
//!            -> KernelInterface  reflect.rs   entry point, bindings (bindings.rs, textures.rs),
//!                                             overrides (overrides.rs), Rust types (convert.rs)
//! ```
//!
//! `kernels.rs` runs that sequence for every kernel ([`check_kernels`]).
//! Naga runs on a worker thread where the compiler's proc-macro API
//! panics: `worker.rs`, `partial.rs` and `convert.rs` (with
//! `model/rust_types.rs`, `model/features.rs` and
//! `diag/naga_errors.rs`) make plain data only; `tests::threads` checks
//! the files.
//!
//! Imports only `model/` and `diag/` (stage 1's output is a `model/` type):
//! nothing here knows the graph around a kernel; built-in nodes
//! (reductions, scans) are lowered after this stage, by `lower/`, whose
//! generated kernels come back through [`check_kernels`]. This `mod.rs`
//! only declares and re-exports.
//!
//! [`GraphInput`]: crate::model::GraphInput
//! [`KernelInterface`]: crate::model::KernelInterface

pub mod bindings;
pub mod convert;
pub mod imports;
pub mod kernels;
pub mod link;
pub mod load;
pub mod overrides;
pub mod partial;
pub mod reflect;
pub mod textures;
pub mod validate;
pub mod worker;

pub use kernels::{Checked, check_kernels, check_kernels_with};
pub use overrides::{EvaluateOverrides, check_override_value};
pub use validate::revalidate;
