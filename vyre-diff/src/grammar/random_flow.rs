//! Random data-dependent parts of a graph: append buffers filled from a
//! buffer and consumed `over count(..)` or by `grid indirect(..)`, and the
//! two self-stopping loops (`until empty(..)` over two frontiers, `until
//! zero(..)` on a flag). Each is a bundle of buffers and nodes pushed onto
//! the graph; the last node is returned for the caller to push.

use super::ir::*;
use super::rng::Rng;

/// Buffers an append or loop may take its items from: readable, of
/// `types`.
fn sources(g: &Graph, types: &[Ty]) -> Vec<usize> {
    g.readable()
        .into_iter()
        .filter(|&b| types.contains(&g.buffers[b].ty))
        .collect()
}

fn push(g: &mut Graph, ty: Ty, len: Len, append: Option<bool>, bits: Bits) -> usize {
    let name = g.fresh();
    g.buffers.push(Buffer {
        name,
        class: Class::Output,
        ty,
        len,
        bits,
        append,
        fields: false,
    });
    g.buffers.len() - 1
}

/// A step for items of type `ty` whose float values are within `bits`;
/// the bits of what it makes.
fn step(r: &mut Rng, ty: Ty, bits: Bits) -> (Step, Bits) {
    let cmp = r.pick(&[Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ne, Cmp::Eq, Cmp::Gt]);
    match ty {
        Ty::F32 => {
            let (int, frac) = bits.unwrap_or((3, 3));
            let wide = int + 2 + frac.max(2) > 24;
            let (mul, add) = if wide {
                (1, 0)
            } else {
                (r.pick(&[1, 2, -1]), r.below(33) as i64 - 16)
            };
            let against = r.below(33) as i64 - 16;
            let out = if wide {
                (int, frac)
            } else {
                (int + 2, frac.max(2))
            };
            let s = Step {
                cmp,
                against,
                mul,
                add,
                shr: 0,
            };
            (s, Some(out))
        }
        Ty::U32 | Ty::I32 => {
            let against = if ty == Ty::U32 {
                i64::from(r.word() as u32)
            } else {
                i64::from(r.word() as i32)
            };
            let mul = r.pick(&[1, 1, 3, 0x9e37_79b1]);
            let add = if r.chance(50) {
                0
            } else {
                i64::from(r.word() as u16)
            };
            let s = Step {
                cmp,
                against,
                mul,
                add,
                shr: r.pick(&[0, 0, 1, 7]),
            };
            (s, None)
        }
    }
}

/// Whether an append buffer that can overflow is declared already (one a
/// graph at most, so that which one overflows first is clear).
fn overflowing(g: &Graph) -> bool {
    g.buffers
        .iter()
        .any(|b| b.append == Some(false) && b.len != Len::N)
}

/// Bins combining items of type `ty`, cleared by a node pushed here.
fn bins(r: &mut Rng, g: &mut Graph, ty: Ty) -> Target {
    let op = r.pick(&[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min]);
    let bins = r.pick(&[1, 16, 256]);
    let value = match (op, ty) {
        (ReduceOp::Sum, _) | (ReduceOp::Max, Ty::U32) => 0,
        (ReduceOp::Max, _) => i64::from(i32::MIN),
        (ReduceOp::Min, Ty::U32) => i64::from(u32::MAX),
        (ReduceOp::Min, _) => i64::from(i32::MAX),
    };
    let dst = push(g, ty, Len::Rows(bins), None, None);
    g.nodes.push(Node::Clear { dst, value });
    Target::Bins { dst, op, bins }
}

/// An append of the items of a buffer that pass a test, and now and then
/// a node consuming them (`over count(..)` or `grid indirect(..)`) into a
/// second append buffer or into bins.
pub fn flow(r: &mut Rng, g: &mut Graph) -> Option<Node> {
    let from = sources(g, &[Ty::U32, Ty::I32, Ty::F32]);
    if from.is_empty() {
        return None;
    }
    let src = r.pick(&from);
    let ty = g.buffers[src].ty;
    let (first_step, bits) = step(r, ty, g.buffers[src].bits);
    let consumed = r.chance(55);
    let (cap, grow) = if consumed || overflowing(g) && r.chance(70) {
        (Len::N, false)
    } else {
        let cap = r.pick(&[Len::N, Len::PerCols(2), Len::PerCols(4), Len::Rows(16)]);
        (cap, cap != Len::N && r.chance(50))
    };
    let list = push(g, ty, cap, Some(grow), bits);
    let first = Flow {
        from: Items::Buffer(src),
        step: first_step,
        into: Target::Append(list),
        ty,
        workgroup: r.pick(&[64, 64, 128, 256]),
    };
    if !consumed {
        return Some(Node::Flow(first));
    }
    g.nodes.push(Node::Flow(first));
    let picked = r.pick(&[64, 64, 256]);
    let indirect = r.chance(40);
    // An indirect grid is the user's: one over 65,535 workgroups in x is
    // refused (`GridTooLarge`, as documented and tested in
    // tests/data_dependent/append.rs), so the one written here stays under
    // it at every size the run uses (4,194,305 / 256 = 16,385 workgroups).
    let workgroup = if indirect { 256 } else { picked };
    let from = if indirect {
        let args = push(g, Ty::U32, Len::Rows(3), None, None);
        g.nodes.push(Node::Args {
            list,
            args,
            workgroup,
        });
        Items::Indirect { list, args }
    } else {
        Items::Count(list)
    };
    let (second, bits) = step(r, ty, bits);
    let into = if ty != Ty::F32 && r.chance(50) {
        bins(r, g, ty)
    } else {
        Target::Append(push(g, ty, Len::N, Some(false), bits))
    };
    Some(Node::Flow(Flow {
        from,
        step: second,
        into,
        ty,
        workgroup,
    }))
}

/// A loop: the frontier loop (`until empty`) or the halving loop (`until
/// zero`), with the nodes that give it its start.
pub fn repeat(r: &mut Rng, g: &mut Graph) -> Option<Node> {
    if r.chance(50) {
        frontier(r, g)
    } else {
        halve(r, g)
    }
}

/// Items of a `u32` buffer shifted right (so that they halve to 0 within
/// a few levels) into the first frontier; bins for their sum; the loop.
fn frontier(r: &mut Rng, g: &mut Graph) -> Option<Node> {
    let from = sources(g, &[Ty::U32]);
    if from.is_empty() {
        return None;
    }
    let src = r.pick(&from);
    let ping = push(g, Ty::U32, Len::N, Some(false), None);
    let (mut s, _) = step(r, Ty::U32, None);
    s.mul = 1;
    s.add = 0;
    s.shr = r.pick(&[20, 24, 26, 28, 29]);
    g.nodes.push(Node::Flow(Flow {
        from: Items::Buffer(src),
        step: s,
        into: Target::Append(ping),
        ty: Ty::U32,
        workgroup: 64,
    }));
    let pong = push(g, Ty::U32, Len::N, Some(false), None);
    let bins = r.pick(&[1, 16, 256]);
    let acc = push(g, Ty::U32, Len::Rows(bins), None, None);
    g.nodes.push(Node::Clear { dst: acc, value: 0 });
    Some(Node::Frontier(Frontier {
        ping,
        pong,
        acc,
        bins,
        k: r.pick(&[1, 2, 3, 5, 8, 12, 40]),
    }))
}

/// A buffer of small `u32`s (an input shifted right), sums cleared to 0,
/// a flag; the loop halving the values.
fn halve(r: &mut Rng, g: &mut Graph) -> Option<Node> {
    let from = sources(g, &[Ty::U32, Ty::I32]);
    if from.is_empty() {
        return None;
    }
    let src = r.pick(&from);
    let value = push(g, Ty::U32, Len::N, None, None);
    let shift = r.pick(&[16, 22, 25, 28, 31]);
    let read = Expr::convert(Expr::Read(0, At::Own), g.buffers[src].ty, Ty::U32);
    let value_of = Expr::Bin(
        BinOp::Shr(shift),
        Box::new(read),
        Box::new(Expr::Lit(Ty::U32, 0)),
    );
    g.nodes
        .push(Node::Map(Map::plain(vec![src], value, value_of)));
    let sum = push(g, Ty::U32, Len::N, None, None);
    g.nodes.push(Node::Clear { dst: sum, value: 0 });
    let flag = push(g, Ty::U32, Len::One, None, None);
    Some(Node::Halve(Halve {
        value,
        sum,
        flag,
        k: r.pick(&[1, 2, 5, 8, 12, 33]),
    }))
}

/// Buffers that must stay `intermediate` whatever `classify` draws: the
/// grid of an indirect node, a loop's frontiers and flag.
pub fn kept_intermediate(g: &Graph, b: usize) -> bool {
    g.nodes.iter().any(|n| match n {
        Node::Args { args, .. } => *args == b,
        Node::Frontier(l) => l.ping == b || l.pong == b,
        Node::Halve(h) => h.flag == b,
        _ => false,
    })
}
