//! Differential testing of `graph!`: random valid graphs, generated from
//! seeds by the build script and compiled through the real macro, run in
//! every way the runtime offers and compared element by element against an
//! oracle written in plain Rust by the same generator, and against the same
//! graph with `fuse off;`. See the crate's README for the grammar, the
//! modes and how to shrink a failure.

mod case;
mod check;
mod compare;
mod ctx;
pub mod grammar;
mod modes;
pub mod ops;

use vyre_graph::{BackendError, Graph};

pub use case::{Case, E, Elem, Expected, Failure, In, Want, bytes_of, uniform_of, vec_of};
pub use check::{Api, Oracle, TypedAt, TypedBatch};
pub use compare::Outputs;
pub use ctx::Ctx;

/// The oracle of a case module frozen before [`Want`]: outputs only.
pub type OutputsOracle<'a> = &'a dyn Fn(usize, &[Vec<u8>]) -> Vec<Expected>;

/// The typed `run` of a case module written before the typed API's other
/// calls were compared (`regressions/`).
pub type Typed<'a> = &'a dyn Fn(&[Vec<u8>]) -> Result<Outputs, BackendError>;

// The cases of this build: `pub mod case_*` and `pub const CASES`.
include!(concat!(env!("OUT_DIR"), "/cases.rs"));

impl Ctx {
    /// Runs `case` in every mode at every size and compares.
    pub fn check_case(
        &mut self,
        case: &Case,
        fused: &Graph,
        unfused: &Graph,
        api: &Api<'_>,
        oracle: Oracle<'_>,
    ) {
        if case.signed_rem && self.gpu().adapter().backend == wgpu::Backend::Gl {
            self.skipped += 1;
            return;
        }
        self.graphs += 1;
        check::check(self, case, fused, unfused, api, oracle);
    }

    /// [`Ctx::check_case`] for a case module frozen before the typed
    /// API's other calls and [`Want`] (`regressions/`): its typed `run`
    /// and an oracle of outputs only.
    pub fn check(
        &mut self,
        case: &Case,
        fused: &Graph,
        unfused: &Graph,
        typed: Typed<'_>,
        oracle: OutputsOracle<'_>,
    ) {
        let run = |_: u64, i: &[Vec<u8>]| typed(i);
        let api = Api {
            run: &run,
            resident: None,
            record: None,
            batch: None,
        };
        self.check_case(case, fused, unfused, &api, &|n, i| Want::from(oracle(n, i)));
    }
}

/// Checks every case of this build; the failures, each printed with its
/// graph once.
pub fn check_all(ctx: &mut Ctx) {
    // `VYRE_DIFF_VERBOSE=1`: each case's name and time as it ends.
    let verbose = std::env::var_os("VYRE_DIFF_VERBOSE").is_some();
    for check in CASES {
        let (start, failures) = (std::time::Instant::now(), ctx.failures.len());
        check(ctx);
        if verbose {
            let case = ctx.failures.get(failures).map_or("", |f| f.case);
            eprintln!(
                "case #{} {:.1}s {}",
                ctx.graphs + ctx.skipped,
                start.elapsed().as_secs_f64(),
                if case.is_empty() { "ok" } else { case }
            );
        }
    }
}
