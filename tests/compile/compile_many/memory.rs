//! Invalid kernels of `tests/compile/compile_many.rs` about memory: structs,
//! pointers, runtime-sized arrays, access modes, atomics, textures.

use super::cases::{A, Case, MAIN, body, case, graph, syn, tokens, ty, val, with};

/// Structs (issue 16's case and its variants).
pub fn structs() -> Vec<Case> {
    let headed = "struct Buf { len: u32, data: array<u32> }\n@group(0) @binding(0) var<storage, read> b: Buf;\n";
    vec![
        // The case of issue 16: on the naga thread this once made a span.
        graph(
            tokens(case(
                "store_read_struct",
                "struct Globals { i: i32 }\n@group(0) @binding(0) var<storage, read> globals: Globals;\n@compute @workgroup_size(1) fn main() { globals.i = 1; }\n".into(),
                val("cannot write to `globals`: it is `var<storage,"),
            )),
            "input g[1];\n    node k(globals: g) over 1;",
        ),
        graph(
            tokens(case(
                "store_read_nested_struct",
                "struct Inner { a: vec2<f32>, n: u32 }\nstruct Outer { inner: Inner, m: array<Inner, 2> }\n@group(0) @binding(0) var<storage, read> o: Outer;\n@compute @workgroup_size(1) fn main() { o.m[1].n = 1u; }\n".into(),
                val("cannot write to `o`: it is `var<storage, read>`"),
            )),
            "input o[1];\n    node k(o: o) over 1;",
        ),
        graph(
            tokens(case(
                "store_read_nested_struct_field",
                "struct Inner { a: vec2<f32>, n: u32 }\nstruct Outer { inner: Inner, m: array<Inner, 2> }\n@group(0) @binding(0) var<storage, read> o: Outer;\n@compute @workgroup_size(1) fn main() { o.inner.a.y = 1.0; }\n".into(),
                val("cannot write to `o`: it is `var<storage, read>`"),
            )),
            "input o[1];\n    node k(o: o) over 1;",
        ),
        graph(
            tokens(case(
                "store_read_headed_struct",
                with(headed, "if g.x < arrayLength(&b.data) { b.data[g.x] = b.len; }"),
                val("cannot write to `b`: it is `var<storage, read>`"),
            )),
            "input b[64];\n    node k(b: b) over 64;",
        ),
        graph(
            tokens(case(
                "store_read_headed_header",
                with(headed, "b.len = 1u;"),
                val("cannot write to `b`: it is `var<storage, read>`"),
            )),
            "input b[64];\n    node k(b: b) over 64;",
        ),
        graph(
            tokens(case(
                "store_uniform_struct",
                "struct P { a: f32, b: vec4<f32> }\n@group(0) @binding(0) var<uniform> p: P;\n@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n@compute @workgroup_size(1) fn main() { p.a = 2.0; out[0] = p.b.x; }\n".into(),
                val("cannot write to `p`: it is `var<uniform>`, which"),
            )),
            "uniform p;\n    output out[1];\n    node k(p: p, out: out) over 1;",
        ),
        graph(
            tokens(case(
                "type_error_in_struct_kernel",
                "struct Globals { i: i32 }\n@group(0) @binding(0) var<storage, read_write> globals: Globals;\n@compute @workgroup_size(1) fn main() { let x: u32 = globals.i; }\n".into(),
                ty("`x` is declared `u32` but initialized with `i32`"),
            )),
            "inout g[1];\n    node k(globals: g) over 1;",
        ),
        graph(
            tokens(case(
                "syntax_error_in_struct_kernel",
                "struct Globals { i: i32 }\n@group(0) @binding(0) var<storage, read_write> globals: Globals;\n@compute @workgroup_size(1) fn main() { globals.i = 1 }\n".into(),
                syn("expected `;` before `}`"),
            )),
            "inout g[1];\n    node k(globals: g) over 1;",
        ),
        tokens(case("runtime_array_not_last", format!("struct S {{ data: array<u32>, len: u32 }}\n@group(0) @binding(1) var<storage, read_write> s: S;\n{}", body("a[0] = s.len;")), ty("`S`: field 'data' can't be dynamically-sized,"))),
        tokens(case("bool_in_storage_struct", format!("struct S {{ flag: bool, x: u32 }}\n@group(0) @binding(1) var<storage, read_write> s: S;\n{}", body("a[0] = s.x;")), val("the type is not host-shareable"))),
        tokens(case("uniform_array_stride", format!("struct U {{ w: array<f32, 4> }}\n@group(0) @binding(1) var<uniform> u: U;\n{}", body("a[0] = u32(u.w[1]);")), val("the array stride 4 is not a multiple of the"))),
        tokens(case("atomic_in_uniform_struct", format!("struct U {{ c: atomic<u32> }}\n@group(0) @binding(1) var<uniform> u: U;\n{}", body("a[0] = atomicLoad(&u.c);")), val("type flags"))),
        tokens(case("runtime_array_in_uniform_struct", format!("struct U {{ n: u32, w: array<f32> }}\n@group(0) @binding(1) var<uniform> u: U;\n{}", body("a[0] = u.n;")), val("the array stride 4 is not a multiple of the"))),
        tokens(case("empty_struct", format!("struct E {{}}\n{}", body("a[0] = 1u;")), ty("`E`: structure types must have at least one"))),
        tokens(case("recursive_struct", format!("struct R {{ next: R }}\n{}", body("a[0] = 1u;")), syn("declaration of `R` is recursive"))),
        tokens(case("size_attribute_too_small", format!("struct S {{ @size(2) x: u32 }}\n@group(0) @binding(1) var<storage, read_write> s: S;\n{}", body("a[0] = s.x;")), syn("struct member size must be at least 4"))),
        tokens(case("align_not_power_of_two", format!("struct S {{ @align(3) x: u32 }}\n@group(0) @binding(1) var<storage, read_write> s: S;\n{}", body("a[0] = s.x;")), syn("struct member alignment must be a power of 2"))),
        tokens(case("align_below_natural", format!("struct S {{ a: u32, @align(4) v: vec4<f32> }}\n@group(0) @binding(1) var<storage, read_write> s: S;\n{}", body("a[0] = s.a;")), syn("struct member alignment must be at least 16"))),
        tokens(case("struct_constructor_arity", format!("struct S {{ x: u32, y: u32 }}\n{}", body("let s = S(1u); a[0] = s.x;")), val("composing expects 2 components but 1 were given"))),
        tokens(case("struct_as_scalar", format!("struct S {{ x: u32 }}\n{}", body("var s: S; a[0] = s + 1u;")), ty("automatic conversions cannot convert elements of"))),
    ]
}

/// Pointers.
pub fn pointers() -> Vec<Case> {
    vec![
        tokens(case(
            "store_through_let_pointer",
            body("let x = 1u; let p = &x; *p = 2u; a[0] = x;"),
            syn("the operand of the `&` operator must be a"),
        )),
        tokens(case(
            "return_pointer",
            format!(
                "{A}fn p() -> ptr<function, u32> {{ var x = 1u; return &x; }}\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            val("the function's given return type cannot be"),
        )),
        tokens(case(
            "pointer_in_struct",
            format!(
                "struct S {{ p: ptr<function, u32> }}\n{}",
                body("a[0] = 1u;")
            ),
            ty("`S`: expected data type, found"),
        )),
        tokens(case(
            "pointer_global",
            format!("{A}var<private> p: ptr<function, u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"),
            val("type flags"),
        )),
        tokens(case(
            "pointer_arithmetic",
            body("var x = 1u; let p = &x; let q = p + 1u; a[0] = *q;"),
            ty("`+` cannot combine `ptr<function, u32>` and"),
        )),
        tokens(case(
            "address_of_vector_component",
            body("var v = vec2<u32>(1u); let p = &v.x; a[0] = *p;"),
            syn("cannot take the address of a vector component"),
        )),
        tokens(case(
            "deref_non_pointer",
            body("let x = 1u; a[0] = *x;"),
            syn("the operand of the `*` operator must be a"),
        )),
        tokens(case(
            "pointer_space_mismatch",
            format!(
                "{A}var<workgroup> w: u32;\nfn put(p: ptr<function, u32>) {{ *p = 1u; }}\n{MAIN}    put(&w);\n    a[g.x] = w;\n}}\n"
            ),
            val(""),
        )),
        tokens(case(
            "store_through_read_pointer",
            format!(
                "@group(0) @binding(0) var<storage, read> a: array<u32>;\n@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n{MAIN}    let p = &a[g.x];\n    *p = 1u;\n    o[g.x] = 1u;\n}}\n"
            ),
            val("cannot write to `a`: it is `var<storage, read>`"),
        )),
        tokens(case(
            "pointer_to_handle",
            format!(
                "{A}@group(0) @binding(1) var t: texture_2d<f32>;\nfn f(p: ptr<handle, texture_2d<f32>>) {{}}\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("unknown address space: `handle`"),
        )),
    ]
}

/// Runtime-sized arrays.
pub fn runtime_arrays() -> Vec<Case> {
    vec![
        tokens(case(
            "runtime_array_function_var",
            body("var r: array<u32>; a[0] = r[0];"),
            val("local variable has a type that can't be stored"),
        )),
        tokens(case(
            "runtime_array_workgroup",
            format!("{A}var<workgroup> r: array<u32>;\n{MAIN}    a[g.x] = r[g.x];\n}}\n"),
            val("type flags"),
        )),
        tokens(case(
            "runtime_array_private",
            format!("{A}var<private> r: array<u32>;\n{MAIN}    a[g.x] = r[g.x];\n}}\n"),
            val("type flags"),
        )),
        tokens(case(
            "runtime_array_parameter",
            format!(
                "{A}fn f(r: array<u32>) -> u32 {{ return r[0]; }}\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            val("argument 'r' at index 0 has a type that can't be"),
        )),
        tokens(case(
            "array_length_without_ref",
            body("a[0] = arrayLength(a);"),
            val("loading of can't be done"),
        )),
        tokens(case(
            "array_length_fixed",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<u32, 4>;\n{MAIN}    a[0] = arrayLength(&a);\n}}\n"
            ),
            val("array length of can't be done"),
        )),
        tokens(case(
            "runtime_array_of_runtime_array",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<array<u32>>;\n{MAIN}    a[0][0] = 1u;\n}}\n"
            ),
            ty("`array<array<u32>>`: base type for the array is"),
        )),
        tokens(case(
            "runtime_array_uniform",
            format!(
                "{A}@group(0) @binding(1) var<uniform> u: array<vec4<u32>>;\n{MAIN}    a[g.x] = u[0].x;\n}}\n"
            ),
            val("type flags"),
        )),
        tokens(case(
            "assign_whole_runtime_array",
            format!(
                "{A}@group(0) @binding(1) var<storage, read_write> b: array<u32>;\n{MAIN}    a = b;\n}}\n"
            ),
            val("loading of can't be done"),
        )),
        tokens(case(
            "runtime_array_let",
            body("let r = a; a[0] = r[0];"),
            ty("type `r` is not constructible"),
        )),
        tokens(case(
            "index_runtime_array_by_float",
            body("a[1.5] = 1u;"),
            val("accessing with index can't be done"),
        )),
    ]
}

/// Access modes and address spaces.
pub fn access_modes() -> Vec<Case> {
    vec![
        tokens(case(
            "store_read_array",
            format!(
                "@group(0) @binding(0) var<storage, read> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            val("cannot write to `a`: it is `var<storage, read>`"),
        )),
        tokens(case(
            "storage_write_only",
            format!(
                "@group(0) @binding(0) var<storage, write> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            val("storage address space doesn't support write-only"),
        )),
        tokens(case(
            "atomic_store_read",
            format!(
                "@group(0) @binding(0) var<storage, read> a: array<atomic<u32>>;\n{MAIN}    atomicStore(&a[g.x], 1u);\n}}\n"
            ),
            val("cannot write to `a`: it is `var<storage, read>`"),
        )),
        tokens(case(
            "uniform_with_access",
            format!(
                "{A}@group(0) @binding(1) var<uniform, read> u: vec4<u32>;\n{MAIN}    a[g.x] = u.x;\n}}\n"
            ),
            syn("unused expressions for template"),
        )),
        tokens(case(
            "workgroup_with_access",
            format!("{A}var<workgroup, read> w: u32;\n{MAIN}    a[g.x] = w;\n}}\n"),
            syn("unused expressions for template"),
        )),
        tokens(case(
            "function_space_global",
            format!("{A}var<function> f: u32;\n{MAIN}    a[g.x] = f;\n}}\n"),
            val("usage isn't compatible with address space"),
        )),
        tokens(case(
            "storage_without_binding",
            format!("var<storage, read_write> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"),
            val("binding decoration is missing or not applicable"),
        )),
        tokens(case(
            "unknown_access_mode",
            format!(
                "@group(0) @binding(0) var<storage, sometimes> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("unknown access: `sometimes`"),
        )),
        tokens(case(
            "store_read_vector_element",
            format!(
                "@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n{MAIN}    a[g.x].y = 1u;\n    o[g.x] = 1u;\n}}\n"
            ),
            val("cannot write to `a`: it is `var<storage, read>`"),
        )),
    ]
}

/// Atomics.
pub fn atomics() -> Vec<Case> {
    let ab = "@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;\n";
    vec![
        tokens(case(
            "atomic_f32_without_feature",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<atomic<f32>>;\n{MAIN}    atomicAdd(&a[g.x], 1.0);\n}}\n"
            ),
            ty("this needs a device capability (not in WebGPU's"),
        )),
        tokens(case(
            "atomic_u64_without_feature",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<atomic<u64>>;\n{MAIN}    atomicAdd(&a[g.x], 1lu);\n}}\n"
            ),
            ty("64-bit integers need device feature SHADER_INT64"),
        )),
        tokens(case(
            "atomic_add_plain",
            body("atomicAdd(&a[g.x], 1u);"),
            syn("atomic operation is done on a pointer to a"),
        )),
        tokens(case(
            "atomic_private",
            format!("{A}var<private> c: atomic<u32>;\n{MAIN}    a[g.x] = atomicLoad(&c);\n}}\n"),
            val("type flags"),
        )),
        tokens(case(
            "atomic_function_var",
            body("var c: atomic<u32>; a[g.x] = atomicLoad(&c);"),
            val("local variable has a type that can't be stored"),
        )),
        tokens(case(
            "atomic_wrong_value_type",
            with(ab, "atomicAdd(&a[g.x], 1i);"),
            ty("automatic conversions cannot convert elements of"),
        )),
        tokens(case(
            "atomic_vector",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<atomic<vec2<u32>>>;\n{MAIN}    atomicStore(&a[g.x], vec2<u32>(1u));\n}}\n"
            ),
            syn("unknown scalar type: `vec2<u32>`"),
        )),
        tokens(case(
            "atomic_load_without_ref",
            with(ab, "let v = atomicLoad(a[g.x]);"),
            syn("atomic variables cannot be accessed directly;"),
        )),
        tokens(case(
            "atomic_exchange_wrong_args",
            with(ab, "let r = atomicCompareExchangeWeak(&a[g.x], 1.0, 2u);"),
            ty("automatic conversions cannot convert elements of"),
        )),
        tokens(case(
            "atomic_arithmetic",
            with(ab, "let x = a[g.x] + 1u;"),
            syn("atomic variables cannot be accessed directly;"),
        )),
        tokens(case(
            "atomic_let",
            with(ab, "let c: atomic<u32> = a[g.x];"),
            syn("atomic variables cannot be accessed directly;"),
        )),
    ]
}

/// Textures and samplers.
pub fn textures() -> Vec<Case> {
    const TEX: &str = "output texture img[64, 64] rgba8unorm;\n    node k(t: img) grid [8, 8, 1];";
    vec![
        tokens(case(
            "texture_without_binding",
            format!("{A}var t: texture_2d<f32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"),
            val("binding decoration is missing or not applicable"),
        )),
        tokens(case(
            "texture_sample_in_compute",
            format!(
                "{A}@group(0) @binding(1) var t: texture_2d<f32>;\n@group(0) @binding(2) var s: sampler;\n{MAIN}    a[g.x] = u32(textureSample(t, s, vec2<f32>(0.5)).x);\n}}\n"
            ),
            val("uses operations forbidden at this stage"),
        )),
        graph(
            tokens(case(
                "store_read_only_texture",
                format!(
                    "@group(0) @binding(0) var t: texture_storage_2d<rgba8unorm, read>;\n{MAIN}    textureStore(t, g.xy, vec4<f32>(1.0));\n}}\n"
                ),
                val("global variable is used incorrectly as"),
            )),
            TEX,
        ),
        graph(
            tokens(case(
                "storage_texture_bad_format",
                format!(
                    "@group(0) @binding(0) var t: texture_storage_2d<rgb8unorm, write>;\n{MAIN}    textureStore(t, g.xy, vec4<f32>(1.0));\n}}\n"
                ),
                syn("unknown storage format: `rgb8unorm`"),
            )),
            TEX,
        ),
        tokens(case(
            "texture_load_missing_level",
            format!(
                "{A}@group(0) @binding(1) var t: texture_2d<f32>;\n{MAIN}    a[g.x] = u32(textureLoad(t, vec2<i32>(0)).x);\n}}\n"
            ),
            ty("wrong number of arguments: expected 3, found 2"),
        )),
        tokens(case(
            "sampler_as_storage",
            format!(
                "{A}@group(0) @binding(1) var<storage, read> s: sampler;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            val("type flags"),
        )),
        tokens(case(
            "texture_of_bool",
            format!(
                "{A}@group(0) @binding(1) var t: texture_2d<bool>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("texture sample type must be one of f32, i32 or"),
        )),
        tokens(case(
            "texture_dimensions_wrong_type",
            format!(
                "{A}@group(0) @binding(1) var t: texture_2d<f32>;\n{MAIN}    let d: u32 = textureDimensions(t);\n    a[g.x] = d;\n}}\n"
            ),
            ty("`d` is declared `u32` but initialized with"),
        )),
        graph(
            tokens(case(
                "texture_store_wrong_value",
                format!(
                    "@group(0) @binding(0) var t: texture_storage_2d<rgba8unorm, write>;\n{MAIN}    textureStore(t, g.xy, vec4<u32>(1u));\n}}\n"
                ),
                ty("automatic conversions cannot convert elements of"),
            )),
            TEX,
        ),
        tokens(case(
            "texture_in_function_var",
            format!("{A}{MAIN}    var t: texture_2d<f32>;\n    a[g.x] = 1u;\n}}\n"),
            val("local variable has a type that can't be stored"),
        )),
    ]
}
