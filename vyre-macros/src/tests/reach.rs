//! Kernels beyond plain buffers: device features (`features [...]`), the
//! WebGPU-compliant capability set, structs ending in a runtime-sized
//! array, and WGSL names that clash with generated Rust items.

use super::kernels::loaded;
use super::*;
use crate::check::reflect;
use crate::model::{Prim, RustTy};

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
            && errs[0].contains("64-bit integers need device feature SHADER_INT64"),
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
    let caps = crate::model::features::capabilities(
        &["shader_int64", "shader_f16", "shader_f64"]
            .map(|n| crate::model::features::by_name(n).expect("known")),
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
    let v = crate::check::validate::validate(k, caps).unwrap_or_else(|e| panic!("{e}"));
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

const BOIDS_HEADED: &str = "
    struct Particle { pos: vec2<f32>, vel: vec2<f32> }
    struct Particles { count: u32, scale: f32, particles: array<Particle> }
    @group(0) @binding(0) var<storage, read_write> ps: Particles;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        if g.x < ps.count { ps.particles[g.x].pos += ps.particles[g.x].vel * ps.scale; }
    }";

#[test]
fn runtime_sized_struct_binds_elements() {
    // No header: exactly `array<Particle>`.
    let k = interface_of(
        "struct Particle { pos: vec2<f32>, vel: vec2<f32> }
         struct Particles { particles: array<Particle> }
         @group(0) @binding(0) var<storage, read_write> ps: Particles;
         @compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             if g.x < arrayLength(&ps.particles) { ps.particles[g.x].pos += ps.particles[g.x].vel; }
         }",
    );
    let b = k.binding("ps").expect("ps");
    assert_eq!(b.element, RustTy::Struct("Particle".into(), 16));
    assert_eq!(
        (b.element_size, b.header_bytes, b.header.clone()),
        (16, 0, None)
    );
    assert!(k.structs.iter().all(|s| s.name != "Particles"));

    // A header: the leading fields, padded to the array's offset (8).
    let k = interface_of(BOIDS_HEADED);
    let b = k.binding("ps").expect("ps");
    assert_eq!(b.element, RustTy::Struct("Particle".into(), 16));
    assert_eq!(b.header, Some(RustTy::Struct("ParticlesHeader".into(), 8)));
    assert_eq!((b.header_bytes, b.min_binding_size), (8, 24));
    let h = k
        .structs
        .iter()
        .find(|s| s.name == "ParticlesHeader")
        .expect("header");
    let names: Vec<&str> = h.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["count", "scale"]);

    // The header is padded to the array's alignment: a vec4 array starts at 16.
    let k = interface_of(
        "struct S { n: u32, v: array<vec4<f32>> }
         @group(0) @binding(0) var<storage, read_write> s: S;
         @compute @workgroup_size(1) fn main() { s.v[0] = vec4<f32>(f32(s.n)); }",
    );
    let b = k.binding("s").expect("s");
    assert_eq!((b.header_bytes, b.element_size), (16, 16));
    let h = k
        .structs
        .iter()
        .find(|s| s.name == "SHeader")
        .expect("header");
    assert_eq!(h.size, 16);
    assert!(h.fields.iter().any(|f| f.pad == Some(12)), "{h:?}");
}

#[test]
fn headed_buffers_expand_to_headed_api() {
    let out = assert_ok(&one_kernel("", BOIDS_HEADED, "inout ps[n];", "ps: ps"));
    assert!(out.contains("header_bytes : 8u32"), "{out}");
    assert!(
        out.contains("HeadedInput < 'a , ParticlesHeader , Particle >"),
        "{out}"
    );
    assert!(
        out.contains("Headed < ParticlesHeader , Particle >"),
        "{out}"
    );
    assert!(out.contains("struct ParticlesHeader"), "{out}");
}

#[test]
fn struct_names_that_clash_are_graph_errors() {
    for (name, part) in [
        ("G", "the graph's own type is `G`"),
        ("GOutputs", "graph! generates `GOutputs`"),
        ("GResident", "graph! generates `GResident`"),
        ("Vec", "shadow the Rust prelude's `Vec`"),
        ("Option", "shadow the Rust prelude's `Option`"),
    ] {
        let src = one_kernel(
            "",
            &format!(
                "struct {name} {{ a: f32 }}
                 @group(0) @binding(0) var<storage, read_write> y: array<{name}>;
                 @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
                     if g.x < arrayLength(&y) {{ y[g.x].a = 1.0; }}
                 }}"
            ),
            "output y[n];",
            "y: y",
        );
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert!(
            errs[0].contains(part) && errs[0].contains("rename the WGSL struct"),
            "{}",
            errs[0]
        );
        // The stub emits no second struct of that name (no E0428 beside it;
        // the graph's own is `struct G < E = .. > {`).
        let out = expand(&src).to_string();
        let own = usize::from(name.starts_with('G'));
        assert_eq!(
            out.matches(&format!("struct {name} ")).count(),
            own,
            "{out}"
        );
    }
    // A WGSL struct named like a generated header struct.
    let errs = errors(&one_kernel(
        "",
        &BOIDS_HEADED.replace(
            "struct Particle {",
            "struct ParticlesHeader { x: u32 } struct Particle {",
        ),
        "inout ps[n];",
        "ps: ps",
    ));
    assert!(
        errs.iter()
            .any(|e| e.contains("the kernel declares a struct `ParticlesHeader` too")),
        "{errs:#?}"
    );
}

fn interface_of(wgsl: &str) -> crate::model::KernelInterface {
    let k = loaded(&format!("k = {wgsl:?}"));
    let v = crate::check::validate::validate(k, crate::model::features::WEBGPU)
        .unwrap_or_else(|e| panic!("{e}"));
    reflect::reflect(v).unwrap_or_else(|e| {
        panic!(
            "{:?}",
            e.iter().map(ToString::to_string).collect::<Vec<_>>()
        )
    })
}
