//! Stage `fold.rs`: which kernels are wrapped, the text transform, and the
//! graph's kernels and nodes after it.

use naga::BuiltIn;

use super::*;
use crate::analyse;
use crate::check::{load, reflect, validate};
use crate::diag::Diagnostics;
use crate::model::GraphAnalysis;
use crate::parse as input;
use crate::transform::fold::{self, Positions};
use vyre_analysis::spec::GridFold as Fold;

/// The module naga makes of `src` (panics when it is invalid).
fn module(src: &str) -> naga::Module {
    validate::revalidate(src, crate::model::features::WEBGPU)
        .unwrap_or_else(|| panic!("invalid WGSL:\n{src}"))
}

fn positions(src: &str, entry: &str) -> Positions {
    fold::module_facts(&module(src))
        .positions(entry)
        .cloned()
        .unwrap_or_else(|| panic!("no entry {entry}"))
}

/// Wraps `entry` of `src` with the builtins naga finds, checks that the
/// result validates, that the user's text kept every byte offset and line,
/// and that the new entry point is the only one replacing `entry`.
#[track_caller]
fn wrapped(src: &str, entry: &str) -> fold::Wrapped {
    let Positions::Builtins(builtins) = positions(src, entry) else {
        panic!("{entry} is not wrappable: {:?}", positions(src, entry));
    };
    let w = fold::wrap(src, entry, &builtins).unwrap_or_else(|| panic!("not wrapped:\n{src}"));
    let m = module(&w.source);
    let names: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert!(
        names.contains(&w.entry_point.as_str()),
        "{names:?}\n{}",
        w.source
    );
    assert!(!names.contains(&entry), "{names:?}\n{}", w.source);
    // Same bytes where not blanked, same lines.
    let kept = w.source.get(..src.len()).expect("prefix");
    assert_eq!(kept.lines().count(), src.lines().count());
    for (a, b) in kept.chars().zip(src.chars()) {
        assert!(a == b || a == ' ', "{a:?} vs {b:?}\n{}", w.source);
    }
    w
}

/// The wrapper text alone (what was appended).
fn appended<'a>(w: &'a fold::Wrapped, src: &str) -> &'a str {
    w.source.get(src.len()..).expect("appended")
}

const BUFFER: &str = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n";

#[test]
fn wraps_global_invocation_id() {
    let src = format!(
        "{BUFFER}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{\n    if g.x < arrayLength(&out) {{ out[g.x] = g.x; }}\n}}\n"
    );
    let w = wrapped(&src, "main");
    assert_eq!(w.entry_point, "vyre_linear_main");
    let tail = appended(&w, &src);
    assert!(tail.contains("@compute @workgroup_size(64)"), "{tail}");
    assert!(
        tail.contains("main(vec3<u32>(vyre_lin * u32((64)) + vyre_l.x, vyre_l.y, vyre_l.z));"),
        "{tail}"
    );
    assert!(
        tail.contains(
            "let vyre_lin = vyre_wg.x + vyre_nwg.x * (vyre_wg.y + vyre_nwg.y * vyre_wg.z);"
        ),
        "{tail}"
    );
    // The user's entry lost its attributes and is an ordinary function.
    let head = w.source.get(..src.len()).expect("head");
    assert!(
        !head.contains("@compute") && !head.contains("@builtin"),
        "{head}"
    );
    let blanked = " ".repeat("@builtin(global_invocation_id)".len());
    assert!(
        head.contains(&format!("fn main({blanked} g: vec3<u32>)")),
        "{head}"
    );
}

#[test]
fn skips_comments_and_nested_block_comments() {
    let src = format!(
        "{BUFFER}// fn main(@builtin(global_invocation_id) x: vec3<u32>) {{}}\n\
         /* @compute @workgroup_size(1) fn main() {{}} /* nested fn main */ still a comment */\n\
         @compute /* between */ @workgroup_size(64 /* x */, 1) // trailing\n\
         fn /* odd */ main(@builtin(global_invocation_id) /* id */ g: vec3<u32>) {{ out[g.x] = 1u; }}\n"
    );
    let w = wrapped(&src, "main");
    // The commented-out text survives untouched.
    assert!(
        w.source
            .contains("// fn main(@builtin(global_invocation_id) x: vec3<u32>)")
    );
    assert!(
        w.source
            .contains("/* @compute @workgroup_size(1) fn main() {} /* nested fn main */")
    );
    assert!(appended(&w, &src).contains("@workgroup_size(64 /* x */, 1)"));
    assert!(appended(&w, &src).contains("u32((64 /* x */))"));
}

#[test]
fn odd_attribute_spacing_and_order() {
    let src = format!(
        "{BUFFER}@workgroup_size( 64 ,\n  1 )\n@ compute\nfn main(\n    @builtin( global_invocation_id )\n    g: vec3<u32>,\n    @builtin(local_invocation_index) li: u32,\n) {{ out[g.x] = li; }}\n"
    );
    let w = wrapped(&src, "main");
    let tail = appended(&w, &src);
    assert!(tail.contains("@workgroup_size( 64 ,\n  1 )"), "{tail}");
    assert!(
        tail.contains("@builtin(local_invocation_index) vyre_b0: u32"),
        "{tail}"
    );
    assert!(
        tail.contains("+ vyre_l.x, vyre_l.y, vyre_l.z), vyre_b0);"),
        "{tail}"
    );
}

#[test]
fn override_workgroup_size_is_copied_verbatim() {
    let src = format!(
        "{BUFFER}override WG: u32 = 64u;\n@compute @workgroup_size(WG * 2u)\nfn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {{ out[g.x] = n.x + wg.x; }}\n"
    );
    let w = wrapped(&src, "main");
    let tail = appended(&w, &src);
    assert!(tail.contains("@compute @workgroup_size(WG * 2u)"), "{tail}");
    assert!(
        tail.contains("vyre_lin * u32((WG * 2u)) + vyre_l.x"),
        "{tail}"
    );
    assert!(
        tail.contains(
            "vec3<u32>(vyre_nwg.x * vyre_nwg.y * vyre_nwg.z, 1u, 1u), vec3<u32>(vyre_lin, 0u, 0u));"
        ),
        "{tail}"
    );
    let m = module(&w.source);
    let ep = m
        .entry_points
        .iter()
        .find(|e| e.name == w.entry_point)
        .expect("entry");
    assert!(ep.workgroup_size_overrides.is_some());
}

#[test]
fn two_entry_points_wrap_only_the_chosen_one() {
    let src = format!(
        "{BUFFER}fn helper(i: u32) -> u32 {{ return i * 2u; }}\n\
         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ out[g.x] = helper(g.x); }}\n\
         @compute @workgroup_size(32, 2) fn pairs(@builtin(local_invocation_id) l: vec3<u32>, @builtin(global_invocation_id) g: vec3<u32>) {{ out[g.x] = helper(l.y); }}\n"
    );
    let w = wrapped(&src, "pairs");
    assert_eq!(w.entry_point, "vyre_linear_pairs");
    let m = module(&w.source);
    let names: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["main", "vyre_linear_pairs"]);
    let tail = appended(&w, &src);
    assert!(
        tail.contains("pairs(vyre_l, vec3<u32>(vyre_lin * u32((32)) + vyre_l.x"),
        "{tail}"
    );
    assert!(tail.contains("@workgroup_size(32, 2)"), "{tail}");
}

#[test]
fn names_avoid_the_users_identifiers() {
    let src = format!(
        "{BUFFER}@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ let vyre_lin = g.x; out[vyre_lin] = 1u; }}\n"
    );
    let w = wrapped(&src, "main");
    assert_eq!(w.entry_point, "vyre1_linear_main");
    assert!(appended(&w, &src).contains("let vyre1_lin ="));
}

#[test]
fn which_entry_points_need_wrapping() {
    let unaffected = format!(
        "{BUFFER}@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32, @builtin(local_invocation_id) l: vec3<u32>) {{ out[i] = l.x; }}\n"
    );
    assert_eq!(positions(&unaffected, "main"), Positions::Unaffected);
    let structured = format!(
        "{BUFFER}struct In {{ @builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) i: u32 }}\n\
         @compute @workgroup_size(64) fn main(inp: In) {{ out[inp.g.x] = inp.i; }}\n"
    );
    assert_eq!(positions(&structured, "main"), Positions::Unwrappable);
    let direct = format!(
        "{BUFFER}@compute @workgroup_size(64) fn main(@builtin(num_workgroups) n: vec3<u32>) {{ out[0] = n.x; }}\n"
    );
    assert_eq!(
        positions(&direct, "main"),
        Positions::Builtins(vec![BuiltIn::NumWorkGroups])
    );
}

#[test]
fn text_transform_refuses_what_it_cannot_find() {
    let b = [BuiltIn::GlobalInvocationId];
    // No such function; an unterminated comment; builtins not matching.
    assert!(fold::wrap("fn other() {}", "main", &b).is_none());
    assert!(
        fold::wrap(
            "@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3<u32>) {} /*",
            "main",
            &b
        )
        .is_none()
    );
    assert!(
        fold::wrap(
            "@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3<u32>) {}",
            "main",
            &[]
        )
        .is_none()
    );
    // No workgroup size attribute, or an empty first argument.
    assert!(
        fold::wrap(
            "@compute fn main(@builtin(global_invocation_id) g: vec3<u32>) {}",
            "main",
            &b
        )
        .is_none()
    );
    assert!(
        fold::wrap(
            "@compute @workgroup_size(, 1) fn main(@builtin(global_invocation_id) g: vec3<u32>) {}",
            "main",
            &b
        )
        .is_none()
    );
}

// --- whole graphs ------------------------------------------------------------

/// The front end up to and including the fold stage.
fn analysed(src: &str) -> GraphAnalysis {
    let mut diag = Diagnostics::new();
    let graph = input::parse(tokens(src), &mut diag);
    let caps = crate::model::features::capabilities(&graph.features);
    let mut facts = Vec::new();
    let interfaces: Vec<_> = load::load_all(&graph.kernels, &mut diag)
        .into_iter()
        .map(|k| {
            let v = validate::validate(k.expect("loads"), caps).expect("validates");
            facts.push(Some(fold::module_facts(&v.module)));
            Some(reflect::reflect(v).unwrap_or_else(|e| panic!("{e:?}")))
        })
        .collect();
    let mut a = analyse::analyse(graph, &interfaces, &[], &mut diag).expect("analyses");
    assert!(diag.is_empty(), "{:?}", diag.messages());
    fold::fold(&mut a, &facts, caps);
    a
}

fn graph(kernel: &str, nodes: &str) -> String {
    format!(
        "pub struct G; kernel k = \"{}\"; input x[n]; output out[n]; {nodes}",
        kernel.replace('"', "\\\"")
    )
}

const COPY: &str = "@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
override WG: u32 = 64u;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if g.x < arrayLength(&out) { out[g.x] = x[g.x]; } }";

#[test]
fn over_kernels_are_wrapped_and_linear() {
    let a = analysed(&graph(
        COPY,
        "node k(x: x, out: out) over n with { WG = 128 };",
    ));
    let [k] = a.kernels.as_slice() else {
        panic!("{} kernels", a.kernels.len())
    };
    assert_eq!(k.fold, Fold::Linear);
    assert_eq!(k.entry_point, "vyre_linear_main");
    // The user's text, its entry's attributes blanked, then the wrapper.
    let user = COPY
        .replace("@compute @workgroup_size(WG)", &" ".repeat(28))
        .replace("@builtin(global_invocation_id)", &" ".repeat(30));
    assert!(k.source.starts_with(&user), "{}", k.source);
    assert!(
        k.source
            .contains("@compute @workgroup_size(WG)\nfn vyre_linear_main("),
        "{}",
        k.source
    );
    // The node's override still sets the size the wrapper uses.
    assert_eq!(
        a.nodes.first().and_then(|n| n.workgroup_size),
        Some([128, 1, 1])
    );
    assert_eq!(
        a.nodes.first().map(|n| n.overrides.clone()),
        Some(vec![("WG".to_owned(), 128.0)])
    );
}

#[test]
fn kernels_without_positions_are_linear_and_unchanged() {
    let src = COPY
        .replace(
            "@builtin(global_invocation_id) g: vec3<u32>",
            "@builtin(local_invocation_index) i: u32",
        )
        .replace("g.x", "i");
    let a = analysed(&graph(&src, "node k(x: x, out: out) over n;"));
    let k = a.kernels.first().expect("kernel");
    assert_eq!(
        (k.fold, k.entry_point.as_str(), k.source.as_str()),
        (Fold::Linear, "main", src.as_str())
    );
}

#[test]
fn struct_arguments_fall_back_to_x_only() {
    let src = COPY
        .replace(
            "fn main(@builtin(global_invocation_id) g: vec3<u32>)",
            "fn main(inp: In)",
        )
        .replace("g.x", "inp.g.x")
        + "\nstruct In { @builtin(global_invocation_id) g: vec3<u32> }";
    let a = analysed(&graph(&src, "node k(x: x, out: out) over n;"));
    let k = a.kernels.first().expect("kernel");
    assert_eq!(
        (k.fold, k.entry_point.as_str(), k.source.as_str()),
        (Fold::XOnly, "main", src.as_str())
    );
    // ... and the expansion says so, without any error.
    let out = assert_ok(&graph(&src, "node k(x: x, out: out) over n;"));
    assert!(out.contains("GridFold :: XOnly"), "{out}");
}

#[test]
fn grid_only_kernels_are_left_alone() {
    let a = analysed(&graph(COPY, "node k(x: x, out: out) grid [n / 64, 1, 1];"));
    let k = a.kernels.first().expect("kernel");
    assert_eq!(
        (a.kernels.len(), k.fold, k.entry_point.as_str()),
        (1, Fold::XOnly, "main")
    );
}

#[test]
fn over_and_grid_nodes_of_one_kernel_get_two_specs() {
    let nodes = "node a = k(x: x, out: out) grid [n / 64, 1, 1];
                 node b = k(x: x, out: out) over n with { WG = 32 };
                 node c = k(x: x, out: out) grid [n / 64, 1, 1];";
    let a = analysed(&graph(COPY, nodes));
    let kernels: Vec<(&str, &str, Fold)> = a
        .kernels
        .iter()
        .map(|k| (k.label.as_str(), k.entry_point.as_str(), k.fold))
        .collect();
    assert_eq!(
        kernels,
        [
            ("k", "main", Fold::XOnly),
            ("k", "vyre_linear_main", Fold::Linear)
        ]
    );
    let nodes: Vec<(&str, usize)> = a
        .nodes
        .iter()
        .map(|n| (n.label.as_str(), n.kernel))
        .collect();
    assert_eq!(nodes, [("a", 0), ("b", 1), ("c", 0)]);
    let out = assert_ok(&graph(COPY, nodes_src()));
    assert!(
        out.contains("GridFold :: XOnly") && out.contains("GridFold :: Linear"),
        "{out}"
    );
    assert!(out.contains("1 kernel(s)"), "{out}");
}

fn nodes_src() -> &'static str {
    "node a = k(x: x, out: out) grid [n / 64, 1, 1]; node b = k(x: x, out: out) over n;"
}

#[test]
fn invalid_wrapping_falls_back_to_x_only() {
    // The first workgroup size argument holds a comma inside a template
    // list: the text transform takes `array<u32` for it, naga rejects the
    // wrapped module, and the kernel stays as written.
    let src = COPY.replace(
        "@workgroup_size(WG)",
        "@workgroup_size(array<u32, 2>(64u, 1u)[0])",
    );
    if validate::revalidate(&src, crate::model::features::WEBGPU).is_none() {
        // naga does not take that expression; use another that it takes
        // but the wrapper cannot copy.
        panic!("test kernel invalid:\n{src}");
    }
    let a = analysed(&graph(&src, "node k(x: x, out: out) over n;"));
    let k = a.kernels.first().expect("kernel");
    assert_eq!(
        (k.fold, k.entry_point.as_str(), k.source.as_str()),
        (Fold::XOnly, "main", src.as_str())
    );
}

#[test]
fn barriers_stay_valid_in_the_wrapped_function() {
    // A workgroup reduction: barriers in a loop and under a condition on
    // `workgroup_id` (uniform per workgroup, also after wrapping).
    let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> part: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    part[l.x] = wg.x + l.x;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s / 2u) {
        if l.x < s { part[l.x] += part[l.x + s]; }
        workgroupBarrier();
    }
    if wg.x < arrayLength(&out) { workgroupBarrier(); }
    if l.x == 0u { out[wg.x] = part[0]; }
}
";
    let w = wrapped(src, "main");
    assert!(appended(&w, src).contains("main(vec3<u32>(vyre_lin, 0u, 0u), vyre_l);"));
}
