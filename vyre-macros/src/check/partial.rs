//! Element types of a kernel that failed ([`PartialTypes`]), for the error
//! stub only: a kernel that parses but does not validate still says what
//! its bindings hold, and one whose functions do not parse is parsed again
//! without them (its globals and structs usually still do). The stub's
//! outputs then keep their real types, so user code reading them gets no
//! second error.

use naga::proc::Layouter;
use naga::{ArraySize, Module, TypeInner};

use crate::check::convert::Converter;
use crate::model::lex::{Kind, is_punct, is_word, lex, matching_close};
use crate::model::rust_types::{RustTy, StructDef};

/// What a failed kernel's bindings hold.
pub struct PartialTypes {
    /// Per named global with a binding: its Rust element type.
    pub bindings: Vec<(String, RustTy)>,
    /// Structs those types need.
    pub structs: Vec<StructDef>,
}

/// Types of `module`'s bindings (best effort: unconvertible ones are left
/// out).
pub fn from_module(module: &Module) -> Option<PartialTypes> {
    let mut layouter = Layouter::default();
    layouter.update(module.to_ctx()).ok()?;
    let mut converter = Converter::new(module, &layouter);
    let mut bindings = Vec::new();
    for (_, global) in module.global_variables.iter() {
        let (Some(_), Some(name)) = (&global.binding, &global.name) else {
            continue;
        };
        let Ok(ty) = module.types.get_handle(global.ty) else {
            continue;
        };
        let storage = matches!(global.space, naga::AddressSpace::Storage { .. });
        let element = match &ty.inner {
            TypeInner::Array {
                base,
                size: ArraySize::Dynamic | ArraySize::Constant(_),
                stride,
            } if storage => converter.element(*base, *stride),
            _ => converter.convert(global.ty),
        };
        if let Ok(element) = element {
            bindings.push((name.clone(), element));
        }
    }
    let structs = std::mem::take(&mut converter.structs);
    Some(PartialTypes { bindings, structs })
}

/// Types from a source that does not parse: its top-level items other than
/// functions, parsed alone.
pub fn from_unparsed(source: &str) -> Option<PartialTypes> {
    let globals = without_functions(source);
    let module = naga::front::wgsl::parse_str(&globals).ok()?;
    from_module(&module)
}

/// `source` with every `fn` item (header and body) blanked out, and any
/// text after an unbalanced brace dropped. On tokens, so a `fn`, `;` or
/// brace inside a comment is not taken for code (a comment left open ends
/// the tokens: the text after it is kept as it is, and naga reports it).
fn without_functions(source: &str) -> String {
    let tokens = lex(source).tokens;
    let mut out = String::with_capacity(source.len());
    // Bytes of `source` before `copied` are in `out` or dropped; tokens
    // before `next` are looked at.
    let mut copied = 0;
    let mut next = 0;
    while let Some(fn_at) = (next..tokens.len()).find(|&i| is_word(source, tokens.get(i), "fn")) {
        // Attributes before `fn` (`@compute @workgroup_size(64)`) go too:
        // cut back to the end of the previous item.
        let cut = tokens
            .get(next..fn_at)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|t| matches!(t.kind, Kind::Punct(b';' | b'}')))
            .map_or(copied, |t| t.end);
        out.push_str(source.get(copied..cut).unwrap_or_default());
        let body = (fn_at..tokens.len()).find(|&i| is_punct(tokens.get(i), b'{'));
        let Some(close) = body.and_then(|open| matching_close(&tokens, open)) else {
            return out;
        };
        out.push('\n');
        copied = tokens.get(close).map_or(source.len(), |t| t.end);
        next = close + 1;
    }
    out.push_str(source.get(copied..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_survive_a_broken_function() {
        let src = "struct P { a: f32 }\n@group(0) @binding(0) var<storage, read_write> out: array<vec2<u32>>;\n@group(0) @binding(1) var<uniform> p: P;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    out[g.x] = g.x\n}\n";
        assert!(naga::front::wgsl::parse_str(src).is_err());
        let types = from_unparsed(src).expect("globals parse");
        let names: Vec<&str> = types.bindings.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["out", "p"]);
        assert_eq!(types.structs.len(), 1);
    }

    #[test]
    fn functions_go_but_comments_that_mention_them_do_not_matter() {
        let src = "// fn a() { is not code; }\nstruct P { a: f32 } /* fn b() { } */\n@compute @workgroup_size(1)\nfn main() { let x = 1; }\nconst K: u32 = 2u; fn g() -> u32 { if true { return 1u; } return 2u; }\nalias T = u32;";
        let kept = without_functions(src);
        assert!(!kept.contains("main") && !kept.contains("fn g") && !kept.contains("@compute"));
        assert!(kept.contains("struct P { a: f32 }"), "{kept}");
        assert!(kept.contains("const K: u32 = 2u;") && kept.ends_with("alias T = u32;"));
        assert!(naga::front::wgsl::parse_str(&kept).is_ok(), "{kept}");
        // An unbalanced function drops the rest.
        assert_eq!(without_functions("const A = 1; fn f() { {"), "const A = 1;");
        // A function without a body drops the rest too.
        assert_eq!(without_functions("const A = 1;\nfn f()"), "const A = 1;");
    }
}
