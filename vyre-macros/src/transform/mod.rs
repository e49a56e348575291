//! Stage 5: the checked graph rewritten for the GPU. Takes the
//! [`GraphAnalysis`] of stage 4 and the lowered graph it was made from
//! (stage 3, with the kernels' naga IR), and rewrites them:
//!
//! * reductions and scans fused (`reduce.rs`, first): an element-wise
//!   producer folded into a generated kernel's load, two reductions of one
//!   source paired (`reduce_pair.rs`), a scan's stores folded into its
//!   consumer (`reduce_write.rs`), with helpers they share in
//!   `reduce_common.rs`; the rewritten declarations are analysed again
//!   (stage 4) to give the analysis the later rewrites work on;
//! * grid folding (`fold.rs`): every `over` kernel's entry point wrapped
//!   so that it sees linear positions when its grid is folded into y and z
//!   past 65,535 workgroups;
//! * fusion (`fuse/`): runs of consecutive element-wise nodes become one
//!   dispatch of one composed kernel;
//! * stacking (`stack.rs`): whether independent instances may run as one
//!   run over their buffers laid one after another (emitted as data).
//!
//! None ever causes a compile error: a kernel or group it cannot rewrite
//! (or whose rewrite naga does not validate) stays as it was.
//! `run.rs` runs them in order; `wgsl.rs` holds the WGSL text queries only
//! they need (on the tokens of `model/lex.rs`). Imports only `check/`
//! (naga validation of the rewritten text), `lower/` (the generated
//! kernels, written again), `analyse/` (the fused graph analysed again),
//! `model/`, `diag/` and the timings. This `mod.rs` only declares and
//! re-exports.
//!
//! [`GraphAnalysis`]: crate::model::GraphAnalysis

pub mod fold;
pub mod fuse;
pub mod reduce;
pub mod reduce_common;
pub mod reduce_pair;
pub mod reduce_write;
mod run;
pub mod stack;
pub mod wgsl;

pub use run::transform;
