//! Fusion: which groups form, that every fused module validates, and that
//! fusion never causes an error.

use super::*;

/// The member lists of every fused group in an expansion.
pub fn groups(expansion: &str) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut rest = expansion;
    while let Some(at) = rest.find("FusedGroup {") {
        rest = &rest[at..];
        let open = rest.find('[').expect("members");
        let close = rest.find(']').expect("members");
        let members = rest[open + 1..close]
            .split(',')
            .filter_map(|s| s.trim().trim_end_matches("usize").trim().parse().ok())
            .collect();
        out.push(members);
        rest = &rest[close..];
    }
    out
}

#[test]
fn saxpy_chain_fuses() {
    let out = assert_ok(&saxpy(SAXPY_NODES));
    assert_eq!(groups(&out), vec![vec![0, 1]], "{out}");
}

/// Every fused kernel's WGSL in an expansion.
pub fn fused_sources(ts: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for t in ts.clone() {
        match t {
            TokenTree::Literal(l) => {
                if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string())
                    && s.value().starts_with("// Fused by graph!")
                {
                    out.push(s.value());
                }
            }
            TokenTree::Group(g) => out.extend(fused_sources(&g.stream())),
            _ => {}
        }
    }
    out
}

#[test]
fn fused_kernels_are_composed_text_with_one_entry() {
    let ts = expand(&saxpy(SAXPY_NODES));
    let sources = fused_sources(&ts);
    assert_eq!(sources.len(), 1);
    let s = &sources[0];
    // `t` is written by `scale` and read only by `add`: an intermediate in a
    // register, not a buffer; `out`, read back, stays one shared binding.
    assert_eq!(s.matches("var<private> vyre_b3: f32;").count(), 1, "{s}");
    assert!(!s.contains("read_write> vyre_b3"), "{s}");
    assert!(!s.contains("vyre_b3["), "{s}");
    assert_eq!(
        s.matches("var<storage, read_write> vyre_b4").count(),
        1,
        "{s}"
    );
    assert!(s.contains("fn vyre_s0_main("));
    assert!(s.contains("fn vyre_s1_main("));
    assert!(s.contains("struct vyre_s1_Params { a: f32, b: u32 }"));
    assert!(
        s.contains("vyre_s1_params.a"),
        "members after `.` keep their names"
    );
    // The plain entry point and its grid-stride loop, which resets the
    // register before each element and reads its end from group 1.
    assert_eq!(s.matches("@compute").count(), 2, "{s}");
    assert!(s.contains("fn vyre_fused_stride("), "{s}");
    assert!(s.contains("vyre_b3 = f32();"), "{s}");
    assert!(
        s.contains("@group(1) @binding(0) var<uniform> vyre_extent: vec4<u32>;"),
        "{s}"
    );
    let out = assert_ok(&saxpy(SAXPY_NODES));
    assert!(
        out.contains("grid_stride_entry : :: core :: option :: Option :: Some (:: vyre_graph :: __private :: Cow :: Borrowed (\"vyre_fused_stride\"))"),
        "{out}"
    );
}

#[test]
fn a_member_with_private_variables_gets_no_loop() {
    let src = r#"struct G;
        kernel a = "
            var<private> seen: u32;
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { seen += 1u; dst[g.x] = src[g.x] + seen; }
        ";
        kernel b = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x] * 2u; }
        ";
        input x[n]; intermediate t[n]; output y[n];
        node a(src: x, dst: t) over n;
        node b(src: t, dst: y) over n;"#;
    let ts = expand(src);
    let out = ts.to_string();
    assert_eq!(groups(&out), vec![vec![0, 1]], "{out}");
    assert!(
        out.contains("grid_stride_entry : :: core :: option :: Option :: None"),
        "{out}"
    );
    assert_eq!(fused_sources(&ts)[0].matches("@compute").count(), 1);
}

#[test]
fn fuse_off_and_unfused_nodes_are_respected() {
    let off = assert_ok(&saxpy(&format!("fuse off; {SAXPY_NODES}")));
    assert!(groups(&off).is_empty());
    let marked = assert_ok(&saxpy(
        "node scale(src: x, dst: t) over n unfused;
         node add(a: t, b: y, params: params, out: out) over n;",
    ));
    assert!(groups(&marked).is_empty());
    assert_error(&saxpy("fuse on;"), &["unknown fuse mode `on`"]);
}

#[test]
fn a_group_whose_kernel_fails_validation_stays_unfused() {
    // A composed module naga rejects must fall back to unfused nodes, never
    // error. Composition of valid kernels is built not to produce one, so
    // naga's verdict on this graph's fused text is forced to "invalid".
    let src = |k2: &str| {
        format!(
            r#"struct G;
            kernel a = "
                @group(0) @binding(0) var<storage, read> src: array<u32>;
                @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ dst[g.x] = src[g.x] + 1u; }}
            ";
            kernel b = "{k2}";
            input x[n]; intermediate t[n]; output y[n];
            node a(src: x, dst: t) over n;
            node b(src: t, dst: y) over n;"#
        )
    };
    let good = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x] * 2u; }";
    assert_eq!(groups(&assert_ok(&src(good))), vec![vec![0, 1]]);
    let mut verdicts = std::collections::HashMap::new();
    let ts = expand(&src(good));
    let sources = fused_sources(&ts);
    assert!(sources[0].contains("var<private>"), "t lives in a register");
    assert!(sources[0].contains("_stride("), "with a loop entry point");
    // Rejected one after the other: with `t` in a register and the loop,
    // in a register without the loop, in memory with the loop, in memory
    // without it; then the nodes stay unfused.
    let mut rejected = |expect_private: bool, expect_loop: bool| {
        let ts = crate::transform::fuse::with_verdicts(verdicts.clone(), || expand(&src(good)));
        let sources = fused_sources(&ts);
        assert_eq!(sources.len(), 1);
        let s = &sources[0];
        assert_eq!(s.contains("var<private>"), expect_private, "{s}");
        assert_eq!(s.contains("_stride("), expect_loop, "{s}");
        verdicts.insert(s.clone(), false);
    };
    rejected(true, true);
    rejected(true, false);
    rejected(false, true);
    rejected(false, false);
    let forced = crate::transform::fuse::with_verdicts(verdicts, || assert_ok(&src(good)));
    assert!(groups(&forced).is_empty());
}

/// A small deterministic generator (no dependency).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

#[test]
fn random_chains_form_valid_groups() {
    let types = ["u32", "i32", "f32"];
    let ops = |ty: &str| match ty {
        "f32" => ["v * 1.5", "v + 0.25", "v - 3.0", "abs(v)"],
        "i32" => ["v * 3", "v + 7", "v ^ 5", "-v"],
        _ => ["v * 3u", "v + 7u", "v ^ 0x55u", "v >> 1u"],
    };
    let mut rng = Lcg(0x5eed);
    for case in 0..40 {
        let ty = types[rng.below(3)];
        let steps = 2 + rng.below(7);
        let buffers = 2 + rng.below(3);
        let mut src = format!("struct G{case};\n");
        for k in 0..steps {
            let op = ops(ty)[rng.below(4)];
            // Some kernels read a neighbour: never fusable after a writer.
            let index = if rng.below(5) == 0 {
                "(g.x + 1u) % arrayLength(&src)"
            } else {
                "g.x"
            };
            src.push_str(&format!(
                "kernel k{k} = \"
                    @group(0) @binding(0) var<storage, read> src: array<{ty}>;
                    @group(0) @binding(1) var<storage, read_write> dst: array<{ty}>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
                        if g.x < arrayLength(&dst) {{ let v = src[{index}]; dst[g.x] = {op}; }}
                    }}\";\n"
            ));
        }
        let mut nodes = String::new();
        let mut last = "x".to_owned();
        for k in 0..steps {
            let dst = if k + 1 == steps {
                "y".to_owned()
            } else {
                // Random reuse of buffers, never the one just read.
                let mut d = format!("t{}", rng.below(buffers));
                if d == last {
                    d = format!(
                        "t{}",
                        (rng.below(buffers - 1) + 1 + d[1..].parse::<usize>().unwrap()) % buffers
                    );
                }
                d
            };
            nodes.push_str(&format!("node k{k}(src: {last}, dst: {dst}) over n;\n"));
            last = dst;
        }
        src.push_str("input x[n];\noutput y[n];\n");
        for b in 0..buffers {
            if nodes.contains(&format!(": t{b}")) {
                src.push_str(&format!("intermediate t{b}[n];\n"));
            }
        }
        src.push_str(&nodes);
        let ts = expand(&src);
        let errors = compile_errors(&ts);
        assert!(errors.is_empty(), "case {case}: {errors:?}\n{src}");
        let text = ts.to_string();
        let groups = groups(&text);
        // Each group: at least two consecutive nodes, no node twice; one
        // fused kernel (naga-validated) per group.
        let mut seen = vec![false; steps];
        for g in &groups {
            assert!(
                g.len() >= 2 && g.windows(2).all(|w| w[1] == w[0] + 1),
                "{g:?}"
            );
            for &n in g {
                assert!(!std::mem::replace(&mut seen[n], true), "node {n} twice");
            }
        }
        assert_eq!(fused_sources(&ts).len(), groups.len(), "case {case}");
        // A node reading a neighbour never joins the node before it when
        // that node writes what it reads.
        for g in &groups {
            for w in g.windows(2) {
                let reader = src.split("kernel ").nth(w[1] + 1).unwrap();
                assert!(!reader.contains("(g.x + 1u)"), "case {case}: {g:?}\n{src}");
            }
        }
    }
}

/// The schedule's device slot of each buffer in an expansion.
fn slots(expansion: &str) -> Vec<usize> {
    let at = expansion.find("slots :").expect("slots");
    let rest = &expansion[at..];
    let open = rest.find('[').expect("slots");
    let close = rest.find(']').expect("slots");
    rest[open + 1..close]
        .split(',')
        .filter_map(|s| s.trim().trim_end_matches("usize").trim().parse().ok())
        .collect()
}

#[test]
fn intermediates_in_registers_may_share_a_slot_with_the_group_s_buffers() {
    // t2 (written by b, read by c) and t4 (c's and d's intermediate)
    // share a slot: t2 is dead once c has read it. t4 lives in a register
    // inside c..e and is never allocated, so c, d and e fuse into one group.
    // `b` writes its neighbour's element: never in a group with what
    // follows it.
    let kernel = |name: &str, index: &str| {
        format!(
            r#"kernel {name} = "
                @group(0) @binding(0) var<storage, read> src: array<u32>;
                @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
                    if g.x < arrayLength(&dst) {{ dst[{index}] = src[g.x] * 3u + 1u; }}
                }}";
            "#
        )
    };
    let src = format!(
        "struct G;
        {}{}{}{}{}
        input x[n]; intermediate t1[n]; intermediate t2[n]; intermediate t3[n];
        intermediate t4[n]; output y[n];
        node a(src: x, dst: t1) over n;
        node b(src: t1, dst: t2) over n;
        node c(src: t2, dst: t3) over n;
        node d(src: t3, dst: t4) over n;
        node e(src: t4, dst: y) over n;",
        kernel("a", "g.x"),
        kernel("b", "(g.x + 1u) % arrayLength(&src)"),
        kernel("c", "g.x"),
        kernel("d", "g.x"),
        kernel("e", "g.x"),
    );
    let ts = expand(&src);
    let out = ts.to_string();
    assert!(compile_errors(&ts).is_empty(), "{out}");
    // Buffers: x, t1, t2, t3, t4, y.
    let s = slots(&out);
    assert_eq!(s.len(), 6, "{out}");
    assert_eq!(s[2], s[4], "t2 and t4 alias: {s:?}");
    assert_eq!(s[1], s[3], "t1 and t3 alias: {s:?}");
    assert_eq!(groups(&out), vec![vec![2, 3, 4]], "{out}");
    let sources = fused_sources(&ts);
    assert_eq!(sources.len(), 1);
    // t3 (buffer 3) and t4 (buffer 4) in registers; t2 and y bound.
    assert!(
        !sources[0].contains("var<private> vyre_b2"),
        "{}",
        sources[0]
    );
    assert!(
        sources[0].contains("var<private> vyre_b3: u32;"),
        "{}",
        sources[0]
    );
    assert!(
        sources[0].contains("var<private> vyre_b4: u32;"),
        "{}",
        sources[0]
    );
    assert!(sources[0].contains("read_write> vyre_b5"), "{}", sources[0]);

    // With t4 also read after the group, it stays in memory beside t2, its
    // slot mate: c and d may not share a dispatch (t2 and t4 would overwrite
    // each other), so fusion starts at d instead.
    let reread = src
        .replace("output y[n];", "output y[n]; output z[n];")
        .replace(
            "node e(src: t4, dst: y) over n;",
            "node e(src: t4, dst: y) over n;\n        node f = e(src: t4, dst: z) over n unfused;",
        );
    let ts = expand(&reread);
    let out = ts.to_string();
    assert!(compile_errors(&ts).is_empty(), "{out}");
    let s = slots(&out);
    assert_eq!(s[2], s[4], "t2 and t4 still alias: {s:?}");
    assert_eq!(groups(&out), vec![vec![3, 4]], "{out}");
}
