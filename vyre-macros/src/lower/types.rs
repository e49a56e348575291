//! The element types of built-in reductions and scans: their WGSL names,
//! the feature each needs, every operation's identity and the combining
//! function `vyre_combine`, as WGSL text for `wgsl.rs`.
//!
//! | type | feature | `sum` | `max` / `min` |
//! |---|---|---|---|
//! | `f32` | none | IEEE `+` | NaN wins; `+0` above `-0` |
//! | `u32`, `i32` | none | wrapping `+` | `max` / `min` |
//! | `f16` | `shader_f16` | IEEE `+` in `f16` | as `f32` (decided on the exact `f32` value) |
//! | `u64`, `i64` | `shader_int64` | wrapping `+` | `max` / `min` |
//! | `f64` | `shader_f64` | IEEE `+` in `f64` | as `f32` (NaN and sign decided on `f32(a)`) |
//!
//! Float NaN tests look at bits, never at `a != a` (drivers may fold it
//! away). `f16` and `f64` have no same-width `u32` to bitcast to, so their
//! NaN and sign tests convert to `f32` first: the conversion keeps NaN a
//! NaN and keeps the sign of zero, and a finite value never becomes a NaN.

use syn::Ident;

use crate::model::Prim;
use crate::model::{Extent, ReduceDecl, ReduceKind, ReduceOp};
use vyre_analysis::spec::Feature;

/// Every element type, in the order messages list them.
pub const TYPES: [Prim; 7] = [
    Prim::F32,
    Prim::U32,
    Prim::I32,
    Prim::F16,
    Prim::U64,
    Prim::I64,
    Prim::F64,
];

/// The types, for messages: "f32, u32, i32, f16, u64, i64 or f64".
pub const TYPE_LIST: &str = "f32, u32, i32, f16, u64, i64 or f64";

/// The error for a reduction or scan whose element type is neither written
/// nor told by a kernel: the fix is the whole node with the type filled in.
pub fn untyped_message(d: &ReduceDecl) -> String {
    format!(
        "cannot tell the element type of `{}`: no kernel binds it; write it in the node, e.g. `{}`",
        d.src,
        node_text(d, "f32")
    )
}

/// The error for a reduction or scan written with an element type it does
/// not support (`ty`): the fix is the whole node with `instead`.
pub fn bad_type_message(d: &ReduceDecl, ty: &Ident, instead: &str) -> String {
    format!(
        "`{} {}` works on {TYPE_LIST}, not `{ty}`: write e.g. `{}`",
        d.keyword,
        d.op.name(),
        node_text(d, instead)
    )
}

/// The error for a `scan` without `inclusive` or `exclusive`: both whole
/// nodes, with the type when the user wrote one.
pub fn missing_kind_message(d: &ReduceDecl, ty: &str) -> String {
    let ty = d.ty.as_ref().map_or(ty.to_owned(), ToString::to_string);
    let with = |kind| node_text_as(d, kind, &ty);
    format!(
        "`scan` needs `inclusive` (each output includes its own element) or `exclusive` (it does not) before `{}`: write `{}` or `{}`",
        d.op.name(),
        with(ReduceKind::Inclusive),
        with(ReduceKind::Exclusive)
    )
}

/// The whole node as written, with element type `ty`: every part the user
/// wrote kept (the scan's kind, the rows, the destination), so a message
/// can offer it as a fix that compiles
/// (`node pre = scan exclusive sum<f32>(u) -> v;`).
pub fn node_text(d: &ReduceDecl, ty: &str) -> String {
    node_text_as(d, d.kind, ty)
}

/// As [`node_text`], as a reduction or scan of kind `kind`.
fn node_text_as(d: &ReduceDecl, kind: ReduceKind, ty: &str) -> String {
    let kind = match kind {
        ReduceKind::Reduce => "",
        ReduceKind::Inclusive => " inclusive",
        ReduceKind::Exclusive => " exclusive",
    };
    let rows = d
        .rows
        .map(|[r, c]| {
            format!(
                " over [{}, {}]",
                extent_text(r.extent),
                extent_text(c.extent)
            )
        })
        .unwrap_or_default();
    format!(
        "node {} = {}{kind} {}<{ty}>({}){rows} -> {};",
        d.label,
        d.keyword,
        d.op.name(),
        d.src,
        d.dst
    )
}

/// An extent as the grammar writes it (`n / 4`, `1024`, `2 * n + 1`).
fn extent_text(e: Extent) -> String {
    if e.mul == 0 {
        return e.add.to_string();
    }
    let mut out = if e.mul == 1 {
        "n".to_owned()
    } else {
        format!("{} * n", e.mul)
    };
    if e.div > 1 {
        out.push_str(&format!(" / {}", e.div));
    }
    if e.add != 0 {
        out.push_str(&format!(" + {}", e.add));
    }
    out
}

/// The WGSL name of a scalar the generated kernels support.
pub fn scalar(prim: Prim) -> Option<&'static str> {
    match prim {
        Prim::F32 => Some("f32"),
        Prim::U32 => Some("u32"),
        Prim::I32 => Some("i32"),
        Prim::F16 => Some("f16"),
        Prim::U64 => Some("u64"),
        Prim::I64 => Some("i64"),
        Prim::F64 => Some("f64"),
        _ => None,
    }
}

/// The device feature a type needs (`None` for the 32-bit types).
pub fn feature(ty: &str) -> Option<Feature> {
    match ty {
        "f16" => Some(Feature::ShaderF16),
        "u64" | "i64" => Some(Feature::ShaderInt64),
        "f64" => Some(Feature::ShaderF64),
        _ => None,
    }
}

/// The `enable` directive a type needs at the top of a module (`f16`).
pub fn enable(ty: &str) -> Option<&'static str> {
    (component(ty) == "f16").then_some("enable f16;")
}

/// `vec2<T>` for a scalar `T`: two reductions of one buffer computed in
/// one pass (`transform/reduce_pair.rs`) combine pairs, component-wise.
pub fn pair(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "f32" => "vec2<f32>",
        "u32" => "vec2<u32>",
        "i32" => "vec2<i32>",
        "f16" => "vec2<f16>",
        "u64" => "vec2<u64>",
        "i64" => "vec2<i64>",
        "f64" => "vec2<f64>",
        _ => return None,
    })
}

/// The scalar of a [`pair`] type, or `ty` itself.
fn component(ty: &str) -> &str {
    ty.strip_prefix("vec2<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(ty)
}

/// The operation's identity for `ty` (a scalar or a [`pair`]), as an
/// expression.
pub fn identity(op: ReduceOp, ty: &str) -> String {
    let scalar = component(ty);
    if scalar != ty {
        return format!("{ty}({})", scalar_identity(op, scalar));
    }
    scalar_identity(op, ty).to_owned()
}

/// The bytes of [`identity`] for a scalar `ty` (little-endian, as the
/// runtime stores elements): what a reduction of an empty source writes.
pub fn identity_bytes(op: ReduceOp, ty: &str) -> Vec<u8> {
    match (op, ty) {
        (ReduceOp::Sum, "f16") => vec![0; 2],
        (ReduceOp::Sum, "f32" | "u32" | "i32") | (ReduceOp::Max, "u32") => vec![0; 4],
        (ReduceOp::Sum, _) | (ReduceOp::Max, "u64") => vec![0; 8],
        (ReduceOp::Max, "f32") => f32::NEG_INFINITY.to_le_bytes().to_vec(),
        (ReduceOp::Min, "f32") => f32::INFINITY.to_le_bytes().to_vec(),
        (ReduceOp::Max, "f16") => 0xfc00u16.to_le_bytes().to_vec(),
        (ReduceOp::Min, "f16") => 0x7c00u16.to_le_bytes().to_vec(),
        (ReduceOp::Max, "f64") => f64::NEG_INFINITY.to_le_bytes().to_vec(),
        (ReduceOp::Min, "f64") => f64::INFINITY.to_le_bytes().to_vec(),
        (ReduceOp::Min, "u32") => u32::MAX.to_le_bytes().to_vec(),
        (ReduceOp::Min, "u64") => u64::MAX.to_le_bytes().to_vec(),
        (ReduceOp::Max, "i64") => i64::MIN.to_le_bytes().to_vec(),
        (ReduceOp::Min, "i64") => i64::MAX.to_le_bytes().to_vec(),
        (ReduceOp::Max, _) => i32::MIN.to_le_bytes().to_vec(),
        (ReduceOp::Min, _) => i32::MAX.to_le_bytes().to_vec(),
    }
}

/// The operation's identity for `ty`: 0, -inf/+inf, or the type's min/max.
fn scalar_identity(op: ReduceOp, ty: &str) -> &'static str {
    match (op, ty) {
        (ReduceOp::Sum, "f32") => "0.0f",
        (ReduceOp::Sum, "u32") => "0u",
        (ReduceOp::Sum, "i32") => "0i",
        (ReduceOp::Sum, "f16") => "0.0h",
        (ReduceOp::Sum, "u64") => "0lu",
        (ReduceOp::Sum, "i64") => "0li",
        (ReduceOp::Sum, _) => "f64(0.0)",
        (ReduceOp::Max, "f32") => "bitcast<f32>(0xff800000u)",
        (ReduceOp::Min, "f32") => "bitcast<f32>(0x7f800000u)",
        (ReduceOp::Max, "f16") => "f16(bitcast<f32>(0xff800000u))",
        (ReduceOp::Min, "f16") => "f16(bitcast<f32>(0x7f800000u))",
        (ReduceOp::Max, "f64") => "f64(bitcast<f32>(0xff800000u))",
        (ReduceOp::Min, "f64") => "f64(bitcast<f32>(0x7f800000u))",
        (ReduceOp::Max, "u32") => "0u",
        (ReduceOp::Min, "u32") => "0xffffffffu",
        (ReduceOp::Max, "u64") => "0lu",
        (ReduceOp::Min, "u64") => "0xfffffffffffffffflu",
        (ReduceOp::Max, "i64") => "bitcast<i64>(0x8000000000000000lu)",
        (ReduceOp::Min, "i64") => "0x7fffffffffffffffli",
        (ReduceOp::Max, _) => "bitcast<i32>(0x80000000u)",
        (ReduceOp::Min, _) => "0x7fffffffi",
    }
}

/// `vyre_combine(a, b)` for the operation on `ty` (a scalar or a
/// [`pair`]: then component-wise, through `vyre_combine1`).
pub fn combine(op: ReduceOp, ty: &str) -> String {
    let scalar = component(ty);
    if scalar == ty {
        return scalar_combine(op, ty, "vyre_combine");
    }
    let body = if op == ReduceOp::Sum {
        "return a + b;".to_owned()
    } else {
        format!("return {ty}(vyre_combine1(a.x, b.x), vyre_combine1(a.y, b.y));")
    };
    format!(
        "{}fn vyre_combine(a: {ty}, b: {ty}) -> {ty} {{\n    {body}\n}}\n",
        scalar_combine(op, scalar, "vyre_combine1")
    )
}

/// The combining function `name(a, b)` on a scalar `ty`.
fn scalar_combine(op: ReduceOp, ty: &str, name: &str) -> String {
    let float = matches!(ty, "f32" | "f16" | "f64");
    let body = match op {
        ReduceOp::Sum => "return a + b;".to_owned(),
        ReduceOp::Max | ReduceOp::Min if ty == "f32" => {
            let (cmp, bits) = if op == ReduceOp::Max {
                (">", "&")
            } else {
                ("<", "|")
            };
            format!(
                "// NaN by its bits: drivers may fold `a != a` away.\n    if (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u {{ return a; }}\n    if (bitcast<u32>(b) & 0x7fffffffu) > 0x7f800000u {{ return b; }}\n    if a == b {{ return bitcast<f32>(bitcast<u32>(a) {bits} bitcast<u32>(b)); }}\n    return select(a, b, b {cmp} a);"
            )
        }
        ReduceOp::Max | ReduceOp::Min if float => {
            // Equal values differ only in the sign of zero: `max` keeps the
            // one without the sign bit, `min` the one with it.
            let (cmp, keep_b) = if op == ReduceOp::Max {
                (">", "(ua & 0x80000000u) != 0u")
            } else {
                ("<", "(ub & 0x80000000u) != 0u")
            };
            format!(
                "// NaN and the sign of zero by the bits of the exact f32 value.\n    let ua = bitcast<u32>(f32(a));\n    let ub = bitcast<u32>(f32(b));\n    if (ua & 0x7fffffffu) > 0x7f800000u {{ return a; }}\n    if (ub & 0x7fffffffu) > 0x7f800000u {{ return b; }}\n    if a == b {{ return select(a, b, {keep_b}); }}\n    return select(a, b, b {cmp} a);"
            )
        }
        ReduceOp::Max => "return max(a, b);".to_owned(),
        ReduceOp::Min => "return min(a, b);".to_owned(),
    };
    format!("fn {name}(a: {ty}, b: {ty}) -> {ty} {{\n    {body}\n}}\n")
}

/// `text` with every `enable ...;` directive moved to the top, once each,
/// together with the one `ty` needs: a fused producer's directives would
/// otherwise come after declarations, where WGSL forbids them.
pub fn hoist_enables(text: &str, ty: &str) -> String {
    let mut enables: Vec<String> = enable(ty).into_iter().map(str::to_owned).collect();
    let mut rest = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("enable ") && t.ends_with(';') {
            if !enables.iter().any(|e| e == t) {
                enables.push(t.to_owned());
            }
        } else {
            rest.push_str(line);
        }
    }
    if enables.is_empty() {
        return rest;
    }
    format!("{}\n{rest}", enables.join("\n"))
}

#[cfg(test)]
mod tests {
    use crate::tests::errors;

    /// The one error of a graph with one reduction or scan, `node`.
    fn error_of(node: &str) -> String {
        let errors = errors(&format!(
            "pub struct G; input u[n]; output v[n]; output s[1]; {node}"
        ));
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.concat()
    }

    #[test]
    fn a_missing_or_wrong_type_suggests_the_whole_node() {
        let e = error_of("node pre = scan exclusive sum(u) -> v;");
        assert!(
            e.ends_with("e.g. `node pre = scan exclusive sum<f32>(u) -> v;`"),
            "{e}"
        );
        let e = error_of("node pre = scan inclusive max<bool>(u) over [n / 4, 4] -> v;");
        assert!(
            e.ends_with("write e.g. `node pre = scan inclusive max<f32>(u) over [n / 4, 4] -> v;`"),
            "{e}"
        );
        // Sizes as the grammar normalises them (`2 * n / 8` is `n / 4`).
        let e = error_of("node t = reduce min<bool>(u) over [2 * n / 8 + 1, 8] -> s;");
        assert!(
            e.contains("`node t = reduce min<f32>(u) over [n / 4 + 1, 8] -> s;`"),
            "{e}"
        );
        let e = error_of("node t = reduce add(u) -> s;");
        assert!(e.ends_with("`node t = reduce sum<f32>(u) -> s;`"), "{e}");
    }
}
