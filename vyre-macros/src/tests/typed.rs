//! The typed API: generated structs, run signatures, the problem size.

use super::*;
use crate::check::convert::is_rust_ident;
use crate::emit::rust_types::{rust_ident, struct_tokens};
use crate::model::rust_types::{Field, Prim, RustTy, StructDef};

fn kernel_with_struct(name: &str, body: &str) -> String {
    format!(
        "kernel {name} = \"
            struct Params {{ {body} }}
            @group(0) @binding(0) var<uniform> params: Params;
            @group(0) @binding(1) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ out[g.x] = f32(params.a); }}
        \";"
    )
}

#[test]
fn struct_tokens_have_padding_pod_and_asserts() {
    let def = StructDef {
        name: "P".into(),
        size: 32,
        fields: vec![
            Field {
                name: "a".into(),
                ty: RustTy::Prim(Prim::F32),
                offset: 0,
                pad: None,
                wgsl: "f32".into(),
            },
            Field {
                name: "_pad0".into(),
                ty: RustTy::Prim(Prim::U32),
                offset: 4,
                pad: Some(12),
                wgsl: String::new(),
            },
            Field {
                name: "b".into(),
                ty: RustTy::Array(Box::new(RustTy::Prim(Prim::F32)), 4),
                offset: 16,
                pad: None,
                wgsl: "vec4<f32>".into(),
            },
        ],
    };
    let vis: syn::Visibility = syn::parse_quote!(pub);
    let out = struct_tokens(&def, &vis, "kernel `k`").to_string();
    for part in [
        "# [repr (C)]",
        "pub struct P { # [doc = \"`a: f32` at byte offset 0.\"] pub a : f32 ,",
        "pub _pad0 : [u8 ; 12usize]",
        "pub b : [f32 ; 4usize]",
        "unsafe impl :: vyre_graph :: __private :: bytemuck :: Pod for P",
        "unsafe impl :: vyre_graph :: __private :: bytemuck :: Zeroable for P",
        "impl :: core :: default :: Default for P",
        ":: core :: assert ! (:: core :: mem :: size_of :: < P > () == 32usize)",
        ":: core :: assert ! (:: core :: mem :: offset_of ! (P , b) == 16usize)",
        ":: core :: assert ! (:: core :: mem :: offset_of ! (P , _pad0) == 4usize)",
    ] {
        assert!(out.contains(part), "missing {part:?} in {out}");
    }
}

#[test]
fn rust_identifiers_never_panic() {
    assert_eq!(
        rust_ident("plain", proc_macro2::Span::call_site())
            .map(|i| i.to_string())
            .as_deref(),
        Some("plain")
    );
    assert_eq!(
        rust_ident("type", proc_macro2::Span::call_site())
            .map(|i| i.to_string())
            .as_deref(),
        Some("r#type")
    );
    for bad in [
        "self", "Self", "crate", "super", "_", "", "1x", "a b", "r#x",
    ] {
        assert!(
            rust_ident(bad, proc_macro2::Span::call_site()).is_none(),
            "{bad}"
        );
    }
}

/// The string check the naga thread uses agrees with the `Ident` made on
/// the macro's thread.
#[test]
fn rust_identifier_string_check_agrees_with_syn() {
    for name in [
        "plain", "type", "gen", "async", "r#x", "self", "Self", "crate", "super", "_", "", "1x",
        "a b", "_pad0", "Größe", "δ", "x\u{300}", "\u{300}x", "a-b", "__x", "x1", "α1",
    ] {
        assert_eq!(
            is_rust_ident(name),
            rust_ident(name, proc_macro2::Span::call_site()).is_some(),
            "{name:?}"
        );
    }
}

#[test]
fn structs_shared_by_kernels_are_generated_once() {
    let src = format!(
        "struct G; {} {} uniform params; output o1[n]; output o2[n];
         node k1(params: params, out: o1) over n; node k2(params: params, out: o2) over n;",
        kernel_with_struct("k1", "a: u32, b: vec4<f32>"),
        kernel_with_struct("k2", "a: u32, b: vec4<f32>")
    );
    let out = assert_ok(&src);
    assert_eq!(out.matches("# [repr (C)]").count(), 1, "{out}");
    assert!(out.contains("_pad0 : [u8 ; 12usize]"), "{out}");
    assert!(out.contains("Input < 'a , Params >"), "{out}");
}

#[test]
fn conflicting_structs_name_both_kernels() {
    let src = format!(
        "struct G; {} {} uniform p1; uniform p2; output o1[n]; output o2[n];
         node k1(params: p1, out: o1) over n; node k2(params: p2, out: o2) over n;",
        kernel_with_struct("k1", "a: u32, b: vec4<f32>"),
        kernel_with_struct("k2", "a: u32, b: f32")
    );
    assert_error(
        &src,
        &["kernel `k2` defines struct `Params` differently from kernel `k1`"],
    );
    assert_error(&src, &["note: kernel `k1` defines `Params` here"]);
}

#[test]
fn run_signatures_follow_the_host_buffers() {
    let out = assert_ok(&saxpy(SAXPY_NODES));
    // Inputs in declaration order (input, uniform), outputs in order.
    assert!(out.contains(
        "pub fn run < 'a > (& self , x : impl SaxpyArg_x < 'a > , y : impl SaxpyArg_y < 'a > , params : impl SaxpyArg_params < 'a >)"
    ), "{out}");
    // Each argument's trait takes the accepted forms of its element type
    // and names the graph, the buffer and the type when unsatisfied.
    assert!(
        out.contains("pub trait SaxpyArg_x < 'a > { # [doc = r\" The typed input.\"] fn __vyre_input (self) -> :: vyre_graph :: __private :: Input < 'a , f32 > ; }"),
        "{out}"
    );
    for form in [
        "impl < 'a > SaxpyArg_x < 'a > for & 'a [f32]",
        "impl < 'a > SaxpyArg_x < 'a > for & 'a :: std :: vec :: Vec < f32 >",
        "impl < 'a > SaxpyArg_x < 'a > for & 'a f32",
        "impl < 'a > SaxpyArg_x < 'a > for & 'a :: vyre_graph :: __private :: GpuBufferHandle",
        "impl < 'a > SaxpyArg_x < 'a > for :: vyre_graph :: __private :: Input < 'a , f32 >",
        "impl < 'a > SaxpyArg_params < 'a > for & 'a Params",
    ] {
        assert!(out.contains(form), "{form}\n{out}");
    }
    assert!(
        out.contains("graph `Saxpy`: `{Self}` cannot be passed for input buffer `x`, which holds elements of `f32`"),
        "{out}"
    );
    assert!(
        out.contains("graph `Saxpy`: `{Self}` cannot be passed for uniform buffer `params`, which holds one `Params`"),
        "{out}"
    );
    assert!(
        out.contains("SaxpyArg_x :: __vyre_input (x) . feed ()"),
        "{out}"
    );
    assert!(
        out.contains("let n : u64 = self . graph . infer_problem_size (__vyre_feeds) ? ;"),
        "{out}"
    );
    assert!(out.contains("pub struct SaxpyOutputs { # [doc = \"Read back from `out` (output): n elements of `f32`.\"] pub out : :: std :: vec :: Vec < f32 > , }"), "{out}");
    // Host outputs are read straight into their fields, sized by the
    // runtime (no zero-filled resize first).
    assert!(out.contains("Sink :: from (& mut outputs . out)"), "{out}");
    assert!(!out.contains("resize_vec"), "{out}");
    assert!(out.contains("Sink :: from (& outputs . out)"), "{out}");
}

#[test]
fn n_is_a_parameter_when_no_input_gives_it() {
    let src = "struct G;
        kernel fill = \"
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] = g.x; }
        \";
        output out[n + 1];
        node fill(out: out) over n + 1;";
    let out = assert_ok(src);
    assert!(out.contains("pub fn run (& self , n : u64 ,)"), "{out}");
    assert!(!out.contains("infer_problem_size"), "{out}");
    // Nothing depends on n: no parameter, n = 1 (0 is refused by the runtime).
    let out = assert_ok(&src.replace("n + 1", "16"));
    assert!(
        out.contains("pub fn run (& self ,)") && out.contains("let n : u64 = 1 ;"),
        "{out}"
    );
    // An input of length n / 2 cannot give n.
    let out = assert_ok(&format!(
        "struct G; {} input x[n / 2]; output y[n / 2]; node k(src: x, dst: y) over n / 2;",
        "kernel k = \"@group(0) @binding(0) var<storage, read> src: array<f32>; @group(0) @binding(1) var<storage, read_write> dst: array<f32>; @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x]; }\";"
    ));
    assert!(
        out.contains("pub fn run < 'a > (& self , n : u64 , x :"),
        "{out}"
    );
}

#[test]
fn user_attributes_and_visibility_are_kept() {
    let out = assert_ok(&saxpy(SAXPY_NODES).replace(
        "/// Docs.\n        pub struct",
        "/// Docs.\n        #[allow(dead_code)]\n        pub(crate) struct",
    ));
    assert!(
        out.contains("# [doc = \" Docs.\"] # [allow (dead_code)]"),
        "{out}"
    );
    assert!(out.contains("pub (crate) struct Saxpy"), "{out}");
    assert!(out.contains("pub (crate) struct Params"), "{out}");
}

/// When `n` is `run`'s first argument, its doc line says so and names what
/// it sizes: buffers and textures (a texture's width), else nodes.
#[test]
fn the_problem_size_argument_is_documented() {
    let docs = |src: &str| {
        let out = assert_ok(src);
        out.split("# [doc = \"")
            .filter_map(|d| d.split("\"]").next())
            .filter(|d| d.starts_with("- `n`"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let fill = "struct G;
        kernel fill = \"
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] = g.x; }
        \";
        output out[n + 1];
        node fill(out: out) over n + 1;";
    let lines = docs(fill);
    // Only `run` carries the arguments' docs.
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("- `n`: the problem size, a `u64` of at least 1. No input's length gives it, so it is the first argument")
            && lines[0].ends_with("it sizes `out` (`n + 1` elements)"),
        "{lines:?}"
    );
    // Only the node's size depends on n.
    let lines = docs(&fill.replace("output out[n + 1];", "output out[64];"));
    assert!(
        lines[0].ends_with("it sizes node `fill` (over `n + 1` invocations)"),
        "{lines:?}"
    );
    // A texture's width.
    let lines = docs(
        "struct G;
        kernel k = \"
            @group(0) @binding(0) var t: texture_storage_2d<r32float, write>;
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { textureStore(t, g.xy, vec4<f32>(1.0)); }
        \";
        output texture t[n, 16] r32float;
        node k(t: t) grid [n / 8, 2, 1];",
    );
    assert!(
        lines[0].ends_with("it sizes `t` (`[n, 16]` texels)"),
        "{lines:?}"
    );
    // An input gives n: no `n` argument, no line.
    assert!(docs(&saxpy(SAXPY_NODES)).is_empty());
}
