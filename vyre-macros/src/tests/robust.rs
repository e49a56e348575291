//! Robustness: hundreds of malformed inputs through the whole front end.
//! None may panic, and each must produce at least one `compile_error!`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::*;

const SAMPLE_KERNEL: &str = "@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
override WG: u32 = 64;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * 2.0; }
}";

fn graph_with_kernel(kernel: &str) -> String {
    format!(
        "pub struct G; kernel k = {kernel:?}; input x[n]; output y[n]; node k(src: x, dst: y) over n;"
    )
}

/// Runs `src` (already tokens) through the front end on a thread with a
/// generous stack; returns the number of compile errors.
fn run_case(ts: TokenStream) -> Result<usize, String> {
    let result = catch_unwind(AssertUnwindSafe(|| crate::expand(ts)));
    match result {
        Ok(out) => Ok(compile_errors(&out).len()),
        Err(_) => Err("panicked".into()),
    }
}

fn malformed_cases() -> Vec<String> {
    let mut cases = Vec::new();
    // 1. Every proper prefix of the sample kernel (at char boundaries).
    for (i, _) in SAMPLE_KERNEL.char_indices() {
        cases.push(graph_with_kernel(&SAMPLE_KERNEL[..i]));
    }
    // 2. Every prefix of the kernel as tokens, cut at token boundaries.
    let wgsl_tokens: Vec<String> = tokens(SAMPLE_KERNEL)
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    for cut in 0..wgsl_tokens.len() {
        cases.push(format!(
            "pub struct G; kernel k = wgsl {{ {} }}; input x[n]; output y[n]; node k(src: x, dst: y) over n;",
            wgsl_tokens[..cut].join(" ")
        ));
    }
    // 3. Every prefix of a valid graph, cut at top-level token boundaries.
    let good = graph_with_kernel(SAMPLE_KERNEL);
    let graph_tokens: Vec<String> = tokens(&good).into_iter().map(|t| t.to_string()).collect();
    for cut in 0..graph_tokens.len() {
        cases.push(graph_tokens[..cut].join(" "));
    }
    // 4. Garbage, huge numbers, deep nesting, duplicates.
    let deep_parens = format!("{}n{}", "(".repeat(200), ")".repeat(200));
    let deep_wgsl = format!(
        "@compute @workgroup_size(1) fn main() {{ let x = {}1{}; }}",
        "(".repeat(500),
        ")".repeat(500)
    );
    let deep_blocks = format!(
        "@compute @workgroup_size(1) fn main() {{ {} }}",
        "{".repeat(300) + &"}".repeat(300)
    );
    for case in [
        String::new(),
        ";".into(),
        "struct".into(),
        "pub".into(),
        "pub struct".into(),
        "pub struct G".into(),
        "pub struct G;".into(),
        "pub struct G; ;;;".into(),
        "pub struct G; kernel".into(),
        "pub struct G; kernel k".into(),
        "pub struct G; kernel k =".into(),
        "pub struct G; kernel k = wgsl".into(),
        "pub struct G; kernel k = wgsl {}".into(),
        "pub struct G; kernel k = wgsl {};".into(),
        "pub struct G; kernel k = file \"\";".into(),
        "pub struct G; kernel k = file \"/\";".into(),
        "pub struct G; kernel k = file \"tests\";".into(),
        "pub struct G; kernel k = file \"../../../../../../../../etc/shadow\";".into(),
        "pub struct G; kernel k = \"\\u{0}\";".into(),
        "pub struct G; kernel k = b\"bytes\";".into(),
        "pub struct G; kernel k = 'c';".into(),
        "pub struct G; repeat 99999999999999999999 as i { node k(a: b) over n; }".into(),
        "pub struct G; repeat 18446744073709551615 as i { node k(a: b) over n; }".into(),
        "pub struct G; repeat -1 as i { node k(a: b) over n; }".into(),
        "pub struct G; repeat 0 as i { node k(a: b) over n; }".into(),
        "pub struct G; input x[99999999999999999999999];".into(),
        "pub struct G; input x[18446744073709551615 * n * 18446744073709551615];".into(),
        "pub struct G; input x[n / 18446744073709551615 / 18446744073709551615];".into(),
        format!("pub struct G; input x[{deep_parens}];"),
        format!("pub struct G; node k(a: b) over n with {{ V = {deep_parens} }};"),
        format!("pub struct G; node k(a: b) over n with {{ V = {} 1 }};", "-".repeat(100)),
        graph_with_kernel(&deep_wgsl),
        graph_with_kernel(&deep_blocks),
        format!("pub struct G; kernel k = wgsl {{ {} }};", "[".repeat(100) + &"]".repeat(100)),
        "pub struct G; input x[n]; input x[n]; kernel k = \"\"; kernel k = \"\";".into(),
        "pub struct G; node a(x: y) over n; node a(x: y) over n;".into(),
        "pub struct G; node k(a: b, a: b) over n with { X = 1, X = 2 };".into(),
        "pub struct G; limits native; limits native;".into(),
        "pub struct G; #[cfg(test)] input x[n];".into(),
        "#[".into(),
        "pub struct G; node k(a: ping(b, c)) over n with { W = 1.0e999 };".into(),
        "pub struct G; node k(a: ping(b, c)) over n with { W = 340282366920938463463374607431768211456 };".into(),
        "pub struct G; node k() grid [n, n, n, n];".into(),
        "pub struct G; node k() grid [];".into(),
        "pub struct G; node = k() over n;".into(),
        "pub struct G; node l = () over n;".into(),
        "pub struct G; output y[n]; node k(y: y) over n;".into(),
        "struct G; input struct[n];".into(),
        "struct G; input r#type[n];".into(),
        "🦀".into(),
        "pub struct G; kernel k = \"@compute @workgroup_size(0) fn main() {}\"; output y[n]; node k() over n;".into(),
        "pub struct G; kernel k = \"@compute @workgroup_size(4294967295) fn main() {}\"; node k() over n;".into(),
        "pub struct G; kernel k = \"override W: u32; @compute @workgroup_size(W) fn main() {}\"; node k() over n with { W = 0 };".into(),
        "pub struct G; kernel k = \"override W: u32; @compute @workgroup_size(W) fn main() {}\"; node k() over n with { W = 4294967295 };".into(),
        "pub struct G; kernel k = \"@group(0) @binding(0) var<storage, read_write> v: array<bool>; @compute @workgroup_size(1) fn main() { v[0] = true; }\"; output y[n]; node k(v: y) over n;".into(),
        "pub struct G; kernel k = \"@group(4294967295) @binding(4294967295) var<storage, read_write> v: array<f32>; @compute @workgroup_size(1) fn main() { v[0] = 1.0; }\"; output y[n]; node k(v: y) over 0;".into(),
    ] {
        cases.push(case);
    }
    // 5. Every single item of the big graph alone after a header.
    for item in SAXPY_NODES.split(';') {
        cases.push(format!("pub struct G; {item};"));
    }
    cases
}

#[test]
fn hundreds_of_malformed_inputs_never_panic_and_always_error() {
    // Large stack: naga and syn recurse on the deeply nested cases, and
    // tests run unoptimised.
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let cases = malformed_cases();
            let mut failures = Vec::new();
            let mut checked = 0;
            for src in &cases {
                // Some generated strings are not even Rust tokens (an unmatched
                // bracket): those never reach a proc macro.
                let Ok(ts) = src.parse::<TokenStream>() else {
                    continue;
                };
                checked += 1;
                match run_case(ts) {
                    Ok(0) => failures.push(format!("no compile_error for: {src}")),
                    Ok(_) => {}
                    Err(e) => failures.push(format!("{e}: {src}")),
                }
            }
            (checked, failures)
        })
        .expect("spawn");
    let (checked, failures) = handle.join().expect("the sweep itself panicked");
    assert!(checked >= 200, "only {checked} cases");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_valid_sample_expands() {
    assert_ok(&graph_with_kernel(SAMPLE_KERNEL));
}
