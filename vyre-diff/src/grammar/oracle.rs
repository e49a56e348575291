//! A generated graph as a Rust module: both graphs (`fused::Fused` and
//! `unfused::Unfused`, the same source but for `fuse off;`), the oracle in
//! plain Rust over the same inputs, and the typed call.

use std::fmt::Write;

use super::calls;
use super::ir::*;
use super::oracle_flow;
use super::render::graph_source;

/// Rust for an expression of type `ty` at element `i` (a `usize`).
fn rust(e: &Expr, m: &Map, ty: Ty) -> String {
    let sub = |x: &Expr, t: Ty| rust(x, m, t);
    match e {
        Expr::Lit(Ty::F32, v) => format!("({:?}f32)", *v as f64 / 4.0),
        Expr::Lit(t, v) => format!("({v}{})", t.rust()),
        Expr::Read(s, at) => format!("s{s}[{}]", index(*s, *at, m)),
        Expr::Field(s, at, t) => {
            format!("s{s}[{}].{}", index(*s, *at, m), super::render::field(*t))
        }
        Expr::Own => "d[i]".to_owned(),
        Expr::Local(k) => format!("v{k}"),
        Expr::Param(k) => ["a", "b"][*k].to_owned(),
        Expr::Index => "(i as u32)".to_owned(),
        Expr::Length(s) => format!("(s{s}.len() as u32)"),
        Expr::Uniform(t) => match t {
            Ty::U32 => "p_a".to_owned(),
            Ty::I32 => "p_b".to_owned(),
            Ty::F32 => "p_c".to_owned(),
        },
        Expr::Bin(op, a, b) => {
            let (a, b) = (sub(a, ty), sub(b, ty));
            let float = ty == Ty::F32;
            match op {
                BinOp::Add if float => format!("({a} + {b})"),
                BinOp::Sub if float => format!("({a} - {b})"),
                BinOp::Mul if float => format!("({a} * {b})"),
                BinOp::Add => format!("{a}.wrapping_add({b})"),
                BinOp::Sub => format!("{a}.wrapping_sub({b})"),
                BinOp::Mul => format!("{a}.wrapping_mul({b})"),
                BinOp::And => format!("({a} & {b})"),
                BinOp::Or => format!("({a} | {b})"),
                BinOp::Xor => format!("({a} ^ {b})"),
                BinOp::Shl(s) => format!("{a}.wrapping_shl({s})"),
                BinOp::Shr(s) => format!("{a}.wrapping_shr({s})"),
                BinOp::Div(k) => format!("({a} / {k})"),
                BinOp::Rem(k) => format!("({a} % {k})"),
                BinOp::Min => format!("{a}.min({b})"),
                BinOp::Max => format!("{a}.max({b})"),
            }
        }
        Expr::Un(op, a) => {
            let a = sub(a, ty);
            match (op, ty) {
                (UnOp::Neg, Ty::F32) => format!("(-{a})"),
                (UnOp::Neg, _) => format!("{a}.wrapping_neg()"),
                (UnOp::Abs, Ty::F32) => format!("{a}.abs()"),
                (UnOp::Abs, _) => format!("{a}.wrapping_abs()"),
                (UnOp::Not, _) => format!("(!{a})"),
            }
        }
        Expr::Select {
            cty,
            cmp,
            a,
            b,
            accept,
            reject,
        } => {
            let op = match cmp {
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ne => "!=",
                Cmp::Eq => "==",
            };
            format!(
                "(if {} {op} {} {{ {} }} else {{ {} }})",
                sub(a, *cty),
                sub(b, *cty),
                sub(accept, ty),
                sub(reject, ty)
            )
        }
        Expr::Call(a, b) => format!("h({}, {})", sub(a, ty), sub(b, ty)),
        Expr::Cast(t, a) => {
            let from = if *t == Ty::I32 { Ty::U32 } else { Ty::I32 };
            format!("({} as {})", sub(a, from), t.rust())
        }
        Expr::Small(a) => format!("(({} & 255) as f32)", sub(a, Ty::U32)),
        Expr::Override => format!("({}u32)", m.constant.map_or(0, |c| c.value())),
    }
}

/// The element of slot `s` that `at` reads, at element `i`.
fn index(s: usize, at: At, m: &Map) -> String {
    let last = format!("(s{s}.len() - 1)");
    match at {
        At::Own => "i".to_owned(),
        At::Next => format!("(i + 1).min({last})"),
        At::Prev => "(if i == 0 { 0 } else { i - 1 })".to_owned(),
        At::Stride => format!("(2 * i).min({last})"),
        At::WrongWidth => {
            let w = m.workgroup as usize;
            format!("((i / {w}) * {} + i % {w}).min({last})", w / 2)
        }
        At::First => "0".to_owned(),
    }
}

fn local(k: usize, l: &Local, m: &Map) -> String {
    match l {
        Local::Let(t, e) | Local::Var(t, e) => {
            format!("let v{k}: {} = {};", t.rust(), rust(e, m, *t))
        }
        Local::If {
            ty,
            cty,
            cmp,
            a,
            b,
            then,
            otherwise,
        } => {
            let op = match cmp {
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ne => "!=",
                Cmp::Eq => "==",
            };
            format!(
                "let v{k}: {} = if {} {op} {} {{ {} }} else {{ {} }};",
                ty.rust(),
                rust(a, m, *cty),
                rust(b, m, *cty),
                rust(then, m, *ty),
                rust(otherwise, m, *ty)
            )
        }
    }
}

fn shape_rust(shape: Shape) -> String {
    match shape {
        Shape::Whole => "crate::grammar::ir::Shape::Whole".into(),
        Shape::Cols(k) => format!("crate::grammar::ir::Shape::Cols({k})"),
        Shape::Rows(r) => format!("crate::grammar::ir::Shape::Rows({r})"),
    }
}

fn op_rust(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "crate::grammar::ir::ReduceOp::Sum",
        ReduceOp::Max => "crate::grammar::ir::ReduceOp::Max",
        ReduceOp::Min => "crate::grammar::ir::ReduceOp::Min",
    }
}

/// The oracle's statements for node `k`, computing its destination.
fn node_rust(s: &mut String, k: usize, node: &Node, g: &Graph) {
    if oracle_flow::node_rust(s, k, node, g) {
        return;
    }
    match node {
        Node::Map(m) => {
            let dst = &g.buffers[m.dst];
            let t = dst.ty.rust();
            let target = if m.in_place {
                format!("{} =", dst.name)
            } else if m.atomic.is_some() {
                String::new()
            } else {
                format!("let {}: Vec<{t}> =", dst.name)
            };
            let _ = writeln!(s, "    // node k{k}\n    {target} {{");
            for (i, &b) in m.slots.iter().enumerate() {
                let _ = writeln!(s, "        let s{i} = &{};", g.buffers[b].name);
            }
            if m.in_place {
                let _ = writeln!(s, "        let d = &{};", dst.name);
            }
            if let Some(h) = &m.helper {
                let ht = h.ty.rust();
                let _ = writeln!(
                    s,
                    "        let h = |a: {ht}, b: {ht}| -> {ht} {{ let _ = (a, b); {} }};",
                    rust(&h.body, m, h.ty)
                );
            }
            if let Some(a) = &m.atomic {
                // Accumulate element by element, in order (the GPU's order
                // differs, but its operations commute).
                let _ = writeln!(s, "        for i in 0..n {{");
                for (j, l) in m.locals.iter().enumerate() {
                    let _ = writeln!(s, "            {}", local(j, l, m));
                }
                let (key, value, name) = (
                    rust(&a.key, m, Ty::U32),
                    rust(&m.value, m, dst.ty),
                    &dst.name,
                );
                let (bins, op) = (a.bins, op_rust(a.op));
                let _ = writeln!(
                    s,
                    "            let key = ({key}) as usize % {bins};\n            let v: {t} = {value};\n            {name}[key] = <{t} as crate::ops::Value>::combine({op}, {name}[key], v);"
                );
                let _ = writeln!(s, "        }}\n    }}");
                return;
            }
            let _ = writeln!(s, "        (0..n).map(|i| {{");
            for (j, l) in m.locals.iter().enumerate() {
                let _ = writeln!(s, "            {}", local(j, l, m));
            }
            let _ = writeln!(s, "            {}", rust(&m.value, m, dst.ty));
            let _ = writeln!(s, "        }}).collect()\n    }};");
        }
        Node::Clear { dst, value } => {
            let b = &g.buffers[*dst];
            let _ = writeln!(
                s,
                "    // node k{k}\n    let mut {}: Vec<{}> = vec![{value} as {1}; {}];",
                b.name,
                b.ty.rust(),
                b.len.at_expr()
            );
        }
        Node::Reduce {
            op,
            src,
            dst,
            shape,
        } => {
            let d = &g.buffers[*dst];
            let _ = writeln!(
                s,
                "    // node r{k}\n    let ({0}, {0}_tol) = crate::ops::reduce(&{1}, {2}, {3}, n, {4});",
                d.name,
                g.buffers[*src].name,
                op_rust(*op),
                shape_rust(*shape),
                d.len.at_expr()
            );
        }
        Node::Scan {
            op,
            inclusive,
            src,
            dst,
            shape,
        } => {
            let d = &g.buffers[*dst];
            let _ = writeln!(
                s,
                "    // node c{k}\n    let ({0}, {0}_tol) = crate::ops::scan(&{1}, {2}, {3}, {4}, n);",
                d.name,
                g.buffers[*src].name,
                op_rust(*op),
                inclusive,
                shape_rust(*shape)
            );
        }
        Node::Flow(_) | Node::Args { .. } | Node::Frontier(_) | Node::Halve(_) => {}
    }
}

impl Len {
    pub fn at_expr(self) -> String {
        match self {
            Len::N => "n".into(),
            Len::One => "1".into(),
            Len::PerCols(k) => format!("n.div_ceil({k})"),
            Len::Rows(r) => format!("{r}"),
        }
    }
}

pub fn host_inputs(g: &Graph) -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = g
        .buffers
        .iter()
        .filter(|b| matches!(b.class, Class::Input | Class::InOut))
        .map(|b| (b.name.clone(), if b.fields { "E" } else { b.ty.rust() }))
        .collect();
    if g.uniform {
        v.push(("p".into(), "uniform"));
    }
    v
}

pub fn host_outputs(g: &Graph) -> Vec<&Buffer> {
    g.buffers
        .iter()
        .filter(|b| matches!(b.class, Class::Output | Class::InOut))
        .collect()
}

/// Whether buffer `b` holds rounded values: a float sum, or a scan of one.
fn rounded(g: &Graph, b: usize) -> bool {
    g.nodes.iter().any(|n| match n {
        Node::Reduce { op, dst, .. } | Node::Scan { op, dst, .. } => {
            *dst == b && *op == ReduceOp::Sum && g.buffers[b].ty == Ty::F32
        }
        _ => false,
    })
}

/// Whether the graph has an output of constant length that a kernel
/// writes (accumulators): it has no value at `n = 0`, so every way to run
/// refuses that size.
fn refuses_zero(g: &Graph) -> bool {
    let append_output = g
        .buffers
        .iter()
        .any(|b| b.append.is_some() && b.class == Class::Output);
    append_output
        || g.nodes.iter().any(|n| {
            matches!(n, Node::Clear { dst, .. } if g.buffers[*dst].class == Class::Output
            && !matches!(g.buffers[*dst].len, Len::N | Len::PerCols(_)))
        })
}

/// Whether the graph's WGSL takes a remainder of `i32`s (`x % 5i`).
fn signed_remainder(wgsl: &str) -> bool {
    wgsl.match_indices("% ").any(|(at, _)| {
        let rest = &wgsl[at + 2..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with("i)")
    })
}

/// The whole module of one case, named `module`.
pub fn module(g: &Graph, module: &str) -> String {
    format!("pub mod {module} {{\n{}}}\n", body(g))
}

/// A case's module as a file of its own (`regressions/`).
pub fn file(g: &Graph) -> String {
    body(g)
}

/// The items of a case's module: the graphs, the oracle, the typed call
/// and `check`.
fn body(g: &Graph) -> String {
    let fused = graph_source(g, "Fused", true);
    let unfused = graph_source(g, "Unfused", false);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#![allow(clippy::all, unused_parens, unused_variables, unused_mut, unused_assignments)]\n//! Case `{}` of vyre-diff, as its build script wrote it.",
        g.name
    );
    let _ = writeln!(
        s,
        "pub const NAME: &str = {:?};\npub const SOURCE: &str = {:?};\npub const LARGE: bool = {};\npub const SIGNED_REM: bool = {};\npub const REFUSES_ZERO: bool = {};",
        g.name,
        fused,
        g.large,
        signed_remainder(&fused),
        refuses_zero(g)
    );
    let _ = writeln!(
        s,
        "pub mod fused {{ vyre_graph::graph! {{\n{fused}}} }}\npub mod unfused {{ vyre_graph::graph! {{\n{unfused}}} }}"
    );
    let inputs = host_inputs(g);
    let kinds: Vec<String> = inputs
        .iter()
        .map(|(_, t)| match *t {
            "u32" => "crate::In::U32".into(),
            "i32" => "crate::In::I32".into(),
            "f32" => "crate::In::F32".into(),
            "E" => "crate::In::Struct".into(),
            _ => "crate::In::Uniform".into(),
        })
        .collect();
    let _ = writeln!(
        s,
        "pub const INPUTS: &[crate::In] = &[{}];",
        kinds.join(", ")
    );
    // The oracle.
    let _ = writeln!(
        s,
        "pub fn oracle(n: usize, inputs: &[Vec<u8>]) -> crate::Want {{\n    let mut overflow: Option<(&'static str, u64)> = None;\n    let mut loops: Vec<(u32, bool)> = Vec::new();"
    );
    for (k, (name, t)) in inputs.iter().enumerate() {
        if *t == "uniform" {
            let _ = writeln!(
                s,
                "    let (p_a, p_b, p_c) = crate::uniform_of(&inputs[{k}]);"
            );
        } else {
            let _ = writeln!(
                s,
                "    let mut {name}: Vec<{}> = crate::vec_of(&inputs[{k}]);",
                if *t == "E" { "crate::E" } else { t }
            );
        }
    }
    for (k, node) in g.nodes.iter().enumerate() {
        node_rust(&mut s, k, node, g);
    }
    let outs: Vec<String> = host_outputs(g)
        .iter()
        .map(|b| {
            let i = g.buffers.iter().position(|x| x.name == b.name).unwrap_or(0);
            if let Some(e) = oracle_flow::expected(b) {
                e
            } else if rounded(g, i) {
                format!("crate::Expected::near(&{0}, &{0}_tol)", b.name)
            } else {
                format!("crate::Expected::exact(&{})", b.name)
            }
        })
        .collect();
    let _ = writeln!(
        s,
        "    crate::Want {{ outputs: vec![{}], overflow, loops }}\n}}",
        outs.join(", ")
    );
    s.push_str(&calls::calls(g, &inputs, &host_outputs(g)));
    s
}
