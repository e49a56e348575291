//! A random valid graph from a seed: inputs, element-wise kernels built
//! from a small grammar (see the crate's README for what it covers),
//! reductions and scans, and the classes that make every buffer used.

use super::ir::*;
use super::random_flow;

pub use super::rng::Rng;

const TYPES: [Ty; 3] = [Ty::U32, Ty::I32, Ty::F32];
/// Inputs and uniform floats: multiples of 1/8 in [-4, 4].
const INPUT_BITS: (u8, u8) = (3, 3);
const MAX_BITS: u8 = 24;

/// The graph of `seed`.
pub fn generate(seed: u64) -> Graph {
    let mut r = Rng::new(seed);
    let mut g = Graph {
        name: format!("s{seed}"),
        buffers: Vec::new(),
        uniform: r.chance(35),
        nodes: Vec::new(),
        large: r.chance(15),
        elementwise: false,
    };
    g.elementwise = r.chance(35);
    if g.elementwise {
        g.uniform = false;
    }
    for k in 0..1 + r.below(3) {
        let ty = r.pick(&TYPES);
        g.buffers
            .push(plain(format!("x{k}"), Class::Input, ty, Len::N));
    }
    if r.chance(30) {
        let ty = r.pick(&TYPES);
        g.buffers.push(plain("v".into(), Class::InOut, ty, Len::N));
    }
    if r.chance(25) {
        let mut e = plain("xs".into(), Class::Input, Ty::U32, Len::N);
        e.fields = true;
        g.buffers.push(e);
    }
    for _ in 0..1 + r.below(5) {
        let node = match if g.elementwise { 13 } else { r.below(14) } {
            0 | 1 => reduce(&mut r, &mut g, false),
            2 => reduce(&mut r, &mut g, true),
            3 => accumulate(&mut r, &mut g),
            4 | 5 => random_flow::flow(&mut r, &mut g),
            6 | 7 => random_flow::repeat(&mut r, &mut g),
            _ => None,
        };
        let node = node.unwrap_or_else(|| map(&mut r, &mut g));
        g.nodes.push(node);
    }
    finish(&mut r, &mut g);
    g
}

fn plain(name: String, class: Class, ty: Ty, len: Len) -> Buffer {
    let bits = (ty == Ty::F32).then_some(INPUT_BITS);
    Buffer {
        name,
        class,
        ty,
        len,
        bits,
        append: None,
        fields: false,
    }
}

/// A reduction or scan of a readable buffer into a new one.
fn reduce(r: &mut Rng, g: &mut Graph, scan: bool) -> Option<Node> {
    let sources = g.readable();
    if sources.is_empty() {
        return None;
    }
    // Two reductions of one source now and then: they pair into one pass.
    let previous = g.nodes.iter().rev().find_map(|n| match n {
        Node::Reduce { src, .. } => Some(*src),
        _ => None,
    });
    let src = match previous {
        Some(p) if r.chance(50) => p,
        _ => r.pick(&sources),
    };
    let ty = g.buffers[src].ty;
    let op = r.pick(&[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min]);
    let shape = match r.below(4) {
        0 => Shape::Cols(r.pick(&[1, 4, 64, 100, 256])),
        1 => Shape::Rows(r.pick(&[1, 3, 4])),
        _ => Shape::Whole,
    };
    let len = match (scan, shape) {
        (true, _) => Len::N,
        (false, Shape::Whole) => Len::One,
        (false, Shape::Cols(c)) => Len::PerCols(c),
        (false, Shape::Rows(rows)) => Len::Rows(rows),
    };
    let inclusive = r.chance(50);
    // What element-wise nodes may read of a float result: not a rounded
    // sum, and not a max or min that can be an identity (±inf), which
    // arithmetic turns into NaNs: an exclusive scan's first element, a row
    // that is empty at small sizes.
    let infinite = (scan && !inclusive) || (!scan && matches!(shape, Shape::Rows(_)));
    let bits = match (ty, op) {
        (Ty::F32, ReduceOp::Sum) => None,
        (Ty::F32, _) if infinite => None,
        (Ty::F32, _) => g.buffers[src].bits,
        _ => None,
    };
    let dst = g.buffers.len();
    g.buffers.push(Buffer {
        name: g.fresh(),
        class: Class::Output,
        ty,
        len,
        bits,
        append: None,
        fields: false,
    });
    Some(if scan {
        Node::Scan {
            op,
            inclusive,
            src,
            dst,
            shape,
        }
    } else {
        Node::Reduce {
            op,
            src,
            dst,
            shape,
        }
    })
}

/// Accumulators: a node clearing them (pushed here) and an element-wise
/// node adding to them with atomics (returned). `None` when the node
/// `map` made does not fit (a float, an in-place update, no slot of
/// length `n` for the bounds check), which then stays as it is.
fn accumulate(r: &mut Rng, g: &mut Graph) -> Option<Node> {
    let Node::Map(mut m) = map(r, g) else {
        return None;
    };
    let ty = g.buffers[m.dst].ty;
    let first = m.slots.first().copied();
    let n_slot = first.is_some_and(|s| g.buffers[s].len == Len::N && !g.buffers[s].fields);
    if m.in_place || ty == Ty::F32 || !n_slot {
        return Some(Node::Map(m));
    }
    let op = r.pick(&[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min]);
    let bins = r.pick(&[1, 16, 256]);
    let value = match (op, ty) {
        (ReduceOp::Sum, _) => 0,
        (ReduceOp::Max, Ty::U32) => 0,
        (ReduceOp::Max, _) => i64::from(i32::MIN),
        (ReduceOp::Min, Ty::U32) => i64::from(u32::MAX),
        (ReduceOp::Min, _) => i64::from(i32::MAX),
    };
    let b = &mut g.buffers[m.dst];
    b.len = Len::Rows(bins);
    b.bits = None;
    let slot_ty = g.buffers[m.slots[0]].ty;
    m.atomic = Some(Atomic {
        op,
        key: Expr::convert(Expr::Read(0, At::Own), slot_ty, Ty::U32),
        bins,
    });
    g.nodes.push(Node::Clear { dst: m.dst, value });
    Some(Node::Map(m))
}

/// What an expression may use.
struct Scope<'a> {
    g: &'a Graph,
    slots: &'a [usize],
    own: Option<(Ty, Bits)>,
    uniform: bool,
    helper: Option<Ty>,
    locals: Vec<(Ty, (u8, u8))>,
    /// Inside the helper's body: its two parameters of this type.
    params: Option<Ty>,
    /// Which locals are `let`s of constant expressions.
    local_const: Vec<bool>,
    /// The kernel declares `override K: u32`.
    constant: bool,
}

/// The buffers an element-wise node reads: 1 to 3 readable ones (not
/// `in_place`), now and then the input of struct elements and a
/// reduction's one value (read at element 0).
fn slots(r: &mut Rng, g: &Graph, in_place: Option<usize>) -> Vec<usize> {
    let mut pool = g.readable();
    pool.retain(|&b| Some(b) != in_place);
    // The input of struct elements now and then.
    if let Some(e) = g.buffers.iter().position(|b| b.fields)
        && r.chance(60)
    {
        pool.push(e);
    }
    let mut slots = Vec::new();
    for _ in 0..1 + r.below(3) {
        if pool.is_empty() {
            break;
        }
        let at = r.below(pool.len() as u64) as usize;
        slots.push(pool.remove(at));
    }
    // Now and then a reduction's one value, read at element 0.
    if let Some(s) = (0..g.buffers.len()).find(|&b| {
        let buf = &g.buffers[b];
        buf.len == Len::One && (buf.ty != Ty::F32 || buf.bits.is_some())
    }) && r.chance(40)
    {
        slots.push(s);
    }
    slots
}

/// An element-wise node writing a new buffer, or updating the inout.
fn map(r: &mut Rng, g: &mut Graph) -> Node {
    let inout = g.buffers.iter().position(|b| b.class == Class::InOut);
    let in_place = inout.filter(|_| r.chance(25));
    let slots = slots(r, g, in_place);
    let (dst, ty) = match in_place {
        Some(v) => (v, g.buffers[v].ty),
        None => {
            let ty = r.pick(&TYPES);
            let name = g.fresh();
            g.buffers.push(plain(name, Class::Output, ty, Len::N));
            (g.buffers.len() - 1, ty)
        }
    };
    let helper_ty = r.chance(30).then(|| r.pick(&TYPES));
    let over = r.chance(25).then(|| Override {
        default: r.below(100) as u32,
        with: r.chance(50).then(|| r.below(100) as u32),
    });
    let uniform = g.uniform && r.chance(60);
    let own = in_place.map(|v| (ty, g.buffers[v].bits));
    let mut scope = Scope {
        g,
        slots: &slots,
        own,
        uniform,
        helper: None,
        locals: Vec::new(),
        params: None,
        local_const: Vec::new(),
        constant: over.is_some(),
    };
    let helper = helper_ty.map(|t| {
        scope.params = Some(t);
        let (body, _) = expr(r, &scope, t, 2);
        scope.params = None;
        Helper {
            ty: t,
            body,
            in_module: r.chance(50),
        }
    });
    scope.helper = helper_ty;
    let mut locals = Vec::new();
    for _ in 0..r.below(3) {
        let lt = r.pick(&TYPES);
        let local = local(r, &scope, lt);
        let is_const = matches!(&local.0, Local::Let(_, e) if constant(e, &scope));
        scope.local_const.push(is_const);
        scope.locals.push(local.1);
        locals.push(local.0);
    }
    let (value, bits) = expr(r, &scope, ty, 3);
    let (value, bits) = use_every_slot(g, &slots, &locals, value, ty, bits);
    let mut uses_uniform = false;
    let mut mark = |e: &Expr| uses_uniform |= matches!(e, Expr::Uniform(_));
    visit(&value, &mut mark);
    locals.iter().for_each(|l| for_local(l, &mut mark));
    if let Some(h) = &helper {
        visit(&h.body, &mut mark);
    }
    let workgroup = r.pick(&[64, 64, 64, 128, 256]);
    let forms: &[IndexForm] = if g.elementwise {
        &[IndexForm::Plain, IndexForm::Helper, IndexForm::Var]
    } else {
        &[
            IndexForm::Plain,
            IndexForm::Plain,
            IndexForm::Folded,
            IndexForm::WidLid,
            IndexForm::Helper,
            IndexForm::Var,
        ]
    };
    let index = r.pick(forms);
    let guard = r.pick(&[Guard::Wrap, Guard::Return]);
    let tokens = r.chance(30);
    if in_place.is_none() && ty == Ty::F32 {
        g.buffers[dst].bits = Some(bits);
    } else if let Some(v) = in_place
        && ty == Ty::F32
    {
        let old = g.buffers[v].bits.unwrap_or(INPUT_BITS);
        g.buffers[v].bits = Some((old.0.max(bits.0), old.1.max(bits.1)));
    }
    Node::Map(Map {
        slots,
        dst,
        in_place: in_place.is_some(),
        uniform: uses_uniform,
        workgroup,
        index,
        guard,
        helper,
        constant: over,
        locals,
        value,
        tokens,
        atomic: None,
    })
}

fn local(r: &mut Rng, s: &Scope, ty: Ty) -> (Local, (Ty, (u8, u8))) {
    match r.below(3) {
        0 => {
            let (e, b) = expr(r, s, ty, 2);
            (Local::Let(ty, e), (ty, b))
        }
        1 => {
            let (e, b) = expr(r, s, ty, 2);
            (Local::Var(ty, e), (ty, b))
        }
        _ => {
            let cty = r.pick(&TYPES);
            let (a, _) = expr(r, s, cty, 1);
            let (b, _) = expr(r, s, cty, 1);
            let (then, tb) = expr(r, s, ty, 1);
            let (otherwise, ob) = expr(r, s, ty, 1);
            let cmp = r.pick(&[Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ne, Cmp::Eq]);
            let local = Local::If {
                ty,
                cty,
                cmp,
                a,
                b,
                then,
                otherwise,
            };
            (local, (ty, widest(tb, ob)))
        }
    }
}

fn widest(a: (u8, u8), b: (u8, u8)) -> (u8, u8) {
    (a.0.max(b.0), a.1.max(b.1))
}

/// An expression of type `ty`, at most `depth` operators deep, and (for
/// `f32`) the exactness bound of its value.
fn expr(r: &mut Rng, s: &Scope, ty: Ty, depth: u32) -> (Expr, (u8, u8)) {
    if depth == 0 || r.chance(25) {
        return leaf(r, s, ty);
    }
    match r.below(10) {
        0 => {
            let cty = r.pick(&TYPES);
            let (a, _) = expr(r, s, cty, depth - 1);
            let (b, _) = expr(r, s, cty, depth - 1);
            let (accept, ab) = expr(r, s, ty, depth - 1);
            let (reject, rb) = expr(r, s, ty, depth - 1);
            let cmp = r.pick(&[Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ne, Cmp::Eq]);
            let e = Expr::Select {
                cty,
                cmp,
                a: Box::new(a),
                b: Box::new(b),
                accept: Box::new(accept),
                reject: Box::new(reject),
            };
            (e, widest(ab, rb))
        }
        1 if s.helper == Some(ty) && s.params.is_none() => {
            let (a, ab) = expr(r, s, ty, depth - 1);
            let (b, bb) = expr(r, s, ty, depth - 1);
            // The helper may also return one of its literals.
            let bits = widest(widest(ab, bb), (3, 2));
            (Expr::Call(Box::new(a), Box::new(b)), bits)
        }
        2 => {
            let ops: &[UnOp] = match ty {
                Ty::U32 => &[UnOp::Not],
                Ty::I32 => &[UnOp::Not, UnOp::Neg, UnOp::Abs],
                Ty::F32 => &[UnOp::Neg, UnOp::Abs],
            };
            let op = r.pick(ops);
            let (a, b) = expr(r, s, ty, depth - 1);
            (Expr::Un(op, Box::new(a)), b)
        }
        _ => binary(r, s, ty, depth),
    }
}

fn binary(r: &mut Rng, s: &Scope, ty: Ty, depth: u32) -> (Expr, (u8, u8)) {
    let (a, ab) = expr(r, s, ty, depth - 1);
    let (b, bb) = expr(r, s, ty, depth - 1);
    let mut op = match ty {
        Ty::F32 => {
            // Inside an f32 helper only bit-preserving operations: its
            // callers' arguments bound its result.
            let ops: &[BinOp] = if s.params.is_some() {
                &[BinOp::Min, BinOp::Max]
            } else {
                &[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Min, BinOp::Max]
            };
            r.pick(ops)
        }
        _ => match r.below(12) {
            0 => BinOp::Shl(r.below(32) as u32),
            1 => BinOp::Shr(r.below(32) as u32),
            2 => BinOp::Div(1 + r.below(9) as u32),
            3 => BinOp::Rem(1 + r.below(9) as u32),
            _ => r.pick(&[
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::And,
                BinOp::Or,
                BinOp::Xor,
                BinOp::Min,
                BinOp::Max,
            ]),
        },
    };
    // Operands that are both constant are evaluated when the shader is
    // made, where an overflowing `+`, `-`, `*` or `<<` is an error.
    let overflows = match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul => constant(&a, s) && constant(&b, s),
        BinOp::Shl(_) => constant(&a, s),
        _ => false,
    };
    if overflows {
        op = if ty == Ty::F32 {
            BinOp::Min
        } else {
            BinOp::Xor
        };
    }
    // A shift, division or remainder by a constant has one operand.
    if let BinOp::Shl(_) | BinOp::Shr(_) | BinOp::Div(_) | BinOp::Rem(_) = op {
        return (Expr::Bin(op, Box::new(a), Box::new(Expr::Lit(ty, 0))), ab);
    }
    let bits = match op {
        BinOp::Add | BinOp::Sub => (ab.0.max(bb.0) + 1, ab.1.max(bb.1)),
        BinOp::Mul => (ab.0 + bb.0, ab.1 + bb.1),
        _ => widest(ab, bb),
    };
    if ty == Ty::F32 && bits.0 + bits.1 > MAX_BITS {
        // Would round: the minimum keeps the value exact.
        return (
            Expr::Bin(BinOp::Min, Box::new(a), Box::new(b)),
            widest(ab, bb),
        );
    }
    (Expr::Bin(op, Box::new(a), Box::new(b)), bits)
}

/// A value without operators.
fn leaf(r: &mut Rng, s: &Scope, ty: Ty) -> (Expr, (u8, u8)) {
    let lit = |r: &mut Rng| match ty {
        Ty::U32 => (Expr::Lit(ty, r.below(1000) as i64), (0, 0)),
        Ty::I32 => (Expr::Lit(ty, r.below(1000) as i64 - 500), (0, 0)),
        Ty::F32 => (Expr::Lit(ty, r.below(33) as i64 - 16), (3, 2)),
    };
    if let Some(p) = s.params {
        return if p == ty && r.chance(80) {
            (Expr::Param(r.below(2) as usize), INPUT_BITS)
        } else {
            lit(r)
        };
    }
    let mut options: Vec<(Expr, (u8, u8))> = Vec::new();
    for (k, &b) in s.slots.iter().enumerate() {
        let buf = &s.g.buffers[b];
        let bits = buf.bits.unwrap_or((0, 0));
        let at = if s.g.elementwise {
            At::Own
        } else if buf.len == Len::N {
            r.pick(&[
                At::Own,
                At::Own,
                At::Own,
                At::Next,
                At::Prev,
                At::Stride,
                At::WrongWidth,
                At::First,
            ])
        } else {
            At::First
        };
        let read = Expr::Read(k, at);
        if buf.fields {
            let bits = if ty == Ty::F32 { INPUT_BITS } else { (0, 0) };
            options.push((Expr::Field(k, at, ty), bits));
            continue;
        }
        match (buf.ty, ty) {
            (a, b) if a == b => options.push((read, bits)),
            (Ty::U32, Ty::I32) | (Ty::I32, Ty::U32) => {
                options.push((Expr::Cast(ty, Box::new(read)), (0, 0)))
            }
            (Ty::U32, Ty::F32) => options.push((Expr::Small(Box::new(read)), (8, 0))),
            _ => {}
        }
    }
    if let Some((t, bits)) = s.own
        && t == ty
    {
        options.push((Expr::Own, bits.unwrap_or(INPUT_BITS)));
    }
    for (k, &(t, bits)) in s.locals.iter().enumerate() {
        if t == ty {
            options.push((Expr::Local(k), bits));
        }
    }
    if s.uniform {
        options.push((Expr::Uniform(ty), INPUT_BITS));
    }
    let length = s.slots.iter().position(|&b| s.g.buffers[b].len == Len::N);
    let elementwise = s.g.elementwise;
    let u32_leaf = |r: &mut Rng| match length {
        Some(k) if elementwise || r.chance(50) => Expr::Length(k),
        _ if elementwise => Expr::Lit(Ty::U32, 3),
        _ => Expr::Index,
    };
    if s.constant && s.params.is_none() {
        match ty {
            Ty::U32 => options.push((Expr::Override, (0, 0))),
            Ty::I32 => options.push((Expr::Cast(ty, Box::new(Expr::Override)), (0, 0))),
            Ty::F32 => options.push((Expr::Small(Box::new(Expr::Override)), (8, 0))),
        }
    }
    match ty {
        Ty::U32 => options.push((u32_leaf(r), (0, 0))),
        Ty::I32 => options.push((Expr::Cast(ty, Box::new(u32_leaf(r))), (0, 0))),
        Ty::F32 => options.push((Expr::Small(Box::new(u32_leaf(r))), (8, 0))),
    }
    if r.chance(20) || options.is_empty() {
        return lit(r);
    }
    let at = r.below(options.len() as u64) as usize;
    options.swap_remove(at)
}

/// Classes: a written buffer nobody reads later is an output; one that is
/// read is an intermediate or, now and then, an output too. Every input is
/// read, the inout is bound.
pub fn finish(r: &mut Rng, g: &mut Graph) {
    let unread: Vec<usize> = (0..g.buffers.len())
        .filter(|&b| {
            matches!(g.buffers[b].class, Class::Input | Class::InOut)
                && !g
                    .nodes
                    .iter()
                    .any(|n| n.reads().contains(&b) || n.writes().contains(&b))
        })
        .collect();
    if !unread.is_empty() {
        let slots: Vec<usize> = unread
            .iter()
            .copied()
            .filter(|&b| g.buffers[b].len == Len::N)
            .collect();
        // A name no buffer has (edits keep the names of dropped nodes' peers).
        let name = g.fresh();
        g.buffers.push(plain(name, Class::Output, Ty::U32, Len::N));
        let dst = g.buffers.len() - 1;
        // The sum of every unread slot, as u32 bits.
        let value = (0..slots.len())
            .map(|s| match g.buffers[slots[s]].ty {
                _ if g.buffers[slots[s]].fields => Expr::Field(s, At::Own, Ty::U32),
                Ty::U32 => Expr::Read(s, At::Own),
                Ty::I32 => Expr::Cast(Ty::U32, Box::new(Expr::Read(s, At::Own))),
                Ty::F32 => Expr::positive(s, At::Own),
            })
            .reduce(|a, b| Expr::Bin(BinOp::Add, Box::new(a), Box::new(b)))
            .unwrap_or(Expr::Index);
        g.nodes.push(Node::Map(Map::plain(slots, dst, value)));
    }
    classify(r, g);
    g.uniform = g
        .nodes
        .iter()
        .any(|n| matches!(n, Node::Map(m) if m.uniform));
}

/// Written buffers read by a later node are intermediates (or, one in four,
/// outputs); the rest outputs.
pub fn classify(r: &mut Rng, g: &mut Graph) {
    for b in 0..g.buffers.len() {
        if matches!(g.buffers[b].class, Class::Input | Class::InOut) {
            continue;
        }
        if random_flow::kept_intermediate(g, b) {
            g.buffers[b].class = Class::Intermediate;
            continue;
        }
        let read = g.nodes.iter().any(|n| n.reads().contains(&b));
        g.buffers[b].class = if read && !r.chance(25) {
            Class::Intermediate
        } else {
            Class::Output
        };
    }
}

/// Whether `e` is a constant expression: no value of a run in it.
fn constant(e: &Expr, s: &Scope) -> bool {
    let mut runtime = false;
    visit(e, &mut |x| {
        runtime |= match x {
            Expr::Lit(..) | Expr::Override => false,
            Expr::Local(k) => !s.local_const.get(*k).copied().unwrap_or(false),
            Expr::Bin(..)
            | Expr::Un(..)
            | Expr::Select { .. }
            | Expr::Cast(..)
            | Expr::Small(_) => false,
            _ => true,
        }
    });
    !runtime
}

/// Every slot of `slots` that `value` and `locals` never read joins
/// `value` (wrapping add for integers, max for floats), so that no binding
/// is declared and unused; the new exactness bound of `value`.
pub fn use_every_slot(
    g: &Graph,
    slots: &[usize],
    locals: &[Local],
    value: Expr,
    ty: Ty,
    bits: (u8, u8),
) -> (Expr, (u8, u8)) {
    let mut used = vec![false; slots.len()];
    visit(&value, &mut |e| {
        if let Expr::Read(s, _) | Expr::Length(s) | Expr::Field(s, ..) = e {
            used[*s] = true;
        }
    });
    for l in locals {
        for_local(l, &mut |e| {
            if let Expr::Read(s, _) | Expr::Length(s) | Expr::Field(s, ..) = e {
                used[*s] = true;
            }
        });
    }
    let mut value = value;
    let mut bits = bits;
    for (s, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
        let buf = &g.buffers[slots[s]];
        let at = if buf.len == Len::N {
            At::Own
        } else {
            At::First
        };
        let e = if buf.fields {
            Expr::Field(s, at, ty)
        } else {
            Expr::convert(Expr::Read(s, at), buf.ty, ty)
        };
        let op = if ty == Ty::F32 {
            BinOp::Max
        } else {
            BinOp::Add
        };
        value = Expr::Bin(op, Box::new(value), Box::new(e));
        bits = widest(bits, (8, 3));
    }
    (value, bits)
}

/// Calls `f` on `e` and every expression inside it.
pub fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Bin(op, a, b) => {
            visit(a, f);
            if !matches!(
                op,
                BinOp::Shl(_) | BinOp::Shr(_) | BinOp::Div(_) | BinOp::Rem(_)
            ) {
                visit(b, f);
            }
        }
        Expr::Call(a, b) => {
            visit(a, f);
            visit(b, f);
        }
        Expr::Un(_, a) | Expr::Cast(_, a) | Expr::Small(a) => visit(a, f),
        Expr::Select {
            a,
            b,
            accept,
            reject,
            ..
        } => {
            for x in [a, b, accept, reject] {
                visit(x, f);
            }
        }
        _ => {}
    }
}

/// `visit` over every expression of a local.
pub fn for_local(l: &Local, f: &mut dyn FnMut(&Expr)) {
    match l {
        Local::Let(_, e) | Local::Var(_, e) => visit(e, f),
        Local::If {
            a,
            b,
            then,
            otherwise,
            ..
        } => {
            for x in [a, b, then, otherwise] {
                visit(x, f);
            }
        }
    }
}
