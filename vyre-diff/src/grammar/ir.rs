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
    /// `Some(grow)` for an append buffer (`append name[len]`, `len` its
    /// capacity).
    pub append: Option<bool>,
    /// Its elements are `struct E { a: u32, b: i32, c: f32 }` (`ty` is
    /// then unused): read a field at a time ([`Expr::Field`]).
    pub fields: bool,
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

impl Cmp {
    /// The operator, as WGSL and Rust spell it.
    pub fn op(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ne => "!=",
            Cmp::Eq => "==",
        }
    }
}

/// An element expression; every node knows its own type from context.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal: integers as `i64`, floats as multiples of 1/4.
    Lit(Ty, i64),
    /// Slot `s` (a read-only binding) at `at`, of the slot's type.
    Read(usize, At),
    /// Field `a: u32`, `b: i32` or `c: f32` (by type) of struct slot `s`
    /// at `at`.
    Field(usize, At, Ty),
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

impl Map {
    /// `d[i] = value` over `slots`, spelled plainly: `g.x`, a wrapping
    /// bounds check, 64 invocations a workgroup, no helper, override or
    /// locals, a string kernel.
    pub fn plain(slots: Vec<usize>, dst: usize, value: Expr) -> Map {
        Map {
            slots,
            dst,
            in_place: false,
            uniform: false,
            workgroup: 64,
            index: IndexForm::Plain,
            guard: Guard::Wrap,
            helper: None,
            constant: None,
            locals: Vec::new(),
            value,
            tokens: false,
            atomic: None,
        }
    }
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
    /// An append, or a consumer of appended items.
    Flow(Flow),
    /// `args[0..3] = (ceil(items(list) / workgroup), 1, 1)`, one invocation:
    /// the grid of a later `grid indirect(args)` node.
    Args {
        list: usize,
        args: usize,
        workgroup: u32,
    },
    Frontier(Frontier),
    Halve(Halve),
}

impl Node {
    /// The buffer the node writes (of a loop, the one it leaves results in).
    pub fn dst(&self) -> usize {
        match self {
            Node::Map(m) => m.dst,
            Node::Clear { dst, .. } | Node::Reduce { dst, .. } | Node::Scan { dst, .. } => *dst,
            Node::Flow(f) => f.into.dst(),
            Node::Args { args, .. } => *args,
            Node::Frontier(l) => l.acc,
            Node::Halve(h) => h.sum,
        }
    }
    /// Every buffer the node writes.
    pub fn writes(&self) -> Vec<usize> {
        match self {
            Node::Frontier(l) => vec![l.ping, l.pong, l.acc],
            Node::Halve(h) => vec![h.value, h.sum, h.flag],
            _ => vec![self.dst()],
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
            Node::Flow(f) => match f.from {
                Items::Buffer(b) | Items::Count(b) => vec![b],
                Items::Indirect { list, args } => vec![list, args],
            },
            Node::Args { list, .. } => vec![*list],
            Node::Frontier(l) => vec![l.ping],
            Node::Halve(h) => vec![h.value, h.sum],
        }
    }
    /// Every buffer index the node holds, to renumber them.
    pub fn buffers_mut(&mut self) -> Vec<&mut usize> {
        match self {
            Node::Map(m) => {
                let mut v: Vec<&mut usize> = m.slots.iter_mut().collect();
                v.push(&mut m.dst);
                v
            }
            Node::Reduce { src, dst, .. } | Node::Scan { src, dst, .. } => vec![src, dst],
            Node::Clear { dst, .. } => vec![dst],
            Node::Flow(f) => {
                let mut v = match &mut f.from {
                    Items::Buffer(b) | Items::Count(b) => vec![b],
                    Items::Indirect { list, args } => vec![list, args],
                };
                v.push(match &mut f.into {
                    Target::Append(b) | Target::Bins { dst: b, .. } => b,
                });
                v
            }
            Node::Args { list, args, .. } => vec![list, args],
            Node::Frontier(l) => vec![&mut l.ping, &mut l.pong, &mut l.acc],
            Node::Halve(h) => vec![&mut h.value, &mut h.sum, &mut h.flag],
        }
    }
    /// Whether the node is data-dependent: an append, its consumers, an
    /// indirect grid, a loop.
    pub fn is_flow(&self) -> bool {
        matches!(
            self,
            Node::Flow(_) | Node::Args { .. } | Node::Frontier(_) | Node::Halve(_)
        )
    }
    /// Whether the node is a `repeat up to K .. until ..` loop.
    pub fn is_loop(&self) -> bool {
        matches!(self, Node::Frontier(_) | Node::Halve(_))
    }
}

/// What happens to an item on its way into an append buffer or bins: kept
/// when `item cmp against`, then `item * mul + add` (wrapping for
/// integers, which then shift right by `shr`; exact for `f32`, whose `mul`
/// is 1, 2 or -1 and `add` a multiple of 1/4, in quarters).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub cmp: Cmp,
    pub against: i64,
    pub mul: i64,
    pub add: i64,
    pub shr: u32,
}

/// Where a data-dependent node's items come from.
#[derive(Clone, Copy, Debug)]
pub enum Items {
    /// Every element of a buffer of length `n` (`over n`).
    Buffer(usize),
    /// The items of an append buffer (`over count(list)`).
    Count(usize),
    /// The items of an append buffer, launched by `grid indirect(args)`.
    Indirect { list: usize, args: usize },
}

/// Where its items go.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// Appended to an append buffer.
    Append(usize),
    /// Combined with `atomicAdd|Max|Min` into `bins` accumulators, at the
    /// item (as `u32` bits) modulo `bins`.
    Bins { dst: usize, op: ReduceOp, bins: u32 },
}

impl Target {
    pub fn dst(self) -> usize {
        match self {
            Target::Append(b) | Target::Bins { dst: b, .. } => b,
        }
    }
}

/// A data-dependent node: keeps and changes items of `from`, of type `ty`.
#[derive(Clone, Debug)]
pub struct Flow {
    pub from: Items,
    pub step: Step,
    pub into: Target,
    pub ty: Ty,
    pub workgroup: u32,
}

/// `repeat up to k as i until empty(ping(ping, pong)) { .. }` with one
/// node `over count(ping(..))`: every `u32` item adds itself to
/// `acc[item % bins]` and, halved, goes on to the other frontier while
/// it is not 0.
#[derive(Clone, Debug)]
pub struct Frontier {
    pub ping: usize,
    pub pong: usize,
    pub acc: usize,
    pub bins: u32,
    pub k: u32,
}

/// `repeat up to k as i until zero(flag) { .. }` with one node `over n`
/// that adds each `value` to `sum` and halves it, setting `flag` while a
/// halved value is not 0 (a do-while).
#[derive(Clone, Debug)]
pub struct Halve {
    pub value: usize,
    pub sum: usize,
    pub flag: usize,
    pub k: u32,
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

impl Graph {
    /// Buffers an element-wise node may read at any index: written or
    /// provided, of length `n`, exact.
    pub fn readable(&self) -> Vec<usize> {
        (0..self.buffers.len())
            .filter(|&b| {
                let buf = &self.buffers[b];
                buf.len == Len::N
                    && buf.append.is_none()
                    && !buf.fields
                    && (buf.ty != Ty::F32 || buf.bits.is_some())
            })
            .collect()
    }

    /// A buffer name no buffer of `g` has: `t0`, `t1`, ...
    pub fn fresh(&self) -> String {
        (0..)
            .map(|j| format!("t{j}"))
            .find(|n| !self.buffers.iter().any(|b| &b.name == n))
            .unwrap_or_default()
    }
}

impl Expr {
    /// `1u` where f32 slot `s` is above 0, else `0u`: reads a float into an
    /// integer exactly.
    pub fn positive(s: usize, at: At) -> Expr {
        Expr::Select {
            cty: Ty::F32,
            cmp: Cmp::Gt,
            a: Box::new(Expr::Read(s, at)),
            b: Box::new(Expr::Lit(Ty::F32, 0)),
            accept: Box::new(Expr::Lit(Ty::U32, 1)),
            reject: Box::new(Expr::Lit(Ty::U32, 0)),
        }
    }

    /// `e` as a value of type `to`, exactly.
    pub fn convert(e: Expr, from: Ty, to: Ty) -> Expr {
        match (from, to) {
            (a, b) if a == b => e,
            (Ty::U32, Ty::I32) | (Ty::I32, Ty::U32) => Expr::Cast(to, Box::new(e)),
            (Ty::U32, Ty::F32) => Expr::Small(Box::new(e)),
            (Ty::I32, Ty::F32) => Expr::Small(Box::new(Expr::Cast(Ty::U32, Box::new(e)))),
            (Ty::F32, _) => {
                let Expr::Read(s, at) = e else {
                    unreachable!("only reads are converted")
                };
                Expr::convert(Expr::positive(s, at), Ty::U32, to)
            }
            _ => unreachable!("every pair of types is listed"),
        }
    }
}
