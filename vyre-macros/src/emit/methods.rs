//! The generated type's methods, as one table ([`METHODS`]): each one's
//! name, parameters, return type and the `impl` block it stands in (the
//! one-GPU type's, or every engine's). The typed API (`api.rs`, `batch.rs`)
//! and the error stub (`stub.rs`) both spell every signature from it
//! ([`signature`]), so the stub promises exactly the methods of the real
//! API (the tests below check that both expansions define each method of
//! the table, in its order, and no other).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::tokens::private;

/// A parameter of a generated method, in order after `&self`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// `gpu: &Gpu` (`new` only, which takes no `self`).
    Gpu,
    /// `engine: E` (`with_engine` only, which takes no `self`).
    Engine,
    /// `config: &DispatchConfig`.
    Config,
    /// `encoder: &mut wgpu::CommandEncoder`.
    Encoder,
    /// `outputs: &mut NameOutputs`.
    OutputsMut,
    /// `outputs: &NameResident`.
    Resident,
    /// `n: u64`, always (the problem size of device outputs).
    N,
    /// `depth: usize` (runs in flight).
    Depth,
    /// `n: u64` when the graph cannot infer it, then one argument per host
    /// input.
    Inputs,
    /// `instances: &[..]`: one item per instance (its inputs, as a tuple
    /// when there are several).
    Instances,
}

/// What a generated method returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    /// `Result<Self, BackendError>`.
    New,
    /// `Result<NameOutputs, BackendError>`.
    Outputs,
    /// `Result<(NameOutputs, RunReport), BackendError>`.
    OutputsAndReport,
    /// `Result<RunReport, BackendError>`.
    Report,
    /// `Result<NameResident, BackendError>`.
    Resident,
    /// `Result<RecordedRun<'_>, BackendError>`.
    Recorded,
    /// `Result<Vec<NameOutputs>, BackendError>`.
    EachOutputs,
    /// `Vec<Result<NameOutputs, BackendError>>`.
    EachResult,
    /// `&Graph`.
    Graph,
    /// `&E`, the engine.
    Engine,
    /// `Description`.
    Description,
    /// `String`.
    Text,
}

/// Which `impl` block of the generated type a method stands in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// `impl Name` (= `Name<Graph>`): what one `Graph` on one GPU does
    /// (single runs, resident outputs, recording, `new`).
    OneGpu,
    /// `impl<E: Engine> Name<E>`: what any engine does (batches and
    /// streams, `with_engine`, `engine`).
    AnyEngine,
}

/// One generated method's shape.
#[derive(Debug)]
pub struct Method {
    /// Its name.
    pub name: &'static str,
    /// The `impl` block it stands in.
    pub on: On,
    /// Whether it is `async`.
    pub is_async: bool,
    /// For a method that blocks the calling thread: its `async` twin. It is
    /// not compiled for `wasm32` (nothing may block in a browser), and its
    /// docs name the twin.
    pub web_twin: Option<&'static str>,
    /// Its parameters after `&self` (for `new`: instead of it).
    pub params: &'static [Param],
    /// What it returns.
    pub returns: Returns,
}

const fn method(name: &'static str, params: &'static [Param], returns: Returns) -> Method {
    Method {
        name,
        on: On::OneGpu,
        is_async: false,
        web_twin: None,
        params,
        returns,
    }
}

/// A method that blocks, native only; `twin` is its `async` counterpart.
const fn blocking(
    name: &'static str,
    params: &'static [Param],
    returns: Returns,
    twin: &'static str,
) -> Method {
    Method {
        web_twin: Some(twin),
        ..method(name, params, returns)
    }
}

/// An `async` method (on every target).
const fn future(name: &'static str, params: &'static [Param], returns: Returns) -> Method {
    Method {
        is_async: true,
        ..method(name, params, returns)
    }
}

/// `m`, on every engine (`impl<E: Engine> Name<E>`).
const fn any_engine(m: Method) -> Method {
    Method {
        on: On::AnyEngine,
        ..m
    }
}

/// Which twin of a method pair a body is emitted for: the blocking one
/// (native only) or the `async` one (every target, the browser's only way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Blocking,
    Async,
}

impl Flavor {
    /// The method `base` of this flavour: `base`, or `base_async`.
    pub fn name(self, base: &str) -> Ident {
        match self {
            Flavor::Blocking => format_ident!("{base}"),
            Flavor::Async => format_ident!("{base}_async"),
        }
    }

    /// What follows a call of this flavour: nothing, or `.await`.
    pub fn awaited(self) -> TokenStream {
        match self {
            Flavor::Blocking => TokenStream::new(),
            Flavor::Async => quote!(.await),
        }
    }
}

use Param::{Config, Depth, Encoder, Engine, Gpu, Inputs, Instances, N, OutputsMut, Resident};

/// Every method of a generated graph type, in the order it is emitted:
/// those of `impl Name` first, then those of `impl<E: Engine> Name<E>`.
pub const METHODS: &[Method] = &[
    blocking("new", &[Gpu], Returns::New, "new_async"),
    future("new_async", &[Gpu], Returns::New),
    blocking("run", &[Inputs], Returns::Outputs, "run_async"),
    blocking("run_with", &[Config, Inputs], Returns::Outputs, "run_async"),
    blocking(
        "run_reported",
        &[Config, Inputs],
        Returns::OutputsAndReport,
        "run_reported_async",
    ),
    blocking(
        "run_into",
        &[Config, OutputsMut, Inputs],
        Returns::Report,
        "run_into_async",
    ),
    future("run_async", &[Config, Inputs], Returns::Outputs),
    future(
        "run_reported_async",
        &[Config, Inputs],
        Returns::OutputsAndReport,
    ),
    future(
        "run_into_async",
        &[Config, OutputsMut, Inputs],
        Returns::Report,
    ),
    blocking(
        "run_resident",
        &[Inputs],
        Returns::Resident,
        "run_resident_async",
    ),
    blocking(
        "run_resident_with",
        &[Config, Inputs],
        Returns::Resident,
        "run_resident_async",
    ),
    future("run_resident_async", &[Config, Inputs], Returns::Resident),
    method("resident_outputs", &[Config, N], Returns::Resident),
    method(
        "record",
        &[Encoder, Config, Resident, Inputs],
        Returns::Recorded,
    ),
    method("graph", &[], Returns::Graph),
    method("describe", &[], Returns::Description),
    method("to_dot", &[], Returns::Text),
    any_engine(method("with_engine", &[Engine], Returns::New)),
    any_engine(method("engine", &[], Returns::Engine)),
    any_engine(blocking(
        "run_batch",
        &[Config, Instances],
        Returns::EachOutputs,
        "run_batch_async",
    )),
    any_engine(blocking(
        "run_many",
        &[Config, Depth, Instances],
        Returns::EachResult,
        "run_many_async",
    )),
    any_engine(future(
        "run_batch_async",
        &[Config, Instances],
        Returns::EachOutputs,
    )),
    any_engine(future(
        "run_many_async",
        &[Config, Depth, Instances],
        Returns::EachResult,
    )),
];

/// How one expansion spells the parts of a signature that are the graph's
/// own: the real API's argument traits, or the stub's free generics.
#[derive(Clone)]
pub struct Spelling {
    /// `NameOutputs`.
    pub outputs: Ident,
    /// `NameResident`.
    pub resident: Ident,
    /// Generics of a method that takes the inputs (`<'a>`, `<T0, T1>`).
    pub input_generics: Option<TokenStream>,
    /// `n: u64,` when the graph cannot infer `n`, then each input's
    /// parameter (`x: impl NameArg_x<'a>`, `x: T0`), comma-separated.
    pub inputs: TokenStream,
    /// Generics of a method that takes instances (`<'a, A0: ..>`).
    pub instance_generics: TokenStream,
    /// The type of one instance.
    pub instance: TokenStream,
}

impl Spelling {
    /// The spelling of graph `name`'s outputs and resident outputs, the
    /// rest left empty.
    pub fn new(name: &Ident) -> Self {
        Spelling {
            outputs: format_ident!("{}Outputs", name),
            resident: format_ident!("{}Resident", name),
            input_generics: None,
            inputs: TokenStream::new(),
            instance_generics: TokenStream::new(),
            instance: quote!(()),
        }
    }
}

/// [`signature`] of the table's method `name` (nothing for a name not in
/// the table, which the tests below catch as a method missing from the
/// expansion).
pub fn signature_of(name: &str, s: &Spelling) -> TokenStream {
    METHODS
        .iter()
        .find(|m| m.name == name)
        .map(|m| signature(m, s))
        .unwrap_or_default()
}

/// `pub [async] fn NAME<..>(&self, ..) -> ..` of `m`, as `s` spells the
/// graph's own parts (no body).
pub fn signature(m: &Method, s: &Spelling) -> TokenStream {
    let p = private();
    let (outputs, resident) = (&s.outputs, &s.resident);
    let name = format_ident!("{}", m.name);
    let asyncness = m.is_async.then(|| quote!(async));
    let generics = if m.params.contains(&Instances) {
        Some(s.instance_generics.clone())
    } else if m.params.contains(&Inputs) {
        s.input_generics.clone()
    } else {
        None
    };
    let receiver =
        (!m.params.contains(&Gpu) && !m.params.contains(&Engine)).then(|| quote!(&self,));
    let params = m.params.iter().map(|param| match param {
        Gpu => quote!(gpu: &#p::Gpu,),
        Engine => quote!(engine: E,),
        Config => quote!(config: &#p::DispatchConfig,),
        Encoder => quote!(encoder: &mut #p::wgpu::CommandEncoder,),
        OutputsMut => quote!(outputs: &mut #outputs,),
        Resident => quote!(outputs: &#resident,),
        N => quote!(n: u64,),
        Depth => quote!(depth: usize,),
        Inputs => s.inputs.clone(),
        Instances => {
            let instance = &s.instance;
            quote!(instances: &[#instance])
        }
    });
    let result = |ok: TokenStream| quote!(::core::result::Result<#ok, #p::BackendError>);
    let returns = match m.returns {
        Returns::New => result(quote!(Self)),
        Returns::Outputs => result(quote!(#outputs)),
        Returns::OutputsAndReport => result(quote!((#outputs, #p::RunReport))),
        Returns::Report => result(quote!(#p::RunReport)),
        Returns::Resident => result(quote!(#resident)),
        Returns::Recorded => result(quote!(#p::RecordedRun<'_>)),
        Returns::EachOutputs => result(quote!(::std::vec::Vec<#outputs>)),
        Returns::EachResult => {
            let each = result(quote!(#outputs));
            quote!(::std::vec::Vec<#each>)
        }
        Returns::Graph => quote!(&#p::Graph),
        Returns::Engine => quote!(&E),
        Returns::Description => quote!(#p::Description),
        Returns::Text => quote!(::std::string::String),
    };
    // A blocking method is native only; its docs end by naming its twin.
    let native_only = m.web_twin.map(|twin| {
        let doc = format!(
            "Not on `wasm32`, where nothing may block the thread: use [`Self::{twin}`] there."
        );
        quote!(#[doc = ""] #[doc = #doc] #[cfg(not(target_arch = "wasm32"))])
    });
    quote!(#native_only pub #asyncness fn #name #generics (#receiver #(#params)*) -> #returns)
}

/// On wasm32, where blocking method `m` is not compiled, a stand-in of the
/// same name and signature that no call satisfies: its bound's message
/// (`__private::RunAsync` and the like) names the `async` twin, so a call is one error that says
/// what to call instead. Nothing for a method on every target.
pub fn web_stub(m: &Method, s: &Spelling) -> TokenStream {
    let Some(twin) = m.web_twin else {
        return TokenStream::new();
    };
    let p = private();
    let plain = Method {
        web_twin: None,
        params: m.params,
        ..*m
    };
    let sig = signature(&plain, s);
    let bound = format_ident!(
        "{}",
        twin.split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect::<String>()
    );
    quote! {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        #[allow(unused_variables, clippy::diverging_sub_expression)]
        #sig where for<'__vyre_web> &'__vyre_web (): #p::#bound {
            ::core::unreachable!("a bound no type meets keeps this from being called")
        }
    }
}

/// [`web_stub`] of the table's method `name`.
pub fn web_stub_of(name: &str, s: &Spelling) -> TokenStream {
    METHODS
        .iter()
        .find(|m| m.name == name)
        .map(|m| web_stub(m, s))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{METHODS, On};
    use crate::tests::{SAXPY_NODES, compile_errors, expand, saxpy};

    /// The methods of `Saxpy`'s inherent `impl` blocks in an expansion, in
    /// order, each with the block it stands in: `impl Saxpy` (no generics)
    /// or `impl<E: Engine> Saxpy<E>`.
    fn methods_of(src: &str) -> (Vec<(String, On)>, usize) {
        let ts = expand(src);
        let errors = compile_errors(&ts).len();
        let file: syn::File = syn::parse2(ts).expect("the expansion parses");
        let names = file
            .items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Impl(i) if i.trait_.is_none() => Some(i),
                _ => None,
            })
            .filter(|i| {
                matches!(&*i.self_ty, syn::Type::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "Saxpy"))
            })
            .flat_map(|i| {
                let on = if i.generics.params.is_empty() {
                    On::OneGpu
                } else {
                    On::AnyEngine
                };
                i.items.iter().map(move |item| (item, on))
            })
            .filter_map(|(item, on)| match item {
                syn::ImplItem::Fn(f) if !web_only(f) => Some((f.sig.ident.to_string(), on)),
                _ => None,
            })
            .collect();
        (names, errors)
    }

    /// Whether `f` is compiled on wasm32 only (a blocking method's
    /// stand-in there).
    fn web_only(f: &syn::ImplItemFn) -> bool {
        f.attrs.iter().any(|a| {
            let text = quote::quote!(#a).to_string();
            a.path().is_ident("cfg") && text.contains("wasm32") && !text.contains("not")
        })
    }

    #[test]
    fn every_blocking_method_has_a_stand_in_on_wasm32() {
        let ts = expand(&saxpy(SAXPY_NODES));
        let file: syn::File = syn::parse2(ts).expect("the expansion parses");
        let stand_ins: Vec<String> = file
            .items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Impl(i) if i.trait_.is_none() => Some(i),
                _ => None,
            })
            .flat_map(|i| &i.items)
            .filter_map(|item| match item {
                syn::ImplItem::Fn(f) if web_only(f) => Some(f.sig.ident.to_string()),
                _ => None,
            })
            .collect();
        let blocking: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.web_twin.is_some())
            .map(|m| m.name)
            .collect();
        assert_eq!(stand_ins, blocking);
    }

    #[test]
    fn the_real_api_and_the_stub_define_the_tables_methods() {
        let table: Vec<(String, On)> = METHODS.iter().map(|m| (m.name.to_string(), m.on)).collect();
        let (real, errors) = methods_of(&saxpy(SAXPY_NODES));
        assert_eq!(errors, 0);
        assert_eq!(real, table, "the typed API");
        // One mistake (an unknown buffer): the stub.
        let (stub, errors) = methods_of(&saxpy(
            "node scale(src: xs, dst: t) over n; node add(a: t, b: y, params: params, out: out) over n;",
        ));
        assert_eq!(errors, 1);
        assert_eq!(stub, table, "the stub");
    }

    /// The struct is generic over its engine, `Graph` by default, in the
    /// real API and in the stub alike (so `Saxpy<SomeEngine>` written by
    /// the user resolves even when the graph has errors).
    #[test]
    fn the_type_takes_an_engine_defaulting_to_graph() {
        for (src, what) in [
            (saxpy(SAXPY_NODES), "the typed API"),
            (
                saxpy(
                    "node scale(src: xs, dst: t) over n; node add(a: t, b: y, params: params, out: out) over n;",
                ),
                "the stub",
            ),
        ] {
            let file: syn::File = syn::parse2(expand(&src)).expect("the expansion parses");
            let item = file
                .items
                .iter()
                .find_map(|item| match item {
                    syn::Item::Struct(s) if s.ident == "Saxpy" => Some(s),
                    _ => None,
                })
                .expect("the struct");
            let generics = item
                .generics
                .params
                .iter()
                .map(|g| quote::quote!(#g).to_string())
                .collect::<Vec<_>>();
            assert_eq!(
                generics,
                ["E = :: vyre_graph :: __private :: Graph"],
                "{what}"
            );
        }
    }
}
