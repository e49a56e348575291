//! Unit tests per stage, plus a robustness sweep of the whole front end.

use proc_macro2::{TokenStream, TokenTree};

mod checks;
mod fold;
mod fuse;
mod fuzz;
mod grammar;
mod indexing;
mod kernels;
mod reach;
mod reduce;
mod robust;
mod stack;
mod textures;
mod threads;
mod typed;

/// Parses Rust tokens (panics on bad test input).
pub fn tokens(src: &str) -> TokenStream {
    src.parse()
        .unwrap_or_else(|e| panic!("bad test tokens: {e:?}\n{src}"))
}

/// Runs the whole front end.
pub fn expand(src: &str) -> TokenStream {
    crate::expand(tokens(src))
}

/// The messages of every `compile_error!` in `ts`.
pub fn compile_errors(ts: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let trees: Vec<TokenTree> = ts.clone().into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        if let TokenTree::Ident(id) = t
            && id == "compile_error"
            && let Some(TokenTree::Group(g)) = trees.get(i + 2)
        {
            let lit: syn::LitStr = syn::parse2(g.stream()).expect("message literal");
            out.push(lit.value());
        }
        if let TokenTree::Group(g) = t {
            out.extend(compile_errors(&g.stream()));
        }
    }
    out
}

/// The error messages of a graph (empty when it expands).
pub fn errors(src: &str) -> Vec<String> {
    compile_errors(&expand(src))
}

/// Asserts some message contains every one of `parts`.
#[track_caller]
pub fn assert_error(src: &str, parts: &[&str]) {
    let errors = errors(src);
    assert!(
        errors.iter().any(|e| parts.iter().all(|p| e.contains(p))),
        "no error containing {parts:?}; errors:\n{}",
        errors.join("\n---\n")
    );
}

/// Asserts the graph expands without errors; returns the expansion.
#[track_caller]
pub fn assert_ok(src: &str) -> String {
    let ts = expand(src);
    let errors = compile_errors(&ts);
    assert!(
        errors.is_empty(),
        "unexpected errors:\n{}",
        errors.join("\n---\n")
    );
    ts.to_string()
}

/// A two-kernel graph used by many tests; `{extra}` is appended.
pub fn saxpy(extra: &str) -> String {
    format!(
        r#"
        /// Docs.
        pub struct Saxpy;
        kernel scale = "
            @group(0) @binding(0) var<storage, read> src: array<f32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ dst[g.x] = src[g.x] * 2.0; }}
        ";
        kernel add = wgsl {{
            struct Params {{ a: f32, b: u32 }}
            @group(0) @binding(0) var<storage, read> a: array<f32>;
            @group(0) @binding(1) var<storage, read> b: array<f32>;
            @group(0) @binding(2) var<uniform> params: Params;
            @group(0) @binding(3) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
                out[g.x] = params.a * a[g.x] + b[g.x];
            }}
        }};
        input x[n];
        input y[n];
        uniform params;
        intermediate t[n];
        output out[n];
        {extra}
        "#
    )
}

/// The standard nodes of [`saxpy`].
pub const SAXPY_NODES: &str = "
        node scale(src: x, dst: t) over n;
        node add(a: t, b: y, params: params, out: out) over n;
";
