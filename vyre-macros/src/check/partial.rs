//! Element types of a kernel that failed ([`PartialTypes`]), for the error
//! stub only: a kernel that parses but does not validate still says what
//! its bindings hold, and one whose functions do not parse is parsed again
//! without them (its globals and structs usually still do). The stub's
//! outputs then keep their real types, so user code reading them gets no
//! second error.

use naga::proc::Layouter;
use naga::{ArraySize, Module, TypeInner};

use crate::check::convert::Converter;
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
/// text after an unbalanced brace dropped.
fn without_functions(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    loop {
        let Some(at) = find_fn(rest) else {
            out.push_str(rest);
            break;
        };
        // Attributes before `fn` (`@compute @workgroup_size(64)`) go too:
        // cut back to the end of the previous item.
        let head = rest.get(..at).unwrap_or_default();
        let cut = head.rfind([';', '}']).map_or(0, |i| i + 1);
        out.push_str(head.get(..cut).unwrap_or_default());
        let body = rest.get(at..).unwrap_or_default();
        let Some(open) = body.find('{') else { break };
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in body.get(open..).unwrap_or_default().char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(open + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        out.push('\n');
        rest = body.get(end..).unwrap_or_default();
    }
    out
}

/// The byte offset of the next `fn` keyword.
fn find_fn(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find("fn")) {
        let at = from + i;
        let before = at.checked_sub(1).and_then(|j| bytes.get(j)).copied();
        let after = bytes.get(at + 2).copied();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        from = at + 2;
    }
    None
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
}
