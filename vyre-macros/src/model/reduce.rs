//! Built-in reductions and scans as parsed (`parse/reduce.rs`):
//! `node total = reduce sum(x) -> s;`, `node p = scan exclusive sum(x) -> y;`,
//! optionally with an element type (`reduce sum<f32>(x)`) and per row of a
//! `[rows, cols]` extent (`reduce max(x) over [n / 1024, 1024] -> m`).
//! `check/reduce.rs` lowers each into generated kernels and ordinary nodes.

use syn::Ident;

use super::input::ExtentExpr;

/// How two values combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `sum` (or its synonym `add`): wrapping for integers.
    Sum,
    /// `max`: NaN wins, `+0` over `-0`.
    Max,
    /// `min`: NaN wins, `-0` over `+0`.
    Min,
}

impl ReduceOp {
    /// The operation's name as written in the grammar.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// A reduction, or a scan and which kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    /// `reduce`: one value (per row).
    Reduce,
    /// `scan inclusive`: element `i` combines elements `0..=i`.
    Inclusive,
    /// `scan exclusive`: element `i` combines elements `0..i` (the identity first).
    Exclusive,
}

/// `node label = reduce op[<T>](src) [over [rows, cols]] -> dst;` or
/// `node label = scan inclusive|exclusive op[<T>](src) [over [..]] -> dst;`.
pub struct ReduceDecl {
    /// Where in the graph's node items it stands (`GraphInput::items`
    /// index at parse time): it is lowered in place, in program order.
    pub at: usize,
    /// The `reduce` or `scan` keyword.
    pub keyword: Ident,
    /// The node's label (required).
    pub label: Ident,
    /// Reduction or which scan.
    pub kind: ReduceKind,
    /// The operation.
    pub op: ReduceOp,
    /// `<T>` when written: the element type.
    pub ty: Option<Ident>,
    /// The buffer reduced or scanned.
    pub src: Ident,
    /// `over [rows, cols]`: per row (`None`: the whole buffer).
    pub rows: Option<[ExtentExpr; 2]>,
    /// The buffer written.
    pub dst: Ident,
}
