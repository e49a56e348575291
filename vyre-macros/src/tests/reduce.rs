//! Built-in reductions and scans through the front end: what parses, what
//! each lowers to (nodes and generated kernels, validated by naga), which
//! mistakes are errors with which message, and when a producer is fused
//! into the load.

use super::*;

const SQUARE: &str = r#"
    kernel square = "
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * x[g.x]; }
        }
    ";
"#;

fn graph(body: &str) -> String {
    format!("pub struct G; {SQUARE} {body}")
}

fn expanded(src: &str) -> String {
    let ts = expand(src);
    let errors = compile_errors(&ts);
    assert!(errors.is_empty(), "unexpected errors: {errors:?}");
    ts.to_string()
}

#[test]
fn every_operation_type_and_kind_lowers_and_validates() {
    for op in ["sum", "add", "max", "min"] {
        for ty in ["f32", "u32", "i32", "f16", "u64", "i64", "f64"] {
            // A `reduce` over f16 needs an even-length source.
            let (len, rows, cols) = if ty == "f16" {
                ("2 * n", "n / 4", "n / 2")
            } else {
                ("n", "n / 8", "n / 4")
            };
            for (form, dst) in [
                (format!("reduce {op}<{ty}>(x)"), "output d[1];".to_owned()),
                (
                    format!("reduce {op}<{ty}>(x) over [{rows}, 8]"),
                    format!("output d[{rows}];"),
                ),
                (
                    format!("reduce {op}<{ty}>(x) over [4, {cols}]"),
                    "output d[4];".to_owned(),
                ),
                (
                    format!("scan inclusive {op}<{ty}>(x)"),
                    format!("output d[{len}];"),
                ),
                (
                    format!("scan exclusive {op}<{ty}>(x) over [{rows}, 8]"),
                    format!("output d[{len}];"),
                ),
            ] {
                let src = format!(
                    "pub struct G; features [shader_f16, shader_int64, shader_f64]; input x[{len}]; {dst} node r = {form} -> d;"
                );
                let text = expanded(&src);
                assert!(text.contains("r__"), "{form}: no generated node");
            }
        }
    }
}

#[test]
fn whole_buffer_levels_are_named_and_sized() {
    let text =
        expanded("pub struct G; input x[n]; output s[1]; node total = reduce sum<f32>(x) -> s;");
    for part in ["total__level1", "total__level2", "total__partials"] {
        assert!(text.contains(part), "missing {part}");
    }
    assert!(!text.contains("total__level3"), "a third level");
    let text = expanded(
        "pub struct G; input x[n]; output y[n]; node p = scan exclusive sum<u32>(x) -> y;",
    );
    for part in ["p__totals", "p__offsets", "p__scan"] {
        assert!(text.contains(part), "missing {part}");
    }
    assert!(!text.contains("p__totals2"), "a second totals level");
}

#[test]
fn a_kernel_called_reduce_is_still_a_kernel() {
    let src = r#"pub struct G;
        kernel reduce = "
            @group(0) @binding(0) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { if g.x < arrayLength(&y) { y[g.x] = 1u; } }
        ";
        output y[n];
        node r = reduce(y: y) over n;"#;
    expanded(src);
}

#[test]
fn mistakes_are_errors_with_the_fix() {
    let cases: [(&str, &[&str]); 12] = [
        (
            "input x[n]; output s[1]; node t = reduce sum<f32>(x) over [0, n] -> s;",
            &["this extent has 0 rows"],
        ),
        (
            "input x[n]; output y[n]; node t = scan inclusive sum<f32>(x) over [n, 0] -> y;",
            &["this extent has 0 columns", "segmented `scan`"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce sum(x) -> s;",
            &["cannot tell the element type of `x`", "reduce sum<f32>(x)"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce mul<f32>(x) -> s;",
            &["unknown operation `mul`"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce sum<f128>(x) -> s;",
            &["f32, u32, i32, f16, u64, i64 or f64, not `f128`"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce sum<f64>(x) -> s;",
            &[
                "on f64 needs the device feature `shader_f64`",
                "`features [shader_f64];`",
            ],
        ),
        (
            "features [shader_f16]; input x[n]; output y[n]; node t = scan inclusive max<u64>(x) -> y;",
            &["on u64 needs the device feature `shader_int64`"],
        ),
        (
            "input x[n]; output y[n]; node t = scan sideways sum<f32>(x) -> y;",
            &["`inclusive` or `exclusive`"],
        ),
        (
            "input x[n]; output s[n]; node t = reduce sum<f32>(x) -> s;",
            &["has length n", "`output s[1];`"],
        ),
        (
            "input x[n]; output s[n]; node t = reduce sum<f32>(x) over [n] -> s;",
            &["`over [rows, cols]`"],
        ),
        (
            "input x[n]; output s[n]; node t = reduce sum<f32>(x) over [n, n] -> s;",
            &["constant, non-zero number of rows or of columns"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce sum<f32>(nope) -> s;",
            &["unknown buffer `nope`"],
        ),
    ];
    for (body, parts) in cases {
        assert_error(&format!("pub struct G; {body}"), parts);
    }
}

#[test]
fn an_only_reader_producer_is_fused_into_the_load() {
    let fused = expanded(&graph(
        "input x[n]; intermediate y[n]; output s[1]; node square(x: x, y: y) over n; node t = reduce sum(y) -> s;",
    ));
    assert!(fused.contains("t__level1__reads_square"));
    let unfused = expanded(&format!(
        "pub struct G; fuse off; {SQUARE} input x[n]; intermediate y[n]; output s[1]; node square(x: x, y: y) over n; node t = reduce sum(y) -> s;"
    ));
    assert!(!unfused.contains("__reads_"));
    // Not fused: the producer runs over another size, is `unfused`, or `y`
    // has another reader.
    for body in [
        "input x[n]; intermediate y[n]; output s[1]; node square(x: x, y: y) over n unfused; node t = reduce sum(y) -> s;",
        "input x[n]; intermediate y[n]; output s[1]; output z[n]; node square(x: x, y: y) over n; node again = square(x: y, y: z) over n; node t = reduce sum(y) -> s;",
    ] {
        assert!(!expanded(&graph(body)).contains("__reads_"), "{body}");
    }
}

#[test]
fn a_whole_buffer_scan_loads_vec4s_from_a_plain_buffer() {
    let text = expanded(
        "pub struct G; input x[n]; output y[n]; node p = scan exclusive sum<u32>(x) -> y;",
    );
    assert!(text.contains("vyre_src4"), "no vector view in the scan");
    // Per-row scans and reductions keep single-element loads.
    let text = expanded(
        "pub struct G; input x[n]; output y[n]; output s[1]; node r = scan inclusive max<i32>(x) over [n / 64, 64] -> y; node t = reduce sum<i32>(x) -> s;",
    );
    assert!(
        !text.contains("vyre_src4"),
        "a vector view outside a whole-buffer scan"
    );
}

#[test]
fn subgroups_reach_the_generated_kernels() {
    // The flag reaches every generated kernel's source; with it declared,
    // the kernels validate with naga's subgroup capability.
    let body = "input x[n]; output y[n]; output s[1]; node p = scan exclusive sum<u32>(x) -> y; node t = reduce max<u32>(x) -> s;";
    let plain = expanded(&format!("pub struct G; {body}"));
    let with = expanded(&format!("pub struct G; features [subgroups]; {body}"));
    assert!(with.contains("Subgroups"), "the feature reaches the spec");
    assert!(!plain.contains("Subgroups"));
    let note = "subgroup operations are allowed here";
    assert_eq!(
        with.matches(note).count(),
        5,
        "every generated kernel sees the flag"
    );
    assert!(!plain.contains(note));
    // With the feature, a kernel may use subgroup operations; without it,
    // naga refuses them and the error names the feature to declare.
    let kernel = r#"
        kernel wide = "
            @group(0) @binding(0) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&y) { y[g.x] = subgroupAdd(y[g.x]); }
            }
        ";
        inout y[n];
        node wide(y: y) over n;"#;
    expanded(&format!("pub struct G; features [subgroups]; {kernel}"));
    assert_error(&format!("pub struct G; {kernel}"), &["subgroups"]);
}

#[test]
fn an_only_reader_consumer_is_fused_into_a_scan_store() {
    const ADD1: &str = r#"
        kernel add1 = "
            @group(0) @binding(0) var<storage, read> y: array<f32>;
            @group(0) @binding(1) var<storage, read_write> z: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&z) { z[g.x] = y[g.x] + 1.0; }
            }
        ";
    "#;
    let body = "input x[n]; output z[n]; node p = scan inclusive sum<f32>(x) -> y; node add1(y: y, z: z) over n;";
    for (ydecl, dropped) in [("intermediate y[n];", true), ("output y[n];", false)] {
        let text = expanded(&format!("pub struct G; {ADD1} {ydecl} {body}"));
        assert!(text.contains("p__scan__writes_add1"), "{ydecl}");
        let off = expanded(&format!("pub struct G; fuse off; {ADD1} {ydecl} {body}"));
        assert!(!off.contains("__writes_"), "{ydecl}");
        // The intermediate is gone; an output is still written.
        assert_eq!(!text.contains("pub y :"), dropped, "{ydecl}");
    }
    // Not fused: another reader, a consumer over another size, `unfused`.
    for body in [
        "input x[n]; intermediate y[n]; output z[n]; output w[n]; node p = scan inclusive sum<f32>(x) -> y; node add1(y: y, z: z) over n; node again = add1(y: y, z: w) over n;",
        "input x[n]; intermediate y[n]; output z[n]; node p = scan inclusive sum<f32>(x) -> y; node add1(y: y, z: z) over n unfused;",
    ] {
        let text = expanded(&format!("pub struct G; {ADD1} {body}"));
        assert!(!text.contains("__writes_"), "{body}");
    }
}

#[test]
fn two_reductions_of_one_source_share_a_pass() {
    // sum(x) and sum(x * x), the squares fused on read: one first level.
    let text = expanded(&graph(
        "input x[n]; intermediate y[n]; output s[1]; output q[1]; node square(x: x, y: y) over n; node t = reduce sum(x) -> s; node u = reduce sum(y) -> q;",
    ));
    let paired = [
        "t__level1__and_u__level1__reads_square",
        "u__level1__reads_square__and_t__level1",
    ];
    assert!(paired.iter().any(|p| text.contains(p)), "paired: {text}");
    assert!(text.contains("__level1__pairs"));
    // The same buffer twice; max and max.
    let text = expanded(
        "pub struct G; input x[n]; output s[1]; output m[1]; node a = reduce max<i32>(x) -> s; node b = reduce max<i32>(x) -> m;",
    );
    assert!(text.contains("a__level1__and_b__level1") || text.contains("b__level1__and_a__level1"));
    // Not paired: other operations, `fuse off`, sources of other lengths.
    for src in [
        "pub struct G; input x[n]; output s[1]; output m[1]; node a = reduce sum<i32>(x) -> s; node b = reduce max<i32>(x) -> m;",
        "pub struct G; fuse off; input x[n]; output s[1]; output m[1]; node a = reduce sum<i32>(x) -> s; node b = reduce sum<i32>(x) -> m;",
        "pub struct G; input x[n]; input w[n / 2]; output s[1]; output m[1]; node a = reduce sum<i32>(x) -> s; node b = reduce sum<i32>(w) -> m;",
    ] {
        assert!(!expanded(src).contains("__and_"), "{src}");
    }
}

#[test]
fn f16_kernels_start_with_enable_even_with_a_fused_producer() {
    let text =
        crate::lower::types::hoist_enables("// c\nenable f16;\nfn f() {}\nenable f16;\n", "f16");
    assert!(text.starts_with("enable f16;\n"), "{text}");
    assert_eq!(text.matches("enable f16;").count(), 1, "{text}");
    let plain = crate::lower::types::hoist_enables("fn f() {}\n", "u32");
    assert_eq!(plain, "fn f() {}\n");
}
