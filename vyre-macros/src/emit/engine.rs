//! What every engine gives a graph type (`impl<E: Engine> Name<E>`):
//! `with_engine`, which takes an engine already running this graph and
//! refuses one running another, and `engine`. The batch methods beside
//! them come from `batch.rs`.

use proc_macro2::TokenStream;
use quote::quote;

use super::methods::{Spelling, signature_of};
use super::tokens::private;
use crate::model::GraphAnalysis;

/// `with_engine` and `engine`, for `impl<E: Engine> Name<E>`.
pub fn engine_methods(a: &GraphAnalysis, spelling: &Spelling) -> TokenStream {
    let p = private();
    let name = &a.header.name;
    let [with_sig, engine_sig] = ["with_engine", "engine"].map(|m| signature_of(m, spelling));
    let with_doc = format!(
        "Runs this graph's batches and streams on `engine`: one [`Graph`](vyre_graph::Graph), a device set, or any other [`Engine`](vyre_graph::Engine) built from [`{name}::SPEC`]. The typed [`Self::run_batch`], [`Self::run_many`] and their `async` twins then hand each batch to the engine; single runs (`run`, `run_resident`, `record`) stay on `{name}<Graph>`, made by [`{name}::new`]."
    );
    let example = format!(
        "let set = {name}::with_engine(GraphSet::new(&gpus, {name}::SPEC)?)?;\nlet outputs = set.run_batch(&config, &instances)?;"
    );
    let errors_doc = format!(
        "[`BackendError::InvalidProgram`](vyre_graph::BackendError::InvalidProgram) when `engine` runs another graph than `{name}` (its spec is not [`{name}::SPEC`]); the message names the graph it runs."
    );
    let other_name = format!(
        "`{name}::with_engine` was given an engine running graph `{{}}`, not `{name}`; build the engine from `{name}::SPEC` (for example `GraphSet::new(&gpus, {name}::SPEC)` or `Graph::new(&gpu, {name}::SPEC)`)"
    );
    let same_name = format!(
        "`{name}::with_engine` was given an engine running another graph named `{name}` (its kernels, buffers or nodes differ: a graph of the same name declared elsewhere?); build the engine from this type's `{name}::SPEC` (for example `GraphSet::new(&gpus, {name}::SPEC)` or `Graph::new(&gpu, {name}::SPEC)`)"
    );
    let engine_doc = format!(
        "The engine this graph runs its batches on (for a `{name}` made by [`{name}::new`], its [`Graph`](vyre_graph::Graph), as [`{name}::graph`] gives it)."
    );
    quote! {
        #[doc = #with_doc]
        ///
        /// ```text
        #[doc = #example]
        /// ```
        ///
        /// # Errors
        ///
        #[doc = #errors_doc]
        #with_sig {
            let __vyre_spec = <E as #p::Engine>::spec(&engine);
            if *__vyre_spec == <#name<#p::Graph>>::SPEC {
                return ::core::result::Result::Ok(Self { graph: engine });
            }
            let __vyre_given = ::std::string::ToString::to_string(&__vyre_spec.name);
            let reason = if __vyre_given == <#name<#p::Graph>>::SPEC.name {
                ::std::format!(#same_name)
            } else {
                ::std::format!(#other_name, __vyre_given)
            };
            ::core::result::Result::Err(#p::BackendError::InvalidProgram { graph: __vyre_given, reason })
        }

        #[doc = #engine_doc]
        #engine_sig {
            &self.graph
        }
    }
}
