//! One argument trait per host input of a graph: what a run accepts for
//! that buffer (`&[T]`, `&Vec<T>`, `&T`, a resident handle, an `Input`),
//! and, when something else is passed, one error naming the graph, the
//! buffer and its element type (`#[diagnostic::on_unimplemented]`).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Ident;
use vyre_analysis::BufferClass;

use super::rust_types::type_tokens;
use super::tokens::private;
use crate::model::BufferOut;

/// The trait a run's argument for host input `b` must implement: `&[T]`,
/// `&Vec<T>`, `&T`, `&GpuBufferHandle` or an `Input<T>`, where `T` is the
/// buffer's element type. Its `on_unimplemented` message names the graph,
/// the buffer and `T`, which a generic runtime trait could not spell out.
pub fn arg_trait(graph: &Ident, vis: &syn::Visibility, t: &Ident, b: &BufferOut) -> TokenStream {
    let p = private();
    let ty = type_tokens(&b.element);
    let elem = b.element.display();
    let buffer = &b.name;
    // A texture's resident form is a texture, never a buffer.
    let texture = b.texture.as_ref().and_then(|t| t.format()).is_some();
    let (kind, device) = if texture {
        ("texture", "GpuTextureHandle")
    } else {
        ("buffer", "GpuBufferHandle")
    };
    let (class, holds, expected) = match b.class {
        BufferClass::Uniform => (
            "uniform",
            format!("one `{elem}`"),
            format!("`&{elem}` or `&{device}`"),
        ),
        class => (
            if class == BufferClass::InOut {
                "inout"
            } else {
                "input"
            },
            if texture {
                format!("texels of `{elem}`")
            } else {
                format!("elements of `{elem}`")
            },
            format!("`&[{elem}]`, `&Vec<{elem}>` or `&{device}`"),
        ),
    };
    let message = format!(
        "graph `{graph}`: `{{Self}}` cannot be passed for {class} {kind} `{buffer}`, which holds {holds}"
    );
    let label = format!("expected {expected} for `{buffer}`");
    let note = if texture {
        format!(
            "`{graph}`'s runs take a texture as its texels, row after row (`&[T]` or `&Vec<T>`), or as a `&GpuTextureHandle` (a texture on the device), with `T` = `{elem}` for `{buffer}`"
        )
    } else {
        format!(
            "`{graph}`'s runs take every input, inout and uniform by shared reference, in declaration order: `&[T]`, `&Vec<T>`, `&T` (one value) or `&GpuBufferHandle` (a buffer on the device), with `T` = `{elem}` for `{buffer}`"
        )
    };
    let doc = format!(
        "What a run of `{graph}` accepts for `{buffer}`: `&[{elem}]`, `&Vec<{elem}>`, `&{elem}` or `&{device}`."
    );
    if let Some(header) = &b.header {
        return headed_arg_trait(graph, vis, t, b, &type_tokens(header), &header.display());
    }
    let device_impl = if texture {
        quote! {
            impl<'a> #t<'a> for &'a #p::GpuTextureHandle {
                fn __vyre_input(self) -> #p::Input<'a, #ty> {
                    #p::Input::Texture(self)
                }
            }
        }
    } else {
        quote! {
            impl<'a> #t<'a> for &'a #p::GpuBufferHandle {
                fn __vyre_input(self) -> #p::Input<'a, #ty> {
                    #p::Input::Device(self)
                }
            }
        }
    };
    quote_spanned! {b.name.span()=>
        #[doc = #doc]
        #[doc(hidden)]
        // Used by the typed runs only: a graph driven through `graph()` alone
        // must not warn about a trait its user never wrote.
        #[allow(non_camel_case_types, dead_code)]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #vis trait #t<'a> {
            /// The typed input.
            fn __vyre_input(self) -> #p::Input<'a, #ty>;
        }
        impl<'a> #t<'a> for &'a [#ty] {
            fn __vyre_input(self) -> #p::Input<'a, #ty> {
                #p::Input::Host(self)
            }
        }
        impl<'a> #t<'a> for &'a ::std::vec::Vec<#ty> {
            fn __vyre_input(self) -> #p::Input<'a, #ty> {
                #p::Input::Host(self.as_slice())
            }
        }
        impl<'a> #t<'a> for &'a #ty {
            fn __vyre_input(self) -> #p::Input<'a, #ty> {
                #p::Input::Host(::core::slice::from_ref(self))
            }
        }
        impl<'a> #t<'a> for #p::Input<'a, #ty> {
            fn __vyre_input(self) -> #p::Input<'a, #ty> {
                self
            }
        }
        #device_impl
    }
}

/// [`arg_trait`] for a buffer with a header: it takes `(&header, &elements)`,
/// a `&Headed`, a resident handle, or a `HeadedInput`.
fn headed_arg_trait(
    graph: &Ident,
    vis: &syn::Visibility,
    t: &Ident,
    b: &BufferOut,
    h: &TokenStream,
    header: &str,
) -> TokenStream {
    let p = private();
    let ty = type_tokens(&b.element);
    let elem = b.element.display();
    let buffer = &b.name;
    let message = format!(
        "graph `{graph}`: `{{Self}}` cannot be passed for buffer `{buffer}`, which holds a `{header}` header and elements of `{elem}`"
    );
    let label = format!(
        "expected `(&{header}, &[{elem}])`, `&Headed<{header}, {elem}>` or `&GpuBufferHandle` for `{buffer}`"
    );
    let doc = format!(
        "What a run of `{graph}` accepts for `{buffer}`: `(&{header}, &[{elem}])`, `(&{header}, &Vec<{elem}>)`, `&Headed<{header}, {elem}>` or `&GpuBufferHandle`."
    );
    quote_spanned! {b.name.span()=>
        #[doc = #doc]
        #[doc(hidden)]
        // Used by the typed runs only: a graph driven through `graph()` alone
        // must not warn about a trait its user never wrote.
        #[allow(non_camel_case_types, dead_code)]
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        #vis trait #t<'a> {
            /// The typed input.
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty>;
        }
        impl<'a> #t<'a> for (&'a #h, &'a [#ty]) {
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty> {
                self.into()
            }
        }
        impl<'a> #t<'a> for (&'a #h, &'a ::std::vec::Vec<#ty>) {
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty> {
                self.into()
            }
        }
        impl<'a> #t<'a> for &'a #p::Headed<#h, #ty> {
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty> {
                self.into()
            }
        }
        impl<'a> #t<'a> for &'a #p::GpuBufferHandle {
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty> {
                self.into()
            }
        }
        impl<'a> #t<'a> for #p::HeadedInput<'a, #h, #ty> {
            fn __vyre_input(self) -> #p::HeadedInput<'a, #h, #ty> {
                self
            }
        }
    }
}
