//! The invalid kernels of `tests/compile/compile_many.rs`, one mistake each,
//! written for this test after the kinds of naga's own invalid-WGSL tests:
//! the case type and its helpers, syntax and type errors. `memory.rs` and
//! `program.rs` hold the rest.

/// One invalid kernel and the graph around it.
pub struct Case {
    /// A short name (part of the generated module's name).
    pub name: &'static str,
    /// The kernel's WGSL.
    pub wgsl: String,
    /// Written after the kernel's source (`entry "..."`), or empty.
    pub after: &'static str,
    /// The graph's items after the kernel.
    pub graph: &'static str,
    /// The kernel also compiles as `wgsl { ... }` tokens.
    pub tokens: bool,
    /// A fragment of the invocation's error (its headline).
    pub expect: String,
}

/// The graph of most cases: one `inout` buffer bound as `a`.
pub const ONE: &str = "inout a[64];\n    node k(a: a) over 64;";
/// `a`, `a: array<u32>` read-write, at group 0 binding 0.
pub const A: &str = "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n";
/// The usual entry point's header.
pub const MAIN: &str =
    "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n";

/// `a` plus an entry point whose body is `body`.
pub fn body(body: &str) -> String {
    format!("{A}{MAIN}    {body}\n}}\n")
}

/// `globals` plus an entry point whose body is `body`.
pub fn with(globals: &str, body: &str) -> String {
    format!("{globals}\n{MAIN}    {body}\n}}\n")
}

pub fn case(name: &'static str, wgsl: String, expect: String) -> Case {
    Case {
        name,
        wgsl,
        after: "",
        graph: ONE,
        tokens: false,
        expect,
    }
}

pub fn tokens(mut c: Case) -> Case {
    c.tokens = true;
    c
}

pub fn graph(mut c: Case, graph: &'static str) -> Case {
    c.graph = graph;
    c
}

/// A WGSL syntax error of kernel `k` saying `what`.
pub fn syn(what: &str) -> String {
    format!("WGSL syntax error in kernel `k`: {what}")
}

/// A WGSL type error of kernel `k` saying `what`.
pub fn ty(what: &str) -> String {
    format!("WGSL type error in kernel `k`: {what}")
}

/// A WGSL validation error of kernel `k` saying `what`.
pub fn val(what: &str) -> String {
    format!("WGSL validation error in kernel `k`: {what}")
}

/// An error of the graph (entry points, overrides, limits) saying `what`.
pub fn graph_err(what: &str) -> String {
    what.to_owned()
}

/// Syntax errors.
pub fn syntax() -> Vec<Case> {
    vec![
        tokens(case(
            "missing_semi",
            body("a[g.x] = 1u\n    a[0] = 2u;"),
            syn("missing `;` at the end of the line"),
        )),
        case(
            "missing_close_brace",
            format!("{A}{MAIN}    a[g.x] = 1u;\n"),
            syn("expected statement, found ``"),
        ),
        case(
            "extra_close_brace",
            format!("{}}}\n", body("a[g.x] = 1u;")),
            syn("expected global item (`struct`, `const`, `var`,"),
        ),
        case(
            "dollar",
            body("a[g.x] = $1u;"),
            syn("expected expression, found `$`"),
        ),
        case(
            "hash",
            body("a[g.x] = #1u;"),
            syn("expected expression, found `#`"),
        ),
        case(
            "unclosed_attribute",
            format!(
                "@group(0 @binding(0) var<storage, read_write> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("expected `)` before `@`"),
        ),
        case(
            "unterminated_comment",
            format!("{A}/* never closed\n{MAIN}    a[g.x] = 1u;\n}}\n"),
            syn("unterminated block comment"),
        ),
        tokens(case(
            "let_without_name",
            body("let = 1u;"),
            syn("expected identifier, found `=`"),
        )),
        tokens(case(
            "missing_type",
            format!(
                "@group(0) @binding(0) var<storage, read_write> a: ;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("expected identifier, found `;`"),
        )),
        tokens(case(
            "empty_workgroup_size",
            format!("{A}@compute @workgroup_size()\nfn main() {{ a[0] = 1u; }}\n"),
            syn("expected expression, found `)`"),
        )),
        tokens(case(
            "let_without_value",
            body("let x: u32 = ;"),
            syn("expected expression, found `;`"),
        )),
        tokens(case(
            "two_operators",
            body("a[g.x] = g.x + * 2u;"),
            syn("the operand of the `*` operator must be a"),
        )),
        tokens(case(
            "unknown_attribute",
            format!("{A}@compute @workgroup_size(64) @fast\nfn main() {{ a[0] = 1u; }}\n"),
            syn("unknown attribute: `fast`"),
        )),
        tokens(case(
            "fn_without_name",
            format!("{A}@compute @workgroup_size(64)\nfn () {{ a[0] = 1u; }}\n"),
            syn("expected identifier, found `(`"),
        )),
        tokens(case(
            "struct_missing_comma",
            format!("struct S {{ x: f32 y: f32 }}\n{}", body("a[0] = 1u;")),
            syn("expected `,` before `y`"),
        )),
        tokens(case(
            "assign_to_literal",
            body("1u = a[0];"),
            syn("expected statement, found `1u`"),
        )),
        tokens(case(
            "for_missing_clause",
            body("for (var i = 0u; i < 4u) { a[i] = i; }"),
            syn("expected `;` before `)`"),
        )),
        tokens(case(
            "literal_too_big",
            body("a[0] = 4294967296u;"),
            syn("numeric literal not representable by target"),
        )),
        (case(
            "hex_without_digits",
            body("a[0] = 0xu;"),
            syn("invalid numeric literal format: `0x`"),
        )),
        tokens(case(
            "two_dots",
            body("let x = 1.2.3;"),
            syn("expected `;` before `.3`"),
        )),
        case(
            "string_literal",
            body("let x = \"text\";"),
            syn("expected expression, found"),
        ),
        case(
            "char_literal",
            body("let x = 'c';"),
            syn("expected expression, found `'`"),
        ),
        tokens(case(
            "storage_three_params",
            format!(
                "@group(0) @binding(0) var<storage, read_write, read> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("unused expressions for template"),
        )),
        tokens(case(
            "duplicate_attribute",
            format!(
                "@group(0) @binding(0) @binding(1) var<storage, read_write> a: array<u32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("repeated attribute: `binding`"),
        )),
        tokens(case(
            "unknown_enable",
            format!("enable nonsense_extension;\n{}", body("a[0] = 1u;")),
            syn("unknown enable-extension `nonsense_extension`"),
        )),
        tokens(case(
            "const_assert_false",
            format!("const_assert 1 == 2;\n{}", body("a[0] = 1u;")),
            syn("`const_assert` failure"),
        )),
        tokens(case(
            "alias_without_type",
            format!("alias T = ;\n{}", body("a[0] = 1u;")),
            syn("expected identifier, found `;`"),
        )),
        tokens(case(
            "else_without_if",
            body("else { a[0] = 1u; }"),
            syn("expected assignment or increment/decrement,"),
        )),
        tokens(case(
            "reserved_word",
            body("let mod = 1u; a[0] = mod;"),
            syn("name `mod` is a reserved keyword"),
        )),
        tokens(case(
            "keyword_as_name",
            body("let loop = 1u; a[0] = loop;"),
            syn("name `loop` is a reserved keyword"),
        )),
        tokens(case(
            "module_scope_statement",
            format!("{A}a[0] = 1u;\n{MAIN}}}\n"),
            syn("expected global item (`struct`, `const`, `var`,"),
        )),
        tokens(case(
            "bad_swizzle_chars",
            body("let v = vec4<u32>(1u); a[0] = v.xq;"),
            syn("invalid field accessor `xq`"),
        )),
    ]
}

/// Type errors.
pub fn types() -> Vec<Case> {
    vec![
        tokens(case(
            "let_u32_from_float",
            body("let x: u32 = 1.5;"),
            ty("`x` is declared `u32` but initialized with"),
        )),
        tokens(case(
            "let_i32_from_u32",
            body("let x: i32 = 1u; a[0] = u32(x);"),
            ty("`x` is declared `i32` but initialized with `u32`"),
        )),
        tokens(case(
            "var_f32_from_bool",
            body("var x: f32 = true; a[0] = u32(x);"),
            ty("`x` is declared `f32` but initialized with"),
        )),
        tokens(case(
            "unknown_type",
            body("let x: foo = 1u;"),
            syn("no definition in scope for identifier: `foo`"),
        )),
        tokens(case(
            "unknown_identifier",
            body("a[g.x] = nowhere;"),
            syn("no definition in scope for identifier: `nowhere`"),
        )),
        tokens(case(
            "unknown_function",
            body("a[g.x] = frobnicate(g.x);"),
            syn("no definition in scope for identifier:"),
        )),
        tokens(case(
            "builtin_wrong_arg_count",
            body("a[g.x] = u32(abs(1.0, 2.0));"),
            syn("too many arguments passed to `abs`"),
        )),
        tokens(case(
            "vector_too_few",
            body("let v = vec3<f32>(1.0, 2.0); a[0] = u32(v.x);"),
            syn("Constructor expects 3 components, found 2"),
        )),
        tokens(case(
            "swizzle_out_of_range",
            body("let v = vec2<u32>(1u, 2u); a[0] = v.z;"),
            syn("invalid field accessor `z`"),
        )),
        tokens(case(
            "no_such_member",
            format!(
                "struct S {{ x: u32 }}\n{}",
                body("var s: S; a[0] = s.nope;")
            ),
            syn("invalid field accessor `nope`"),
        )),
        tokens(case(
            "index_a_scalar",
            body("let x = 1u; a[0] = x[0];"),
            syn("Invalid access into expression, indexed: true"),
        )),
        tokens(case(
            "array_size_zero",
            body("var z: array<u32, 0>; a[0] = z[0];"),
            syn("array element count must be positive (> 0)"),
        )),
        tokens(case(
            "array_size_negative",
            body("var z: array<u32, -1>; a[0] = z[0];"),
            syn("array element count must be positive (> 0)"),
        )),
        tokens(case(
            "assign_to_let",
            body("let x = 1u; x = 2u; a[0] = x;"),
            syn("invalid left-hand side of assignment"),
        )),
        tokens(case(
            "call_a_value",
            body("let f = 1u; a[0] = f(2u);"),
            syn("local declaration cannot be called"),
        )),
        tokens(case(
            "return_value_from_void",
            format!("{A}fn helper() {{ return 1u; }}\n{MAIN}    helper();\n    a[g.x] = 1u;\n}}\n"),
            val("the `return` expression Some([0]) does not match"),
        )),
        tokens(case(
            "missing_return",
            format!("{A}fn helper() -> u32 {{ let x = 1u; }}\n{MAIN}    a[g.x] = helper();\n}}\n"),
            val("the `return` expression None does not match the"),
        )),
        tokens(case(
            "i32_overflow",
            body("let x = 4000000000i; a[0] = u32(x);"),
            syn("numeric literal not representable by target"),
        )),
        tokens(case(
            "const_divide_by_zero",
            body("const z = 1 / 0; a[0] = u32(z);"),
            syn("Division by zero"),
        )),
        tokens(case(
            "select_mixed",
            body("a[0] = select(1u, 2.0, true);"),
            ty("type mismatch for reject and accept values in"),
        )),
        tokens(case(
            "bitcast_size",
            body("let v = bitcast<f32>(vec2<u32>(1u, 2u)); a[0] = u32(v);"),
            syn("cannot cast a vec2<f32> to a u32"),
        )),
        tokens(case(
            "vec_eq_scalar_if",
            body("if vec2<u32>(1u) == 1u { a[0] = 1u; }"),
            ty("`==` cannot combine `vec2<u32>` and `u32`"),
        )),
        tokens(case(
            "redeclared_let",
            body("let x = 1u; let x = 2u; a[0] = x;"),
            syn("redefinition of `x`"),
        )),
        tokens(case(
            "duplicate_global",
            format!(
                "{A}@group(0) @binding(1) var<storage, read_write> a: array<f32>;\n{MAIN}    a[g.x] = 1u;\n}}\n"
            ),
            syn("redefinition of `a`"),
        )),
        tokens(case(
            "duplicate_member",
            format!("struct S {{ x: u32, x: u32 }}\n{}", body("a[0] = 1u;")),
            syn("redefinition of `x`"),
        )),
        tokens(case(
            "recursion",
            format!("{A}fn f(x: u32) -> u32 {{ return f(x); }}\n{MAIN}    a[g.x] = f(g.x);\n}}\n"),
            syn("declaration of `f` is recursive"),
        )),
        tokens(case(
            "unknown_builtin",
            format!(
                "{A}@compute @workgroup_size(64)\nfn main(@builtin(nonsense) g: vec3<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            syn("unknown builtin: `nonsense`"),
        )),
        tokens(case(
            "builtin_wrong_type",
            format!(
                "{A}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec2<u32>) {{ a[g.x] = 1u; }}\n"
            ),
            val("built-in type for GlobalInvocationId is invalid."),
        )),
        tokens(case(
            "bool_arithmetic",
            body("a[0] = true + 1u;"),
            ty("automatic conversions cannot convert elements of"),
        )),
        tokens(case(
            "negate_u32",
            body("let x = -1u; a[0] = x;"),
            syn("Cannot apply the unary op to the argument"),
        )),
        tokens(case(
            "compare_mixed",
            body("if 1u < 1.0f { a[0] = 1u; }"),
            ty("`<` cannot combine `u32` and `f32`"),
        )),
        tokens(case(
            "matrix_of_ints",
            body("var m: mat2x2<i32>; a[0] = 1u;"),
            ty("matrix scalar type must be floating-point, but"),
        )),
    ]
}
