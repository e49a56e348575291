//! What the macro adds to the shared texel formats
//! (`vyre_analysis::spec::TexelFormat`, which the runtime re-exports): the
//! host texel as a [`RustTy`], filtering with the graph's declared
//! features, and the list of names for messages.

use vyre_analysis::spec::TexelFormat;

use super::rust_types::{Prim, RustTy};

/// Every format's name, for messages.
pub fn format_names() -> String {
    TexelFormat::ALL
        .iter()
        .map(|f| format!("`{}`", f.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The host texel type of `format` ([`TexelFormat::host_texel`] as a
/// [`RustTy`]).
pub fn texel_type(format: TexelFormat) -> RustTy {
    let text = format.host_texel();
    let prim = |name: &str| Prim::ALL.into_iter().find(|p| p.name() == name);
    let parsed = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(array) => array.split_once("; ").and_then(|(elem, n)| {
            Some(RustTy::Array(
                Box::new(RustTy::Prim(prim(elem)?)),
                n.parse().ok()?,
            ))
        }),
        None => prim(text).map(RustTy::Prim),
    };
    parsed.unwrap_or(RustTy::Array(
        Box::new(RustTy::Prim(Prim::U8)),
        format.texel_bytes(),
    ))
}

/// Whether a linear sampler may filter `format`, given whether the graph
/// declares `float32_filterable`.
pub fn filterable(format: TexelFormat, float32_filterable: bool) -> bool {
    format.filterable() || (float32_filterable && format.is_float32())
}
