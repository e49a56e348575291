//! What is emitted beside the errors when anything failed ([`stub`]): the
//! same type with the same methods (bodies unreachable; signatures from
//! the table the real API is built from, `methods.rs`), the same output
//! types and an empty `SPEC`, so the user's other code still resolves and
//! they see the real errors, not a cascade.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::methods::{METHODS, On, Spelling, signature};
use super::rust_types::{struct_tokens, type_tokens};
use super::tokens::{borrowed_str, is_host_input, private};
use crate::model::{BufferDecl, GraphInput, Header, Prim, RustTy, StubTypes};

/// What is emitted beside the errors when anything failed: the same type
/// with the same methods (bodies unreachable), so the user's other code
/// still resolves and they see the real errors, not a cascade.
pub fn stub(input: &GraphInput, known: &StubTypes) -> TokenStream {
    let Some(Header { attrs, vis, name }) = &input.header else {
        return TokenStream::new();
    };
    let p = private();
    let docs = attrs.iter().filter(|a| a.path().is_ident("doc"));
    let spelling = stub_spelling(input, name);
    let [one_gpu, any_engine] = [On::OneGpu, On::AnyEngine].map(|on| stub_methods(&spelling, on));
    let spec_name = borrowed_str(&name.to_string());
    // Outputs keep their names, and their types where a kernel that
    // reflected says them, so user code reading them does not cascade.
    let structs = known
        .structs
        .iter()
        .map(|(def, origin)| struct_tokens(def, vis, &format!("kernel `{origin}`")));
    let outputs = stub_outputs(input, known, vis, name);
    quote! {
        #(#docs)*
        /// (graph! reported errors; this is a placeholder.)
        #[derive(::core::fmt::Debug)]
        #vis struct #name<E = #p::Graph> {
            _graph: ::core::marker::PhantomData<E>,
        }
        #(#structs)*
        #outputs
        #[allow(unused_variables, clippy::diverging_sub_expression, clippy::too_many_arguments)]
        impl #name {
            /// Placeholder (graph! reported errors): an empty graph.
            pub const SPEC: #p::GraphSpec = #p::GraphSpec {
                name: #spec_name,
                kernels: #p::Cow::Borrowed(&[]),
                buffers: #p::Cow::Borrowed(&[]),
                nodes: #p::Cow::Borrowed(&[]),
                features: #p::Cow::Borrowed(&[]),
                schedule: ::core::option::Option::None,
                fused: #p::Cow::Borrowed(&[]),
                loops: #p::Cow::Borrowed(&[]),
            };
            #one_gpu
        }
        #[allow(unused_variables, clippy::diverging_sub_expression, clippy::too_many_arguments)]
        impl<E: #p::Engine> #name<E> {
            #any_engine
        }
    }
}

/// How the stub spells the signatures of the table (`methods.rs`): the
/// arity as declared (`n` when no input's size can give it, then one
/// argument per host input), each argument of any type.
fn stub_spelling(input: &GraphInput, name: &Ident) -> Spelling {
    let inputs: Vec<Ident> = input
        .buffers
        .iter()
        .filter(|b| is_host_input(b.class) && !b.is_sampler())
        .enumerate()
        .map(|(i, b)| {
            let mut ident = b.name.clone();
            ident.set_span(Span::call_site());
            if ident == "n" || ident == "config" {
                format_ident!("__vyre_arg{i}")
            } else {
                ident
            }
        })
        .collect();
    let generics: Vec<Ident> = (0..inputs.len())
        .map(|i| format_ident!("__VyreT{i}"))
        .collect();
    let needs_n = !input.buffers.iter().any(BufferDecl::infers_n);
    let n_param = needs_n.then(|| quote!(_n: u64,));
    let generic_list = (!generics.is_empty()).then(|| quote!(<#(#generics),*>));
    // One instance of `run_batch` and `run_many`: as the real API spells
    // it, the inputs alone, or a tuple with `n` first.
    let n_ty = needs_n.then(|| quote!(u64,));
    let instance = match (needs_n, generics.as_slice()) {
        (false, [one]) => quote!(#one),
        _ => quote!((#n_ty #(#generics),*)),
    };
    Spelling {
        input_generics: generic_list.clone(),
        inputs: quote!(#n_param #(#inputs: #generics),*),
        instance_generics: generic_list.unwrap_or_default(),
        instance,
        ..Spelling::new(name)
    }
}

/// The placeholder `NameOutputs` and `NameResident`, with `Clone` and
/// `Debug` as the real ones derive them.
fn stub_outputs(
    input: &GraphInput,
    known: &StubTypes,
    vis: &syn::Visibility,
    name: &Ident,
) -> TokenStream {
    let p = private();
    let outputs_name = format_ident!("{}Outputs", name);
    let resident_name = format_ident!("{}Resident", name);
    // An output of unknown type is `!` (it coerces to whatever the user
    // expects); then `Default` cannot be derived.
    let outputs = output_types(input, known);
    let out_fields = outputs.iter().map(|(ident, ty)| match ty {
        Some(ty) => {
            let ty = type_tokens(ty);
            quote!(#[doc = "Placeholder."] pub #ident: ::std::vec::Vec<#ty>)
        }
        None => quote!(#[doc = "Placeholder."] pub #ident: #p::Unknown),
    });
    let derive_default = outputs
        .iter()
        .all(|(_, ty)| ty.is_some())
        .then(|| quote!(#[derive(::core::default::Default)]));
    // A texture output is left on the device as a texture, as in the real
    // resident outputs.
    let resident_fields = known.outputs.iter().map(|(ident, _)| {
        let texture = input
            .buffers
            .iter()
            .any(|b| b.name == *ident && b.texture.is_some());
        let handle = if texture {
            quote!(#p::GpuTextureHandle)
        } else {
            quote!(#p::GpuBufferHandle)
        };
        quote!(#[doc = "Placeholder."] pub #ident: #handle)
    });
    // Written out: a derive would read an output of unknown type (`!`) and
    // warn about unreachable code.
    let clone_debug = [&outputs_name, &resident_name].map(|ty| {
        quote! {
            impl ::core::clone::Clone for #ty {
                fn clone(&self) -> Self {
                    ::core::unreachable!("graph! failed to compile")
                }
            }
            impl ::core::fmt::Debug for #ty {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str("(graph! reported errors; a placeholder)")
                }
            }
        }
    });
    quote! {
        /// Placeholder outputs (graph! reported errors).
        #derive_default
        #vis struct #outputs_name {
            #(#out_fields,)*
        }
        /// Placeholder resident outputs (graph! reported errors).
        #vis struct #resident_name {
            #(#resident_fields,)*
        }
        #(#clone_debug)*
    }
}

/// Each output's element type where known: as a kernel binds it, else (a
/// reduction or scan that failed, so no generated kernel says it) the
/// type its node writes, or `f32`, the type its error suggests. `None`
/// (the stub's `!`) only for an output nothing types.
fn output_types(input: &GraphInput, known: &StubTypes) -> Vec<(Ident, Option<RustTy>)> {
    known
        .outputs
        .iter()
        .map(|(ident, ty)| {
            let reduced = || {
                let d = input.reductions.iter().find(|d| d.dst == *ident)?;
                let written = d.ty.as_ref().map(Ident::to_string);
                // The types reductions take (`lower/types.rs`).
                let prim = [
                    Prim::F32,
                    Prim::U32,
                    Prim::I32,
                    Prim::F16,
                    Prim::U64,
                    Prim::I64,
                    Prim::F64,
                ]
                .into_iter()
                .find(|p| written.as_deref() == Some(p.name().trim_start_matches("half::")))
                .unwrap_or(Prim::F32);
                Some(RustTy::Prim(prim))
            };
            (ident.clone(), ty.clone().or_else(reduced))
        })
        .collect()
}

/// The generated type's methods of the `impl` block `on`: every such
/// method of the table the real API is built from (`methods.rs`), each with
/// the real one's signature (every input of its own generic type, so no
/// argument adds an error) and an unreachable body.
fn stub_methods(spelling: &Spelling, on: On) -> TokenStream {
    let unreachable = quote!(::core::unreachable!("graph! failed to compile"));
    let methods = METHODS.iter().filter(|m| m.on == on).map(|m| {
        let sig = signature(m, spelling);
        quote! {
            /// Placeholder (graph! reported errors).
            #sig {
                #unreachable
            }
        }
    });
    quote!(#(#methods)*)
}
