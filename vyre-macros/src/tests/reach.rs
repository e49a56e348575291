//! Kernels beyond plain buffers: device features (`features [...]`), the
//! WebGPU-compliant capability set, structs ending in a runtime-sized
//! array, and WGSL names that clash with generated Rust items.

use super::kernels::loaded;
use super::*;
use crate::reflect;
use crate::rust_types::{Prim, RustTy};

fn one_kernel(features: &str, wgsl: &str, buffers: &str, node: &str) -> String {
    format!("pub struct G; {features} kernel k = \"{wgsl}\"; {buffers} node k({node}) over n;")
}

const HIST: &str = "
    @group(0) @binding(0) var<storage, read> keys: array<u32>;
    @group(0) @binding(1) var<storage, read_write> bins: array<atomic<u64>>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        if g.x < arrayLength(&keys) { atomicAdd(&bins[keys[g.x] % 16u], 1lu); }
    }";

#[test]
fn int64_needs_the_declared_feature() {
    let hist = |features: &str| {
        one_kernel(
            features,
            HIST,
            "input keys[n]; inout bins[16];",
            "keys: keys, bins: bins",
        )
    };
    // Not declared: one error that names the feature and the fix, at the
    // global whose type it is (a line, not ``Type '' is invalid``).
    let errs = errors(&hist(""));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].contains("declare `features [shader_int64, shader_int64_atomic_all_ops];`")
            && errs[0].contains("global `bins: array<atomic<u64>>`: Using `u64` values"),
        "{}",
        errs[0]
    );
    // 64-bit atomics are a feature of their own.
    assert_error(
        &hist("features [shader_int64];"),
        &["declare `features [shader_int64, shader_int64_atomic_all_ops];`"],
    );
    let out = assert_ok(&hist(
        "features [shader_int64, shader_int64_atomic_all_ops];",
    ));
    assert!(
        out.contains("Feature :: ShaderInt64 , ")
            && out.contains("Feature :: ShaderInt64AtomicAllOps"),
        "{out}"
    );
    // `limits native;` is about limits only: it grants no capability.
    assert_error(
        &hist("limits native;"),
        &["declare `features [shader_int64, shader_int64_atomic_all_ops];`"],
    );
}

#[test]
fn features_are_parsed_strictly() {
    let g = |features: &str| {
        one_kernel(
            features,
            HIST,
            "input keys[n]; inout bins[16];",
            "keys: keys, bins: bins",
        )
    };
    assert_error(
        &g("features [shader_int128];"),
        &["unknown feature `shader_int128`", "`shader_int64`"],
    );
    assert_error(
        &g("features [shader_int64, shader_int64];"),
        &["feature `shader_int64` is declared twice"],
    );
}

#[test]
fn wide_scalars_map_to_rust() {
    let caps = crate::features::capabilities(
        &["shader_int64", "shader_f16", "shader_f64"]
            .map(|n| crate::features::by_name(n).expect("known")),
    );
    let k = loaded(&format!(
        "k = {:?}",
        "enable f16;
         struct W { a: u64, b: i64, c: f64, h: vec2<f16>, x: f16 }
         @group(0) @binding(0) var<storage, read_write> w: array<W>;
         @group(0) @binding(1) var<storage, read_write> h: array<f16>;
         @group(0) @binding(2) var<storage, read_write> v: array<vec3<f16>>;
         @compute @workgroup_size(1) fn main() { w[0].a = 1lu; h[0] = 1.0h; v[0] = vec3<f16>(); }"
    ));
    let v = crate::validate::validate(k, caps).unwrap_or_else(|e| panic!("{e}"));
    let k = reflect::reflect(v).unwrap_or_else(|e| {
        panic!(
            "{:?}",
            e.iter().map(ToString::to_string).collect::<Vec<_>>()
        )
    });
    let w = k.binding("w").expect("w");
    assert_eq!(w.element, RustTy::Struct("W".into(), 32));
    let def = k.structs.iter().find(|s| s.name == "W").expect("W");
    let types: Vec<String> = def
        .fields
        .iter()
        .filter(|f| f.pad.is_none())
        .map(|f| f.ty.display())
        .collect();
    assert_eq!(types, ["u64", "i64", "f64", "[half::f16; 2]", "half::f16"]);
    assert_eq!(k.binding("h").expect("h").element, RustTy::Prim(Prim::F16));
    // vec3<f16> in an array has a stride of 8: four halves.
    assert_eq!(k.binding("v").expect("v").element_size, 8);
    assert_eq!(
        k.binding("v").expect("v").element.display(),
        "[half::f16; 4]"
    );
}

#[test]
fn webgpu_core_builtins_are_accepted() {
    // pack2x16float needs SHADER_FLOAT16_IN_FLOAT32, which wgpu grants every
    // WebGPU-compliant adapter.
    assert_ok(&one_kernel(
        "",
        "@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
         @group(0) @binding(1) var<storage, read_write> y: array<u32>;
         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             if g.x < arrayLength(&y) { y[g.x] = pack2x16float(x[g.x]); }
         }",
        "input x[n]; output y[n];",
        "x: x, y: y",
    ));
}

#[test]
fn f16_error_names_the_feature() {
    assert_error(
        &one_kernel(
            "",
            "enable f16;
             @group(0) @binding(0) var<storage, read_write> y: array<f16>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 if g.x < arrayLength(&y) { y[g.x] = 1.0h; }
             }",
            "output y[n];",
            "y: y",
        ),
        &["declare `features [shader_f16];`"],
    );
}
