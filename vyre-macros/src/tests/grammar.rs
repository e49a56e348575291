//! Stage 1: the grammar, sizes and override values.

use super::*;
use crate::analyse::overrides::Evaluate;
use crate::diag::Diagnostics;
use crate::model::{
    BufferClass, BufferRef, Extent, GraphInput, KernelSource, NodeItem, SizeDecl, Value, Written,
};
use crate::parse as input;

fn parse(src: &str) -> (GraphInput, Vec<String>) {
    let mut diag = Diagnostics::new();
    let g = input::parse(tokens(src), &mut diag);
    (g, diag.messages())
}

fn parse_ok(src: &str) -> GraphInput {
    let (g, errors) = parse(src);
    assert!(errors.is_empty(), "{errors:#?}");
    g
}

fn syntax_error(src: &str, part: &str) {
    let (_, errors) = parse(src);
    assert!(
        errors.iter().any(|e| e.contains(part)),
        "no syntax error containing {part:?} in {errors:#?}"
    );
}

fn extent(src: &str) -> Result<Extent, String> {
    let (g, errors) = parse(&format!("struct G; input x[{src}];"));
    match (errors.first(), g.buffers.first()) {
        (Some(e), _) => Err(e.clone()),
        (None, Some(b)) => Ok(b.len.extent),
        (None, None) => Err("no buffer".into()),
    }
}

const fn ext(mul: u64, div: u64, add: u64) -> Extent {
    Extent { mul, div, add }
}

#[test]
fn every_feature_of_the_grammar_parses() {
    let g = parse_ok(
        r##"
        /// Docs.
        #[derive(Debug)]
        pub(crate) struct Everything;
        limits native;
        kernel scale = "fn f() {}";
        kernel raw = r#"fn f() {}"#;
        kernel add = file "kernels/add.wgsl";
        kernel mul = wgsl { @compute @workgroup_size(1) fn main() {} };
        kernel two = file "kernels/many.wgsl" entry "second";
        /// Buffer docs are accepted and ignored.
        input x[n];
        inout keys[n];
        intermediate t[2 * n];
        output out[n / 2 + 1];
        uniform params;
        node scale(src: x, dst: t) over n;
        node second = add(a: t, b: x, out: out,) over n / 2;
        node g = add(a: t, b: x, out: out) grid [n / 64, 1, 1];
        node s = sort(src: ping(a, b), dst: pong(a, b)) over n with { WG = 128, SHIFT = i * 8, F = -1.5 };
        repeat 4 as i {
            node p = sort(src: ping(a, b), dst: pong(a, b)) over n;
            node q = sort(src: a, dst: b) grid [1, 2, 3];
        };
        "##,
    );
    let h = g.header.as_ref().expect("header");
    assert_eq!(h.name, "Everything");
    assert_eq!(h.attrs.len(), 2);
    assert!(matches!(h.vis, syn::Visibility::Restricted(_)));
    assert!(g.limits_native.is_some());
    assert_eq!(g.kernels.len(), 5);
    assert!(matches!(g.kernels[0].source, KernelSource::Literal(_)));
    assert!(matches!(g.kernels[1].source, KernelSource::Literal(_)));
    assert!(matches!(g.kernels[2].source, KernelSource::File(_)));
    assert!(matches!(g.kernels[3].source, KernelSource::Tokens(_)));
    assert_eq!(
        g.kernels[4]
            .entry
            .as_ref()
            .map(syn::LitStr::value)
            .as_deref(),
        Some("second")
    );
    let classes: Vec<BufferClass> = g.buffers.iter().map(|b| b.class).collect();
    assert_eq!(
        classes,
        [
            BufferClass::Input,
            BufferClass::InOut,
            BufferClass::Intermediate,
            BufferClass::Output,
            BufferClass::Uniform
        ]
    );
    assert_eq!(g.buffers[2].len.extent, ext(2, 1, 0));
    assert_eq!(g.buffers[3].len.extent, ext(1, 2, 1));
    assert_eq!(g.buffers[4].len.extent, Extent::constant(1));
    assert_eq!(g.items.len(), 5);
    let NodeItem::Node(n) = &g.items[1] else {
        panic!()
    };
    assert_eq!(
        n.label.as_ref().map(ToString::to_string).as_deref(),
        Some("second")
    );
    assert_eq!(n.kernel, "add");
    assert_eq!(n.args.len(), 3);
    assert!(matches!(n.size, SizeDecl::Over(e) if e.extent == ext(1, 2, 0)));
    let NodeItem::Node(n) = &g.items[2] else {
        panic!()
    };
    let SizeDecl::Grid(grid) = &n.size else {
        panic!()
    };
    assert_eq!(
        grid.map(|e| e.extent),
        [ext(1, 64, 0), Extent::constant(1), Extent::constant(1)]
    );
    let NodeItem::Node(n) = &g.items[3] else {
        panic!()
    };
    assert!(matches!(
        &n.args[0].target,
        BufferRef::Alternate { pong: false, .. }
    ));
    assert!(matches!(
        &n.args[1].target,
        BufferRef::Alternate { pong: true, .. }
    ));
    assert_eq!(n.overrides.len(), 3);
    let NodeItem::Repeat(r) = &g.items[4] else {
        panic!()
    };
    assert_eq!(
        (r.count, r.var.to_string().as_str(), r.nodes.len()),
        (4, "i", 2)
    );
}

#[test]
fn extents_normalise() {
    assert_eq!(extent("n"), Ok(Extent::N));
    assert_eq!(extent("7"), Ok(Extent::constant(7)));
    assert_eq!(extent("3 * n"), Ok(ext(3, 1, 0)));
    assert_eq!(extent("n * 3"), Ok(ext(3, 1, 0)));
    assert_eq!(extent("n / 64"), Ok(ext(1, 64, 0)));
    assert_eq!(extent("(2 * n) / 4"), Ok(ext(1, 2, 0)));
    assert_eq!(extent("2 * n / 4"), Ok(ext(1, 2, 0)));
    assert_eq!(extent("(n / 2) / 2"), Ok(ext(1, 4, 0)));
    assert_eq!(extent("n / 64 + 1"), Ok(ext(1, 64, 1)));
    assert_eq!(extent("1 + n"), Ok(ext(1, 1, 1)));
    assert_eq!(extent("3 * (n + 1)"), Ok(ext(3, 1, 3)));
    assert_eq!(extent("(n + 2) * 2 + 1"), Ok(ext(2, 1, 5)));
    assert_eq!(extent("10 / 4"), Ok(Extent::constant(3)));
    assert_eq!(extent("2 * 3 + 4"), Ok(Extent::constant(10)));
    assert_eq!(extent("0 * n"), Ok(Extent::constant(0)));
    assert_eq!(extent("n / 1"), Ok(Extent::N));
    assert_eq!(extent("256u32 * n"), Ok(ext(256, 1, 0)));
}

#[test]
fn bad_extents_say_what_is_accepted() {
    for (src, part) in [
        ("n - 1", "subtraction is not supported"),
        ("n * n", "`n * n` is not supported"),
        ("(n + 1) / 2", "cannot divide a sum"),
        ("(n / 2) * 3", "multiply before dividing"),
        ("m", "unknown size variable `m`"),
        ("n / 0", "division by zero"),
        ("n / n", "divided by a constant"),
        ("n + n", "both depend on `n`"),
        ("99999999999999999999", "too large"),
        ("18446744073709551615 * 2", "overflows"),
        ("18446744073709551615 + 1", "overflows"),
        ("n % 2", "`%` is not supported"),
        ("1.5", "expected a size"),
        ("n n", "unexpected token"),
        ("", "expected a length"),
        (
            "((((((((((((((((((((((((((((((((((n))))))))))))))))))))))))))))))))))",
            "nested too deeply",
        ),
    ] {
        let e = extent(src).expect_err(src);
        assert!(e.contains(part), "{src}: {e}");
        if !matches!(src, "" | "1.5" | "n n")
            && !part.contains("too large")
            && !part.contains("nested")
            && !part.contains("overflows")
            && !part.contains("zero")
        {
            assert!(e.contains("sizes are written as"), "{src}: {e}");
        }
    }
}

fn value(expr: &str, i: Option<i128>) -> Result<Value, String> {
    let src = format!("struct G; node k(a: b) over n with {{ V = {expr} }};");
    let (g, errors) = parse(&src);
    if let Some(e) = errors.first() {
        return Err(e.clone());
    }
    let Some(NodeItem::Node(n)) = g.items.first() else {
        return Err("no node".into());
    };
    let var = syn::Ident::new("i", proc_macro2::Span::call_site());
    n.overrides[0]
        .value
        .eval(i.map(|v| (&var, v)))
        .map_err(|e| e.to_string())
}

#[test]
fn override_values_evaluate() {
    assert_eq!(value("128", None), Ok(Value::Int(128)));
    assert_eq!(value("-3", None), Ok(Value::Int(-3)));
    assert_eq!(value("1.5", None), Ok(Value::Float(1.5)));
    assert_eq!(value("-0.25", None), Ok(Value::Float(-0.25)));
    assert_eq!(value("i * 8", Some(3)), Ok(Value::Int(24)));
    assert_eq!(value("(i + 1) % 2", Some(3)), Ok(Value::Int(0)));
    assert_eq!(value("2 + 3 * i", Some(2)), Ok(Value::Int(8)));
    assert_eq!(value("(2 + 3) * i", Some(2)), Ok(Value::Int(10)));
    assert_eq!(value("i / 2 - 1", Some(7)), Ok(Value::Int(2)));
    assert_eq!(value("-(i - 10)", Some(4)), Ok(Value::Int(6)));
    assert_eq!(value("true", None), Ok(Value::Bool(true)));
    assert_eq!(value("false", None), Ok(Value::Bool(false)));
    assert_eq!(
        value("1 << 2", None).map_err(|e| e.contains("`,` between overrides")),
        Err(true)
    );
}

#[test]
fn bad_override_values_are_errors() {
    for (expr, i, part) in [
        ("i", None, "only inside `repeat"),
        ("j", Some(1), "unknown variable `j`"),
        ("i / 0", Some(1), "division by zero"),
        ("i % 0", Some(1), "division by zero"),
        ("1.5 * i", Some(1), "integer-only"),
        ("true + i", Some(1), "integer-only"),
        ("-true", None, "cannot negate a bool"),
        (
            "170141183460469231731687303715884105727 + i",
            Some(1),
            "overflow",
        ),
        (
            "999999999999999999999999999999999999999999",
            None,
            "too large",
        ),
        ("\"x\"", None, "expected an override value"),
    ] {
        let e = value(expr, i).expect_err(expr);
        assert!(e.contains(part), "{expr}: {e}");
    }
}

#[test]
fn syntax_errors_are_all_reported_and_recovered_from() {
    let (g, errors) = parse(
        "pub struct G;
         kernel = \"x\";
         input x[n];
         bogus thing;
         output y n;
         node k(a: x) over n;
         uniform u[4];",
    );
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("expected the kernel's name"));
    assert!(errors[1].contains("unknown item `bogus`"));
    assert!(errors[1].contains("expected `kernel`, `input`, `inout`, `intermediate`, `output`, `append`, `uniform`, `sampler`, `node`, `repeat`, `module`, `limits`, `features`, `flags` or `fuse`"));
    assert!(errors[2].contains("expected the buffer's length"));
    assert!(errors[3].contains("holds exactly one value"));
    // What parsed is kept.
    assert_eq!(g.buffers.len(), 1);
    assert_eq!(g.items.len(), 1);
}

#[test]
fn malformed_items_say_what_was_expected() {
    syntax_error("input x[n];", "graph! starts with the type to generate");
    syntax_error(
        "pub struct G { x: u32 }",
        "expected `;` after the type name",
    );
    syntax_error("struct G; struct H;", "only one `struct`");
    syntax_error("struct G; limits fast;", "unknown limits mode `fast`");
    syntax_error("struct G; limits native; limits native;", "given twice");
    syntax_error("struct G; kernel k = 5;", "expected the kernel's WGSL");
    syntax_error(
        "struct G; kernel k = wgsl ( x );",
        "expected `{` after `wgsl`",
    );
    syntax_error("struct G; kernel k = file x;", "path as a string literal");
    syntax_error(
        "struct G; kernel k = \"\" main;",
        "or `;` after the kernel's source",
    );
    syntax_error(
        "struct G; kernel k = \"\" entry main;",
        "entry point's name as a string literal",
    );
    syntax_error("struct G; kernel k = \"\"", "expected `;`");
    syntax_error("struct G; node k over n;", "expected the node's bindings");
    syntax_error("struct G; node k(a b) over n;", "expected `:` after `a`");
    syntax_error(
        "struct G; node k(a: b c: d) over n;",
        "expected `,` between bindings",
    );
    syntax_error("struct G; node k(a: b);", "expected the node's size");
    syntax_error(
        "struct G; node k(a: b) under n;",
        "`over <invocations>` or `grid [x, y, z]`",
    );
    syntax_error("struct G; node k(a: b) grid [1, 2];", "exactly three");
    syntax_error("struct G; node k(a: b) grid 1;", "expected `[x, y, z]`");
    syntax_error("struct G; node k(a: b) over n using { };", "expected `with");
    syntax_error(
        "struct G; node k(a: b) over n with { X 1 };",
        "expected `=` after `X`",
    );
    syntax_error("struct G; node k(a: ping(x)) over n;", "expected `,`");
    syntax_error(
        "struct G; node k(a: ping(x, y, z)) over n;",
        "exactly two buffers",
    );
    syntax_error(
        "struct G; repeat 0 as i { node k(a: b) over n; }",
        "`repeat 0` runs nothing",
    );
    syntax_error(
        "struct G; repeat 99999999999999999999 as i { node k(a: b) over n; }",
        "repeat count too large",
    );
    syntax_error(
        "struct G; repeat 2 { node k(a: b) over n; }",
        "expected `as`",
    );
    syntax_error("struct G; repeat 2 as i { }", "empty `repeat` block");
    syntax_error(
        "struct G; repeat 2 as i { repeat 2 as j { } }",
        "cannot be nested",
    );
    syntax_error(
        "struct G; repeat 2 as i { input x[n]; }",
        "expected `node` inside `repeat`",
    );
    syntax_error(
        "struct G; #[inline] node k(a: b) over n;",
        "only doc comments",
    );
    syntax_error("", "empty graph");
    syntax_error("struct G; 42;", "expected `kernel`, `input`");
}

#[test]
fn repeat_bodies_report_every_bad_node() {
    let (_, errors) =
        parse("struct G; repeat 2 as i { node a(x) over n; node b(y: z); node c(p: q) over n; }");
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

#[test]
fn extent_display_reads_like_the_grammar() {
    assert_eq!(Written(Extent::N).to_string(), "n");
    assert_eq!(Written(ext(3, 1, 0)).to_string(), "3 * n");
    assert_eq!(Written(ext(1, 64, 1)).to_string(), "n / 64 + 1");
    assert_eq!(Written(ext(3, 2, 0)).to_string(), "3 * n / 2");
    assert_eq!(Written(Extent::constant(5)).to_string(), "5");
}

#[test]
fn data_dependent_grammar_parses() {
    let g = parse_ok(
        "struct G;
        input x[n];
        append hits[n / 4];
        append more[64] grow;
        node a = k(x: x, hits: hits) over n;
        node b = k(hits: hits) over count(hits);
        node c = k(args: x) grid indirect(x);
        repeat up to 10 as i until empty(ping(hits, more)) {
            node d = k(src: ping(hits, more), dst: pong(hits, more)) over count(ping(hits, more));
        }
        repeat up to 3 as j until zero(x) { node e = k(f: x) over n; }",
    );
    assert_eq!(g.buffers[1].class, BufferClass::Output);
    assert!(
        g.buffers[1]
            .append
            .as_ref()
            .is_some_and(|a| a.grow.is_none())
    );
    assert!(
        g.buffers[2]
            .append
            .as_ref()
            .is_some_and(|a| a.grow.is_some())
    );
    assert!(g.buffers[0].append.is_none());
    let NodeItem::Node(b) = &g.items[1] else {
        panic!("a node")
    };
    assert!(matches!(
        &b.size,
        SizeDecl::Device(crate::model::DeviceSize::Count(BufferRef::Name(h))) if h == "hits"
    ));
    let NodeItem::Node(c) = &g.items[2] else {
        panic!("a node")
    };
    assert!(matches!(
        &c.size,
        SizeDecl::Device(crate::model::DeviceSize::Indirect(_))
    ));
    let NodeItem::Repeat(r) = &g.items[3] else {
        panic!("a repeat")
    };
    assert_eq!(r.count, 10);
    assert!(
        r.until
            .as_ref()
            .is_some_and(|u| !u.zero && u.keyword == "empty")
    );
    let NodeItem::Repeat(r) = &g.items[4] else {
        panic!("a repeat")
    };
    assert!(r.until.as_ref().is_some_and(|u| u.zero));
}

#[test]
fn data_dependent_grammar_errors_say_what_to_write() {
    syntax_error(
        "struct G; repeat up 3 as i until empty(b) { node k(a: b) over n; }",
        "expected `to`",
    );
    syntax_error(
        "struct G; repeat up to 3 as i { node k(a: b) over n; }",
        "needs its stopping condition",
    );
    syntax_error(
        "struct G; repeat up to 3 as i until full(b) { node k(a: b) over n; }",
        "`until empty(b)`",
    );
    syntax_error(
        "struct G; repeat 3 as i until empty(b) { node k(a: b) over n; }",
        "`repeat up to K as i until",
    );
    syntax_error(
        "struct G; repeat up to 0 as i until empty(b) { node k(a: b) over n; }",
        "`repeat up to 0`",
    );
    syntax_error(
        "struct G; input x[n] grow;",
        "`grow` applies only to append buffers",
    );
    syntax_error(
        "struct G; node k(a: b) over count(b, c);",
        "takes one append buffer",
    );
}
