//! Differential testing of `graph!`: random valid graphs, generated from
//! seeds by the build script and compiled through the real macro, run in
//! every way the runtime offers and compared element by element against an
//! oracle written in plain Rust by the same generator, and against the same
//! graph with `fuse off;`. See the crate's README for the grammar, the
//! modes and how to shrink a failure.

mod case;
mod ctx;
pub mod grammar;
mod modes;
pub mod ops;

use vyre_graph::Graph;

pub use case::{Case, Elem, Expected, Failure, In, bytes_of, uniform_of, vec_of};
pub use ctx::Ctx;
pub use modes::{Oracle, Outputs, Typed};

// The cases of this build: `pub mod case_*` and `pub const CASES`.
include!(concat!(env!("OUT_DIR"), "/cases.rs"));

impl Ctx {
    /// Runs `case` in every mode at every size and compares.
    pub fn check(
        &mut self,
        case: &Case,
        fused: &Graph,
        unfused: &Graph,
        typed: Typed<'_>,
        oracle: Oracle<'_>,
    ) {
        if case.signed_rem && self.gpu().adapter().backend == wgpu::Backend::Gl {
            self.skipped += 1;
            return;
        }
        self.graphs += 1;
        modes::check(self, case, fused, unfused, typed, oracle);
    }
}

/// Checks every case of this build; the failures, each printed with its
/// graph once.
pub fn check_all(ctx: &mut Ctx) {
    for check in CASES {
        check(ctx);
    }
}
