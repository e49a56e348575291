//! A generated graph as text: its kernels in WGSL, the `graph!`
//! invocation, and a Rust module holding both graphs (fused and `fuse
//! off;`), the oracle in plain Rust and the typed call.

use std::fmt::Write;

use super::ir::*;
use super::render_flow;

/// WGSL of an expression; `w` is the kernel's workgroup width.
fn wgsl(e: &Expr, m: &Map, ty: Ty) -> String {
    let sub = |x: &Expr, t: Ty| wgsl(x, m, t);
    match e {
        Expr::Lit(t, v) => render_flow::literal(*t, *v),
        Expr::Read(s, at) => format!("s{s}[{}]", index(*s, *at, m)),
        Expr::Field(s, at, t) => format!("s{s}[{}].{}", index(*s, *at, m), field(*t)),
        Expr::Own => "d[i]".to_owned(),
        Expr::Local(k) => format!("v{k}"),
        Expr::Param(k) => ["a", "b"][*k].to_owned(),
        Expr::Index => "i".to_owned(),
        Expr::Length(s) => format!("arrayLength(&s{s})"),
        Expr::Uniform(t) => uniform_field(*t).to_owned(),
        Expr::Bin(op, a, b) => {
            let (a, b) = (sub(a, ty), sub(b, ty));
            let suffix = if ty == Ty::I32 { "i" } else { "u" };
            match op {
                BinOp::Add => format!("({a} + {b})"),
                BinOp::Sub => format!("({a} - {b})"),
                BinOp::Mul => format!("({a} * {b})"),
                BinOp::And => format!("({a} & {b})"),
                BinOp::Or => format!("({a} | {b})"),
                BinOp::Xor => format!("({a} ^ {b})"),
                BinOp::Shl(s) => format!("({a} << {s}u)"),
                BinOp::Shr(s) => format!("({a} >> {s}u)"),
                BinOp::Div(k) => format!("({a} / {k}{suffix})"),
                BinOp::Rem(k) => format!("({a} % {k}{suffix})"),
                BinOp::Min => format!("min({a}, {b})"),
                BinOp::Max => format!("max({a}, {b})"),
            }
        }
        Expr::Un(op, a) => match op {
            UnOp::Neg => format!("(-{})", sub(a, ty)),
            UnOp::Abs => format!("abs({})", sub(a, ty)),
            UnOp::Not => format!("(~{})", sub(a, ty)),
        },
        Expr::Select {
            cty,
            cmp,
            a,
            b,
            accept,
            reject,
        } => format!(
            "select({}, {}, {} {} {})",
            sub(reject, ty),
            sub(accept, ty),
            sub(a, *cty),
            cmp_op(*cmp),
            sub(b, *cty)
        ),
        Expr::Call(a, b) => format!("h({}, {})", sub(a, ty), sub(b, ty)),
        Expr::Cast(t, a) => format!("{}({})", t.wgsl(), sub(a, other_int(*t))),
        Expr::Small(a) => format!("f32({} & 255u)", sub(a, Ty::U32)),
        Expr::Override => "K".to_owned(),
    }
}

/// The element of slot `s` that `at` reads.
fn index(s: usize, at: At, m: &Map) -> String {
    let len = format!("arrayLength(&s{s}) - 1u");
    match at {
        At::Own => "i".to_owned(),
        At::Next => format!("min(i + 1u, {len})"),
        At::Prev => "select(i - 1u, 0u, i == 0u)".to_owned(),
        At::Stride => format!("min(2u * i, {len})"),
        At::WrongWidth => format!("min(wid.x * {}u + lid.x, {len})", m.workgroup / 2),
        At::First => "0u".to_owned(),
    }
}

/// The field of `struct E` of type `t`.
pub fn field(t: Ty) -> &'static str {
    match t {
        Ty::U32 => "a",
        Ty::I32 => "b",
        Ty::F32 => "c",
    }
}

/// The integer type a cast to `t` converts from.
fn other_int(t: Ty) -> Ty {
    if t == Ty::I32 { Ty::U32 } else { Ty::I32 }
}

fn uniform_field(t: Ty) -> &'static str {
    match t {
        Ty::U32 => "p.a",
        Ty::I32 => "p.b",
        Ty::F32 => "p.c",
    }
}

fn cmp_op(c: Cmp) -> &'static str {
    match c {
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ne => "!=",
        Cmp::Eq => "==",
    }
}

fn uses(m: &Map, f: &dyn Fn(&Expr) -> bool) -> bool {
    let mut found = false;
    let mut check = |e: &Expr| found |= f(e);
    super::random::visit(&m.value, &mut check);
    m.locals
        .iter()
        .for_each(|l| super::random::for_local(l, &mut check));
    found
}

/// A kernel writing `value` to every element.
fn clear(ty: Ty, value: i64) -> String {
    let v = render_flow::literal(ty, value);
    format!(
        "@group(0) @binding(0) var<storage, read_write> d: array<{}>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{\n    if g.x < arrayLength(&d) {{ d[g.x] = {v}; }}\n}}\n",
        ty.wgsl()
    )
}

/// The helper function's declaration.
fn helper(m: &Map, h: &Helper) -> String {
    let t = h.ty.wgsl();
    let body = wgsl(&h.body, m, h.ty);
    format!("fn h(a: {t}, b: {t}) -> {t} {{ return {body}; }}\n")
}

/// The WGSL of an element-wise node's kernel (node `k`).
pub fn kernel(m: &Map, g: &Graph, k: usize) -> String {
    let mut s = String::new();
    if m.helper.as_ref().is_some_and(|h| h.in_module) {
        let _ = writeln!(s, "import package::m{k}::h;");
    }
    let dst_ty = g.buffers[m.dst].ty;
    if m.uniform {
        s.push_str("struct P { a: u32, b: i32, c: f32, e: u32 }\n");
    }
    if m.slots.iter().any(|&b| g.buffers[b].fields) {
        s.push_str("struct E { a: u32, b: i32, c: f32 }\n");
    }
    for (k, &b) in m.slots.iter().enumerate() {
        let t = if g.buffers[b].fields {
            "E"
        } else {
            g.buffers[b].ty.wgsl()
        };
        let _ = writeln!(
            s,
            "@group(0) @binding({k}) var<storage, read> s{k}: array<{t}>;"
        );
    }
    let n = m.slots.len();
    let element = match m.atomic {
        Some(_) => format!("atomic<{}>", dst_ty.wgsl()),
        None => dst_ty.wgsl().to_owned(),
    };
    let _ = writeln!(
        s,
        "@group(0) @binding({n}) var<storage, read_write> d: array<{element}>;"
    );
    if m.uniform {
        let _ = writeln!(s, "@group(0) @binding({}) var<uniform> p: P;", n + 1);
    }
    if let Some(h) = m.helper.as_ref().filter(|h| !h.in_module) {
        s.push_str(&helper(m, h));
    }
    if let Some(c) = m.constant {
        let _ = writeln!(s, "override K: u32 = {}u;", c.default);
    }
    if m.index == IndexForm::Helper {
        s.push_str("fn own(g: vec3<u32>) -> u32 { return g.x; }\n");
    }
    let wrong = uses(m, &|e| {
        matches!(
            e,
            Expr::Read(_, At::WrongWidth) | Expr::Field(_, At::WrongWidth, _)
        )
    });
    let mut params = vec!["@builtin(global_invocation_id) g: vec3<u32>".to_owned()];
    if m.index == IndexForm::Folded {
        params.push("@builtin(num_workgroups) nwg: vec3<u32>".into());
    }
    if m.index == IndexForm::WidLid || wrong {
        params.push("@builtin(workgroup_id) wid: vec3<u32>".into());
        params.push("@builtin(local_invocation_id) lid: vec3<u32>".into());
    }
    let w = m.workgroup;
    let _ = writeln!(
        s,
        "@compute @workgroup_size({w})\nfn main({}) {{",
        params.join(", ")
    );
    let index = match m.index {
        IndexForm::Plain => "let i = g.x;".to_owned(),
        IndexForm::Folded => format!("let i = g.x + g.y * nwg.x * {w}u;"),
        IndexForm::WidLid => format!("let i = wid.x * {w}u + lid.x;"),
        IndexForm::Helper => "let i = own(g);".to_owned(),
        IndexForm::Var => "var i: u32 = g.x;".to_owned(),
    };
    let _ = writeln!(s, "    {index}");
    let mut body = String::new();
    for (k, l) in m.locals.iter().enumerate() {
        let _ = writeln!(body, "    {}", local(k, l, m));
    }
    let value = wgsl(&m.value, m, dst_ty);
    // Accumulators have their own length: the bounds come from `s0`.
    let bound = match &m.atomic {
        Some(a) => {
            let f = match a.op {
                ReduceOp::Sum => "atomicAdd",
                ReduceOp::Max => "atomicMax",
                ReduceOp::Min => "atomicMin",
            };
            let key = wgsl(&a.key, m, Ty::U32);
            let _ = writeln!(body, "    {f}(&d[({key}) % {}u], {value});", a.bins);
            "s0"
        }
        None => {
            let _ = writeln!(body, "    d[i] = {value};");
            "d"
        }
    };
    match m.guard {
        Guard::Return => {
            let _ = writeln!(s, "    if i >= arrayLength(&{bound}) {{ return; }}");
            s.push_str(&body);
        }
        Guard::Wrap => {
            let _ = writeln!(s, "    if i < arrayLength(&{bound}) {{");
            s.push_str(&body);
            s.push_str("    }\n");
        }
    }
    s.push_str("}\n");
    s
}

fn local(k: usize, l: &Local, m: &Map) -> String {
    match l {
        Local::Let(t, e) => format!("let v{k}: {} = {};", t.wgsl(), wgsl(e, m, *t)),
        Local::Var(t, e) => format!("var v{k}: {} = {};", t.wgsl(), wgsl(e, m, *t)),
        Local::If {
            ty,
            cty,
            cmp,
            a,
            b,
            then,
            otherwise,
        } => format!(
            "var v{k}: {} = {}; if {} {} {} {{ v{k} = {}; }}",
            ty.wgsl(),
            wgsl(otherwise, m, *ty),
            wgsl(a, m, *cty),
            cmp_op(*cmp),
            wgsl(b, m, *cty),
            wgsl(then, m, *ty)
        ),
    }
}

fn shape_text(shape: Shape) -> String {
    match shape {
        Shape::Whole => String::new(),
        Shape::Cols(k) => format!(" over [n / {k}, {k}]"),
        Shape::Rows(r) => format!(" over [{r}, n / {r}]"),
    }
}

/// The body of a `graph!` invocation: `pub struct {name};`, then
/// `fuse off;` when `fused` is false, kernels, buffers and nodes.
pub fn graph_source(g: &Graph, name: &str, fused: bool) -> String {
    let mut s = format!("pub struct {name};\n");
    if !fused {
        s.push_str("fuse off;\n");
    }
    for (k, node) in g.nodes.iter().enumerate() {
        if let Node::Map(m) = node
            && let Some(h) = m.helper.as_ref().filter(|h| h.in_module)
        {
            let _ = writeln!(s, "module m{k} = \"{}\";", helper(m, h).trim_end());
        }
    }
    for (k, node) in g.nodes.iter().enumerate() {
        if let Some(text) = render_flow::kernel(node, g) {
            let _ = writeln!(s, "kernel k{k} = \"\n{text}\";");
        }
        if let Node::Clear { dst, value } = node {
            let _ = writeln!(
                s,
                "kernel k{k} = \"\n{}\";",
                clear(g.buffers[*dst].ty, *value)
            );
        }
        if let Node::Map(m) = node {
            let text = kernel(m, g, k);
            if m.tokens {
                let _ = writeln!(s, "kernel k{k} = wgsl {{\n{text}}};");
            } else {
                let _ = writeln!(s, "kernel k{k} = \"\n{text}\";");
            }
        }
    }
    let mut uniform_declared = !g.uniform;
    for b in &g.buffers {
        if !uniform_declared && !matches!(b.class, Class::Input | Class::InOut) {
            s.push_str("uniform p;\n");
            uniform_declared = true;
        }
        if let Some(line) = render_flow::declaration(b) {
            s.push_str(&line);
            s.push('\n');
            continue;
        }
        let class = match b.class {
            Class::Input => "input",
            Class::InOut => "inout",
            Class::Intermediate => "intermediate",
            Class::Output => "output",
        };
        let _ = writeln!(s, "{class} {}[{}];", b.name, b.len.decl());
    }
    if !uniform_declared {
        s.push_str("uniform p;\n");
    }
    for (k, node) in g.nodes.iter().enumerate() {
        let line = match node {
            Node::Flow(_) | Node::Args { .. } | Node::Frontier(_) | Node::Halve(_) => {
                render_flow::line(node, k, g).unwrap_or_default()
            }
            Node::Map(m) => {
                let mut binds: Vec<String> = m
                    .slots
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| format!("s{i}: {}", g.buffers[b].name))
                    .collect();
                binds.push(format!("d: {}", g.buffers[m.dst].name));
                if m.uniform {
                    binds.push("p: p".into());
                }
                let with = m
                    .constant
                    .and_then(|c| c.with)
                    .map(|v| format!(" with {{ K = {v} }}"))
                    .unwrap_or_default();
                format!("node k{k}({}) over n{with};", binds.join(", "))
            }
            Node::Clear { dst, .. } => {
                let b = &g.buffers[*dst];
                format!("node k{k}(d: {}) over {};", b.name, b.len.decl())
            }
            Node::Reduce {
                op,
                src,
                dst,
                shape,
            } => format!(
                "node r{k} = reduce {}<{}>({}){} -> {};",
                op.name(),
                g.buffers[*src].ty.wgsl(),
                g.buffers[*src].name,
                shape_text(*shape),
                g.buffers[*dst].name
            ),
            Node::Scan {
                op,
                inclusive,
                src,
                dst,
                shape,
            } => format!(
                "node c{k} = scan {} {}<{}>({}){} -> {};",
                if *inclusive { "inclusive" } else { "exclusive" },
                op.name(),
                g.buffers[*src].ty.wgsl(),
                g.buffers[*src].name,
                shape_text(*shape),
                g.buffers[*dst].name
            ),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s
}
