//! Stage 6: tokens. Only `quote!`: every decision was made by the earlier
//! stages. Generated code reaches the runtime only through
//! `::vyre_graph::__private` and uses fully qualified paths, so user code
//! that shadows `Result`, `Vec` or `Option` still works.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use vyre_analysis::{Access, BufferClass};

use crate::analyse::{BufferOut, GraphAnalysis, ProblemSize, SizeOut, StubTypes};
use crate::fold::Fold;
use crate::input::{Extent, GraphInput, Header};
use crate::reflect::BindingKind;
use crate::rust_types::struct_tokens;

fn private() -> TokenStream {
    quote!(::vyre_graph::__private)
}

fn borrowed_str(s: &str) -> TokenStream {
    let p = private();
    quote!(#p::Cow::Borrowed(#s))
}

pub(crate) fn extent(e: Extent) -> TokenStream {
    let p = private();
    let (mul, div, add) = (
        Literal::u64_suffixed(e.mul),
        Literal::u64_suffixed(e.div),
        Literal::u64_suffixed(e.add),
    );
    quote!(#p::Extent { mul: #mul, div: #div, add: #add })
}

fn class_tokens(class: BufferClass) -> TokenStream {
    let p = private();
    match class {
        BufferClass::Input => quote!(#p::BufferClass::Input),
        BufferClass::InOut => quote!(#p::BufferClass::InOut),
        BufferClass::Output => quote!(#p::BufferClass::Output),
        BufferClass::Intermediate => quote!(#p::BufferClass::Intermediate),
        BufferClass::Uniform => quote!(#p::BufferClass::Uniform),
    }
}

fn is_host_input(class: BufferClass) -> bool {
    matches!(
        class,
        BufferClass::Input | BufferClass::InOut | BufferClass::Uniform
    )
}

fn is_host_output(class: BufferClass) -> bool {
    matches!(class, BufferClass::Output | BufferClass::InOut)
}

/// The `GraphSpec` constant's value.
fn spec(a: &GraphAnalysis) -> TokenStream {
    let p = private();
    let name = borrowed_str(&a.header.name.to_string());
    let kernels = a.kernels.iter().map(|k| {
        let label = borrowed_str(&k.label);
        let source = borrowed_str(&k.source);
        let entry = borrowed_str(&k.entry_point);
        let [x, y, z] = k.workgroup_size.map(Literal::u32_suffixed);
        let fold = match k.fold {
            Fold::Linear => quote!(#p::GridFold::Linear),
            Fold::XOnly => quote!(#p::GridFold::XOnly),
        };
        let bindings = k.bindings.iter().map(|b| {
            let bname = borrowed_str(&b.name);
            let group = Literal::u32_suffixed(b.group);
            let binding = Literal::u32_suffixed(b.binding);
            let kind = match b.kind {
                BindingKind::ReadOnlyStorage => quote!(#p::BindingKind::ReadOnlyStorage),
                BindingKind::ReadWriteStorage => quote!(#p::BindingKind::ReadWriteStorage),
                BindingKind::Uniform => quote!(#p::BindingKind::Uniform),
                kind => crate::textures::kind_tokens(kind, &p),
            };
            let element_size = Literal::u32_suffixed(b.element_size);
            let min = Literal::u64_suffixed(b.min_binding_size);
            let access = match b.access {
                Access::Read => quote!(#p::Access::Read),
                Access::Write => quote!(#p::Access::Write),
                Access::ReadWrite => quote!(#p::Access::ReadWrite),
            };
            let wgsl_type = borrowed_str(&b.wgsl_type);
            quote! {
                #p::BindingSpec {
                    name: #bname,
                    group: #group,
                    binding: #binding,
                    kind: #kind,
                    element_size: #element_size,
                    min_binding_size: #min,
                    access: #access,
                    wgsl_type: #wgsl_type,
                }
            }
        });
        quote! {
            #p::KernelSpec {
                label: #label,
                source: #source,
                entry_point: #entry,
                workgroup_size: [#x, #y, #z],
                bindings: #p::Cow::Borrowed(&[#(#bindings),*]),
                fold: #fold,
            }
        }
    });
    let buffers = a.buffers.iter().map(|b| {
        let bname = borrowed_str(&b.name.to_string());
        let class = class_tokens(b.class);
        let element_size = Literal::u32_suffixed(b.element_size);
        let len = extent(b.len);
        let header_bytes = Literal::u32_suffixed(b.header_bytes);
        let texture = crate::textures::resource_tokens(b.texture.as_ref(), b.len, &p);
        let append = match b.append {
            Some(grow) => quote!(::core::option::Option::Some(#p::AppendSpec { grow: #grow })),
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #p::BufferSpec { name: #bname, class: #class, element_size: #element_size, len: #len, header_bytes: #header_bytes, texture: #texture, append: #append }
        }
    });
    let loops = a.loops.iter().map(|l| {
        let label = borrowed_str(&l.label);
        let until = if l.zero {
            quote!(#p::Until::Zero)
        } else {
            quote!(#p::Until::Empty)
        };
        let iterations = l.iterations.iter().map(|&(first, count, buffer)| {
            let (first, count, buffer) = (
                Literal::usize_suffixed(first),
                Literal::usize_suffixed(count),
                Literal::usize_suffixed(buffer),
            );
            quote!(#p::LoopIteration { first_node: #first, nodes: #count, buffer: #buffer })
        });
        quote!(#p::LoopSpec { label: #label, until: #until, iterations: #p::Cow::Borrowed(&[#(#iterations),*]) })
    });
    let nodes = a.nodes.iter().map(node_spec);
    let fused = a.fused.iter().map(|g| {
        let members = g.nodes.iter().map(|&i| Literal::usize_suffixed(i));
        let dispatch = node_spec(&g.dispatch);
        let grid_stride_entry = match &g.grid_stride_entry {
            Some(e) => {
                let e = borrowed_str(e);
                quote!(::core::option::Option::Some(#e))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(#p::FusedGroup { nodes: #p::Cow::Borrowed(&[#(#members),*]), dispatch: #dispatch, grid_stride_entry: #grid_stride_entry })
    });
    let features = a.features.iter().map(|f| {
        let variant = Ident::new(f, Span::call_site());
        quote!(#p::Feature::#variant)
    });
    let levels = a.levels.iter().map(|l| Literal::u32_suffixed(*l));
    let slots = a.slots.iter().map(|s| Literal::usize_suffixed(*s));
    quote! {
        #p::GraphSpec {
            name: #name,
            kernels: #p::Cow::Borrowed(&[#(#kernels),*]),
            buffers: #p::Cow::Borrowed(&[#(#buffers),*]),
            nodes: #p::Cow::Borrowed(&[#(#nodes),*]),
            features: #p::Cow::Borrowed(&[#(#features),*]),
            schedule: ::core::option::Option::Some(#p::ScheduleSpec {
                levels: #p::Cow::Borrowed(&[#(#levels),*]),
                slots: #p::Cow::Borrowed(&[#(#slots),*]),
            }),
            fused: #p::Cow::Borrowed(&[#(#fused),*]),
            loops: #p::Cow::Borrowed(&[#(#loops),*]),
        }
    }
}

/// One `NodeSpec` (a node, or a fused group's dispatch).
fn node_spec(n: &crate::analyse::NodeOut) -> TokenStream {
    let p = private();
    {
        let label = borrowed_str(&n.label);
        let kernel = Literal::usize_suffixed(n.kernel);
        let bindings = n.bindings.iter().map(|&(group, binding, buffer)| {
            let (group, binding, buffer) = (
                Literal::u32_suffixed(group),
                Literal::u32_suffixed(binding),
                Literal::usize_suffixed(buffer),
            );
            quote!(#p::NodeBinding { group: #group, binding: #binding, buffer: #buffer })
        });
        let overrides = n.overrides.iter().map(|(key, value)| {
            let key = borrowed_str(key);
            let value = if value.is_finite() {
                Literal::f64_suffixed(*value)
            } else {
                Literal::f64_suffixed(0.0)
            };
            quote!(#p::OverrideValue { name: #key, value: #value })
        });
        let workgroup_size = match n.workgroup_size {
            Some(size) => {
                let [x, y, z] = size.map(Literal::u32_suffixed);
                quote!(::core::option::Option::Some([#x, #y, #z]))
            }
            None => quote!(::core::option::Option::None),
        };
        let size = match n.size {
            SizeOut::Invocations(e) => {
                let e = extent(e);
                quote!(#p::DispatchSize::Invocations(#e))
            }
            SizeOut::Workgroups(es) => {
                let [x, y, z] = es.map(extent);
                quote!(#p::DispatchSize::Workgroups([#x, #y, #z]))
            }
            SizeOut::Count(b) => {
                let b = Literal::usize_suffixed(b);
                quote!(#p::DispatchSize::Count(#b))
            }
            SizeOut::Indirect(b) => {
                let b = Literal::usize_suffixed(b);
                quote!(#p::DispatchSize::Indirect(#b))
            }
        };
        quote! {
            #p::NodeSpec {
                label: #label,
                kernel: #kernel,
                bindings: #p::Cow::Borrowed(&[#(#bindings),*]),
                overrides: #p::Cow::Borrowed(&[#(#overrides),*]),
                workgroup_size: #workgroup_size,
                size: #size,
            }
        }
    }
}

fn element_doc(b: &BufferOut) -> String {
    let class = match b.class {
        BufferClass::Input => "input",
        BufferClass::InOut => "inout",
        BufferClass::Output => "output",
        BufferClass::Intermediate => "intermediate",
        BufferClass::Uniform => "uniform",
    };
    if let Some(doc) = crate::textures::doc(b, class) {
        doc
    } else if b.class == BufferClass::Uniform {
        format!("`{}` ({class}): one `{}`", b.name, b.element.display())
    } else if b.append.is_some() {
        format!(
            "`{}` (append): up to {} items of `{}`, truncated to its count",
            b.name,
            b.len,
            b.element.display()
        )
    } else if let Some(header) = &b.header {
        format!(
            "`{}` ({class}): a `{}` header, then {} elements of `{}`",
            b.name,
            header.display(),
            b.len,
            b.element.display()
        )
    } else {
        format!(
            "`{}` ({class}): {} elements of `{}`",
            b.name,
            b.len,
            b.element.display()
        )
    }
}

/// The host scratch bytes a headed output is read back into.
fn scratch_ident(b: &BufferOut) -> Ident {
    format_ident!("__vyre_bytes_{}", b.name)
}

/// Kernels as declared: `fold.rs` may have added a wrapped copy of one
/// (same label) for its `over` nodes.
fn distinct_kernels(a: &GraphAnalysis) -> usize {
    let mut labels: Vec<&str> = a.kernels.iter().map(|k| k.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    labels.len()
}

/// The trait a run's argument for host input `b` must implement: `&[T]`,
/// `&Vec<T>`, `&T`, `&GpuBufferHandle` or an `Input<T>`, where `T` is the
/// buffer's element type. Its `on_unimplemented` message names the graph,
/// the buffer and `T`, which a generic runtime trait could not spell out.
fn arg_trait(graph: &Ident, vis: &syn::Visibility, t: &Ident, b: &BufferOut) -> TokenStream {
    let p = private();
    let ty = b.element.tokens();
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
        return headed_arg_trait(graph, vis, t, b, &header.tokens(), &header.display());
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
        #[allow(non_camel_case_types)]
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
    let ty = b.element.tokens();
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
        #[allow(non_camel_case_types)]
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

/// The full expansion of a checked graph.
pub fn expand(a: &GraphAnalysis) -> TokenStream {
    let p = private();
    let Header { attrs, vis, name } = &a.header;
    let outputs_name = format_ident!("{}Outputs", name);
    let resident_name = format_ident!("{}Resident", name);
    let has_docs = attrs.iter().any(|attr| attr.path().is_ident("doc"));
    // `Debug` for the graph type, unless the user derives it.
    let debug_impl = (!derives_debug(attrs)).then(|| {
        quote! {
            impl ::core::fmt::Debug for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(::core::stringify!(#name)).field("graph", &self.graph).finish()
                }
            }
        }
    });
    let default_doc = (!has_docs).then(|| {
        let doc = format!("The `{name}` compute graph.");
        quote!(#[doc = #doc])
    });
    let summary = format!(
        "Generated by `graph!`: {} kernel(s), {} buffer(s), {} node(s). Buffers:",
        distinct_kernels(a),
        a.buffers.len(),
        a.nodes.len()
    );
    let buffer_docs: Vec<String> = a
        .buffers
        .iter()
        .map(|b| format!("- {}", element_doc(b)))
        .collect();

    let structs = a
        .structs
        .iter()
        .map(|(def, origin)| struct_tokens(def, vis, &format!("kernel `{origin}`")));

    // Host inputs, in declaration order (`GraphSpec::host_inputs`).
    let inputs: Vec<(usize, &BufferOut)> = a
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| is_host_input(b.class) && !crate::textures::is_sampler(b.texture.as_ref()))
        .collect();
    let outputs: Vec<(usize, &BufferOut)> = a
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| is_host_output(b.class))
        .collect();
    let lifetime = (!inputs.is_empty()).then(|| quote!(<'a>));
    let n_param = (a.problem_size == ProblemSize::Param).then(|| quote!(n: u64,));
    let n_arg = (a.problem_size == ProblemSize::Param).then(|| quote!(n,));
    // One argument trait per host input, so that a wrong argument is one
    // error naming the graph, the buffer and the element type.
    let arg_traits: Vec<Ident> = inputs
        .iter()
        // Spanned at the buffer's declaration: the notes about the bound
        // and its impls point at `input x[n];`, not at the whole macro.
        .map(|(_, b)| format_ident!("{}Arg_{}", name, b.name, span = b.name.span()))
        .collect();
    let arg_trait_items = inputs
        .iter()
        .zip(&arg_traits)
        .map(|((_, b), t)| arg_trait(name, vis, t, b));
    let params: Vec<TokenStream> = inputs
        .iter()
        .zip(&arg_traits)
        .map(|((_, b), t)| {
            let ident = &b.name;
            quote_spanned!(b.name.span()=> #ident: impl #t<'a>)
        })
        .collect();
    let args: Vec<&Ident> = inputs.iter().map(|(_, b)| &b.name).collect();
    // A headed input's header and elements are joined into owned bytes.
    let owned = inputs
        .iter()
        .zip(&arg_traits)
        .filter(|((_, b), _)| b.header.is_some())
        .map(|((_, b), t)| {
            let ident = &b.name;
            let owned = format_ident!("__vyre_owned_{}", b.name);
            quote!(let #owned = #t::__vyre_input(#ident).into_feed();)
        });
    let feeds = inputs.iter().zip(&arg_traits).map(|((_, b), t)| {
        let ident = &b.name;
        if b.header.is_some() {
            let owned = format_ident!("__vyre_owned_{}", b.name);
            quote!(#owned.feed())
        } else {
            quote!(#t::__vyre_input(#ident).feed())
        }
    });
    let feeds = quote!(#(#owned)* let __vyre_feeds: &[_] = &[#(#feeds),*];);
    let problem_size = match a.problem_size {
        ProblemSize::Infer => quote!(let n: u64 = self.graph.infer_problem_size(__vyre_feeds)?;),
        ProblemSize::Param => quote!(),
        // No size depends on n: any positive n gives the same plan.
        ProblemSize::Unused => quote!(let n: u64 = 1;),
    };
    let out_fields = outputs.iter().map(|(_, b)| {
        let ident = &b.name;
        let ty = b.element.tokens();
        let doc = format!("Read back from {}.", element_doc(b));
        match &b.header {
            // An append buffer reads back as its items, truncated to the count.
            Some(_) if b.append.is_some() => quote!(#[doc = #doc] pub #ident: ::std::vec::Vec<#ty>),
            Some(h) => {
                let h = h.tokens();
                quote!(#[doc = #doc] pub #ident: #p::Headed<#h, #ty>)
            }
            None => quote!(#[doc = #doc] pub #ident: ::std::vec::Vec<#ty>),
        }
    });
    let resident_fields = outputs.iter().map(|(_, b)| {
        let ident = &b.name;
        let doc = format!("The device buffer of {}.", element_doc(b));
        if b.texture.is_some() {
            quote!(#[doc = #doc] pub #ident: #p::GpuTextureHandle)
        } else {
            quote!(#[doc = #doc] pub #ident: #p::GpuBufferHandle)
        }
    });
    let host_resizes: Vec<TokenStream> = outputs
        .iter()
        .map(|(i, b)| {
            let ident = &b.name;
            let index = Literal::usize_suffixed(*i);
            let bname = ident.to_string();
            match &b.header {
                Some(_) if b.append.is_some() => {
                    let scratch = scratch_ident(b);
                    quote!(let mut #scratch = #p::append_scratch(self.graph.buffer_bytes(#index, n)?, #bname)?;)
                }
                Some(h) => {
                    let (h, ty) = (h.tokens(), b.element.tokens());
                    let scratch = scratch_ident(b);
                    quote!(let mut #scratch = #p::Headed::<#h, #ty>::scratch(self.graph.buffer_len(#index, n)?, #bname)?;)
                }
                None => quote!(#p::resize_vec(&mut outputs.#ident, self.graph.buffer_len(#index, n)?, #bname)?;),
            }
        })
        .collect();
    let host_sinks: Vec<TokenStream> = outputs
        .iter()
        .map(|(_, b)| {
            let ident = &b.name;
            if b.header.is_some() {
                let scratch = scratch_ident(b);
                quote!(#p::Sink::Host(#scratch.as_mut_slice()))
            } else {
                quote!(#p::Sink::Host(#p::bytemuck::cast_slice_mut(outputs.#ident.as_mut_slice())))
            }
        })
        .collect();
    // Headed outputs are split into header and elements after the run.
    let host_splits: Vec<TokenStream> = outputs
        .iter()
        .filter(|(_, b)| b.header.is_some())
        .map(|(_, b)| {
            let ident = &b.name;
            let scratch = scratch_ident(b);
            if b.append.is_some() {
                let header_bytes = Literal::usize_suffixed(b.header_bytes as usize);
                quote!(#p::read_appended(&mut outputs.#ident, &#scratch, #header_bytes);)
            } else {
                quote!(outputs.#ident.read_from(&#scratch);)
            }
        })
        .collect();
    let device_allocs = outputs.iter().map(|(i, b)| {
        let ident = &b.name;
        let index = Literal::usize_suffixed(*i);
        if b.texture.is_some() {
            quote!(let #ident = self.graph.create_texture(#index, n)?;)
        } else {
            quote!(let #ident = self.graph.create_resident(#index, n, config)?;)
        }
    });
    let out_names: Vec<&Ident> = outputs.iter().map(|(_, b)| &b.name).collect();
    // With a `grow` append buffer, a run that overflowed it is repeated once
    // (the runtime grew the capacity for `n`).
    let grows = a.buffers.iter().any(|b| b.append == Some(true));
    let run_into_body = if grows {
        quote! {
            let mut __vyre_again = true;
            loop {
                #(#host_resizes)*
                match self.graph.run(n, __vyre_feeds, &mut [#(#host_sinks),*], config) {
                    ::core::result::Result::Err(e) if __vyre_again && self.graph.grew_for(&e, n) => {
                        __vyre_again = false;
                    }
                    result => {
                        let report = result?;
                        #(#host_splits)*
                        return ::core::result::Result::Ok(report);
                    }
                }
            }
        }
    } else {
        quote! {
            #(#host_resizes)*
            let report = self.graph.run(n, __vyre_feeds, &mut [#(#host_sinks),*], config)?;
            #(#host_splits)*
            ::core::result::Result::Ok(report)
        }
    };
    let run_resident_body = if grows {
        quote! {
            let mut __vyre_again = true;
            loop {
                let outputs = self.resident_outputs(config, n)?;
                match self.graph.run(n, __vyre_feeds, &mut [#(#p::Sink::from(&outputs.#out_names)),*], config) {
                    ::core::result::Result::Err(e) if __vyre_again && self.graph.grew_for(&e, n) => {
                        __vyre_again = false;
                    }
                    result => {
                        result?;
                        return ::core::result::Result::Ok(outputs);
                    }
                }
            }
        }
    } else {
        quote! {
            let outputs = self.resident_outputs(config, n)?;
            self.graph.run(n, __vyre_feeds, &mut [#(#p::Sink::from(&outputs.#out_names)),*], config)?;
            ::core::result::Result::Ok(outputs)
        }
    };
    let spec = spec(a);

    let outputs_doc =
        format!("Outputs of [`{name}::run`]: the `output` and `inout` buffers, read back.");
    let resident_doc = format!(
        "Outputs of [`{name}::run_resident`]: the `output` and `inout` buffers, left on the device."
    );
    let n_doc = match a.problem_size {
        ProblemSize::Infer => "The problem size `n` is inferred from the inputs' lengths.",
        ProblemSize::Param => "`n` is the problem size every size of the graph depends on.",
        ProblemSize::Unused => "No size depends on the problem size.",
    };
    let args_doc: Vec<String> = inputs
        .iter()
        .map(|(_, b)| format!("- {}", element_doc(b)))
        .collect();
    let run_doc = format!(
        "Runs the graph once (uploads the inputs, dispatches every node in one submission, reads back the outputs). {n_doc} Arguments, in order, each a `&[T]`, a `&Vec<T>`, a `&T` (one value) or a `&GpuBufferHandle` (a buffer on the device) of its element type `T`:"
    );
    let errors_doc = "# Errors\n\nWhen an input has the wrong length, a size overflows a device limit, or the device fails.";

    quote! {
        #(#structs)*

        #(#arg_trait_items)*

        #(#attrs)*
        #default_doc
        #[doc = ""]
        #[doc = #summary]
        #(#[doc = #buffer_docs])*
        #vis struct #name {
            graph: #p::Graph,
        }

        #debug_impl

        #[doc = #outputs_doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #outputs_name {
            #(#out_fields,)*
        }

        #[doc = #resident_doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        #vis struct #resident_name {
            #(#resident_fields,)*
        }

        // One argument per host input: wide graphs have many.
        #[allow(clippy::too_many_arguments)]
        impl #name {
            /// The static description of this graph (kernels, buffers, nodes), checked at compile time.
            pub const SPEC: #p::GraphSpec = #spec;

            /// Compiles the graph's kernels on `gpu`.
            ///
            /// # Errors
            ///
            /// When the device rejects a kernel or lacks a limit the graph needs.
            pub fn new(gpu: &#p::Gpu) -> ::core::result::Result<Self, #p::BackendError> {
                ::core::result::Result::Ok(Self { graph: #p::Graph::new(gpu, Self::SPEC)? })
            }

            #[doc = #run_doc]
            #(#[doc = #args_doc])*
            #[doc = ""]
            #[doc = #errors_doc]
            pub fn run #lifetime (&self, #n_param #(#params),*) -> ::core::result::Result<#outputs_name, #p::BackendError> {
                self.run_with(&<#p::DispatchConfig as ::core::default::Default>::default(), #n_arg #(#args),*)
            }

            /// Like [`Self::run`], with an explicit dispatch configuration.
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub fn run_with #lifetime (&self, config: &#p::DispatchConfig, #n_param #(#params),*) -> ::core::result::Result<#outputs_name, #p::BackendError> {
                self.run_reported(config, #n_arg #(#args),*).map(|(outputs, _)| outputs)
            }

            /// Like [`Self::run_with`], also returning the run's report (plan, cache hit, recording time).
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub fn run_reported #lifetime (&self, config: &#p::DispatchConfig, #n_param #(#params),*) -> ::core::result::Result<(#outputs_name, #p::RunReport), #p::BackendError> {
                let mut outputs = <#outputs_name as ::core::default::Default>::default();
                let report = self.run_into(config, &mut outputs, #n_arg #(#args),*)?;
                ::core::result::Result::Ok((outputs, report))
            }

            /// Like [`Self::run_with`], reading back into `outputs`, whose vectors are resized to fit and keep their capacity: a steady-state loop that reuses one `outputs` allocates nothing on the host.
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub fn run_into #lifetime (&self, config: &#p::DispatchConfig, outputs: &mut #outputs_name, #n_param #(#params),*) -> ::core::result::Result<#p::RunReport, #p::BackendError> {
                #feeds
                #problem_size
                self.graph.check_problem_size(n, config)?;
                #run_into_body
            }

            /// Like [`Self::run`], but leaves the outputs on the device (to feed another graph or read later).
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub fn run_resident #lifetime (&self, #n_param #(#params),*) -> ::core::result::Result<#resident_name, #p::BackendError> {
                self.run_resident_with(&<#p::DispatchConfig as ::core::default::Default>::default(), #n_arg #(#args),*)
            }

            /// Like [`Self::run_resident`], with an explicit dispatch configuration (its `resident_usage` is added to the outputs' buffers, e.g. `VERTEX` to draw from them).
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub fn run_resident_with #lifetime (&self, config: &#p::DispatchConfig, #n_param #(#params),*) -> ::core::result::Result<#resident_name, #p::BackendError> {
                #feeds
                #problem_size
                #run_resident_body
            }

            /// Device buffers for every output at problem size `n` (with `config.resident_usage` added), to record runs into with [`Self::record`].
            ///
            /// # Errors
            ///
            /// When a size exceeds a device limit.
            pub fn resident_outputs(&self, config: &#p::DispatchConfig, n: u64) -> ::core::result::Result<#resident_name, #p::BackendError> {
                self.graph.check_problem_size(n, config)?;
                #(#device_allocs)*
                ::core::result::Result::Ok(#resident_name { #(#out_names),* })
            }

            /// Records a run into the caller's `encoder` (for a graph inside an application's frame): the outputs are written into `outputs`' buffers, nothing is submitted. Submit the encoder, then call `finish(&submission)` on the returned run (see [`vyre_graph::Graph::record`]).
            ///
            /// # Errors
            ///
            /// As [`Self::run`], before anything is recorded.
            pub fn record #lifetime (&self, encoder: &mut #p::wgpu::CommandEncoder, config: &#p::DispatchConfig, outputs: &#resident_name, #n_param #(#params),*) -> ::core::result::Result<#p::RecordedRun<'_>, #p::BackendError> {
                #feeds
                #problem_size
                self.graph.record(encoder, n, __vyre_feeds, &[#(#p::Sink::from(&outputs.#out_names)),*], config)
            }

            /// Like [`Self::run_with`], as a future that never blocks the thread (see [`vyre_graph::Graph::run_async`]): any executor drives it, and several runs may be in flight on one device.
            ///
            /// # Errors
            ///
            /// As [`Self::run`].
            pub async fn run_async #lifetime (&self, config: &#p::DispatchConfig, #n_param #(#params),*) -> ::core::result::Result<#outputs_name, #p::BackendError> {
                let mut outputs = <#outputs_name as ::core::default::Default>::default();
                #feeds
                #problem_size
                self.graph.check_problem_size(n, config)?;
                #(#host_resizes)*
                self.graph.run_async(n, __vyre_feeds, &mut [#(#host_sinks),*], config).await?;
                #(#host_splits)*
                ::core::result::Result::Ok(outputs)
            }

            /// The runtime graph.
            pub fn graph(&self) -> &#p::Graph {
                &self.graph
            }

            /// What the graph does: levels, buffers, memory.
            pub fn describe(&self) -> #p::Description {
                self.graph.describe()
            }

            /// The graph in Graphviz DOT.
            pub fn to_dot(&self) -> ::std::string::String {
                self.graph.to_dot()
            }
        }
    }
}

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
        .filter(|b| is_host_input(b.class) && !crate::textures::is_sampler(b.texture.as_ref()))
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
    let needs_n = !input.buffers.iter().any(|b| {
        matches!(b.class, BufferClass::Input | BufferClass::InOut)
            && ((b.texture.is_none() && b.len.extent.solvable()) || crate::textures::inferable(b))
    });
    let n_param = needs_n.then(|| quote!(_n: u64,));
    let generic_list = (!generics.is_empty()).then(|| quote!(<#(#generics),*>));
    let params = quote!(#(#inputs: #generics),*);
    let unreachable = quote!(::core::unreachable!("graph! failed to compile"));
    // Outputs keep their names, and their types where a kernel that
    // reflected says them, so user code reading them does not cascade.
    let structs = known
        .structs
        .iter()
        .map(|(def, origin)| struct_tokens(def, vis, &format!("kernel `{origin}`")));
    // An output of unknown type is `!` (it coerces to whatever the user
    // expects); then `Default` cannot be derived.
    let out_fields = known.outputs.iter().map(|(ident, ty)| match ty {
        Some(ty) => quote!(#[doc = "Placeholder."] pub #ident: ::std::vec::Vec<#ty>),
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
}

/// Whether `attrs` hold a `#[derive(..)]` that names `Debug`.
fn derives_debug(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if !attr.path().is_ident("derive") {
            return false;
        }
        let mut found = false;
        let _ = attr.parse_nested_meta(|meta| {
            if meta
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Debug")
            {
                found = true;
            }
            Ok(())
        });
        found
    })
}
