//! The state of a differential run: the device, the counts, the failures.

use vyre_graph::{BackendError, Gpu};

use crate::case::{Case, Failure};

/// The state of a differential run: the device, what ran, what failed.
pub struct Ctx {
    gpu: Gpu,
    /// Every difference found so far.
    pub failures: Vec<Failure>,
    /// Cases checked.
    pub graphs: usize,
    /// Runs compared (each mode at each size counts one).
    pub runs: usize,
    /// Varies the inputs and the middle size between rounds of a soak.
    pub round: u64,
    /// Cases not compared because of a known divergence of the backend
    /// (see [`Case::signed_rem`]).
    pub skipped: usize,
}

impl Ctx {
    pub fn new(gpu: Gpu) -> Self {
        Ctx {
            gpu,
            failures: Vec::new(),
            graphs: 0,
            runs: 0,
            round: 0,
            skipped: 0,
        }
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// A graph that `graph!` accepted but the device refused to make.
    pub fn failed_new(&mut self, case: &Case, which: &str, e: &BackendError) {
        self.graphs += 1;
        self.failures.push(Failure {
            case: case.name,
            mode: format!("{which} new"),
            n: 0,
            what: format!("the graph could not be made: {e}"),
            source: case.source,
        });
    }

    pub(crate) fn fail(&mut self, case: &Case, mode: &str, n: u64, what: String) {
        self.failures.push(Failure {
            case: case.name,
            mode: mode.to_owned(),
            n,
            what,
            source: case.source,
        });
    }
}
