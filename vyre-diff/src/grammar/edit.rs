//! Smaller variants of a generated graph, for shrinking a failure. A case
//! is named by its seed and the edits applied in order, e.g. `17/d2/v0.1`:
//!
//! - `dK`: drop node `K` and every later node that reads what it wrote;
//! - `vK.J`: node `K`'s stored value becomes its `J`th operand of the
//!   same type;
//! - `lK`: node `K` loses its locals (their uses become literals);
//! - `pK`: node `K` spelled plainly: `g.x`, a wrapping bounds check, no
//!   helper and no override (their uses inlined), a string kernel, 64
//!   invocations a workgroup;
//! - `s`: no sizes around 65,535 workgroups.
//!
//! Every edit keeps the graph valid: unused slots are unbound, buffers
//! nobody writes or reads are dropped, classes are chosen again.

use super::ir::*;
use super::random::{Rng, finish, for_local, generate, visit};

/// The graph a case name describes, or why it describes none.
pub fn case(name: &str) -> Result<Graph, String> {
    let mut parts = name.split('/');
    let seed = parts
        .next()
        .and_then(|s| s.strip_prefix('s').unwrap_or(s).parse::<u64>().ok())
        .ok_or_else(|| format!("`{name}`: a case starts with its seed"))?;
    let mut g = generate(seed);
    let mut edited = false;
    for edit in parts {
        apply(&mut g, edit).ok_or_else(|| format!("`{name}`: edit `{edit}` does not apply"))?;
        g.name = format!("{}/{edit}", g.name);
        edited = true;
    }
    if edited {
        // Inputs an edit left unread are read again; classes chosen anew.
        finish(&mut Rng::new(seed ^ 0x5eed), &mut g);
    }
    Ok(g)
}

/// Every single edit that applies to `g`, the most shrinking first.
pub fn candidates(g: &Graph) -> Vec<String> {
    let mut v = proposals(g);
    v.retain(|e| apply(&mut g.clone(), e).is_some());
    v
}

/// The edits to try, some of which may not apply (dropping the first node
/// of a chain drops the whole chain).
fn proposals(g: &Graph) -> Vec<String> {
    let mut v = Vec::new();
    for k in (0..g.nodes.len()).rev() {
        if g.nodes.len() > 1 {
            v.push(format!("d{k}"));
        }
    }
    if g.large {
        v.push("s".into());
    }
    for (k, node) in g.nodes.iter().enumerate() {
        let Node::Map(m) = node else { continue };
        if !m.locals.is_empty() {
            v.push(format!("l{k}"));
        }
        for j in 0..operands(&m.value).len() {
            v.push(format!("v{k}.{j}"));
        }
        let plain = m.index == IndexForm::Plain
            && m.guard == Guard::Wrap
            && m.helper.is_none()
            && m.constant.is_none()
            && !m.tokens
            && m.workgroup == 64;
        if !plain {
            v.push(format!("p{k}"));
        }
    }
    v
}

/// The operands of `e` that have its type.
fn operands(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Bin(_, a, b) | Expr::Call(a, b) => vec![a, b],
        Expr::Un(_, a) => vec![a],
        Expr::Select { accept, reject, .. } => vec![accept, reject],
        _ => Vec::new(),
    }
}

fn apply(g: &mut Graph, edit: &str) -> Option<()> {
    let (kind, rest) = edit.split_at(1);
    match kind {
        "s" => g.large = false,
        "d" => drop_node(g, rest.parse().ok()?)?,
        "v" => {
            let (k, j) = rest.split_once('.')?;
            let m = map_mut(g, k.parse().ok()?)?;
            let next = Expr::clone(operands(&m.value).get(j.parse::<usize>().ok()?)?);
            m.value = next;
        }
        "l" => {
            let m = map_mut(g, rest.parse().ok()?)?;
            let types: Vec<Ty> = m.locals.iter().map(Local::ty).collect();
            m.locals.clear();
            replace_locals(&mut m.value, &types);
        }
        "p" => {
            let m = map_mut(g, rest.parse().ok()?)?;
            m.index = IndexForm::Plain;
            m.guard = Guard::Wrap;
            m.tokens = false;
            m.workgroup = 64;
            if let Some(c) = m.constant.take() {
                let v = i64::from(c.value());
                let mut fix = |e: &mut Expr| replace_override(e, v);
                fix(&mut m.value);
                for l in &mut m.locals {
                    match l {
                        Local::Let(_, e) | Local::Var(_, e) => fix(e),
                        Local::If {
                            a,
                            b,
                            then,
                            otherwise,
                            ..
                        } => [a, b, then, otherwise].into_iter().for_each(&mut fix),
                    }
                }
            }
            if m.helper.take().is_some() {
                inline_calls(&mut m.value);
                for l in &mut m.locals {
                    match l {
                        Local::Let(_, e) | Local::Var(_, e) => inline_calls(e),
                        Local::If {
                            a,
                            b,
                            then,
                            otherwise,
                            ..
                        } => [a, b, then, otherwise].into_iter().for_each(inline_calls),
                    }
                }
            }
        }
        _ => return None,
    }
    tidy(g);
    Some(())
}

fn map_mut(g: &mut Graph, k: usize) -> Option<&mut Map> {
    match g.nodes.get_mut(k)? {
        Node::Map(m) => Some(m),
        _ => None,
    }
}

fn replace_locals(e: &mut Expr, types: &[Ty]) {
    if let Expr::Local(k) = e {
        *e = Expr::Lit(types[*k], 0);
        return;
    }
    for_children(e, &mut |c| replace_locals(c, types));
}

/// The override becomes a literal of its value.
fn replace_override(e: &mut Expr, v: i64) {
    if let Expr::Override = e {
        *e = Expr::Lit(Ty::U32, v);
        return;
    }
    for_children(e, &mut |c| replace_override(c, v));
}

/// A call of the helper becomes its first argument.
fn inline_calls(e: &mut Expr) {
    if let Expr::Call(a, _) = e {
        *e = (**a).clone();
        inline_calls(e);
        return;
    }
    for_children(e, &mut inline_calls);
}

fn for_children(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match e {
        Expr::Bin(_, a, b) | Expr::Call(a, b) => {
            f(a);
            f(b);
        }
        Expr::Un(_, a) | Expr::Cast(_, a) | Expr::Small(a) => f(a),
        Expr::Select {
            a,
            b,
            accept,
            reject,
            ..
        } => {
            f(a);
            f(b);
            f(accept);
            f(reject);
        }
        _ => {}
    }
}

/// Drops node `k` and, transitively, every later node reading what a
/// dropped node wrote (unless it is the inout, which still holds its input).
fn drop_node(g: &mut Graph, k: usize) -> Option<()> {
    if k >= g.nodes.len() || g.nodes.len() < 2 {
        return None;
    }
    let mut gone = vec![false; g.nodes.len()];
    gone[k] = true;
    // Accumulators and the node clearing them go together.
    let accumulates = |n: &Node, dst: usize| match n {
        Node::Map(m) => m.atomic.is_some() && m.dst == dst,
        Node::Flow(f) => matches!(f.into, Target::Bins { dst: d, .. } if d == dst),
        Node::Frontier(l) => l.acc == dst,
        _ => false,
    };
    let pair = |n: &Node, dst: usize| match n {
        Node::Clear { dst: d, .. } => *d == dst,
        n => accumulates(n, dst),
    };
    let cleared = match &g.nodes[k] {
        Node::Clear { dst, .. } => Some(*dst),
        n if accumulates(n, n.dst()) => Some(n.dst()),
        _ => None,
    };
    if let Some(dst) = cleared {
        for (j, n) in g.nodes.iter().enumerate() {
            gone[j] |= pair(n, dst);
        }
    }
    for later in k + 1..g.nodes.len() {
        let reads = g.nodes[later].reads();
        gone[later] = (0..later).any(|e| {
            gone[e]
                && g.nodes[e]
                    .writes()
                    .iter()
                    .any(|w| g.buffers[*w].class != Class::InOut && reads.contains(w))
        });
    }
    let mut i = 0;
    g.nodes.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    (!g.nodes.is_empty()).then_some(())
}

/// Unbinds unused slots, drops buffers nobody uses (but the first input,
/// which gives `n`), and renumbers.
fn tidy(g: &mut Graph) {
    for node in &mut g.nodes {
        if let Node::Map(m) = node {
            let mut used = vec![false; m.slots.len()];
            let mut mark = |e: &Expr| {
                if let Expr::Read(s, _) | Expr::Length(s) | Expr::Field(s, ..) = e {
                    used[*s] = true;
                }
            };
            visit(&m.value, &mut mark);
            m.locals.iter().for_each(|l| for_local(l, &mut mark));
            let renumber: Vec<Option<usize>> = used
                .iter()
                .scan(0, |next, &u| {
                    let at = u.then_some(*next);
                    *next += usize::from(u);
                    Some(at)
                })
                .collect();
            m.slots = m
                .slots
                .iter()
                .zip(&used)
                .filter(|(_, u)| **u)
                .map(|(s, _)| *s)
                .collect();
            renumber_slots(&mut m.value, &renumber);
            for l in &mut m.locals {
                match l {
                    Local::Let(_, e) | Local::Var(_, e) => renumber_slots(e, &renumber),
                    Local::If {
                        a,
                        b,
                        then,
                        otherwise,
                        ..
                    } => [a, b, then, otherwise]
                        .into_iter()
                        .for_each(|e| renumber_slots(e, &renumber)),
                }
            }
            let mut uniform = false;
            visit(&m.value, &mut |e| uniform |= matches!(e, Expr::Uniform(_)));
            m.locals
                .iter()
                .for_each(|l| for_local(l, &mut |e| uniform |= matches!(e, Expr::Uniform(_))));
            m.uniform = uniform;
        }
    }
    let used: Vec<bool> = (0..g.buffers.len())
        .map(|b| {
            b == 0
                || g.nodes
                    .iter()
                    .any(|n| n.writes().contains(&b) || n.reads().contains(&b))
        })
        .collect();
    let mut at = Vec::new();
    let mut next = 0;
    for &u in &used {
        at.push(next);
        next += usize::from(u);
    }
    let mut i = 0;
    g.buffers.retain(|_| {
        i += 1;
        used[i - 1]
    });
    for node in &mut g.nodes {
        for b in node.buffers_mut() {
            *b = at[*b];
        }
    }
}

fn renumber_slots(e: &mut Expr, to: &[Option<usize>]) {
    match e {
        Expr::Read(s, _) | Expr::Length(s) | Expr::Field(s, ..) => *s = to[*s].unwrap_or(0),
        _ => for_children(e, &mut |c| renumber_slots(c, to)),
    }
}
