//! What is emitted beside the errors when anything failed ([`stub`]): the
//! same type with the same methods (bodies unreachable), so the user's
//! other code still resolves and they see the real errors, not a cascade.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::rust_types::{struct_tokens, type_tokens};
use super::tokens::{is_host_input, private};
use crate::model::{BufferDecl, GraphInput, Header, StubTypes};

/// What is emitted beside the errors when anything failed: the same type
/// with the same methods (bodies unreachable), so the user's other code
/// still resolves and they see the real errors, not a cascade.
pub fn stub(input: &GraphInput, known: &StubTypes) -> TokenStream {
    let Some(Header { attrs, vis, name }) = &input.header else {
        return TokenStream::new();
    };
    let p = private();
    let outputs_name = format_ident!("{}Outputs", name);
    let resident_name = format_ident!("{}Resident", name);
    let docs = attrs.iter().filter(|a| a.path().is_ident("doc"));
    // Arity as declared: `n` when no input's size can give it, then one
    // argument per host input, each of any type.
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
    let params = quote!(#(#inputs: #generics),*);
    let methods = stub_methods(
        (&outputs_name, &resident_name),
        generic_list.as_ref(),
        n_param.as_ref(),
        &params,
    );
    // Outputs keep their names, and their types where a kernel that
    // reflected says them, so user code reading them does not cascade.
    let structs = known
        .structs
        .iter()
        .map(|(def, origin)| struct_tokens(def, vis, &format!("kernel `{origin}`")));
    // An output of unknown type is `!` (it coerces to whatever the user
    // expects); then `Default` cannot be derived.
    let out_fields = known.outputs.iter().map(|(ident, ty)| match ty {
        Some(ty) => {
            let ty = type_tokens(ty);
            quote!(#[doc = "Placeholder."] pub #ident: ::std::vec::Vec<#ty>)
        }
        None => quote!(#[doc = "Placeholder."] pub #ident: #p::Unknown),
    });
    let derive_default = known
        .outputs
        .iter()
        .all(|(_, ty)| ty.is_some())
        .then(|| quote!(#[derive(::core::default::Default)]));
    let resident_fields = known
        .outputs
        .iter()
        .map(|(ident, _)| quote!(#[doc = "Placeholder."] pub #ident: #p::GpuBufferHandle));
    quote! {
        #(#docs)*
        /// (graph! reported errors; this is a placeholder.)
        #vis struct #name {
            _graph: (),
        }
        #(#structs)*
        /// Placeholder outputs (graph! reported errors).
        #derive_default
        #vis struct #outputs_name {
            #(#out_fields,)*
        }
        /// Placeholder resident outputs (graph! reported errors).
        #vis struct #resident_name {
            #(#resident_fields,)*
        }
        #[allow(unused_variables, clippy::diverging_sub_expression, clippy::too_many_arguments)]
        impl #name {
            #methods
        }
    }
}

/// The generated type's methods, each with the same signature as the real
/// one (every input of its own generic type) and an unreachable body.
fn stub_methods(
    (outputs_name, resident_name): (&Ident, &Ident),
    generic_list: Option<&TokenStream>,
    n_param: Option<&TokenStream>,
    params: &TokenStream,
) -> TokenStream {
    let p = private();
    let unreachable = quote!(::core::unreachable!("graph! failed to compile"));
    quote! {
    /// Placeholder (graph! reported errors).
    pub fn new(gpu: &#p::Gpu) -> ::core::result::Result<Self, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run #generic_list (&self, #n_param #params) -> ::core::result::Result<#outputs_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run_with #generic_list (&self, config: &#p::DispatchConfig, #n_param #params) -> ::core::result::Result<#outputs_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run_reported #generic_list (&self, config: &#p::DispatchConfig, #n_param #params) -> ::core::result::Result<(#outputs_name, #p::RunReport), #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run_into #generic_list (&self, config: &#p::DispatchConfig, outputs: &mut #outputs_name, #n_param #params) -> ::core::result::Result<#p::RunReport, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run_resident #generic_list (&self, #n_param #params) -> ::core::result::Result<#resident_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn run_resident_with #generic_list (&self, config: &#p::DispatchConfig, #n_param #params) -> ::core::result::Result<#resident_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn resident_outputs(&self, config: &#p::DispatchConfig, n: u64) -> ::core::result::Result<#resident_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn record #generic_list (&self, encoder: &mut #p::wgpu::CommandEncoder, config: &#p::DispatchConfig, outputs: &#resident_name, #n_param #params) -> ::core::result::Result<#p::RecordedRun<'_>, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub async fn run_async #generic_list (&self, config: &#p::DispatchConfig, #n_param #params) -> ::core::result::Result<#outputs_name, #p::BackendError> {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn graph(&self) -> &#p::Graph {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn describe(&self) -> #p::Description {
        #unreachable
    }
    /// Placeholder (graph! reported errors).
    pub fn to_dot(&self) -> ::std::string::String {
        #unreachable
    }
    }
}
