//! Small pieces every file of stage 6 spells: the runtime's `__private`
//! path, borrowed strings, extents, buffer classes and shared enums'
//! variants.

use proc_macro2::{Literal, Span, TokenStream};
use quote::quote;
use syn::Ident;
use vyre_analysis::BufferClass;

use crate::model::Extent;

/// Where generated code reaches the runtime.
pub fn private() -> TokenStream {
    quote!(::vyre_graph::__private)
}

/// `Cow::Borrowed("..")`.
pub fn borrowed_str(s: &str) -> TokenStream {
    let p = private();
    quote!(#p::Cow::Borrowed(#s))
}

/// An [`Extent`] as the runtime's constant.
pub fn extent(e: Extent) -> TokenStream {
    let p = private();
    let (mul, div, add) = (
        Literal::u64_suffixed(e.mul),
        Literal::u64_suffixed(e.div),
        Literal::u64_suffixed(e.add),
    );
    quote!(#p::Extent { mul: #mul, div: #div, add: #add })
}

/// The identifier of a unit variant of a `vyre_analysis::spec` enum (its
/// `Debug` spelling, which the runtime's re-export shares), for
/// `::vyre_graph::__private::Enum::Variant`.
pub fn variant_ident(value: &impl std::fmt::Debug) -> Ident {
    Ident::new(&format!("{value:?}"), Span::call_site())
}

/// A [`BufferClass`] as the runtime's.
pub fn class_tokens(class: BufferClass) -> TokenStream {
    let p = private();
    match class {
        BufferClass::Input => quote!(#p::BufferClass::Input),
        BufferClass::InOut => quote!(#p::BufferClass::InOut),
        BufferClass::Output => quote!(#p::BufferClass::Output),
        BufferClass::Intermediate => quote!(#p::BufferClass::Intermediate),
        BufferClass::Uniform => quote!(#p::BufferClass::Uniform),
    }
}

/// Whether a run takes buffers of `class` from the host.
pub fn is_host_input(class: BufferClass) -> bool {
    matches!(
        class,
        BufferClass::Input | BufferClass::InOut | BufferClass::Uniform
    )
}

/// Whether a run reads buffers of `class` back.
pub fn is_host_output(class: BufferClass) -> bool {
    matches!(class, BufferClass::Output | BufferClass::InOut)
}
