//! Differential testing of `graph!`: random valid graphs, generated from
//! seeds by the build script and compiled through the real macro, run in
//! every way the runtime offers and compared element by element against an
//! oracle written in plain Rust by the same generator, and against the same
//! graph with `fuse off;`. See the crate's README for the grammar, the
//! modes and how to shrink a failure.

pub mod grammar;
mod modes;
pub mod ops;

use vyre_graph::{BackendError, Gpu, Graph};

pub use modes::{Oracle, Outputs, Typed};

// The cases of this build: `pub mod case_*` and `pub const CASES`.
include!(concat!(env!("OUT_DIR"), "/cases.rs"));

/// A host input's kind, in declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum In {
    U32,
    I32,
    F32,
    /// `struct P { a: u32, b: i32, c: f32, e: u32 }`.
    Uniform,
}

/// What one output must be.
#[derive(Clone, Debug)]
pub enum Expected {
    /// These bytes; for `f32` elements equal as numbers (`-0.0 == 0.0`).
    Exact { bytes: Vec<u8>, float: bool },
    /// A rounded float result: each element within `tol` of `want`.
    Near { want: Vec<f64>, tol: Vec<f64> },
}

/// An element type of the oracle.
pub trait Elem: bytemuck::Pod {
    const FLOAT: bool;
}
impl Elem for u32 {
    const FLOAT: bool = false;
}
impl Elem for i32 {
    const FLOAT: bool = false;
}
impl Elem for f32 {
    const FLOAT: bool = true;
}

impl Expected {
    pub fn exact<T: Elem>(v: &[T]) -> Self {
        Expected::Exact {
            bytes: bytemuck::cast_slice(v).to_vec(),
            float: T::FLOAT,
        }
    }
    pub fn near(v: &[f32], tol: &[f64]) -> Self {
        if tol.is_empty() {
            return Expected::exact(v);
        }
        Expected::Near {
            want: v.iter().map(|&x| f64::from(x)).collect(),
            tol: tol.to_vec(),
        }
    }
    fn is_float(&self) -> bool {
        match self {
            Expected::Exact { float, .. } => *float,
            Expected::Near { .. } => true,
        }
    }
}

/// Little-endian elements of `bytes` (any alignment).
pub fn vec_of<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// The bytes of `v`.
pub fn bytes_of<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// The uniform's `a`, `b` and `c`.
pub fn uniform_of(bytes: &[u8]) -> (u32, i32, f32) {
    let w: Vec<u32> = vec_of(bytes);
    (w[0], w[1] as i32, f32::from_bits(w[2]))
}

/// One generated case, as its module describes it.
pub struct Case {
    pub name: &'static str,
    /// The `graph!` source of the fused graph (the unfused one adds
    /// `fuse off;`).
    pub source: &'static str,
    pub inputs: &'static [In],
    /// Also run at sizes around 65,535 workgroups.
    pub large: bool,
    /// Takes a remainder of `i32`s, which naga 30's GLSL writer leaves to
    /// GLSL's `%` (undefined for a negative operand): not compared on GL.
    pub signed_rem: bool,
    /// Has an output that has no value at `n = 0`: every way to run must
    /// refuse that size with `InvalidProblemSize`.
    pub refuses_zero: bool,
}

/// A difference, or an error where the oracle expected results.
#[derive(Debug)]
pub struct Failure {
    pub case: &'static str,
    pub mode: String,
    pub n: u64,
    pub what: String,
    pub source: &'static str,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case {} ({} at n = {}): {}",
            self.case, self.mode, self.n, self.what
        )
    }
}

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

    /// Runs `case` in every mode at every size and compares.
    pub fn check(
        &mut self,
        case: &Case,
        fused: &Graph,
        unfused: &Graph,
        typed: Typed<'_>,
        oracle: Oracle<'_>,
    ) {
        if case.signed_rem && self.gpu.adapter().backend == wgpu::Backend::Gl {
            self.skipped += 1;
            return;
        }
        self.graphs += 1;
        modes::check(self, case, fused, unfused, typed, oracle);
    }

    fn fail(&mut self, case: &Case, mode: &str, n: u64, what: String) {
        self.failures.push(Failure {
            case: case.name,
            mode: mode.to_owned(),
            n,
            what,
            source: case.source,
        });
    }
}

/// Checks every case of this build; the failures, each printed with its
/// graph once.
pub fn check_all(ctx: &mut Ctx) {
    for check in CASES {
        check(ctx);
    }
}
