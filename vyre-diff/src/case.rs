//! The ground of the run: what a generated case says about itself and what
//! its outputs must be, and the byte conversions its oracle uses.

/// A host input's kind, in declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum In {
    U32,
    I32,
    F32,
    /// `struct P { a: u32, b: i32, c: f32, e: u32 }`.
    Uniform,
    /// Elements `struct E { a: u32, b: i32, c: f32 }`.
    Struct,
}

/// The oracle's `struct E { a: u32, b: i32, c: f32 }`, an element of a
/// generated input.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct E {
    pub a: u32,
    pub b: i32,
    pub c: f32,
}

/// What one output must be.
#[derive(Clone, Debug)]
pub enum Expected {
    /// These bytes; for `f32` elements equal as numbers (`-0.0 == 0.0`).
    Exact { bytes: Vec<u8>, float: bool },
    /// A rounded float result: each element within `tol` of `want`.
    Near { want: Vec<f64>, tol: Vec<f64> },
    /// The items of an append buffer, in any order.
    Multiset { bytes: Vec<u8>, float: bool },
}

/// What a run at one size must give.
#[derive(Clone, Debug)]
pub struct Want {
    /// Each host output, in declaration order.
    pub outputs: Vec<Expected>,
    /// An append buffer without `grow` that overflows, and its count:
    /// then every way to run fails with `AppendOverflow` naming them.
    pub overflow: Option<(&'static str, u64)>,
    /// Each loop's iterations that did work and whether its condition
    /// stopped it.
    pub loops: Vec<(u32, bool)>,
}

impl From<Vec<Expected>> for Want {
    fn from(outputs: Vec<Expected>) -> Self {
        Want {
            outputs,
            overflow: None,
            loops: Vec::new(),
        }
    }
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
    pub fn multiset<T: Elem>(v: &[T]) -> Self {
        Expected::Multiset {
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
    pub(crate) fn is_float(&self) -> bool {
        match self {
            Expected::Exact { float, .. } | Expected::Multiset { float, .. } => *float,
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
