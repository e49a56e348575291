//! The Rust structs generated beside the graph: one per WGSL struct the
//! bindings' types need, deduplicated across kernels (which must then
//! define it alike), and never named like the graph's own types or the
//! Rust prelude.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::diag::Diagnostics;
use crate::model::{KernelDecl, KernelInterface, StructDef};

/// Rust prelude names a generated struct must not take: it would shadow
/// them in the user's module.
const PRELUDE: &[&str] = &[
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "ToString",
    "ToOwned",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Default",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "TryFrom",
    "TryInto",
    "FromIterator",
];

/// Why a generated struct may not be called `name` in graph `graph`.
pub fn struct_name_clash(name: &str, graph: &str) -> Option<String> {
    if name == graph {
        Some(format!("the graph's own type is `{graph}`"))
    } else if name == format!("{graph}Outputs") || name == format!("{graph}Resident") {
        Some(format!("graph! generates `{name}` for the graph `{graph}`"))
    } else if PRELUDE.contains(&name) {
        Some(format!("it would shadow the Rust prelude's `{name}`"))
    } else {
        None
    }
}

/// The structs of every kernel, deduplicated, each with the kernel it
/// came from; a clash with a reserved name or a second, different
/// definition is reported.
pub fn collect_structs(
    kernels: &[Option<KernelInterface>],
    kernel_decls: &[KernelDecl],
    graph_name: &str,
    diag: &mut Diagnostics,
) -> Vec<(StructDef, String)> {
    let mut structs: Vec<(StructDef, String)> = Vec::new();
    let mut struct_spans: HashMap<String, Span> = HashMap::new();
    for (k, decl) in kernels.iter().zip(kernel_decls) {
        let Some(k) = k else { continue };
        for s in &k.structs {
            if let Some(clash) = struct_name_clash(&s.name, graph_name) {
                let at = k
                    .struct_spans
                    .iter()
                    .find(|(n, _)| *n == s.name)
                    .map_or_else(|| decl.name.span(), |(_, span)| *span);
                diag.error(
                    at,
                    format!(
                        "kernel `{}`: WGSL struct `{}` becomes a Rust struct of that name beside the graph, but {clash}; rename the WGSL struct",
                        decl.name, s.name
                    ),
                );
                continue;
            }
            match structs.iter().find(|(existing, _)| existing.name == s.name) {
                Some((existing, origin)) if existing != s => {
                    let first = struct_spans
                        .get(&s.name)
                        .copied()
                        .unwrap_or_else(|| decl.name.span());
                    diag.error_with_note(
                        decl.name.span(),
                        format!(
                            "kernel `{}` defines struct `{}` differently from kernel `{origin}`; both become one Rust struct `{}`, so their members, types and layout must match",
                            decl.name, s.name, s.name
                        ),
                        first,
                        format!("kernel `{origin}` defines `{}` here", s.name),
                    );
                }
                Some(_) => {}
                None => {
                    struct_spans.insert(s.name.clone(), decl.name.span());
                    structs.push((s.clone(), decl.name.to_string()));
                }
            }
        }
    }
    structs
}
