//! The data-dependent parts of a graph as text: the kernels of appends,
//! their consumers, indirect grids and loops, and their lines in `graph!`.

use std::fmt::Write;

use super::ir::*;

/// A literal of type `ty`: integers as they are (wrapped into the type),
/// floats in quarters.
pub fn literal(ty: Ty, v: i64) -> String {
    match ty {
        Ty::U32 => format!("{}u", v as u32),
        Ty::I32 if v as i32 == i32::MIN => "(-2147483647i - 1i)".to_owned(),
        Ty::I32 if (v as i32) < 0 => format!("(-{}i)", -(v as i32)),
        Ty::I32 => format!("{}i", v as i32),
        Ty::F32 => {
            let f = v as f64 / 4.0;
            if f < 0.0 {
                format!("(-{:?}f)", -f)
            } else {
                format!("{f:?}f")
            }
        }
    }
}

/// The WGSL test and value of a step over `x`.
fn step_wgsl(s: &Step, ty: Ty) -> (String, String) {
    let keep = format!("x {} {}", s.cmp.op(), literal(ty, s.against));
    let mut value = "x".to_owned();
    // A float's `mul` is a plain number, the literal's unit a quarter.
    let mul = if ty == Ty::F32 { s.mul * 4 } else { s.mul };
    if s.mul != 1 {
        value = format!("({value} * {})", literal(ty, mul));
    }
    if s.add != 0 {
        value = format!("({value} + {})", literal(ty, s.add));
    }
    if s.shr != 0 {
        value = format!("({value} >> {}u)", s.shr);
    }
    (keep, value)
}

/// The reader's and the writer's struct of an append buffer of `ty`,
/// named by the type (`ListRU32`, `ListWU32`): one name, one layout, in
/// every kernel of a graph.
fn lists(ty: Ty) -> String {
    let t = ty.wgsl();
    let u = t.to_uppercase();
    format!(
        "struct ListR{u} {{ count: u32, items: array<{t}> }}\nstruct ListW{u} {{ count: atomic<u32>, items: array<{t}> }}\n"
    )
}

fn reader(ty: Ty) -> String {
    format!("ListR{}", ty.wgsl().to_uppercase())
}

fn writer(ty: Ty) -> String {
    format!("ListW{}", ty.wgsl().to_uppercase())
}

/// `v` appended to the writer `d`.
fn append(v: &str) -> String {
    format!(
        "let slot = atomicAdd(&d.count, 1u);\n            if slot < arrayLength(&d.items) {{ d.items[slot] = {v}; }}"
    )
}

/// The kernel of a data-dependent node, or `None` for other nodes.
pub fn kernel(node: &Node, g: &Graph) -> Option<String> {
    match node {
        Node::Flow(f) => Some(flow(f)),
        Node::Args {
            list, workgroup, ..
        } => Some(format!(
            "{}@group(0) @binding(0) var<storage, read> s: {};\n@group(0) @binding(1) var<storage, read_write> d: array<u32>;\n@compute @workgroup_size(1)\nfn main() {{\n    let c = min(s.count, arrayLength(&s.items));\n    d[0] = (c + {w}u) / {workgroup}u;\n    d[1] = 1u;\n    d[2] = 1u;\n}}\n",
            lists(g.buffers[*list].ty),
            reader(g.buffers[*list].ty),
            w = workgroup - 1
        )),
        Node::Frontier(l) => Some(format!(
            "{}@group(0) @binding(0) var<storage, read> s: ListRU32;\n@group(0) @binding(1) var<storage, read_write> d: ListWU32;\n@group(0) @binding(2) var<storage, read_write> acc: array<atomic<u32>>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{\n    if g.x < min(s.count, arrayLength(&s.items)) {{\n        let x = s.items[g.x];\n        atomicAdd(&acc[x % {}u], x);\n        let y = x >> 1u;\n        if y != 0u {{\n            {}\n        }}\n    }}\n}}\n",
            lists(Ty::U32),
            l.bins,
            append("y")
        )),
        Node::Halve(_) => Some(
            "@group(0) @binding(0) var<storage, read_write> d: array<u32>;\n@group(0) @binding(1) var<storage, read_write> e: array<u32>;\n@group(0) @binding(2) var<storage, read_write> f: array<atomic<u32>>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    let i = g.x;\n    if i < arrayLength(&d) {\n        let x = d[i];\n        d[i] = x >> 1u;\n        e[i] = e[i] + x;\n        if (x >> 1u) != 0u { atomicStore(&f[0], 1u); }\n    }\n}\n"
                .to_owned(),
        ),
        _ => None,
    }
}

fn flow(f: &Flow) -> String {
    let t = f.ty.wgsl();
    let mut s = lists(f.ty);
    let (source, len, item) = match f.from {
        Items::Buffer(_) => (format!("array<{t}>"), "arrayLength(&s)", "s[g.x]"),
        Items::Count(_) | Items::Indirect { .. } => (
            reader(f.ty),
            "min(s.count, arrayLength(&s.items))",
            "s.items[g.x]",
        ),
    };
    let _ = writeln!(s, "@group(0) @binding(0) var<storage, read> s: {source};");
    let (target, store) = match f.into {
        Target::Append(_) => (writer(f.ty), append("v")),
        Target::Bins { op, bins, .. } => {
            let call = match op {
                ReduceOp::Sum => "atomicAdd",
                ReduceOp::Max => "atomicMax",
                ReduceOp::Min => "atomicMin",
            };
            let key = if f.ty == Ty::U32 { "v" } else { "u32(v)" };
            (
                format!("array<atomic<{t}>>"),
                format!("{call}(&d[{key} % {bins}u], v);"),
            )
        }
    };
    let _ = writeln!(
        s,
        "@group(0) @binding(1) var<storage, read_write> d: {target};"
    );
    let (keep, value) = step_wgsl(&f.step, f.ty);
    let _ = write!(
        s,
        "@compute @workgroup_size({})\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{\n    if g.x < {len} {{\n        let x = {item};\n        if {keep} {{\n            let v = {value};\n            {store}\n        }}\n    }}\n}}\n",
        f.workgroup
    );
    s
}

/// The declaration of buffer `b` when it is an append buffer.
pub fn declaration(b: &Buffer) -> Option<String> {
    let grow = b.append?;
    let class = if b.class == Class::Intermediate {
        "intermediate "
    } else {
        ""
    };
    let grow = if grow { " grow" } else { "" };
    Some(format!("append {class}{}[{}]{grow};", b.name, b.len.decl()))
}

/// The `graph!` line(s) of data-dependent node `k`, or `None` for other
/// nodes.
pub fn line(node: &Node, k: usize, g: &Graph) -> Option<String> {
    let name = |b: usize| g.buffers[b].name.clone();
    Some(match node {
        Node::Flow(f) => {
            let (src, launch) = match f.from {
                Items::Buffer(b) => (name(b), "over n".to_owned()),
                Items::Count(b) => (name(b), format!("over count({})", name(b))),
                Items::Indirect { list, args } => {
                    (name(list), format!("grid indirect({})", name(args)))
                }
            };
            format!("node k{k}(s: {src}, d: {}) {launch};", name(f.into.dst()))
        }
        Node::Args { list, args, .. } => {
            format!("node k{k}(s: {}, d: {}) over 1;", name(*list), name(*args))
        }
        Node::Frontier(l) => {
            let pp = format!("{}, {}", name(l.ping), name(l.pong));
            format!(
                "repeat up to {} as i until empty(ping({pp})) {{\n    node k{k}(s: ping({pp}), d: pong({pp}), acc: {}) over count(ping({pp}));\n}}",
                l.k,
                name(l.acc)
            )
        }
        Node::Halve(h) => format!(
            "repeat up to {} as i until zero({flag}) {{\n    node k{k}(d: {}, e: {}, f: {flag}) over n;\n}}",
            h.k,
            name(h.value),
            name(h.sum),
            flag = name(h.flag)
        ),
        _ => return None,
    })
}
