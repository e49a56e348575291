//! Stages 2 to 4: loading (source maps), naga (parse and validation) and
//! reflection.

use proc_macro2::{Delimiter, TokenTree};

use super::*;
use crate::check::EvaluateOverrides;
use crate::check::load;
use crate::check::reflect;
use crate::check::validate;
use crate::diag::Diagnostics;
use crate::model::{
    BindingKind, KernelDecl, KernelInterface, LiteralMap, LoadedKernel, Prim, RustTy,
};
use crate::parse as input;
use vyre_analysis::Access;

fn decl(kernel: &str) -> KernelDecl {
    let mut diag = Diagnostics::new();
    let g = input::parse(tokens(&format!("struct G; kernel {kernel};")), &mut diag);
    assert!(diag.is_empty(), "{:?}", diag.messages());
    g.kernels.into_iter().next().expect("one kernel")
}

pub(super) fn loaded(kernel: &str) -> LoadedKernel {
    load::load(&decl(kernel)).unwrap_or_else(|e| panic!("load: {e}"))
}

fn validate_err(kernel: &str) -> syn::Error {
    match validate::validate(loaded(kernel), crate::model::features::WEBGPU) {
        Ok(_) => panic!("kernel validated: {kernel}"),
        Err(e) => e,
    }
}

fn interface_native(wgsl: &str, native: bool) -> Result<KernelInterface, Vec<String>> {
    let caps = if native {
        naga::valid::Capabilities::all()
    } else {
        crate::model::features::WEBGPU
    };
    let k = loaded(&format!("k = {:?}", wgsl));
    let v = validate::validate(k, caps).map_err(|e| vec![e.to_string()])?;
    reflect::reflect(v).map_err(|es| es.into_iter().map(|e| e.to_string()).collect())
}

fn interface(wgsl: &str) -> KernelInterface {
    interface_native(wgsl, false).unwrap_or_else(|e| panic!("{e:#?}"))
}

fn reflect_err(wgsl: &str, part: &str) {
    let errors = match interface_native(wgsl, false) {
        Ok(_) => panic!("reflected fine: {wgsl}"),
        Err(e) => e,
    };
    assert!(
        errors.iter().any(|e| e.contains(part)),
        "no error containing {part:?}: {errors:#?}"
    );
}

// --- string literal source maps -------------------------------------------

#[test]
fn literal_map_decodes_escapes() {
    // Token text `"ab\ncd"`: the value's `c` (byte 3) is char 5 of the token.
    let map = LiteralMap::new(r#""ab\ncd""#);
    assert_eq!(map.position(0), Some((0, 1)));
    assert_eq!(map.position(2), Some((0, 3)));
    assert_eq!(map.position(3), Some((0, 5)));
    // Past the end: the closing quote.
    assert_eq!(map.position(99), Some((0, 7)));
    // `\u{e9}` is one two-byte char; `x` follows at byte 2.
    let map = LiteralMap::new(r#""\u{e9}x""#);
    assert_eq!(map.position(2), Some((0, 7)));
    assert_eq!(map.position(1), Some((0, 1)), "inside a multi-byte char");
    // `\x41` and `\"`.
    let map = LiteralMap::new(r#""\x41\"z""#);
    assert_eq!(map.position(2), Some((0, 7)));
}

#[test]
fn literal_map_follows_newlines_and_continuations() {
    let map = LiteralMap::new("\"x\n  y\"");
    assert_eq!(map.position(0), Some((0, 1)));
    assert_eq!(map.position(4), Some((1, 2)));
    // `a\<newline>    b`: the value is `ab`.
    let map = LiteralMap::new("\"a\\\n    b\"");
    assert_eq!(map.position(1), Some((1, 4)));
}

#[test]
fn literal_map_handles_raw_strings() {
    let map = LiteralMap::new(r###"r#"a"b"#"###);
    assert_eq!(map.position(0), Some((0, 3)));
    assert_eq!(map.position(2), Some((0, 5)));
    let map = LiteralMap::new("r\"\\n\"");
    // Raw: `\n` is two characters of the value.
    assert_eq!(map.position(1), Some((0, 3)));
}

#[test]
fn literal_errors_name_the_line_inside_the_literal() {
    let e = validate_err("k = \"fn f() {\n    let x: u32 = 1.5;\n}\"");
    let m = e.to_string();
    assert!(
        m.starts_with(
            "WGSL type error in kernel `k`: `x` is declared `u32` but initialized with `AbstractFloat`\n"
        ),
        "{m}"
    );
    // One frame, the initializer underlined (no `<kernel k>` coordinates).
    assert!(!m.contains("<kernel"), "{m}");
    assert!(m.contains("let x: u32 = 1.5;"), "frame: {m}");
    assert!(
        m.contains("                 ^^^ this is `AbstractFloat`"),
        "frame: {m}"
    );
    assert!(
        m.contains("help: WGSL never converts implicitly: write `u32(1.5)`"),
        "{m}"
    );
    assert!(m.lines().next().is_some_and(|l| l.len() < 100), "{m}");
    // Stable Rust cannot point inside a literal: the span is the literal.
    assert_eq!(e.span().start().line, 1);
}

// --- WGSL as tokens ----------------------------------------------------------

const TOKEN_WGSL: &str = "{
    @group(0) @binding(0) var<storage, read_write> v: array<vec4<f32>>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        var k = 1u >> 2u;
        k <<= 1u;
        let h = 0x1p-3f + 1e-3 + 1.5f;
        v[g.x] = vec4<f32>(f32(k) * h);
    }
}";

fn group(src: &str) -> proc_macro2::Group {
    match tokens(src).into_iter().next() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g,
        other => panic!("not a group: {other:?}"),
    }
}

#[test]
fn token_wgsl_rebuilds_the_exact_layout() {
    let (text, map) = load::rebuild(&group(TOKEN_WGSL));
    let original: Vec<&str> = TOKEN_WGSL.lines().collect();
    let rebuilt: Vec<&str> = text.lines().collect();
    // Same line numbers: line 1 held only `{`.
    assert_eq!(rebuilt.first().copied(), Some(""));
    assert_eq!(&rebuilt[1..], &original[1..original.len() - 1]);
    assert!(map.len() > 40);
    naga::front::wgsl::parse_str(&text).expect("rebuilt WGSL parses");
}

#[test]
fn token_offsets_map_to_their_token() {
    let (text, map) = load::rebuild(&group(TOKEN_WGSL));
    for (needle, line) in [("2u", 5), ("<<=", 6), ("0x1p", 7), ("vec4<f32>(f32", 8)] {
        let offset = text.find(needle).expect(needle);
        let span = map.token_at(offset).expect("a token");
        let start = span.start();
        let column = TOKEN_WGSL
            .lines()
            .nth(line - 1)
            .and_then(|l| l.find(needle))
            .expect(needle);
        assert_eq!((start.line, start.column), (line, column), "{needle}");
        // Whitespace before a token maps to the token before it.
        let before = map.token_at(offset.saturating_sub(1)).expect("a token");
        assert!(before.start().column < column || before.start().line < line);
    }
}

#[test]
fn doc_comments_inside_token_wgsl_are_dropped() {
    let (text, _) = load::rebuild(&group(
        "{\n    /// A doc comment.\n    //! Inner.\n    fn f() {}\n}",
    ));
    assert!(!text.contains("doc") && !text.contains('#'), "{text}");
    naga::front::wgsl::parse_str(&text).expect("parses");
}

#[test]
fn token_errors_point_at_the_offending_token() {
    // Validation-only error: a store into a `read` buffer.
    let src = "k = wgsl {
        @group(0) @binding(0) var<storage, read> v: array<f32>;
        @compute @workgroup_size(1)
        fn main() {
            v[0] = 1.0;
        }
    }";
    let e = validate_err(src);
    assert!(
        e.to_string().starts_with(
            "WGSL validation error in kernel `k`: cannot write to `v`: it is `var<storage, read>`\n"
        ),
        "{e}"
    );
    // No code frame: rustc draws the span itself.
    assert!(
        !e.to_string().contains('│') && !e.to_string().contains(" | "),
        "{e}"
    );
    let start = e.span().start();
    // `struct G; kernel ` precedes the declaration on line 1.
    assert_eq!(start.line, 5, "{e}");
    assert!(
        start.column >= 12 && start.column <= 16,
        "column {} for {e}",
        start.column
    );

    // Parse error: the exact token.
    let e = validate_err("k = wgsl { fn main() { let x = ; } }");
    let start = e.span().start();
    let column = "struct G; kernel k = wgsl { fn main() { let x = ; } }"
        .find("; }")
        .expect("semicolon");
    assert_eq!((start.line, start.column), (1, column), "{e}");
    assert!(e.to_string().starts_with("WGSL syntax error"), "{e}");
}

#[test]
fn parse_and_validation_errors_are_both_caught() {
    let e = validate_err("k = \"fn f() { let x: u32 = 1.5; }\"");
    assert!(e.to_string().starts_with("WGSL type error"), "{e}");
    let e = validate_err(
        "k = \"@group(0) @binding(0) var<storage, read> v: array<f32>; @compute @workgroup_size(1) fn main() { v[0] = 1.0; }\"",
    );
    assert!(e.to_string().starts_with("WGSL validation error"), "{e}");
    let e = validate_err(
        "k = \"@group(0) @binding(0) var<storage, read_write> v: array<f32>; @compute @workgroup_size(1) fn main() { let a = 1u; let b = 2.0f; v[0] = f32(a + b); }\"",
    );
    assert!(e.to_string().contains("WGSL"), "{e}");
}

// --- files -----------------------------------------------------------------

#[test]
fn file_kernels_load_relative_to_the_manifest() {
    let k = loaded("add = file \"tests/kernels/add.wgsl\"");
    assert!(k.source.contains("c[g.x] = a[g.x] + b[g.x]"));
    let path = k.tracked_path().expect("absolute path");
    assert!(
        path.ends_with("tests/kernels/add.wgsl") && std::path::Path::new(path).is_absolute(),
        "{path}"
    );
    let out = assert_ok(
        "struct G; kernel add = file \"tests/kernels/add.wgsl\"; input a[n]; input b[n]; output c[n];
         node add(a: a, b: b, c: c) over n;",
    );
    assert!(
        out.contains("include_str") && out.contains("add.wgsl"),
        "{out}"
    );
}

#[test]
fn file_errors_name_the_file_line_and_column() {
    let e = validate_err("bad = file \"tests/kernels/bad.wgsl\"");
    let m = e.to_string();
    // Relative to CARGO_MANIFEST_DIR: no machine-specific prefix.
    assert!(
        m.starts_with("WGSL syntax error in kernel `bad`: missing `;` at the end of the line\n"),
        "{m}"
    );
    // The frame names the file's own line and column: just after `1.0`.
    assert!(m.contains(" ┌─ tests/kernels/bad.wgsl:4:15\n"), "{m}");
    assert!(m.contains("4 │     v[0] = 1.0\n"), "{m}");
    assert!(m.contains("  │               ^ add `;` here"), "{m}");
}

#[test]
fn missing_files_say_where_they_were_looked_for() {
    let e = load::load(&decl("k = file \"tests/kernels/nope.wgsl\""))
        .err()
        .expect("an error");
    let m = e.to_string();
    assert!(
        m.starts_with("cannot find `tests/kernels/nope.wgsl`, the WGSL file of kernel `k`"),
        "{m}"
    );
    assert!(
        m.contains("CARGO_MANIFEST_DIR") && m.contains("beside the source file"),
        "{m}"
    );
    // Still tracked when the file exists but is broken, so fixing it rebuilds.
    let out = expand("struct G; kernel bad = file \"tests/kernels/bad.wgsl\"; output v[n]; node bad(v: v) over n;").to_string();
    assert!(
        out.contains("include_str") && out.contains("compile_error"),
        "{out}"
    );
}

// --- entry points ------------------------------------------------------------

#[test]
fn entry_points_are_chosen_or_explained() {
    let k = interface_native(
        &std::fs::read_to_string("tests/kernels/many.wgsl").expect("fixture"),
        false,
    );
    let e = k.err().expect("ambiguous").join("\n");
    assert!(
        e.contains("several `@compute` entry points (`first` and `second`)"),
        "{e}"
    );
    assert!(e.contains("entry \"first\""), "{e}");

    let v = validate::validate(
        loaded("k = file \"tests/kernels/many.wgsl\" entry \"second\""),
        crate::model::features::WEBGPU,
    )
    .expect("valid");
    let k = reflect::reflect(v).map_err(|e| e.len()).expect("reflects");
    assert_eq!(k.entry_point, "second");
    assert_eq!(k.workgroup_size, Ok([32, 1, 1]));

    for (entry, part) in [
        (
            "nope",
            "has no entry point `nope`\nnote: its entry points are `first` (compute), `second` (compute) and `vs` (vertex)",
        ),
        (
            "vs",
            "is a vertex shader; graph nodes run `@compute` entry points",
        ),
    ] {
        let v = validate::validate(
            loaded(&format!(
                "k = file \"tests/kernels/many.wgsl\" entry \"{entry}\""
            )),
            crate::model::features::WEBGPU,
        )
        .expect("valid");
        let e = reflect::reflect(v).err().expect("an error");
        assert!(e[0].to_string().contains(part), "{}", e[0]);
    }
    reflect_err(
        "fn f() {}",
        "has no `@compute` entry point; it has no entry points at all",
    );
}

// --- reflection --------------------------------------------------------------

#[test]
fn bindings_reflect_kind_access_and_size() {
    let k = interface(
        "@group(0) @binding(0) var<storage, read> r: array<f32>;
         @group(0) @binding(1) var<storage, read_write> only_read: array<u32>;
         @group(0) @binding(2) var<storage, read_write> only_written: array<i32>;
         @group(0) @binding(3) var<storage, read_write> both: array<f32>;
         @group(1) @binding(0) var<uniform> u: vec4<f32>;
         @group(0) @binding(5) var<storage, read_write> unused: array<f32>;
         @compute @workgroup_size(8, 4, 2)
         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             only_written[g.x] = i32(only_read[g.x]);
             both[g.x] = both[g.x] + r[g.x] + u.x;
             if g.x < arrayLength(&only_written) { only_written[g.x] = 1; }
         }",
    );
    assert_eq!(k.workgroup_size, Ok([8, 4, 2]));
    let got: Vec<(&str, u32, u32, BindingKind, Access)> = k
        .bindings
        .iter()
        .map(|b| (b.name.as_str(), b.group, b.binding, b.kind, b.access))
        .collect();
    assert_eq!(
        got,
        [
            ("r", 0, 0, BindingKind::ReadOnlyStorage, Access::Read),
            (
                "only_read",
                0,
                1,
                BindingKind::ReadWriteStorage,
                Access::Read
            ),
            (
                "only_written",
                0,
                2,
                BindingKind::ReadWriteStorage,
                Access::Write
            ),
            (
                "both",
                0,
                3,
                BindingKind::ReadWriteStorage,
                Access::ReadWrite
            ),
            ("u", 1, 0, BindingKind::Uniform, Access::Read),
        ]
    );
    assert_eq!(k.unused_bindings, ["unused"]);
    let u = k.binding("u").expect("u");
    assert_eq!(
        (u.element_size, u.min_binding_size, u.wgsl_type.as_str()),
        (16, 16, "vec4<f32>")
    );
    assert_eq!(
        u.element,
        RustTy::Array(Box::new(RustTy::Prim(Prim::F32)), 4)
    );
    assert_eq!(
        k.binding("r").expect("r").describe(),
        "`r` (group 0, binding 0, var<storage, read> array<f32>)"
    );
}

#[test]
fn strides_and_element_types() {
    let k = interface(
        "@group(0) @binding(0) var<storage, read> v3: array<vec3<f32>>;
         @group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 256>;
         @group(0) @binding(2) var<storage, read> m: array<mat3x3<f32>>;
         @group(0) @binding(3) var<storage, read> one: u32;
         @compute @workgroup_size(1)
         fn main() {
             atomicAdd(&hist[0], u32(v3[0].x + m[0][0].x) + one);
         }",
    );
    let v3 = k.binding("v3").expect("v3");
    assert_eq!(
        (v3.element_size, v3.min_binding_size, v3.min_elements),
        (16, 16, None)
    );
    assert_eq!(
        v3.element,
        RustTy::Array(Box::new(RustTy::Prim(Prim::F32)), 4),
        "vec3 with stride 16"
    );
    let hist = k.binding("hist").expect("hist");
    assert_eq!(
        (hist.element_size, hist.min_binding_size, hist.min_elements),
        (4, 1024, Some(256))
    );
    assert_eq!(hist.element, RustTy::Prim(Prim::U32));
    assert_eq!(hist.access, Access::ReadWrite);
    let m = k.binding("m").expect("m");
    assert_eq!(m.element_size, 48);
    assert_eq!(m.element.display(), "[[f32; 4]; 3]");
    let one = k.binding("one").expect("one");
    assert_eq!(
        (
            one.element_size,
            one.min_elements,
            one.element.display().as_str()
        ),
        (4, Some(1), "u32")
    );
}

#[test]
fn struct_layouts_get_explicit_padding() {
    let k = interface(
        "struct P { a: f32, b: vec4<f32> }
         struct Inner { m: mat3x3<f32> }
         struct Outer { i: Inner, k: u32 }
         struct Tail { v: vec4<f32>, s: f32 }
         @group(0) @binding(0) var<uniform> p: P;
         @group(0) @binding(1) var<storage, read_write> o: array<Outer>;
         @group(0) @binding(2) var<storage, read> t: array<Tail>;
         @compute @workgroup_size(1)
         fn main() { o[0].k = u32(p.a + p.b.x + t[0].s); }",
    );
    let s = |name: &str| {
        k.structs
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let fields = |name: &str| -> Vec<(String, u32, Option<u32>)> {
        s(name)
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.offset, f.pad))
            .collect()
    };
    assert_eq!(s("P").size, 32);
    assert_eq!(
        fields("P"),
        [
            ("a".into(), 0, None),
            ("_pad0".into(), 4, Some(12)),
            ("b".into(), 16, None)
        ]
    );
    assert_eq!(s("Inner").size, 48);
    assert_eq!(s("Outer").size, 64);
    assert_eq!(
        fields("Outer"),
        [
            ("i".into(), 0, None),
            ("k".into(), 48, None),
            ("_pad0".into(), 52, Some(12))
        ]
    );
    assert_eq!(
        fields("Tail"),
        [
            ("v".into(), 0, None),
            ("s".into(), 16, None),
            ("_pad0".into(), 20, Some(12))
        ]
    );
    // Dependency order: Inner before Outer.
    let order: Vec<&str> = k.structs.iter().map(|s| s.name.as_str()).collect();
    let pos = |n: &str| order.iter().position(|x| *x == n).expect(n);
    assert!(pos("Inner") < pos("Outer"));
    assert_eq!(k.binding("o").expect("o").element_size, 64);
    assert_eq!(
        k.binding("p").expect("p").element,
        RustTy::Struct("P".into(), 32)
    );
}

#[test]
fn unsupported_types_and_bindings_are_errors() {
    // Texture shapes graph! does not bind, each with the reason.
    let out = "@group(0) @binding(1) var<storage, read_write> o: array<vec4<f32>>;";
    for (decl, body, why) in [
        (
            "var t: texture_cube<f32>;",
            "o[0] = vec4<f32>(f32(textureDimensions(t).x));",
            "a cube map",
        ),
        (
            "var t: texture_multisampled_2d<f32>;",
            "o[0] = textureLoad(t, vec2<i32>(0), 0);",
            "multisampled",
        ),
        (
            "var t: texture_depth_2d;",
            "o[0] = vec4<f32>(textureLoad(t, vec2<i32>(0), 0));",
            "a depth texture",
        ),
    ] {
        reflect_err(
            &format!(
                "@group(0) @binding(0) {decl} {out} @compute @workgroup_size(1) fn main() {{ {body} }}"
            ),
            why,
        );
    }
    reflect_err(
        "@group(0) @binding(0) var t: texture_depth_2d; @group(0) @binding(2) var s: sampler_comparison;
         @group(0) @binding(1) var<storage, read_write> o: array<f32>;
         @compute @workgroup_size(1) fn main() { o[0] = textureSampleCompareLevel(t, s, vec2<f32>(0.5), 0.5); }",
        "a comparison sampler",
    );
    // The supported ones reflect as textures and samplers.
    let k = interface(
        "@group(0) @binding(0) var t: texture_2d<f32>; @group(0) @binding(2) var s: sampler;
         @group(0) @binding(3) var st: texture_storage_2d<r32float, read_write>;
         @group(0) @binding(1) var<storage, read_write> o: array<vec4<f32>>;
         @compute @workgroup_size(1) fn main() {
             o[0] = textureSampleLevel(t, s, vec2<f32>(0.5), 0.0) + textureLoad(t, vec2<i32>(0), 0);
             textureStore(st, vec2<i32>(0), textureLoad(st, vec2<i32>(1)));
         }",
    );
    assert!(k.binding("t").expect("t").kind.is_texture());
    assert!(matches!(
        k.binding("s").expect("s").kind,
        crate::model::BindingKind::Sampler { .. }
    ));
    assert_eq!(
        k.binding("st").expect("st").access,
        vyre_analysis::Access::ReadWrite
    );
    // Every dimension and storage format reflects with its dimension; the
    // features a storage format and access need are checked by `analyse`.
    for (decl, body, dim) in [
        (
            "var t: texture_2d_array<f32>;",
            "o[0] = textureLoad(t, vec2<i32>(0), 0, 0);",
            vyre_analysis::spec::TextureDimension::D2Array,
        ),
        (
            "var t: texture_3d<f32>;",
            "o[0] = textureLoad(t, vec3<i32>(0), 0);",
            vyre_analysis::spec::TextureDimension::D3,
        ),
        (
            "var t: texture_1d<f32>;",
            "o[0] = textureLoad(t, 0, 0);",
            vyre_analysis::spec::TextureDimension::D1,
        ),
        (
            "var t: texture_storage_2d<rgba8uint, write>;",
            "textureStore(t, vec2<i32>(0), vec4<u32>(1u)); o[0] = vec4<f32>(0.0);",
            vyre_analysis::spec::TextureDimension::D2,
        ),
        (
            "var t: texture_storage_2d_array<rgba8unorm, read_write>;",
            "textureStore(t, vec2<i32>(0), 1, textureLoad(t, vec2<i32>(0), 0)); o[0] = vec4<f32>(0.0);",
            vyre_analysis::spec::TextureDimension::D2Array,
        ),
    ] {
        let k = interface(&format!(
            "@group(0) @binding(0) {decl} {out} @compute @workgroup_size(1) fn main() {{ {body} }}"
        ));
        match k.binding("t").expect("t").kind {
            crate::model::BindingKind::SampledTexture { dimension: d, .. }
            | crate::model::BindingKind::StorageTexture { dimension: d, .. } => {
                assert_eq!(d, dim, "{decl}");
            }
            other => panic!("{decl}: {other:?}"),
        }
    }
    // Without `features [shader_f16]`, the WebGPU capabilities reject f16
    // and the message says which feature allows it.
    let e = interface_native(
        "enable f16; @compute @workgroup_size(1) fn main() { let h = 1.0h; }",
        false,
    )
    .err()
    .expect("f16 needs a feature")
    .join("\n");
    assert!(e.contains("declare `features [shader_f16];`"), "{e}");
}

#[test]
fn overrides_are_reflected_and_evaluated() {
    let k = interface(
        "override WG: u32 = 64;
         override TWICE = WG * 2u;
         @id(7) override SHIFT: u32;
         override SCALE: f32 = 0.5;
         @group(0) @binding(0) var<storage, read_write> v: array<f32>;
         @compute @workgroup_size(WG, 2)
         fn main(@builtin(global_invocation_id) g: vec3<u32>) { v[g.x] = f32(g.x >> SHIFT) * SCALE + f32(TWICE); }",
    );
    assert!(k.size_from_overrides);
    // naga evaluates every override the entry point uses, and `SHIFT` has
    // no default: the size is only known once a node sets it.
    assert_eq!(
        k.workgroup_size,
        Err("override `SHIFT` has no value: it has no default and is not set".into())
    );
    assert_eq!(
        k.workgroup_size_with(&[("WG".into(), 128.0), ("7".into(), 3.0)]),
        Ok([128, 2, 1])
    );
    assert_eq!(k.workgroup_size_with(&[("7".into(), 0.0)]), Ok([64, 2, 1]));
    let o: Vec<String> = k.overrides.iter().map(|o| o.describe()).collect();
    assert_eq!(
        o,
        [
            "`WG` (u32, default 64)",
            "`TWICE` (u32, with a default)",
            "`SHIFT` (u32, no default)",
            "`SCALE` (float, default 0.5)"
        ]
    );
    assert_eq!(k.override_named("SHIFT").map(|o| o.key.as_str()), Some("7"));
    assert_eq!(k.override_named("WG").map(|o| o.key.as_str()), Some("WG"));
}

/// A kernel whose size is `@workgroup_size(size)`, with `decls` before it.
fn sized(decls: &str, size: &str) -> KernelInterface {
    interface(&format!(
        "{decls}
         @group(0) @binding(0) var<storage, read_write> v: array<u32>;
         @compute @workgroup_size({size})
         fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ v[g.x] = g.x; }}"
    ))
}

#[test]
fn override_sizes_are_evaluated_by_naga() {
    // `select` is beyond any hand-written evaluator; naga's placeholder for
    // an override-sized entry point is [1, 1, 1], and it must never leak.
    let k = sized(
        "override BIG: bool = false; override WG: u32 = select(64u, 256u, BIG);",
        "WG",
    );
    assert!(k.size_from_overrides);
    assert_eq!(k.workgroup_size, Ok([64, 1, 1]));
    assert_eq!(
        k.workgroup_size_with(&[("BIG".into(), 1.0)]),
        Ok([256, 1, 1])
    );
    assert_eq!(
        k.workgroup_size_with(&[("BIG".into(), 0.0)]),
        Ok([64, 1, 1])
    );
    assert_eq!(
        k.workgroup_size_with(&[("WG".into(), 32.0)]),
        Ok([32, 1, 1])
    );
    let o: Vec<String> = k.overrides.iter().map(|o| o.describe()).collect();
    assert_eq!(o, ["`BIG` (bool, default 0)", "`WG` (u32, default 64)"]);

    // Arithmetic on other overrides, in the attribute too.
    let k = sized("override A: u32 = 32u; override WG = A * 2u;", "WG, A / 8u");
    assert_eq!(k.workgroup_size, Ok([64, 4, 1]));
    assert_eq!(k.workgroup_size_with(&[("A".into(), 16.0)]), Ok([32, 2, 1]));
    assert_eq!(k.workgroup_size_with(&[("WG".into(), 8.0)]), Ok([8, 4, 1]));
    let k = sized(
        "override BIG: bool = false; override WG = select(64u, 256u, BIG);",
        "WG * 2u",
    );
    assert_eq!(k.workgroup_size, Ok([128, 1, 1]));
    assert_eq!(
        k.workgroup_size_with(&[("BIG".into(), 1.0)]),
        Ok([512, 1, 1])
    );

    // `@id(N)` overrides are keyed by the id.
    let k = sized(
        "@id(3) override BIG: bool = false; @id(9) override WG: u32 = select(16u, 128u, BIG);",
        "WG",
    );
    assert_eq!(k.override_named("BIG").map(|o| o.key.as_str()), Some("3"));
    assert_eq!(k.workgroup_size, Ok([16, 1, 1]));
    assert_eq!(k.workgroup_size_with(&[("3".into(), 1.0)]), Ok([128, 1, 1]));
    assert_eq!(k.workgroup_size_with(&[("9".into(), 4.0)]), Ok([4, 1, 1]));
}

#[test]
fn override_sizes_that_cannot_be_known_are_errors() {
    let k = sized("override WG: u32;", "WG");
    assert_eq!(
        k.workgroup_size,
        Err("override `WG` has no value: it has no default and is not set".into())
    );
    assert_eq!(k.workgroup_size_with(&[("WG".into(), 8.0)]), Ok([8, 1, 1]));
    let zero = k.workgroup_size_with(&[("WG".into(), 0.0)]);
    assert!(zero.as_ref().is_err_and(|e| e.contains("zero")), "{zero:?}");
    // A default naga cannot evaluate.
    let k = sized("override D: u32 = 0u; override WG: u32 = 64u / D;", "WG");
    let e = k.workgroup_size.clone().expect_err("division by zero");
    assert!(e.starts_with("naga cannot evaluate its `override`s"), "{e}");
    assert_eq!(k.workgroup_size_with(&[("D".into(), 2.0)]), Ok([32, 1, 1]));
    // A literal size with an unset override elsewhere is still known.
    let k = interface(
        "override S: u32;
         @group(0) @binding(0) var<storage, read_write> v: array<u32>;
         @compute @workgroup_size(8)
         fn main(@builtin(global_invocation_id) g: vec3<u32>) { v[g.x] = g.x >> S; }",
    );
    assert!(!k.size_from_overrides);
    assert_eq!(k.workgroup_size, Ok([8, 1, 1]));
}

#[test]
fn validation_messages_speak_wgsl_not_naga_ir() {
    // No arena handles (`[5]`) or `Debug` types, and a way to fix it.
    let e = validate_err(
        "k = \"@group(0) @binding(0) var<storage, read_write> v: array<f32>; @compute @workgroup_size(1) fn main() { let a = v[0]; let b = 1u; let c = b + a; }\"",
    );
    let m = e.to_string();
    assert!(m.contains("`+` cannot combine `u32` and `f32`"), "{m}");
    assert!(m.contains("convert one operand"), "{m}");
    assert!(
        !m.contains("Scalar {") && !m.contains("naga::ir") && !m.contains(" [1"),
        "{m}"
    );
    let e = validate_err(
        "k = \"@group(0) @binding(0) var<storage, read> v: array<f32>; @compute @workgroup_size(1) fn main() { v[0] = 1.0; }\"",
    );
    let m = e.to_string();
    assert!(m.contains("declare it `var<storage, read_write> v`"), "{m}");
    // naga's own words are kept as a note.
    assert!(m.contains("note: naga: "), "{m}");
    let headline = m.lines().next().unwrap_or_default();
    assert!(!headline.contains("Entry point"), "{m}");
}

// --- failing kernels with structs (the partial-types path) -----------------

/// A struct kernel that fails validation still reports the WGSL error at
/// the culprit, and its bindings' types (for the error stub) come from
/// plain data made on the naga thread.
#[test]
fn failing_struct_kernels_keep_their_error_and_types() {
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "struct Globals { i: i32 }\n@group(0) @binding(0) var<storage, read> globals: Globals;\n@compute @workgroup_size(1) fn main() { globals.i = 1; }",
            "cannot write to `globals`",
            &["globals"],
            &["Globals"],
        ),
        (
            "struct Inner { a: vec2<f32> }\nstruct Outer { inner: Inner, n: u32 }\n@group(0) @binding(0) var<storage, read> o: Outer;\n@compute @workgroup_size(1) fn main() { o.inner.a.x = 1.0; }",
            "cannot write to `o`",
            &["o"],
            &["Inner", "Outer"],
        ),
        (
            "struct P { a: f32, b: vec4<f32> }\n@group(0) @binding(0) var<uniform> p: P;\n@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n@compute @workgroup_size(1) fn main() { p.a = 2.0; out[0] = p.b.x; }",
            "cannot write to `p`",
            &["p", "out"],
            &["P"],
        ),
        (
            "struct Globals { i: i32 }\n@group(0) @binding(0) var<storage, read_write> globals: Globals;\n@compute @workgroup_size(1) fn main() { let x: u32 = globals.i; }",
            "WGSL type error in kernel `k`",
            &["globals"],
            &["Globals"],
        ),
    ];
    for (wgsl, message, bindings, structs) in cases {
        let failed = match validate::validate_or_partial(
            loaded(&format!("k = {wgsl:?}")),
            crate::model::features::WEBGPU,
        ) {
            Ok(_) => panic!("kernel validated: {wgsl}"),
            Err(f) => f,
        };
        let error = failed.error.to_string();
        assert!(!error.contains("internal error"), "{error}");
        assert!(error.contains(message), "{message:?} not in {error}");
        let partial = failed.partial.expect("types of the bindings");
        let names: Vec<&str> = partial.bindings.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(&names, bindings, "{wgsl}");
        let defs: Vec<&str> = partial.structs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(&defs, structs, "{wgsl}");
    }
}

#[test]
fn imported_files_are_tracked() {
    // Every file a link reads gets an `include_str!`, so editing it rebuilds
    // the crate (as for `file` kernels), also when the kernel then fails.
    let kernel = "kernel k = wgsl {
            import package::tests::kernels::shared::twice;
            @group(0) @binding(0) var<storage, read> a: array<f32>;
            @group(0) @binding(1) var<storage, read_write> c: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&a) { c[g.x] = twice(a[g.x]) BROKEN; }
            }
        };";
    let ok = kernel.replace(" BROKEN", "");
    let out = assert_ok(&format!(
        "struct G; {ok} input a[n]; output c[n]; node k(a: a, c: c) over n;"
    ));
    assert!(
        out.contains("include_str") && out.contains("shared.wesl"),
        "{out}"
    );
    assert!(out.contains("package_tests_kernels_shared_twice"), "{out}");
    let out = expand(&format!(
        "struct G; {kernel} input a[n]; output c[n]; node k(a: a, c: c) over n;"
    ))
    .to_string();
    assert!(
        out.contains("include_str") && out.contains("shared.wesl") && out.contains("compile_error"),
        "{out}"
    );
}
