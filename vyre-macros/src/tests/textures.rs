//! Textures: format names against naga's, host texel types, the declaration
//! grammar of every dimension, refused kinds, dimension and feature checks.

use super::*;
use crate::check::textures::format_from_naga;
use crate::model::texture::texel_type;
use vyre_analysis::spec::{TexelFormat, TextureDimension as Dim};

// The format table itself (sizes, sample types, filtering, storage
// guarantees, features) is `vyre_analysis::spec::TexelFormat`'s, checked
// against wgpu's in `vyre-analysis/src/spec/tests.rs`.

#[test]
fn every_format_name_is_the_wgsl_storage_format_naga_parses() {
    for &f in TexelFormat::ALL {
        let src = format!(
            "@group(0) @binding(0) var t: texture_storage_2d<{}, write>;\n@compute @workgroup_size(1) fn main() {{ _ = textureDimensions(t); }}",
            f.name()
        );
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{}: {}", f.name(), e.emit_to_string(&src)));
        let (_, global) = module.global_variables.iter().next().expect("one global");
        match module.types[global.ty].inner {
            naga::TypeInner::Image {
                class: naga::ImageClass::Storage { format, .. },
                ..
            } => assert_eq!(format_from_naga(format), Some(f), "{}", f.name()),
            ref other => panic!("{}: {other:?}", f.name()),
        }
    }
}

#[test]
fn host_texel_types_are_the_formats_texels() {
    for &f in TexelFormat::ALL {
        let t = texel_type(f);
        assert_eq!(t.display(), f.host_texel(), "{}", f.name());
        assert_eq!(t.size(), u64::from(f.texel_bytes()), "{}", f.name());
    }
}

/// A graph with one texture `t` declared by `decl` (after the class) and a
/// kernel binding `binding` (WGSL type) with body `body`, plus `extra`
/// items.
fn one_texture(extra: &str, decl: &str, binding: &str, body: &str) -> String {
    format!(
        r#"
        pub struct T;
        {extra}
        kernel k = "
            @group(0) @binding(0) var t: {binding};
            @compute @workgroup_size(4, 4, 4)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ {body} }}
        ";
        {decl};
        node k(t: t) grid [n / 4, 1, 1];
        "#
    )
}

#[test]
fn every_dimension_declares_and_binds() {
    let cases = [
        (
            "output texture_1d t[n] r32float",
            "texture_storage_1d<r32float, write>",
            "textureStore(t, g.x, vec4<f32>(1.0));",
        ),
        (
            "output texture t[n, 3] rgba8uint",
            "texture_storage_2d<rgba8uint, write>",
            "textureStore(t, g.xy, vec4<u32>(1u));",
        ),
        (
            "output texture_2d t[n, 3] rg32float",
            "texture_storage_2d<rg32float, write>",
            "textureStore(t, g.xy, vec4<f32>(1.0));",
        ),
        (
            "output texture_2d_array t[n, 3, 6] rgba16sint",
            "texture_storage_2d_array<rgba16sint, write>",
            "textureStore(t, g.xy, g.z, vec4<i32>(1));",
        ),
        (
            "output texture_3d t[n, 3, 5] rgba8snorm",
            "texture_storage_3d<rgba8snorm, write>",
            "textureStore(t, g, vec4<f32>(0.5));",
        ),
    ];
    for (decl, binding, body) in cases {
        let out = assert_ok(&one_texture("", decl, binding, body));
        assert!(out.contains("TextureDimension"), "{decl}");
    }
}

#[test]
fn a_dimension_mismatch_names_both_sides() {
    assert_error(
        &one_texture(
            "",
            "output texture_3d t[n, 4, 4] r32float",
            "texture_storage_2d_array<r32float, write>",
            "textureStore(t, g.xy, g.z, vec4<f32>(1.0));",
        ),
        &[
            "texture dimension mismatch: texture `t` is a `texture_3d` [n, 4, 4] but kernel `k` binds it through `t`",
            "a `texture_2d_array` binding; declare `t` as `texture_2d_array` ([width, height, layers]) or change the kernel to `texture_storage_3d<r32float, write>`",
        ],
    );
}

#[test]
fn declarations_with_the_wrong_number_of_sides() {
    assert_error(
        &one_texture(
            "",
            "output texture_3d t[n, 4] r32float",
            "texture_storage_3d<r32float, write>",
            "textureStore(t, g, vec4<f32>(1.0));",
        ),
        &[
            "a `texture_3d` has 3 sides, [width, height, depth]; this one has 2",
            "(a texture of two sides is a `texture`, or `texture_2d`)",
        ],
    );
}

#[test]
fn refused_declarations_say_why_and_what_instead() {
    let decl = |d: &str| {
        one_texture(
            "",
            d,
            "texture_storage_2d<r32float, write>",
            "textureStore(t, g.xy, vec4<f32>(1.0));",
        )
    };
    assert_error(
        &decl("output texture_cube t[n, n, 6] rgba8unorm"),
        &[
            "`texture_cube`: a graph texture cannot be a cube map",
            "`texture_2d_array` of 6 layers",
        ],
    );
    assert_error(
        &decl("output texture_multisampled_2d t[n, n] rgba8unorm"),
        &[
            "cannot be multisampled",
            "only a render pass writes multisampled textures",
        ],
    );
    assert_error(
        &decl("output texture t[n, n] depth32float"),
        &[
            "`depth32float`: a graph texture cannot be a depth texture",
            "r32float",
        ],
    );
    assert_error(
        &decl("output texture t[n, n] rgba8unrom"),
        &["unknown texture format `rgba8unrom`; did you mean `rgba8unorm`?"],
    );
    assert_error(
        &decl("output texture t[n, n] r64uint"),
        &["`r64uint` textures need 64-bit texture atomics", "rg32uint"],
    );
    assert_error(
        &decl("output texture_storage_2d t[n, n] r32float"),
        &[
            "`texture_storage_2d` is a kernel binding's type, not a graph texture's",
            "`texture_2d`",
        ],
    );
}

#[test]
fn refused_kernel_bindings_say_why() {
    for (binding, body, part) in [
        (
            "texture_multisampled_2d<f32>",
            "_ = textureLoad(t, g.xy, 0);",
            "is multisampled",
        ),
        (
            "texture_depth_2d",
            "_ = textureLoad(t, g.xy, 0);",
            "is a depth texture",
        ),
        (
            "texture_cube<f32>",
            "_ = textureDimensions(t);",
            "is a cube map",
        ),
    ] {
        assert_error(
            &one_texture("", "input texture t[n, n] rgba8unorm", binding, body),
            &["kernel `k` binds `t` (group 0, binding 0)", part],
        );
    }
}

#[test]
fn storage_needing_a_feature_is_an_error_until_declared() {
    let bgra = |extra: &str| {
        one_texture(
            extra,
            "output texture t[n, n] bgra8unorm",
            "texture_storage_2d<bgra8unorm, write>",
            "textureStore(t, g.xy, vec4<f32>(1.0));",
        )
    };
    assert_error(
        &bgra(""),
        &[
            "kernel `k` binds `t` (group 0, binding 0, var texture_storage_2d<bgra8unorm,write>), a bgra8unorm storage texture with `write` access, which needs the device feature `bgra8unorm_storage`",
            "declare `features [bgra8unorm_storage];`",
        ],
    );
    let out = assert_ok(&bgra("features [bgra8unorm_storage];"));
    assert!(out.contains("Bgra8UnormStorage"), "{out}");
    // `read_write` beyond r32*: the adapter's own format features.
    let rw = |extra: &str| {
        one_texture(
            extra,
            "inout texture t[n, n] rgba8unorm",
            "texture_storage_2d<rgba8unorm, read_write>",
            "textureStore(t, g.xy, textureLoad(t, g.xy) * 0.5);",
        )
    };
    assert_error(
        &rw(""),
        &[
            "needs the device feature `texture_adapter_specific_format_features`",
            "WebGPU guarantees `read_write` storage only for r32uint, r32sint, r32float",
        ],
    );
    assert_ok(&rw("features [texture_adapter_specific_format_features];"));
    // r32sint read_write needs nothing.
    assert_ok(&one_texture(
        "",
        "inout texture t[n, n] r32sint",
        "texture_storage_2d<r32sint, read_write>",
        "textureStore(t, g.xy, textureLoad(t, g.xy) + vec4<i32>(1));",
    ));
}

#[test]
fn a_16_bit_normalised_format_needs_its_feature() {
    assert_error(
        &one_texture(
            "",
            "input texture t[n, n] r16unorm",
            "texture_2d<f32>",
            "_ = textureLoad(t, g.xy, 0);",
        ),
        &["texture `t` is r16unorm, which needs the device feature `texture_format_16bit_norm`"],
    );
    assert_ok(&one_texture(
        "features [texture_format_16bit_norm];",
        "input texture t[n, n] r16unorm",
        "texture_2d<f32>",
        "_ = textureLoad(t, g.xy, 0);",
    ));
}

#[test]
fn constant_sides_over_the_default_limits_in_their_units() {
    let over = |decl: &str, binding: &str, body: &str, native: &str| {
        errors(&one_texture(native, decl, binding, body))
    };
    let e = over(
        "output texture_3d t[4, 4, 2049] r32float",
        "texture_storage_3d<r32float, write>",
        "textureStore(t, g, vec4<f32>(1.0));",
        "",
    );
    assert!(
        e.iter().any(|m| m.contains(
            "texture `t`: its depth is 2049 texels, over WebGPU's default `maxTextureDimension3D` of 2048 texels per side"
        ) && m.contains("`max_texture_dimension_3d`")),
        "{e:?}"
    );
    let e = over(
        "output texture_2d_array t[4, 4, 257] r32float",
        "texture_storage_2d_array<r32float, write>",
        "textureStore(t, g.xy, g.z, vec4<f32>(1.0));",
        "",
    );
    assert!(
        e.iter().any(|m| m.contains(
            "it has 257 layers, over WebGPU's default `maxTextureArrayLayers` of 256 layers"
        )),
        "{e:?}"
    );
    let e = over(
        "output texture_1d t[8193] r32float",
        "texture_storage_1d<r32float, write>",
        "textureStore(t, g.x, vec4<f32>(1.0));",
        "",
    );
    assert!(
        e.iter().any(|m| m.contains(
            "its width is 8193 texels, over WebGPU's default `maxTextureDimension1D` of 8192 texels"
        )),
        "{e:?}"
    );
    assert!(
        over(
            "output texture_1d t[8193] r32float",
            "texture_storage_1d<r32float, write>",
            "textureStore(t, g.x, vec4<f32>(1.0));",
            "limits native;",
        )
        .is_empty()
    );
}

#[test]
fn intermediate_textures_share_only_with_an_equal_dimension_format_and_extent() {
    let src = "
        pub struct T;
        intermediate texture_2d_array a[n, 4, 2] r32float;
        intermediate texture_2d_array b[n, 4, 2] r32float;
        intermediate texture_3d c[n, 4, 2] r32float;
        intermediate texture_2d_array d[n, 4, 3] r32float;
        intermediate texture_2d_array e[n, 4, 2] rgba8unorm;
        intermediate f[n];
    ";
    let mut diag = crate::diag::Diagnostics::new();
    let graph = crate::parse::parse(tokens(src), &mut diag);
    assert!(diag.is_empty());
    // a and b may share; c (3D), d (3 layers) and e (another format) only
    // with their own kind; the buffer f with buffers.
    assert_eq!(
        crate::analyse::textures::alias_keys(&graph.buffers),
        [1, 1, 3, 4, 5, 0]
    );
    assert!(matches!(Dim::by_keyword("texture"), Some(Dim::D2)));
}
