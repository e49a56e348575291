//! `run_batch` and `run_many` of the typed API, and their `async` twins,
//! on every engine (`impl<E: Engine> Name<E>`): each instance's arguments
//! turned into an untyped `Instance` (feeds, and sinks into a fresh
//! outputs struct), then one call through the `Engine` trait
//! (`Engine::run_batch` or `Engine::run_many`, or `_async`: for one GPU,
//! `Graph`'s own), which does the work.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::methods::{Flavor, Spelling, signature_of, web_stub_of};
use super::tokens::private;
use crate::model::{BufferOut, GraphAnalysis, ProblemSize};

/// What the batch methods need of the typed API's host side.
pub struct Batched<'a> {
    /// Host inputs, in declaration order.
    pub inputs: &'a [(usize, &'a BufferOut)],
    /// Host outputs, in declaration order.
    pub outputs: &'a [(usize, &'a BufferOut)],
    /// One argument trait per input.
    pub arg_traits: &'a [Ident],
    /// Each input's parameter name.
    pub args: &'a [&'a Ident],
    /// How the typed API spells its signatures (`methods.rs`).
    pub spelling: &'a Spelling,
}

/// `run_batch`, `run_many` and their `async` twins, or nothing for a graph whose instances
/// cannot be spelled as a slice of plain arguments (a headed input, whose
/// header and elements are joined into owned bytes, or no argument at
/// all).
pub fn batch_methods(a: &GraphAnalysis, host: &Batched) -> TokenStream {
    let p = private();
    let param_n = a.problem_size == ProblemSize::Param;
    if host.inputs.iter().any(|(_, b)| b.header.is_some()) || (host.inputs.is_empty() && !param_n) {
        return quote!();
    }
    let outputs_name = format_ident!("{}Outputs", a.header.name);
    let generics: Vec<Ident> = (0..host.inputs.len())
        .map(|i| format_ident!("A{}", i))
        .collect();
    let bounds = generics
        .iter()
        .zip(host.arg_traits)
        .map(|(g, t)| quote!(#g: #t<'a> + ::core::marker::Copy))
        .collect::<Vec<_>>();
    let n_ty = param_n.then(|| quote!(u64,));
    let n_pat = param_n.then(|| quote!(n,));
    let args = host.args;
    let (item, pattern) = match (param_n, host.inputs.len()) {
        (false, 1) => (quote!(#(#generics)*), quote!(#(#args)*)),
        _ => (quote!((#n_ty #(#generics),*)), quote!((#n_pat #(#args),*))),
    };
    let spelling = Spelling {
        instance_generics: quote!(<'a, #(#bounds),*>),
        instance: item,
        ..host.spelling.clone()
    };
    let Parts { feeds, size, sinks } = parts(a, host);
    let build = quote! {
        let mut __vyre_outputs: ::std::vec::Vec<#outputs_name> = instances
            .iter()
            .map(|_| <#outputs_name as ::core::default::Default>::default())
            .collect();
        let mut __vyre_batch = ::std::vec::Vec::with_capacity(instances.len());
        for (__vyre_index, (#pattern, __vyre_out)) in instances.iter().copied().zip(__vyre_outputs.iter_mut()).enumerate() {
            let __vyre_feeds = ::std::vec![#(#feeds),*];
            let n: u64 = #size?;
            __vyre_batch.push(#p::Instance::new(n, __vyre_feeds, ::std::vec![#(#sinks),*]));
        }
    };
    let flavored = |flavor: Flavor| {
        let (batch, many) = (flavor.name("run_batch"), flavor.name("run_many"));
        let [batch_sig, many_sig] =
            [&batch, &many].map(|m| signature_of(&m.to_string(), &spelling));
        let wait = flavor.awaited();
        let twin = match flavor {
            Flavor::Blocking => "",
            Flavor::Async => " As a future that never blocks the thread (the way on `wasm32`).",
        };
        let batch_doc = format!(
            "Runs independent instances of this graph's problem, each with its own arguments (a tuple per instance when the graph takes several), on the engine `E` (see [`vyre_graph::Engine::{batch}`]; on one GPU, in as few submissions as the device allows, see [`vyre_graph::Graph::{batch}`]: element-wise graphs run all instances of one size as one stacked run), and returns each instance's outputs in order.{twin}"
        );
        let many_doc = format!(
            "Runs the instances one after another as a stream with up to `depth` runs in flight on the engine `E` (see [`vyre_graph::Engine::{many}`] and [`vyre_graph::Graph::{many}`]), returning each run's outputs or error in order: an error is that run's own and the stream goes on.{twin}"
        );
        quote! {
        #[doc = #batch_doc]
        ///
        /// # Errors
        ///
        /// The first failing instance's error, naming it (`BackendError::BatchInstance`); nothing runs when an instance fails its checks.
        #batch_sig {
            #build
            let __vyre_report = <E as #p::Engine>::#batch(&self.graph, config, &mut __vyre_batch)#wait?;
            ::core::mem::drop(__vyre_batch);
            for __vyre_run in __vyre_report.runs {
                __vyre_run?;
            }
            ::core::result::Result::Ok(__vyre_outputs)
        }

        #[doc = #many_doc]
        #many_sig {
            let mut __vyre_outputs: ::std::vec::Vec<#outputs_name> = instances
                .iter()
                .map(|_| <#outputs_name as ::core::default::Default>::default())
                .collect();
            let mut __vyre_batch = ::std::vec::Vec::with_capacity(instances.len());
            // An instance whose size cannot be found runs as size 0 (refused by
            // the runtime, or answered on the host without running) and reports
            // why its size could not be found instead.
            let mut __vyre_sizes = ::std::vec::Vec::with_capacity(instances.len());
            for (__vyre_index, (#pattern, __vyre_out)) in instances.iter().copied().zip(__vyre_outputs.iter_mut()).enumerate() {
                let __vyre_feeds = ::std::vec![#(#feeds),*];
                let __vyre_size: ::core::result::Result<u64, #p::BackendError> = #size;
                let n = *__vyre_size.as_ref().unwrap_or(&0);
                __vyre_sizes.push(__vyre_size.err());
                __vyre_batch.push(#p::Instance::new(n, __vyre_feeds, ::std::vec![#(#sinks),*]));
            }
            let __vyre_ran = <E as #p::Engine>::#many(&self.graph, config, depth, &mut __vyre_batch)#wait;
            ::core::mem::drop(__vyre_batch);
            __vyre_ran
                .into_iter()
                .zip(__vyre_sizes)
                .zip(__vyre_outputs)
                .map(|((ran, size), out)| match size {
                    ::core::option::Option::Some(e) => ::core::result::Result::Err(e),
                    ::core::option::Option::None => ran.map(|_| out),
                })
                .collect()
        }
        }
    };
    let (blocking, future) = (flavored(Flavor::Blocking), flavored(Flavor::Async));
    let stubs = ["run_batch", "run_many"].map(|m| web_stub_of(m, &spelling));
    quote!(#blocking #future #(#stubs)*)
}

/// What each instance of a batch is made of: its inputs' feeds, its size
/// (a `Result<u64, _>` expression) and its outputs' sinks.
struct Parts {
    feeds: Vec<TokenStream>,
    size: TokenStream,
    sinks: Vec<TokenStream>,
}

fn parts(a: &GraphAnalysis, host: &Batched) -> Parts {
    let p = private();
    let feeds = host
        .args
        .iter()
        .zip(host.arg_traits)
        .map(|(x, t)| quote!(#t::__vyre_input(#x).feed()))
        .collect::<Vec<_>>();
    // Each instance's size: its own `n`, inferred from its inputs, or 1
    // when nothing depends on it.
    let size = match a.problem_size {
        ProblemSize::Param => {
            quote!({ let _ = __vyre_index; ::core::result::Result::<u64, #p::BackendError>::Ok(n) })
        }
        ProblemSize::Infer => {
            quote!(<E as #p::Engine>::instance_size(&self.graph, __vyre_index, &__vyre_feeds))
        }
        ProblemSize::Unused => {
            quote!({ let _ = __vyre_index; ::core::result::Result::<u64, #p::BackendError>::Ok(1) })
        }
    };
    let sinks = host
        .outputs
        .iter()
        .map(|(_, b)| {
            let ident = &b.name;
            quote!(#p::Sink::from(&mut __vyre_out.#ident))
        })
        .collect::<Vec<_>>();
    Parts { feeds, size, sinks }
}
