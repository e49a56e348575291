//! Rust types and generated structs as tokens ([`type_tokens`], [`struct_tokens`]),
//! on the macro's thread: the conversion itself (`rust_types.rs`) runs
//! where no span may be made.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::model::{Prim, RustTy, StructDef};

/// The type as tokens (structs by their plain name, at the call site).
pub fn type_tokens(ty: &RustTy) -> TokenStream {
    match ty {
        RustTy::Prim(Prim::F32) => quote!(f32),
        RustTy::Prim(Prim::U32) => quote!(u32),
        RustTy::Prim(Prim::I32) => quote!(i32),
        RustTy::Prim(Prim::U64) => quote!(u64),
        RustTy::Prim(Prim::I64) => quote!(i64),
        RustTy::Prim(Prim::F64) => quote!(f64),
        RustTy::Prim(Prim::F16) => quote!(::vyre_graph::__private::half::f16),
        RustTy::Prim(Prim::U8) => quote!(u8),
        RustTy::Prim(Prim::I8) => quote!(i8),
        RustTy::Prim(Prim::U16) => quote!(u16),
        RustTy::Prim(Prim::I16) => quote!(i16),
        RustTy::Array(t, n) => {
            let t = type_tokens(t);
            let n = *n as usize;
            quote!([#t; #n])
        }
        RustTy::Struct(name, _) => match rust_ident(name, Span::call_site()) {
            Some(ident) => quote!(#ident),
            None => quote!(()),
        },
    }
}

/// A Rust identifier for `name`: raw (`r#type`) for keywords; `None` for
/// names Rust cannot spell (`self`, `crate`, ...). Never panics.
pub fn rust_ident(name: &str, span: Span) -> Option<Ident> {
    let mut ident = syn::parse_str::<Ident>(name)
        .ok()
        .or_else(|| syn::parse_str::<Ident>(&format!("r#{name}")).ok())?;
    if ident.to_string().trim_start_matches("r#") != name {
        return None;
    }
    ident.set_span(span);
    Some(ident)
}

/// The generated items for one struct: definition, `Pod`/`Zeroable`,
/// `Default` and compile-time layout assertions.
pub fn struct_tokens(def: &StructDef, vis: &syn::Visibility, origin: &str) -> TokenStream {
    let Some(name) = rust_ident(&def.name, Span::call_site()) else {
        return TokenStream::new();
    };
    let size = def.size as usize;
    let doc = format!(
        "The WGSL struct `{}` of {origin}, laid out exactly as in WGSL ({} bytes, explicit padding fields).",
        def.name, def.size
    );
    let mut fields = Vec::new();
    let mut asserts = Vec::new();
    for f in &def.fields {
        let Some(fname) = rust_ident(&f.name, Span::call_site()) else {
            continue;
        };
        let offset = f.offset as usize;
        match f.pad {
            Some(bytes) => {
                let bytes = bytes as usize;
                fields.push(quote! {
                    /// Padding to match the WGSL layout (keep it zero).
                    #vis #fname: [u8; #bytes]
                });
            }
            None => {
                let ty = type_tokens(&f.ty);
                let fdoc = format!("`{}: {}` at byte offset {}.", f.name, f.wgsl, f.offset);
                fields.push(quote! {
                    #[doc = #fdoc]
                    #vis #fname: #ty
                });
            }
        }
        asserts.push(quote! {
            ::core::assert!(::core::mem::offset_of!(#name, #fname) == #offset);
        });
    }
    quote! {
        #[doc = #doc]
        #[repr(C)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::cmp::PartialEq)]
        #vis struct #name {
            #(#fields,)*
        }
        // SAFETY: every field is a plain-old-data array or scalar, padding is
        // explicit (`[u8; k]` fields), and the assertions below prove the Rust
        // layout has no implicit padding: the offsets are contiguous and the
        // size is their sum.
        unsafe impl ::vyre_graph::__private::bytemuck::Zeroable for #name {}
        // SAFETY: as above.
        unsafe impl ::vyre_graph::__private::bytemuck::Pod for #name {}
        impl ::core::default::Default for #name {
            fn default() -> Self {
                <Self as ::vyre_graph::__private::bytemuck::Zeroable>::zeroed()
            }
        }
        const _: () = {
            ::core::assert!(::core::mem::size_of::<#name>() == #size);
            #(#asserts)*
        };
    }
}
