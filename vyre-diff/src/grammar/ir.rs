//! The generated graph as data: buffers, nodes and element expressions.
//! `render.rs` writes it as `graph!` source and as the oracle in plain
//! Rust; `random.rs` builds it from a seed; `edit.rs` shrinks it.

/// An element type. Integer arithmetic wraps as WGSL defines; `f32`
/// values stay exactly representable (see [`Bits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    U32,
    I32,
    F32,
}

impl Ty {
    pub fn wgsl(self) -> &'static str {
        match self {
            Ty::U32 => "u32",
            Ty::I32 => "i32",
            Ty::F32 => "f32",
        }
    }
    pub fn rust(self) -> &'static str {
        self.wgsl()
    }
}

/// How a buffer is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Input,
    InOut,
    Intermediate,
    Output,
}

/// A buffer's length in elements at problem size `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// `n`.
    N,
    /// `1` (a whole reduction's result).
    One,
    /// `n / k`, rounded up (one value per row of `k` columns).
    PerCols(u32),
    /// A constant number of rows.
    Rows(u32),
}

impl Len {
    pub fn at(self, n: usize) -> usize {
        match self {
            Len::N => n,
            Len::One => 1,
            Len::PerCols(k) => n.div_ceil(k as usize),
            Len::Rows(r) => r as usize,
        }
    }
    pub fn decl(self) -> String {
        match self {
            Len::N => "n".into(),
            Len::One => "1".into(),
            Len::PerCols(k) => format!("n / {k}"),
            Len::Rows(r) => format!("{r}"),
        }
    }
}

/// Exactness of an `f32` value: a multiple of `2^-frac` below `2^int` in
/// magnitude, exact in `f32` while `int + frac <= 24`. `None` marks a value
/// that was rounded (a float sum), which element-wise nodes never read.
pub type Bits = Option<(u8, u8)>;

#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub class: Class,
    pub ty: Ty,
    pub len: Len,
    /// For `f32` buffers: what every element is known to be.
    pub bits: Bits,
}

/// Where an element-wise node reads a slot: at its own index or off it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Own,
    /// `min(i + 1, len - 1)`.
    Next,
    /// `i - 1`, or 0 at 0.
    Prev,
    /// `min(2i, len - 1)`: a stride.
    Stride,
    /// `min(wid.x * (W / 2) + lid.x, len - 1)`: the own-index spelling with
    /// a wrong workgroup width.
    WrongWidth,
    /// Element 0 (of any length).
    First,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl(u32),
    Shr(u32),
    Div(u32),
    Rem(u32),
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Abs,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ne,
    Eq,
}

/// An element expression; every node knows its own type from context.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal: integers as `i64`, floats as multiples of 1/4.
    Lit(Ty, i64),
    /// Slot `s` (a read-only binding) at `at`, of the slot's type.
    Read(usize, At),
    /// The written buffer's own element (an in-place update).
    Own,
    /// A `let` (or `var`) of the statement list.
    Local(usize),
    /// A parameter of the kernel's helper function.
    Param(usize),
    /// The own index, `u32`.
    Index,
    /// `arrayLength` of slot `s` (of length `n`), `u32`.
    Length(usize),
    /// A field of the uniform: `a: u32`, `b: i32`, `c: f32`.
    Uniform(Ty),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Un(UnOp, Box<Expr>),
    /// `select(reject, accept, a cmp b)`; the comparison is over `cty`.
    Select {
        cty: Ty,
        cmp: Cmp,
        a: Box<Expr>,
        b: Box<Expr>,
        accept: Box<Expr>,
        reject: Box<Expr>,
    },
    /// The helper function applied to two values of its type.
    Call(Box<Expr>, Box<Expr>),
    /// `u32 <-> i32` (the same bits).
    Cast(Ty, Box<Expr>),
    /// `f32(x & 255u)` of a `u32`: exact.
    Small(Box<Expr>),
    /// The kernel's `override K: u32`, `u32`.
    Override,
}

/// A local of an element-wise kernel.
#[derive(Clone, Debug)]
pub enum Local {
    /// `let vK: T = e;`
    Let(Ty, Expr),
    /// `var vK: T = e;`, assigned once.
    Var(Ty, Expr),
    /// `var vK: T = otherwise; if a cmp b { vK = then; }`.
    If {
        ty: Ty,
        cty: Ty,
        cmp: Cmp,
        a: Expr,
        b: Expr,
        then: Expr,
        otherwise: Expr,
    },
}

impl Local {
    pub fn ty(&self) -> Ty {
        match self {
            Local::Let(t, _) | Local::Var(t, _) => *t,
            Local::If { ty, .. } => *ty,
        }
    }
}

/// How the kernel spells its own index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexForm {
    /// `g.x`.
    Plain,
    /// `g.x + g.y * nwg.x * W` (the fold-safe spelling).
    Folded,
    /// `wid.x * W + lid.x`.
    WidLid,
    /// Through a helper `fn own(g: vec3<u32>) -> u32`.
    Helper,
    /// `var i: u32 = g.x;` assigned once.
    Var,
}

/// The bounds check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// `if i < arrayLength(&d) { .. }`.
    Wrap,
    /// `if i >= arrayLength(&d) { return; }`.
    Return,
}

/// A helper `fn h(a: T, b: T) -> T { return body; }`, in the kernel or
/// in a module of the graph that the kernel imports.
#[derive(Clone, Debug)]
pub struct Helper {
    pub ty: Ty,
    pub body: Expr,
    pub in_module: bool,
}

/// `override K: u32 = default;`, set by the node's `with { K = .. }` or not.
#[derive(Clone, Copy, Debug)]
pub struct Override {
    pub default: u32,
    pub with: Option<u32>,
}

impl Override {
    pub fn value(self) -> u32 {
        self.with.unwrap_or(self.default)
    }
}

/// An element-wise-shaped kernel and its node: reads its slots, writes
/// `dst` at its own index.
#[derive(Clone, Debug)]
pub struct Map {
    /// Buffers bound read-only, as `s0`, `s1`, ...
    pub slots: Vec<usize>,
    /// The buffer written, as `d`.
    pub dst: usize,
    /// `d` is also read (at its own index): an in-place update.
    pub in_place: bool,
    pub uniform: bool,
    pub workgroup: u32,
    pub index: IndexForm,
    pub guard: Guard,
    pub helper: Option<Helper>,
    pub constant: Option<Override>,
    pub locals: Vec<Local>,
    pub value: Expr,
    /// WGSL as Rust tokens (`wgsl { .. }`) rather than a string.
    pub tokens: bool,
    /// Accumulates into `dst` with atomics instead of storing at its own
    /// index.
    pub atomic: Option<Atomic>,
}

/// `atomicAdd|Max|Min(&d[key % bins], value)`: `dst` holds `bins`
/// accumulators of `u32` or `i32`, cleared by the node before.
#[derive(Clone, Debug)]
pub struct Atomic {
    pub op: ReduceOp,
    /// A `u32` expression of the element.
    pub key: Expr,
    pub bins: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// How a reduction or scan splits its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Whole,
    /// `over [n / k, k]`.
    Cols(u32),
    /// `over [r, n / r]`.
    Rows(u32),
}

#[derive(Clone, Debug)]
pub enum Node {
    Map(Map),
    /// `d[i] = value` over the whole of `dst` (a constant length): the
    /// accumulators' start.
    Clear {
        dst: usize,
        value: i64,
    },
    Reduce {
        op: ReduceOp,
        src: usize,
        dst: usize,
        shape: Shape,
    },
    Scan {
        op: ReduceOp,
        inclusive: bool,
        src: usize,
        dst: usize,
        shape: Shape,
    },
}

impl Node {
    pub fn dst(&self) -> usize {
        match self {
            Node::Map(m) => m.dst,
            Node::Clear { dst, .. } | Node::Reduce { dst, .. } | Node::Scan { dst, .. } => *dst,
        }
    }
    /// Buffers the node reads.
    pub fn reads(&self) -> Vec<usize> {
        match self {
            Node::Map(m) => {
                let mut r = m.slots.clone();
                if m.in_place {
                    r.push(m.dst);
                }
                r
            }
            Node::Reduce { src, .. } | Node::Scan { src, .. } => vec![*src],
            Node::Clear { .. } => Vec::new(),
        }
    }
}

/// A whole generated graph.
#[derive(Clone, Debug)]
pub struct Graph {
    /// The case's name: its seed and the edits that shrank it.
    pub name: String,
    pub buffers: Vec<Buffer>,
    pub uniform: bool,
    pub nodes: Vec<Node>,
    /// Also run at sizes around 65,535 workgroups (slow on a CPU adapter).
    pub large: bool,
    /// Kernels read only at their own index and never compute with it: the
    /// shape that fuses whole and stacks in batches.
    pub elementwise: bool,
}
