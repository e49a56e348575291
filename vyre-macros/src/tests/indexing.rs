//! Fusion sees what an index *is*: each idiom of the invocation's own
//! index counts as it, each look-alike does not (see
//! `transform/fuse/index.rs`), and chains written with them fuse.

use super::*;
use crate::transform::fuse::kernel_facts;

/// A kernel of workgroup size 256 with `params`, `extra` module-scope
/// text and `body`; whether every access to `dst` (written) and to `src`
/// (read) is at the own index, or why the kernel is not element-wise.
fn own(params: &str, extra: &str, body: &str) -> Result<(bool, bool), &'static str> {
    let src = format!(
        "@group(0) @binding(0) var<storage, read> src: array<u32>;
         @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
         {extra}
         @compute @workgroup_size(256)
         fn main({params}) {{ {body} }}"
    );
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let facts = kernel_facts(&module, &src, "main");
    let ew = facts.elementwise?;
    Ok((ew.storage["dst"].own_index, ew.storage["src"].own_index))
}

const GID: &str = "@builtin(global_invocation_id) g: vec3<u32>";
const GID_NWG: &str =
    "@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>";
const WID_LID: &str =
    "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>";
const WID_LID_NWG: &str = "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>";

#[track_caller]
fn assert_own(params: &str, extra: &str, body: &str) {
    assert_eq!(own(params, extra, body), Ok((true, true)), "{body}");
}

#[track_caller]
fn assert_not_own(params: &str, extra: &str, body: &str) {
    let (dst, _) = own(params, extra, body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert!(!dst, "counted as the own index: {extra} {body}");
}

#[test]
fn the_idioms_of_the_own_index() {
    // Spelled as `g.x`, and the fold-safe spelling.
    assert_own(GID, "", "dst[g.x] = src[g.x] + 1u;");
    assert_own(
        GID_NWG,
        "",
        "let i = g.x + g.y * nwg.x * 256u;
         if i >= arrayLength(&dst) { return; }
         dst[i] = src[i] * 3u;",
    );
    // From workgroup and local ids, with and without the folded rows.
    assert_own(
        WID_LID,
        "",
        "let i = wid.x * 256u + lid.x; dst[i] = src[i];",
    );
    assert_own(
        WID_LID_NWG,
        "",
        "let i = wid.x * 256u + lid.x + (wid.y * nwg.x) * 256u; dst[i] = src[i];",
    );
    // Operands in any order, a shift for the product, a named constant.
    assert_own(
        WID_LID,
        "",
        "dst[lid.x + 256u * wid.x] = src[(wid.x << 8u) + lid.x];",
    );
    assert_own(
        WID_LID,
        "const W: u32 = 256u;",
        "let w = wid.x * W; let i = w + lid.x; dst[i] = src[i];",
    );
    assert_own(
        "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32",
        "",
        "dst[wid.x * 256u + li] = src[wid.x * 256u + li];",
    );
    // Through a helper function, and an access inside one.
    assert_own(
        GID_NWG,
        "fn idx(g: vec3<u32>, n: vec3<u32>) -> u32 { return g.x + g.y * n.x * 256u; }",
        "let i = idx(g, nwg); dst[i] = src[i];",
    );
    assert_own(
        GID_NWG,
        "fn put(i: u32, v: u32) { dst[i] = v; }",
        "let i = g.x + g.y * nwg.x * 256u; put(i, src[i] + 1u);",
    );
    // `select` of a bounds check, a signed index, vector arithmetic, a
    // value cancelled out.
    assert_own(
        GID_NWG,
        "",
        "let i = g.x + g.y * nwg.x * 256u;
         let inside = i < arrayLength(&src);
         dst[i] = select(0u, src[i], inside);",
    );
    assert_own(GID, "", "let i = i32(g.x); dst[i] = src[i];");
    // A `var` assigned once, before every read of it.
    assert_own(
        GID_NWG,
        "",
        "var i = g.x + g.y * nwg.x * 256u;
         if i < arrayLength(&dst) { for (var k = 0u; k < 2u; k++) { dst[i] = src[i] + k; } }",
    );
    assert_own(
        GID,
        "",
        "let p = g + vec3<u32>(0u, 1u, 0u) - vec3(0u, 1u, 0u); dst[p.x] = src[p.xy.x];",
    );
    assert_own(GID, "", "let k = src[g.x] / 7u; dst[g.x + k - k] = 1u;");
}

#[test]
fn an_override_workgroup_size_is_a_symbol() {
    let src = "override WG: u32 = 64u;
        @group(0) @binding(0) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
            dst[g.x + g.y * nwg.x * WG] = 1u;
            dst[wid.x * 64u + lid.x] = 2u;
        }";
    let module = naga::front::wgsl::parse_str(src).expect("parses");
    let facts = kernel_facts(&module, src, "main");
    // `g.y * ..` is zero whatever WG is; `wid.x * 64u` is the own index
    // only if WG is 64, which is not known here.
    assert!(!facts.elementwise.expect("element-wise").storage["dst"].own_index);
    let ok = src.replace("dst[wid.x * 64u + lid.x] = 2u;", "");
    let module = naga::front::wgsl::parse_str(&ok).expect("parses");
    let facts = kernel_facts(&module, &ok, "main");
    assert!(facts.elementwise.expect("element-wise").storage["dst"].own_index);
}

#[test]
fn look_alikes_are_not_the_own_index() {
    // A stride, an offset, the wrong workgroup size, the rows alone.
    assert_not_own(GID, "", "dst[2u * g.x] = 1u;");
    assert_not_own(GID, "", "dst[g.x + 1u] = 1u;");
    assert_not_own(GID, "", "dst[g.x - 1u] = 1u;");
    assert_not_own(WID_LID, "", "dst[wid.x * 128u + lid.x] = 1u;");
    assert_not_own(WID_LID, "", "dst[(wid.x << 7u) + lid.x] = 1u;");
    assert_not_own(GID_NWG, "", "dst[g.y * nwg.x * 256u] = 1u;");
    assert_not_own(WID_LID, "", "dst[wid.x] = 1u;");
    assert_not_own(WID_LID, "", "dst[lid.x] = 1u;");
    assert_not_own(GID, "", "dst[g.x / 1u] = 1u;");
    // A `var` assigned twice, or read before its one assignment.
    assert_not_own(GID, "", "var i = g.x; i = i + 1u; dst[i] = 1u;");
    assert_not_own(GID, "", "var i = g.x; if g.x > 3u { i = 0u; } dst[i] = 1u;");
    assert_not_own(
        GID,
        "",
        "var i: u32; loop { dst[i] = 1u; i = g.x; if i > 0u { break; } }",
    );
    // Mixing indexes: one access off the own index is enough.
    assert_not_own(GID, "", "dst[g.x] = 1u; dst[0u] = 2u;");
    assert_not_own(
        "@builtin(global_invocation_id) g: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>",
        "",
        "dst[g.x + wid.x] = 1u;",
    );
    // A helper that does not always return the own index, and one whose
    // opaque parts differ between two calls.
    assert_not_own(
        GID,
        "fn idx(g: vec3<u32>) -> u32 { if g.x > 5u { return g.x; } return g.x + 1u; }",
        "dst[idx(g)] = 1u;",
    );
    assert_not_own(
        GID,
        "fn h(a: u32) -> u32 { return a / 2u; }",
        "dst[g.x + h(g.x) - h(g.x + 2u)] = 1u;",
    );
    // A clamped index: out-of-range invocations would write element 0.
    assert_not_own(
        GID,
        "",
        "let i = g.x; dst[select(i, 0u, i >= arrayLength(&dst))] = 1u;",
    );
    // A read elsewhere leaves the kernel element-wise, that buffer read-only.
    assert_eq!(own(GID, "", "dst[g.x] = src[g.x + 1u];"), Ok((true, false)));
}

#[test]
fn other_parameters_are_not_element_wise() {
    assert!(
        own(
            "@builtin(subgroup_invocation_id) s: u32",
            "",
            "dst[s] = 1u;"
        )
        .is_err()
    );
    assert!(own("", "", "dst[0] = 1u;").is_err());
}

/// Two-node chain of kernel `k` (module text), `x -> t -> y`.
fn chain(k: &str) -> String {
    format!(
        r#"struct G;
        kernel k = "{k}";
        input x[n]; intermediate t[n]; output y[n];
        node a = k(src: x, dst: t) over n;
        node b = k(src: t, dst: y) over n;"#
    )
}

#[test]
fn chains_written_with_position_builtins_fuse() {
    let fold_safe = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            let i = g.x + g.y * nwg.x * 256u;
            if i >= arrayLength(&dst) { return; }
            dst[i] = src[i] * 3u + 1u;
        }";
    let ts = expand(&chain(fold_safe));
    let out = ts.to_string();
    assert!(compile_errors(&ts).is_empty(), "{out}");
    assert_eq!(super::fuse::groups(&out), vec![vec![0, 1]], "{out}");
    let sources = super::fuse::fused_sources(&ts);
    let s = &sources[0];
    // The members get the folded grid's workgroup count, in both entries.
    assert!(s.contains("vyre_s0_main(vyre_gid, vyre_ngrid);"), "{s}");
    assert!(
        s.contains("let vyre_ngrid = vec3<u32>(vyre_nwg.x * vyre_nwg.y * vyre_nwg.z, 1u, 1u);"),
        "{s}"
    );
    assert!(
        s.contains("let vyre_ngrid = vec3<u32>(vyre_total / 256u, 1u, 1u);"),
        "{s}"
    );
    assert!(
        s.contains("var<private> vyre_b1: u32;"),
        "t in a register: {s}"
    );

    let wid_lid = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
            let i = wid.x * 64u + lid.x;
            if i < arrayLength(&dst) { dst[i] = src[i] ^ 5u; }
        }";
    let ts = expand(&chain(wid_lid));
    let out = ts.to_string();
    assert_eq!(super::fuse::groups(&out), vec![vec![0, 1]], "{out}");
    let s = &super::fuse::fused_sources(&ts)[0];
    assert!(s.contains("vyre_s1_main(vyre_lid, vyre_wid);"), "{s}");
    assert!(
        s.contains("let vyre_wid = vec3<u32>(vyre_i / 64u, 0u, 0u);"),
        "{s}"
    );

    // The same chain with a look-alike index stays unfused.
    for wrong in [
        "wid.x * 32u + lid.x",
        "wid.x * 64u + lid.x + 1u",
        "2u * (wid.x * 64u + lid.x)",
    ] {
        let k = wid_lid.replace("wid.x * 64u + lid.x", wrong);
        let out = assert_ok(&chain(&k));
        assert!(super::fuse::groups(&out).is_empty(), "{wrong}: {out}");
    }
}

#[test]
fn nested_helpers_are_followed_until_too_many() {
    // h_k(x) = h_{k-1}(x) + h_{k-1}(x) - x = x: 2^k call sites to follow.
    let helpers = |levels: usize| {
        let mut s = String::from("fn h0(x: u32) -> u32 { return x; }\n");
        for k in 1..=levels {
            s.push_str(&format!(
                "fn h{k}(x: u32) -> u32 {{ return h{j}(x) + h{j}(x) - x; }}\n",
                j = k - 1
            ));
        }
        s
    };
    assert_eq!(
        own(GID, &helpers(4), "dst[h4(g.x)] = src[h4(g.x)];"),
        Ok((true, true))
    );
    // Past the limit the kernel stays element-wise, its buffers read-only.
    assert_eq!(
        own(GID, &helpers(9), "dst[h9(g.x)] = src[g.x];"),
        Ok((false, false))
    );
}
