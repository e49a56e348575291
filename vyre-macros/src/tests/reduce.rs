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
        for ty in ["f32", "u32", "i32"] {
            for (form, dst) in [
                (format!("reduce {op}<{ty}>(x)"), "output d[1];"),
                (
                    format!("reduce {op}<{ty}>(x) over [n / 8, 8]"),
                    "output d[n / 8];",
                ),
                (
                    format!("reduce {op}<{ty}>(x) over [4, n / 4]"),
                    "output d[4];",
                ),
                (format!("scan inclusive {op}<{ty}>(x)"), "output d[n];"),
                (
                    format!("scan exclusive {op}<{ty}>(x) over [n / 8, 8]"),
                    "output d[n];",
                ),
            ] {
                let src = format!("pub struct G; input x[n]; {dst} node r = {form} -> d;");
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
    let cases: [(&str, &[&str]); 8] = [
        (
            "input x[n]; output s[1]; node t = reduce sum(x) -> s;",
            &["cannot tell the element type of `x`", "reduce sum<f32>(x)"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce mul<f32>(x) -> s;",
            &["unknown operation `mul`"],
        ),
        (
            "input x[n]; output s[1]; node t = reduce sum<f64>(x) -> s;",
            &["f32, u32 or i32, not `f64`"],
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
