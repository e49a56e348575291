//! The typed API of a checked graph ([`expand`]): the graph type, generic
//! over its engine (`Name<E = Graph>`), with its `SPEC`, `new`, the `run*`
//! family (each blocking method, native only, with its `async` twin, the
//! browser's way), `record`, `describe` and `to_dot` on `impl Name` (one
//! `Graph`); `with_engine`, `engine` and the batch methods on
//! `impl<E: Engine> Name<E>` (`engine.rs`, `batch.rs`); the outputs and
//! resident outputs types, and one argument trait per host input
//! (`args.rs`).

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use super::args::arg_trait;
use super::batch::{Batched, batch_methods};
use super::docs::{derives_debug, distinct_kernels, element_doc, engine_doc, run_docs};
use super::engine::engine_methods;
use super::methods::{Flavor, Spelling, signature_of, web_stub_of};
use super::rust_types::{struct_tokens, type_tokens};
use super::spec::spec;
use super::tokens::{is_host_input, is_host_output, private};
use crate::model::{BufferOut, GraphAnalysis, Header, ProblemSize, TextureDecl};

/// The full expansion of a checked graph.
pub fn expand(a: &GraphAnalysis) -> TokenStream {
    let p = private();
    let Header { vis, name, .. } = &a.header;
    let host = Host::new(a);
    let structs = a
        .structs
        .iter()
        .map(|(def, origin)| struct_tokens(def, vis, &format!("kernel `{origin}`")));
    let arg_trait_items = host
        .inputs
        .iter()
        .zip(&host.arg_traits)
        .map(|((_, b), t)| arg_trait(name, vis, t, b));
    let type_item = type_item(a);
    let output_structs = output_structs(a, &host);
    let spec = spec(a);
    let run = run_methods(a, &host, Flavor::Blocking);
    let run_async = run_methods(a, &host, Flavor::Async);
    let resident = resident_methods(a, &host);
    let queries = queries(&host);
    let engine = engine_methods(a, &host.spelling);
    let batch = batch_methods(
        a,
        &Batched {
            inputs: &host.inputs,
            outputs: &host.outputs,
            arg_traits: &host.arg_traits,
            args: &host.args,
            spelling: &host.spelling,
        },
    );
    let [new_sig, new_async_sig] = ["new", "new_async"].map(|m| signature_of(m, &host.spelling));
    // The blocking methods' stand-ins on wasm32 (the batch methods bring
    // their own).
    let web_stubs = [
        "new",
        "run",
        "run_with",
        "run_reported",
        "run_into",
        "run_resident",
        "run_resident_with",
    ]
    .map(|m| web_stub_of(m, &host.spelling));
    quote! {
        #(#structs)*

        #(#arg_trait_items)*

        #type_item

        #output_structs

        // One argument per host input: wide graphs have many. Everything of
        // one `Graph` on one GPU: `impl #name` is `impl #name<Graph>`, so
        // `#name::new(..)` and `#name::SPEC` need no annotation.
        #[allow(clippy::too_many_arguments)]
        impl #name {
            /// The static description of this graph (kernels, buffers, nodes), checked at compile time.
            pub const SPEC: #p::GraphSpec = #spec;

            /// Compiles the graph's kernels on `gpu`.
            ///
            /// # Errors
            ///
            /// When the device rejects a kernel or lacks a limit the graph needs.
            #new_sig {
                ::core::result::Result::Ok(Self { graph: #p::Graph::new(gpu, Self::SPEC)? })
            }

            /// Compiles the graph's kernels on `gpu`, as a future (the only way on `wasm32`).
            ///
            /// # Errors
            ///
            /// When the device rejects a kernel or lacks a limit the graph needs.
            #new_async_sig {
                ::core::result::Result::Ok(Self { graph: #p::Graph::new_async(gpu, Self::SPEC).await? })
            }

            #run
            #run_async
            #resident
            #queries
            #(#web_stubs)*
        }

        // What every engine runs: batches and streams.
        #[allow(clippy::too_many_arguments)]
        impl<E: #p::Engine> #name<E> {
            #engine
            #batch
        }
    }
}

/// The host side of every run: the inputs it takes (with their argument
/// traits, parameters and feeds) and the outputs it reads back.
pub struct Host<'a> {
    /// Host inputs, in declaration order (`GraphSpec::host_inputs`).
    pub inputs: Vec<(usize, &'a BufferOut)>,
    /// Host outputs, in declaration order.
    pub outputs: Vec<(usize, &'a BufferOut)>,
    /// One argument trait per input.
    arg_traits: Vec<Ident>,
    /// `x`, ...
    args: Vec<&'a Ident>,
    /// `n,` when `n` is a parameter.
    n_arg: Option<TokenStream>,
    /// `let __vyre_feeds = ...;`
    feeds: TokenStream,
    /// How `n` is found.
    problem_size: TokenStream,
    /// How the table of methods (`methods.rs`) spells this graph's
    /// signatures.
    spelling: Spelling,
}

impl<'a> Host<'a> {
    fn new(a: &'a GraphAnalysis) -> Self {
        let name = &a.header.name;
        let inputs: Vec<(usize, &BufferOut)> = a
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| {
                is_host_input(b.class) && !b.texture.as_ref().is_some_and(TextureDecl::is_sampler)
            })
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
            ProblemSize::Infer => {
                quote!(let n: u64 = self.graph.infer_problem_size(__vyre_feeds)?;)
            }
            ProblemSize::Param => quote!(),
            // No size depends on n: any positive n gives the same plan.
            ProblemSize::Unused => quote!(let n: u64 = 1;),
        };
        let spelling = Spelling {
            input_generics: lifetime.clone(),
            inputs: quote!(#n_param #(#params),*),
            ..Spelling::new(name)
        };
        Host {
            inputs,
            outputs,
            arg_traits,
            args,
            n_arg,
            feeds,
            problem_size,
            spelling,
        }
    }
}

impl Host<'_> {
    /// The signature of the table's method `name` (`methods.rs`).
    fn signature(&self, name: &str) -> TokenStream {
        signature_of(name, &self.spelling)
    }

    /// The arguments that pass a `run*` function's own on: `first`, `n`
    /// when it is one, each input.
    fn arguments(&self, first: TokenStream) -> TokenStream {
        let Host { n_arg, args, .. } = self;
        quote!((#first #n_arg #(#args),*))
    }
}

/// The graph's type: its docs (the user's, a summary and a line per
/// buffer) and a `Debug` impl unless the user derives one.
fn type_item(a: &GraphAnalysis) -> TokenStream {
    let p = private();
    let Header { attrs, vis, name } = &a.header;
    let has_docs = attrs.iter().any(|attr| attr.path().is_ident("doc"));
    // `Debug` for the graph type, unless the user derives it.
    let debug_impl = (!derives_debug(attrs)).then(|| {
        quote! {
            impl<E: ::core::fmt::Debug> ::core::fmt::Debug for #name<E> {
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
    let engine_docs = engine_doc(name);
    quote! {
        #(#attrs)*
        #default_doc
        #[doc = ""]
        #[doc = #summary]
        #(#[doc = #buffer_docs])*
        #(#[doc = #engine_docs])*
        #vis struct #name<E = #p::Graph> {
            graph: E,
        }

        #debug_impl
    }
}

/// `NameOutputs` (read back) and `NameResident` (left on the device).
fn output_structs(a: &GraphAnalysis, host: &Host) -> TokenStream {
    let p = private();
    let Header { vis, name, .. } = &a.header;
    let outputs_name = format_ident!("{}Outputs", name);
    let resident_name = format_ident!("{}Resident", name);
    let out_fields = host.outputs.iter().map(|(_, b)| {
        let ident = &b.name;
        let ty = type_tokens(&b.element);
        let doc = format!("Read back from {}.", element_doc(b));
        match &b.header {
            // An append buffer reads back as its items, truncated to the count.
            Some(_) if b.append.is_some() => quote!(#[doc = #doc] pub #ident: ::std::vec::Vec<#ty>),
            Some(h) => {
                let h = type_tokens(h);
                quote!(#[doc = #doc] pub #ident: #p::Headed<#h, #ty>)
            }
            None => quote!(#[doc = #doc] pub #ident: ::std::vec::Vec<#ty>),
        }
    });
    let resident_fields = host.outputs.iter().map(|(_, b)| {
        let ident = &b.name;
        let doc = format!("The device buffer of {}.", element_doc(b));
        if b.texture.is_some() {
            quote!(#[doc = #doc] pub #ident: #p::GpuTextureHandle)
        } else {
            quote!(#[doc = #doc] pub #ident: #p::GpuBufferHandle)
        }
    });
    let outputs_doc =
        format!("Outputs of [`{name}::run`]: the `output` and `inout` buffers, read back.");
    let resident_doc = format!(
        "Outputs of [`{name}::run_resident`]: the `output` and `inout` buffers, left on the device."
    );
    quote! {
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
    }
}

/// The sinks a run reads its outputs back through: every host output is
/// read by the runtime straight into its field (`Sink::from` a `Vec` or a
/// `Headed`), sized by the run: an append output to its count, with no
/// scratch bytes and no zero-filling.
fn host_sinks(host: &Host) -> Vec<TokenStream> {
    let p = private();
    host.outputs
        .iter()
        .map(|(_, b)| {
            let ident = &b.name;
            quote!(#p::Sink::from(&mut outputs.#ident))
        })
        .collect()
}

/// `run`, `run_with`, `run_reported` and `run_into` (blocking), or
/// `run_async`, `run_reported_async` and `run_into_async`: the same bodies,
/// each runtime call awaited.
fn run_methods(a: &GraphAnalysis, host: &Host, flavor: Flavor) -> TokenStream {
    let p = private();
    let outputs_name = format_ident!("{}Outputs", a.header.name);
    let (feeds, problem_size) = (&host.feeds, &host.problem_size);
    let config_call = host.arguments(quote!(config,));
    let into_call = host.arguments(quote!(config, &mut outputs,));
    let host_sinks = host_sinks(host);
    let (run_graph, wait) = (flavor.name("run"), flavor.awaited());
    let (reported, into) = (flavor.name("run_reported"), flavor.name("run_into"));
    // With a `grow` append buffer, a run that overflowed it is repeated once
    // (the runtime grew the capacity for `n`).
    let grows = a.buffers.iter().any(|b| b.append == Some(true));
    let run_into_body = if grows {
        quote! {
            let mut __vyre_again = true;
            loop {
                match self.graph.#run_graph(config, n, __vyre_feeds, &mut [#(#host_sinks),*])#wait {
                    ::core::result::Result::Err(e) if __vyre_again && self.graph.grew_for(&e, n) => {
                        __vyre_again = false;
                    }
                    result => return result,
                }
            }
        }
    } else {
        quote! {
            self.graph.#run_graph(config, n, __vyre_feeds, &mut [#(#host_sinks),*])#wait
        }
    };
    let errors_doc = "# Errors\n\nWhen an input has the wrong length, a size overflows a device limit, or the device fails.";
    let reported_sig = host.signature(&reported.to_string());
    let into_sig = host.signature(&into.to_string());
    let entry = match flavor {
        Flavor::Blocking => {
            let (run_doc, args_doc) = run_docs(a, &host.inputs);
            let default_call = host.arguments(quote!(
                &<#p::DispatchConfig as ::core::default::Default>::default(),
            ));
            let [run_sig, run_with_sig] = ["run", "run_with"].map(|m| host.signature(m));
            quote! {
                #[doc = #run_doc]
                #(#[doc = #args_doc])*
                #[doc = ""]
                #[doc = #errors_doc]
                #run_sig {
                    self.run_with #default_call
                }

                /// Like [`Self::run`], with an explicit dispatch configuration.
                ///
                /// # Errors
                ///
                /// As [`Self::run`].
                #run_with_sig {
                    self.run_reported #config_call.map(|(outputs, _)| outputs)
                }
            }
        }
        Flavor::Async => {
            let run_async_sig = host.signature("run_async");
            quote! {
                /// Runs the graph as a future that never blocks the thread (see [`vyre_graph::Graph::run_async`]): any executor drives it, several runs may be in flight on one device, and it is the way to run in a browser (`wasm32`). The arguments are those of `run_with`.
                ///
                #[doc = #errors_doc]
                #run_async_sig {
                    self.run_reported_async #config_call.await.map(|(outputs, _)| outputs)
                }
            }
        }
    };
    let (reported_doc, into_doc) = match flavor {
        Flavor::Blocking => (
            "Like [`Self::run_with`], also returning the run's report (plan, cache hit, recording time).",
            "Like [`Self::run_with`], reading back into `outputs`, whose vectors are resized to fit and keep their capacity: a steady-state loop that reuses one `outputs` allocates nothing on the host.",
        ),
        Flavor::Async => (
            "Like [`Self::run_async`], also returning the run's report (plan, cache hit, recording time).",
            "Like [`Self::run_async`], reading back into `outputs`, whose vectors are resized to fit and keep their capacity.",
        ),
    };
    quote! {
    #entry

    #[doc = #reported_doc]
    ///
    #[doc = #errors_doc]
    #reported_sig {
        let mut outputs = <#outputs_name as ::core::default::Default>::default();
        let report = self.#into #into_call #wait?;
        ::core::result::Result::Ok((outputs, report))
    }

    #[doc = #into_doc]
    ///
    #[doc = #errors_doc]
    #into_sig {
        #feeds
        #problem_size
        self.graph.check_problem_size(config, n)?;
        #run_into_body
    }
    }
}

/// `run_resident`, `run_resident_with`, `run_resident_async`,
/// `resident_outputs` and `record`.
fn resident_methods(a: &GraphAnalysis, host: &Host) -> TokenStream {
    let p = private();
    let resident_name = format_ident!("{}Resident", a.header.name);
    let (feeds, problem_size) = (&host.feeds, &host.problem_size);
    let [plain_sig, config_sig, async_sig, outputs_sig, record_sig] = [
        "run_resident",
        "run_resident_with",
        "run_resident_async",
        "resident_outputs",
        "record",
    ]
    .map(|m| host.signature(m));
    let default_call = host.arguments(quote!(
        &<#p::DispatchConfig as ::core::default::Default>::default(),
    ));
    let device_allocs = host.outputs.iter().map(|(i, b)| {
        let ident = &b.name;
        let index = Literal::usize_suffixed(*i);
        if b.texture.is_some() {
            quote!(let #ident = self.graph.create_texture(#index, n)?;)
        } else {
            quote!(let #ident = self.graph.create_resident(#index, n, config)?;)
        }
    });
    let out_names: Vec<&Ident> = host.outputs.iter().map(|(_, b)| &b.name).collect();
    let grows = a.buffers.iter().any(|b| b.append == Some(true));
    let run_resident_body = |flavor: Flavor| {
        let (run_graph, wait) = (flavor.name("run"), flavor.awaited());
        let body = if grows {
            quote! {
                let mut __vyre_again = true;
                loop {
                    let outputs = self.resident_outputs(config, n)?;
                    match self.graph.#run_graph(config, n, __vyre_feeds, &mut [#(#p::Sink::from(&outputs.#out_names)),*])#wait {
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
                self.graph.#run_graph(config, n, __vyre_feeds, &mut [#(#p::Sink::from(&outputs.#out_names)),*])#wait?;
                ::core::result::Result::Ok(outputs)
            }
        };
        quote!(#feeds #problem_size #body)
    };
    let (blocking_body, async_body) = (
        run_resident_body(Flavor::Blocking),
        run_resident_body(Flavor::Async),
    );
    quote! {
    /// Like [`Self::run`], but leaves the outputs on the device (to feed another graph or read later).
    ///
    /// # Errors
    ///
    /// As [`Self::run`].
    #plain_sig {
        self.run_resident_with #default_call
    }

    /// Like [`Self::run_resident`], with an explicit dispatch configuration (its `resident_usage` is added to the outputs' buffers, e.g. `VERTEX` to draw from them).
    ///
    /// # Errors
    ///
    /// As [`Self::run`].
    #config_sig {
        #blocking_body
    }

    /// Like [`Self::run_async`], but leaves the outputs on the device (to feed another graph or read later); `config.resident_usage` is added to the outputs' buffers.
    ///
    /// # Errors
    ///
    /// As [`Self::run_async`].
    #async_sig {
        #async_body
    }

    /// Device buffers for every output at problem size `n` (with `config.resident_usage` added), to record runs into with [`Self::record`].
    ///
    /// # Errors
    ///
    /// When a size exceeds a device limit.
    #outputs_sig {
        self.graph.check_problem_size(config, n)?;
        #(#device_allocs)*
        ::core::result::Result::Ok(#resident_name { #(#out_names),* })
    }

    /// Records a run into the caller's `encoder` (for a graph inside an application's frame): the outputs are written into `outputs`' buffers, nothing is submitted. Submit the encoder, then call `finish(&submission)` on the returned run (see [`vyre_graph::Graph::record`]).
    ///
    /// # Errors
    ///
    /// As [`Self::run`], before anything is recorded.
    #record_sig {
        #feeds
        #problem_size
        self.graph.record(encoder, config, n, __vyre_feeds, &[#(#p::Sink::from(&outputs.#out_names)),*])
    }
    }
}

/// `graph`, `describe` and `to_dot`.
fn queries(host: &Host) -> TokenStream {
    let [graph_sig, describe_sig, dot_sig] =
        ["graph", "describe", "to_dot"].map(|m| host.signature(m));
    quote! {
    /// The runtime graph.
    #graph_sig {
        &self.graph
    }

    /// What the graph does: levels, buffers, memory.
    #describe_sig {
        self.graph.describe()
    }

    /// The graph in Graphviz DOT.
    #dot_sig {
        self.graph.to_dot()
    }
    }
}
