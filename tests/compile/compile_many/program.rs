//! Invalid kernels of `tests/compile/compile_many.rs` about whole programs: very
//! long sources, overrides, entry points, and what only the validator
//! catches.

use super::cases::{A, Case, MAIN, body, case, graph, graph_err, syn, tokens, ty, val};

/// Sources the size of debug builds' generated code: the error far from
/// the start, on a long line, or behind a long name.
pub fn long_sources() -> Vec<Case> {
    let mut lets = String::new();
    for i in 0..4000 {
        lets.push_str(&format!("    let v{i}: u32 = g.x + {i}u;\n"));
    }
    let many_lines = format!("{A}{MAIN}{lets}    let bad: u32 = 1.5;\n    a[g.x] = v3999;\n}}\n");
    let comment = format!(
        "{A}// {}\n{}",
        "x".repeat(200_000),
        body("a[g.x] = 1u\n    a[0] = 2u;")
    );
    let mut sum = String::from("g.x");
    for i in 0..2000 {
        sum.push_str(&format!(" + {i}u"));
    }
    let long_line = body(&format!("a[g.x] = {sum} + 1.5;"));
    let long_name = body(&format!("a[g.x] = {};", "n".repeat(20_000)));
    let deep = body(&format!(
        "a[g.x] = {}g.x{};",
        "(".repeat(400),
        ")".repeat(400)
    ));
    let mut blocks = String::new();
    for _ in 0..300 {
        blocks.push_str("{ ");
    }
    blocks.push_str("a[g.x] = 1.5;");
    for _ in 0..300 {
        blocks.push_str(" }");
    }
    let nested = body(&blocks);
    let mut fns = String::new();
    for i in 0..1500 {
        fns.push_str(&format!(
            "fn f{i}(x: u32) -> u32 {{ return x * {i}u + 1u; }}\n"
        ));
    }
    let many_fns = format!("{fns}{}", body("a[g.x] = f1499(g.x) + f1500(g.x);"));
    vec![
        case(
            "error_after_4000_lines",
            many_lines,
            ty("`bad` is declared `u32` but initialized with"),
        ),
        case(
            "error_after_200k_comment",
            comment,
            syn("missing `;` at the end of the line"),
        ),
        case(
            "error_at_end_of_long_line",
            long_line,
            val("abstract types may only appear in constant"),
        ),
        case(
            "unknown_20k_char_name",
            long_name,
            syn("no definition in scope for identifier: `nnnn"),
        ),
        case(
            "400_nested_parentheses",
            deep,
            syn("the kernel nests too deeply"),
        ),
        case(
            "300_nested_blocks",
            nested,
            syn("brace nesting limit reached"),
        ),
        case(
            "1500_functions_one_unknown",
            many_fns,
            syn("no definition in scope for identifier: `f1500`"),
        ),
    ]
}

/// Overrides.
pub fn overrides() -> Vec<Case> {
    vec![
        tokens(case(
            "override_without_type_or_value",
            format!("override x;\n{}", body("a[g.x] = 1u;")),
            syn("declaration of `x` needs a type specifier or"),
        )),
        tokens(case(
            "override_vector",
            format!("override v: vec2<u32>;\n{}", body("a[g.x] = v.x;")),
            val("the type is not a scalar"),
        )),
        tokens(case(
            "override_duplicate_id",
            format!(
                "@id(1) override x: u32 = 1u;\n@id(1) override y: u32 = 2u;\n{}",
                body("a[g.x] = x + y;")
            ),
            val("override ID must be unique"),
        )),
        tokens(case(
            "override_id_too_large",
            format!("@id(70000) override x: u32 = 1u;\n{}", body("a[g.x] = x;")),
            syn("pipeline constant ID must be between 0 and 65535"),
        )),
        tokens(case(
            "assign_override",
            format!("override x: u32 = 1u;\n{}", body("x = 2u; a[g.x] = x;")),
            syn("invalid left-hand side of assignment"),
        )),
        tokens(case(
            "override_from_runtime",
            format!("{A}override x: u32 = a[0];\n{MAIN}    a[g.x] = x;\n}}\n"),
            syn("Unexpected runtime-expression"),
        )),
        tokens(case(
            "override_mixed_init",
            format!("override x: u32 = 1.5;\n{}", body("a[g.x] = x;")),
            ty("`x` is declared `u32` but initialized with"),
        )),
        tokens(case(
            "override_array_in_storage",
            format!(
                "override N: u32 = 4u;\n@group(0) @binding(0) var<storage, read_write> a: array<u32, N>;\n{MAIN}    a[0] = 1u;\n}}\n"
            ),
            val("type flags"),
        )),
        graph(
            tokens(case(
                "workgroup_size_override_zero",
                format!(
                    "override WG: u32 = 0u;\n{A}@compute @workgroup_size(WG)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
                ),
                graph_err("node `k`: the workgroup size of kernel `k`"),
            )),
            "inout a[64];\n    node k(a: a) over 64;",
        ),
        graph(
            tokens(case(
                "with_unknown_override",
                format!(
                    "override WG: u32 = 64u;\n{A}@compute @workgroup_size(WG)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
                ),
                graph_err("kernel `k` has no override `GW`; did you mean"),
            )),
            "inout a[64];\n    node k(a: a) over 64 with { GW = 32 };",
        ),
        graph(
            tokens(case(
                "with_float_for_u32",
                format!(
                    "override WG: u32 = 64u;\n{A}@compute @workgroup_size(WG)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
                ),
                graph_err("override `WG` is u32; give an integer"),
            )),
            "inout a[64];\n    node k(a: a) over 64 with { WG = 1.5 };",
        ),
        graph(
            tokens(case(
                "workgroup_size_unknowable",
                format!(
                    "override WG: u32;\n{A}@compute @workgroup_size(WG)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
                ),
                graph_err("node `k` must set override `WG` of kernel `k`,"),
            )),
            "inout a[64];\n    node k(a: a) over 64;",
        ),
    ]
}

/// Entry points and workgroup sizes.
pub fn entry_points() -> Vec<Case> {
    let two = format!(
        "{A}@compute @workgroup_size(64)\nfn one(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n@compute @workgroup_size(64)\nfn two(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 2u; }}\n"
    );
    vec![
        tokens(case(
            "no_compute_function",
            format!("{A}fn main() {{ a[0] = 1u; }}\n"),
            graph_err("kernel `k` has no `@compute` entry point; it has"),
        )),
        tokens(case(
            "two_compute_functions",
            two.clone(),
            graph_err("kernel `k` has several `@compute` entry points"),
        )),
        Case {
            after: " entry \"three\"",
            ..tokens(case(
                "entry_unknown",
                two,
                graph_err("kernel `k` has no entry point `three`"),
            ))
        },
        Case {
            after: " entry \"vs\"",
            ..tokens(case(
                "entry_is_vertex",
                format!(
                    "{A}@vertex fn vs() -> @builtin(position) vec4<f32> {{ return vec4<f32>(0.0); }}\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
                ),
                graph_err("entry point `vs` of kernel `k` is a vertex"),
            ))
        },
        tokens(case(
            "compute_without_workgroup_size",
            format!(
                "{A}@compute\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            syn("workgroup size is missing on compute shader"),
        )),
        tokens(case(
            "workgroup_size_zero",
            format!(
                "{A}@compute @workgroup_size(0)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            val("workgroup size is out of range"),
        )),
        tokens(case(
            "workgroup_size_too_large",
            format!(
                "{A}@compute @workgroup_size(1024)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            graph_err("kernel `k`: workgroup size [1024, 1, 1] exceeds"),
        )),
        tokens(case(
            "workgroup_product_too_large",
            format!(
                "{A}@compute @workgroup_size(16, 16, 2)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            graph_err("kernel `k`: workgroup size [16, 16, 2] has 512"),
        )),
        tokens(case(
            "compute_returns_value",
            format!(
                "{A}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) -> u32 {{ a[g.x] = 1u; return 1u; }}\n"
            ),
            val("entry point arguments and return values must all"),
        )),
        tokens(case(
            "fragment_only",
            format!(
                "{A}@fragment fn main() -> @location(0) vec4<f32> {{ a[0] = 1u; return vec4<f32>(1.0); }}\n"
            ),
            graph_err("kernel `k` has no `@compute` entry point; its"),
        )),
        tokens(case(
            "compute_plain_parameter",
            format!("{A}@compute @workgroup_size(64)\nfn main(x: u32) {{ a[x] = 1u; }}\n"),
            val("entry point arguments and return values must all"),
        )),
        tokens(case(
            "call_entry_point",
            format!("{A}fn helper() {{ main(vec3<u32>(0u)); }}\n{MAIN}    a[g.x] = 1u;\n}}\n"),
            syn("entry point cannot be called"),
        )),
        tokens(case(
            "duplicate_builtin",
            format!(
                "{A}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(global_invocation_id) h: vec3<u32>) {{ a[g.x] = h.x; }}\n"
            ),
            val("built-in GlobalInvocationId is present more than"),
        )),
        tokens(case(
            "workgroup_size_negative",
            format!(
                "{A}@compute @workgroup_size(-4)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            syn("must be non-negative (>= 0)"),
        )),
        tokens(case(
            "workgroup_size_float",
            format!(
                "{A}@compute @workgroup_size(64.0)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            syn("must be a const-expression that resolves to a"),
        )),
    ]
}

/// What only the validator (or a capability) catches.
pub fn validation() -> Vec<Case> {
    vec![
        tokens(case(
            "mixed_u32_f32",
            body("let y = 2.5f; a[g.x] = g.x + y;"),
            ty("`+` cannot combine `u32` and `f32`"),
        )),
        tokens(case(
            "if_not_bool",
            body("if g.x { a[0] = 1u; }"),
            val("the `if` condition is not a boolean scalar"),
        )),
        tokens(case(
            "switch_without_default",
            body("switch g.x { case 0u: { a[0] = 1u; } }"),
            val("the `switch` is missing a `default` case"),
        )),
        tokens(case(
            "break_outside_loop",
            body("break;"),
            val("the `break` is used outside of a `loop` or"),
        )),
        tokens(case(
            "continue_outside_loop",
            body("continue;"),
            val("the `continue` is used outside of a `loop`"),
        )),
        tokens(case(
            "discard_in_compute",
            body("discard;"),
            val("uses operations forbidden at this stage"),
        )),
        tokens(case(
            "f16_without_enable",
            body("let h: f16 = 1.0h; a[g.x] = u32(h);"),
            syn("the `f16` enable extension is not enabled"),
        )),
        tokens(case(
            "f16_without_feature",
            format!(
                "enable f16;\n{}",
                body("let h: f16 = 1.0h; a[g.x] = u32(h);")
            ),
            val("this needs a device capability (not in WebGPU's"),
        )),
        tokens(case(
            "f64_without_feature",
            body("let d: f64 = 1.0lf; a[g.x] = u32(d);"),
            val("`f64` needs device feature SHADER_F64 (not in"),
        )),
        tokens(case(
            "i64_without_feature",
            body("let d: i64 = 1li; a[g.x] = u32(d);"),
            val("64-bit integers need device feature SHADER_INT64"),
        )),
        tokens(case(
            "bool_storage",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<bool>;\n{MAIN}    a[g.x] = true;\n}}\n"
            ),
            val("type flags"),
        )),
        tokens(case(
            "workgroup_initializer",
            format!("{A}var<workgroup> w: u32 = 1u;\n{MAIN}    a[g.x] = w;\n}}\n"),
            val("initializer can't be used with address space"),
        )),
        tokens(case(
            "const_from_runtime",
            body("const c = g.x; a[g.x] = c;"),
            syn("this operation is not supported in a const"),
        )),
        tokens(case(
            "module_let",
            format!("{A}let m = 1u;\n{MAIN}    a[g.x] = m;\n}}\n"),
            syn("expected global item (`struct`, `const`, `var`,"),
        )),
        tokens(case(
            "too_few_call_arguments",
            format!(
                "{A}fn f(x: u32, y: u32) -> u32 {{ return x + y; }}\n{MAIN}    a[g.x] = f(g.x);\n}}\n"
            ),
            val("requires 2 arguments, but 1 are provided"),
        )),
        tokens(case(
            "wrong_argument_type",
            format!("{A}fn f(x: u32) -> u32 {{ return x; }}\n{MAIN}    a[g.x] = f(1.5);\n}}\n"),
            ty("automatic conversions cannot convert"),
        )),
        tokens(case(
            "loop_continuing_break_if_not_bool",
            body("loop { a[0] = 1u; continuing { break if 1u; } }"),
            val("the `if` condition is not a boolean scalar"),
        )),
        tokens(case(
            "return_in_continuing",
            body("loop { a[0] = 1u; continuing { return; } }"),
            val("the `return` is called within a `continuing`"),
        )),
        tokens(case(
            "shift_too_far",
            body("a[g.x] = 1u << 40u;"),
            syn("RHS of shift operation is greater than or equal"),
        )),
        tokens(case(
            "integer_divide_by_zero_const",
            body("a[g.x] = 1u / 0u;"),
            syn("Division by zero"),
        )),
        tokens(case(
            "vector_index_constant_out_of_range",
            body("let v = vec2<u32>(1u); a[g.x] = v[5];"),
            syn("Index 5 is out of bounds for expression"),
        )),
        tokens(case(
            "fixed_array_index_constant_out_of_range",
            body("var r: array<u32, 4>; a[g.x] = r[4];"),
            val("accessing index 4 is out of bounds"),
        )),
        tokens(case(
            "private_runtime_sized_initializer",
            format!(
                "{A}var<private> p: array<u32, 4> = array<u32, 3>(1u, 2u, 3u);\n{MAIN}    a[g.x] = p[0];\n}}\n"
            ),
            ty("`p` is declared `array<u32, 4>` but initialized"),
        )),
        tokens(case(
            "storage_initializer",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: array<u32, 4> = array<u32, 4>();\n{MAIN}    a[0] = 1u;\n}}\n"
            ),
            val("initializer can't be used with address space"),
        )),
        tokens(case(
            "binding_collision",
            format!(
                "{A}@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n{MAIN}    a[g.x] = b[g.x];\n}}\n"
            ),
            val("bindings for conflict with other resource"),
        )),
    ]
}
