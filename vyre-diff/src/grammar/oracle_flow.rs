//! The oracle of the data-dependent parts: appends as `Vec::push` in the
//! order of the source (the device's order differs; outputs are compared
//! as multisets and bins combine commutatively), consumers over what was
//! appended, and the loops run as the device's gates define them, with
//! what each loop reports.

use std::fmt::Write;

use super::ir::*;

/// Rust for a literal of type `ty` (floats in quarters).
fn literal(ty: Ty, v: i64) -> String {
    match ty {
        Ty::F32 => format!("({:?}f32)", v as f64 / 4.0),
        _ => format!("({v}i64 as {})", ty.rust()),
    }
}

/// The test and the value of a step over `x`.
fn step_rust(s: &Step, ty: Ty) -> (String, String) {
    let keep = format!("x {} {}", s.cmp.op(), literal(ty, s.against));
    let value = match ty {
        Ty::F32 => format!("x * ({}f32) + {}", s.mul, literal(ty, s.add)),
        _ => format!(
            "x.wrapping_mul({}).wrapping_add({}) >> {}",
            literal(ty, s.mul),
            literal(ty, s.add),
            s.shr
        ),
    };
    (keep, value)
}

fn op_rust(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "crate::grammar::ir::ReduceOp::Sum",
        ReduceOp::Max => "crate::grammar::ir::ReduceOp::Max",
        ReduceOp::Min => "crate::grammar::ir::ReduceOp::Min",
    }
}

/// The oracle's statements for data-dependent node `k`; `false` for
/// other nodes.
pub fn node_rust(s: &mut String, k: usize, node: &Node, g: &Graph) -> bool {
    let name = |b: usize| g.buffers[b].name.clone();
    match node {
        Node::Flow(f) => flow(s, k, f, g),
        Node::Args { .. } => {
            let _ = writeln!(s, "    // node k{k}: the grid of an indirect node");
        }
        Node::Frontier(l) => {
            let (ping, pong, acc) = (name(l.ping), name(l.pong), name(l.acc));
            let _ = writeln!(
                s,
                "    // node k{k}: repeat up to {kk} until empty\n    let mut {pong}: Vec<u32> = Vec::new();\n    {{\n        let mut front: Vec<u32> = {ping}.clone();\n        let mut levels = 0u32;\n        while !front.is_empty() && levels < {kk} {{\n            for &x in &front {{ let b = (x % {bins}) as usize; {acc}[b] = {acc}[b].wrapping_add(x); }}\n            front = front.iter().map(|x| x >> 1).filter(|&y| y != 0).collect();\n            levels += 1;\n        }}\n        loops.push((levels, front.is_empty() && levels < {kk} || levels == 0));\n    }}",
                kk = l.k,
                bins = l.bins
            );
        }
        Node::Halve(h) => {
            let (value, sum, flag) = (name(h.value), name(h.sum), name(h.flag));
            let _ = writeln!(
                s,
                "    // node k{k}: repeat up to {kk} until zero\n    let mut {value} = {value};\n    let mut {sum} = {sum};\n    let {flag}: Vec<u32>;\n    {{\n        let most = {value}.iter().map(|x| 32 - x.leading_zeros()).max().unwrap_or(0);\n        let runs = most.clamp(1, {kk});\n        for i in 0..{value}.len() {{\n            let mut x = {value}[i];\n            for _ in 0..runs {{ {sum}[i] = {sum}[i].wrapping_add(x); x >>= 1; }}\n            {value}[i] = x;\n        }}\n        // Stopped: fewer than K iterations ran (a do-while runs one).
        loops.push((runs, most.max(1) < {kk}));\n        // Set by the last iteration while a halved value was not 0.\n        {flag} = vec![u32::from(runs < most)];\n    }}",
                kk = h.k
            );
        }
        _ => return false,
    }
    true
}

fn flow(s: &mut String, k: usize, f: &Flow, g: &Graph) {
    let t = f.ty.rust();
    let source = match f.from {
        Items::Buffer(b) | Items::Count(b) | Items::Indirect { list: b, .. } => &g.buffers[b].name,
    };
    let (keep, value) = step_rust(&f.step, f.ty);
    let _ = writeln!(s, "    // node k{k}");
    let store = match f.into {
        Target::Append(b) => {
            let d = &g.buffers[b].name;
            let _ = writeln!(s, "    let mut {d}: Vec<{t}> = Vec::new();");
            format!("{d}.push(v);")
        }
        Target::Bins { dst, op, bins } => {
            let d = &g.buffers[dst].name;
            format!(
                "let b = (v as u32 % {bins}) as usize; {d}[b] = <{t} as crate::ops::Value>::combine({}, {d}[b], v);",
                op_rust(op)
            )
        }
    };
    let _ = writeln!(
        s,
        "    for &x in {source}.iter() {{\n        if {keep} {{\n            let v: {t} = {value};\n            {store}\n        }}\n    }}"
    );
    if let Target::Append(b) = f.into {
        let d = &g.buffers[b];
        if d.append == Some(false) {
            let _ = writeln!(
                s,
                "    if {0}.len() > {1} && overflow.is_none() {{ overflow = Some(({0:?}, {0}.len() as u64)); }}",
                d.name,
                d.len.at_expr()
            );
        }
    }
}

/// `crate::Expected` of host output `b`, when it is an append buffer (a
/// multiset).
pub fn expected(b: &Buffer) -> Option<String> {
    b.append
        .map(|_| format!("crate::Expected::multiset(&{})", b.name))
}
