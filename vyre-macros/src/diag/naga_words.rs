//! naga's messages in WGSL's words: its IR's `Debug` types, arena handles
//! and labels rewritten the way WGSL users read them (plain data: it runs
//! on the naga thread).

use std::ops::Range;

pub fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.clone().next()) {
        // Keep acronyms (`IR`) and code as they are.
        (Some(c), Some(d)) if c.is_ascii_uppercase() && !d.is_ascii_uppercase() => {
            c.to_ascii_lowercase().to_string() + chars.as_str()
        }
        _ => text.to_owned(),
    }
}

/// Final wording: naga's IR names in WGSL's words.
pub fn words(text: &str) -> String {
    tidy(text)
        .replace("naga::valid::Capabilities::", "capability ")
        .replace("''", "")
}

/// A range clamped to the text (naga's spans are byte offsets of it).
pub fn clamp(range: Range<usize>, source: &str) -> Range<usize> {
    let end = range.end.min(source.len());
    range.start.min(end)..end
}

/// How naga's `Debug` output spells the scalar types, and how WGSL does.
const SCALARS: &[(&str, &str)] = &[
    ("Scalar { kind: Uint, width: 4 }", "u32"),
    ("Scalar { kind: Sint, width: 4 }", "i32"),
    ("Scalar { kind: Float, width: 4 }", "f32"),
    ("Scalar { kind: Float, width: 2 }", "f16"),
    ("Scalar { kind: Float, width: 8 }", "f64"),
    ("Scalar { kind: Uint, width: 8 }", "u64"),
    ("Scalar { kind: Sint, width: 8 }", "i64"),
    ("Scalar { kind: Bool, width: 1 }", "bool"),
    ("Scalar { kind: AbstractInt, width: 8 }", "AbstractInt"),
    ("Scalar { kind: AbstractFloat, width: 8 }", "AbstractFloat"),
];

/// naga's validation messages print its IR: arena handles (`[7]`), `Debug`
/// types (`Scalar(Scalar { kind: Uint, width: 4 })`) and labels such as
/// `naga::ir::Expression [6]`. This rewrites them the way WGSL users read
/// them: `with [5] (of type Scalar(..Uint..))` becomes ``with `u32` ``.
pub fn tidy(text: &str) -> String {
    let mut text = text.to_owned();
    for (debug, wgsl) in SCALARS {
        text = text.replace(debug, wgsl);
    }
    for (_, wgsl) in SCALARS {
        text = text.replace(&format!("Scalar({wgsl})"), wgsl);
        for (size, n) in [("Bi", 2), ("Tri", 3), ("Quad", 4)] {
            text = text.replace(
                &format!("Vector {{ size: {size}, scalar: {wgsl} }}"),
                &format!("vec{n}<{wgsl}>"),
            );
        }
    }
    for (ir, plain) in [
        ("naga::ir::Expression", "this expression"),
        ("naga::ir::Function", "this function"),
        ("naga::ir::GlobalVariable", "this global"),
        ("naga::ir::", ""),
    ] {
        text = text.replace(ir, plain);
    }
    strip_handles(&text)
        .replace("Type '' is invalid", "A type is invalid")
        .replace(" '' ", " ")
}

/// Drops arena handles (` [7]`); ` [5] (of type T)` becomes `` `T` ``.
fn strip_handles(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" [") {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let digits = after
            .get(2..)
            .unwrap_or_default()
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 || !after.get(2 + digits..).is_some_and(|r| r.starts_with(']')) {
            out.push_str(" [");
            rest = after.get(2..).unwrap_or_default();
            continue;
        }
        rest = after.get(3 + digits..).unwrap_or_default();
        if let Some(typed) = rest.strip_prefix(" (of type ") {
            // The matching `)`.
            let mut depth = 1usize;
            let close = typed.char_indices().find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(j)
            });
            if let Some(j) = close {
                out.push_str(" `");
                out.push_str(typed.get(..j).unwrap_or_default());
                out.push('`');
                rest = typed.get(j + 1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}
