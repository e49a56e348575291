//! Stage 5: every graph check produces an error with a useful message, and
//! every error of an invocation is reported at once.

use super::*;

/// A kernel with one input and one output binding and configurable WGSL
/// types / workgroup size.
fn copy_kernel(name: &str, ty: &str, wg: &str) -> String {
    format!(
        "kernel {name} = \"
            @group(0) @binding(0) var<storage, read> src: array<{ty}>;
            @group(0) @binding(1) var<storage, read_write> dst: array<{ty}>;
            @compute @workgroup_size({wg})
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ dst[g.x] = src[g.x]; }}
        \";"
    )
}

#[test]
fn the_standard_graph_is_fine() {
    assert_ok(&saxpy(SAXPY_NODES));
}

#[test]
fn unknown_and_missing_bindings_list_the_kernels_bindings() {
    assert_error(
        &saxpy(
            "node scale(src: x, dst: t, extra: y) over n; node add(a: t, b: y, params: params, out: out) over n;",
        ),
        &[
            "kernel `scale` has no binding `extra`\nnote: its bindings are `src` (group 0, binding 0, var<storage, read> array<f32>), `dst` (group 0, binding 1, var<storage, read_write> array<f32>)",
        ],
    );
    assert_error(
        &saxpy("node scale(src: x, dst: t) over n; node add(a: t, b: y, out: out) over n;"),
        &[
            "node `add` leaves a binding of kernel `add` unbound: `params` (group 0, binding 2, var<uniform> Params)",
            "add(a: buffer, b: buffer, params: buffer, out: buffer)",
        ],
    );
}

#[test]
fn unknown_names_are_listed() {
    assert_error(
        &saxpy(
            "node scale(src: nope, dst: t) over n; node add(a: t, b: y, params: params, out: out) over n;",
        ),
        &["unknown buffer `nope`; the buffers are `x`, `y`, `params`, `t` and `out`"],
    );
    assert_error(
        &saxpy(
            "node scale(src: x, dst: t) over n; node sub(a: t, b: y, params: params, out: out) over n;",
        ),
        &["unknown kernel `sub`; the kernels are `scale` and `add`"],
    );
}

#[test]
fn duplicate_names_are_errors_with_a_note() {
    let src = saxpy(&format!(
        "{SAXPY_NODES} {} input x[n]; node scale(src: x, x: t, dst: t) over n;",
        copy_kernel("scale", "f32", "64")
    ));
    let errors = errors(&src);
    let all = errors.join("\n");
    assert!(all.contains("kernel `scale` is declared twice"), "{all}");
    assert!(all.contains("buffer `x` is declared twice"), "{all}");
    assert!(
        all.contains(
            "node label `scale` is used twice; name this node: `node scale2 = scale(...)`"
        ),
        "{all}"
    );
    assert!(all.contains("note: first declared here"), "{all}");
    let errors = errors_of(&saxpy(
        "node scale(src: x, src: y, dst: t) over n; node add(a: t, b: y, params: params, out: out) over n;",
    ));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("binding `src` is bound twice in this node")),
        "{errors:#?}"
    );
}

fn errors_of(src: &str) -> Vec<String> {
    errors(src)
}

#[test]
fn element_types_must_agree_between_kernels() {
    let src = format!(
        "struct G; {} {}
         input x[n]; intermediate t[n]; output y[n];
         node scale(src: x, dst: t) over n;
         node pack(src: t, dst: y) over n;",
        copy_kernel("scale", "f32", "64"),
        copy_kernel("pack", "u32", "64")
    );
    let errors = errors(&src);
    let all = errors.join("\n");
    assert!(
        all.contains("buffer `t` has two element types: `scale` binds it as array<f32> (stride 4, Rust `f32`) but `pack` binds it as array<u32> (stride 4, Rust `u32`)"),
        "{all}"
    );
    assert!(
        all.contains("note: `scale` binds `t` through `dst` here"),
        "{all}"
    );
    // And vec3 (stride 16) against vec4 (stride 16) differ in Rust type.
    let src = format!(
        "struct G; {} {}
         input x[n]; intermediate t[n]; output y[n];
         node a = k3(src: x, dst: t) over n;
         node b = k4(src: t, dst: y) over n;",
        copy_kernel("k3", "vec3<f32>", "64"),
        copy_kernel("k4", "vec4<u32>", "64")
    );
    assert_error(
        &src,
        &["stride 16, Rust `[f32; 4]`", "stride 16, Rust `[u32; 4]`"],
    );
}

#[test]
fn hazards_from_the_analysis() {
    // Writing an input.
    assert_error(
        &saxpy(
            "node scale(src: t, dst: x) over n; node add(a: t, b: y, params: params, out: out) over n;",
        ),
        &[
            "node `scale` writes `x` through `dst` (var<storage, read_write> array<f32>), but `x` is an `input` buffer, which nodes may only read; declare it `inout`",
        ],
    );
    // Reading an intermediate before any write.
    assert_error(
        &saxpy(
            "node add(a: t, b: y, params: params, out: out) over n; node scale(src: x, dst: t) over n;",
        ),
        &[
            "node `add` reads `t` through `a` before any node writes it; intermediate buffers start with undefined contents",
        ],
    );
    // An output nobody writes.
    let src = format!(
        "struct G; {} input x[n]; output y[n]; output z[n]; node k(src: x, dst: y) over n; node k2 = k(src: z, dst: y) over n;",
        copy_kernel("k", "f32", "64")
    );
    assert_error(&src, &["output `z` is never written by any node"]);
    // An input nobody reads; a buffer nobody binds.
    let src = format!(
        "struct G; {} input x[n]; inout w[n]; output y[n]; node k(src: x, dst: y) over n;",
        copy_kernel("k", "f32", "64")
    );
    assert_error(
        &src,
        &["inout `w` is not bound by any node\nhelp: node `k` could write it"],
    );
}

#[test]
fn a_read_write_binding_that_only_reads_may_bind_an_input() {
    let src = "struct G;
        kernel k = \"
            @group(0) @binding(0) var<storage, read_write> src: array<f32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x]; }
        \";
        input x[n]; output y[n];
        node k(src: x, dst: y) over n;";
    let out = assert_ok(src);
    assert!(
        out.contains("Access :: Read ,") && out.contains("Access :: Write ,"),
        "{out}"
    );
}

#[test]
fn uniforms_bind_uniforms_and_storage_binds_storage() {
    assert_error(
        &saxpy(
            "node scale(src: params, dst: t) over n; node add(a: t, b: y, params: params, out: out) over n;",
        ),
        &[
            "`params` is a `uniform` buffer but kernel `scale` binds it through `src` (group 0, binding 0, var<storage, read> array<f32>)",
        ],
    );
    assert_error(
        &saxpy(
            "node scale(src: x, dst: t) over n; node add(a: t, b: y, params: x, out: out) over n;",
        ),
        &[
            "`x` is an `input` buffer but kernel `add` binds it through `params`",
            "declare the buffer as `uniform x;`",
        ],
    );
}

#[test]
fn webgpu_default_limits_unless_native() {
    let graph = |wg: &str, native: &str| {
        format!(
            "struct G; {native} {} input x[n]; output y[n]; node k(src: x, dst: y) over n;",
            copy_kernel("k", "f32", wg)
        )
    };
    for (wg, part) in [
        ("512", "maxComputeWorkgroupSizeX = 256"),
        ("1, 512", "maxComputeWorkgroupSizeY = 256"),
        ("1, 1, 128", "maxComputeWorkgroupSizeZ = 64"),
        (
            "32, 16",
            "has 512 invocations, over WebGPU's default maxComputeInvocationsPerWorkgroup = 256",
        ),
    ] {
        assert_error(&graph(wg, ""), &[part, "write `limits native;`"]);
        assert_ok(&graph(wg, "limits native;"));
    }
    // Nine storage buffers.
    let decls: String = (0..9)
        .map(|i| format!("@group(0) @binding({i}) var<storage, read_write> b{i}: array<f32>;"))
        .collect();
    let body: String = (0..9).map(|i| format!("b{i}[0] = 1.0;")).collect();
    let args: Vec<String> = (0..9).map(|i| format!("b{i}: o{i}")).collect();
    let outs: String = (0..9).map(|i| format!("output o{i}[n];")).collect();
    let src = |native: &str| {
        format!(
            "struct G; {native} kernel k = \"{decls} @compute @workgroup_size(1) fn main() {{ {body} }}\"; {outs} node k({}) over n;",
            args.join(", ")
        )
    };
    assert_error(
        &src(""),
        &["binds 9 storage buffers, over WebGPU's default maxStorageBuffersPerShaderStage = 8"],
    );
    assert_ok(&src("limits native;"));
}

#[test]
fn overrides_are_checked_per_node() {
    let kernel = "kernel sort = \"
        override WG: u32 = 64;
        override SHIFT: u32;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x] >> SHIFT; }
    \";";
    let graph = |nodes: &str| format!("struct G; {kernel} inout a[n]; inout b[n]; {nodes}");
    let out = assert_ok(&graph(
        "repeat 4 as i { node s = sort(src: ping(a, b), dst: pong(a, b)) over n with { WG = 128, SHIFT = i * 8 }; }",
    ));
    assert!(out.contains("\"s[3]\""), "labels: {out}");
    assert!(
        out.contains(
            "name : :: vyre_graph :: __private :: Cow :: Borrowed (\"SHIFT\") , value : 24f64"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "workgroup_size : :: core :: option :: Option :: Some ([128u32 , 1u32 , 1u32])"
        ),
        "{out}"
    );
    // `SHIFT` has no default, so naga cannot give the kernel a default
    // size: every node carries the size its own values give.
    let out = assert_ok(&graph(
        "node s = sort(src: a, dst: b) over n with { WG = 64, SHIFT = 0 };",
    ));
    assert!(
        out.contains(
            "workgroup_size : :: core :: option :: Option :: Some ([64u32 , 1u32 , 1u32])"
        ),
        "{out}"
    );

    assert_error(
        &graph("node s = sort(src: a, dst: b) over n with { WGX = 1, SHIFT = 0 };"),
        &[
            "kernel `sort` has no override `WGX`; did you mean `WG`?\nnote: its overrides are `WG` (u32, default 64), `SHIFT` (u32, no default)",
        ],
    );
    assert_error(
        &graph("node s = sort(src: a, dst: b) over n;"),
        &[
            "node `s` must set override `SHIFT` of kernel `sort`, which has no default: `with { SHIFT = ... }`",
        ],
    );
    assert_error(
        &graph("node s = sort(src: a, dst: b) over n with { SHIFT = -1 };"),
        &["override `SHIFT` is u32; -1 is out of range"],
    );
    assert_error(
        &graph("node s = sort(src: a, dst: b) over n with { SHIFT = 1.5 };"),
        &["override `SHIFT` is u32; give an integer"],
    );
    assert_error(
        &graph("node s = sort(src: a, dst: b) over n with { SHIFT = true };"),
        &["override `SHIFT` is u32; give an integer"],
    );
    assert_error(
        &graph("repeat 3 as i { node s = sort(src: a, dst: b) over n with { SHIFT = 1 - i }; }"),
        &["-1 is out of range (in iteration i = 2)"],
    );
    assert_error(
        &graph("node s = sort(src: a, dst: b) over n with { WG = 1024, SHIFT = 0 };"),
        &[
            "node `s`: workgroup size [1024, 1, 1] exceeds WebGPU's default maxComputeWorkgroupSizeX = 256",
        ],
    );
    assert_error(
        &graph("node s = sort(src: ping(a, b), dst: b) over n with { SHIFT = 0 };"),
        &["`ping(a, b)` alternates between iterations of a `repeat`"],
    );
}

#[test]
fn ping_pong_alternates() {
    let src = format!(
        "struct G; {} inout a[n]; inout b[n];
         repeat 3 as i {{ node k(src: ping(a, b), dst: pong(a, b)) over n; }}",
        copy_kernel("k", "f32", "64")
    );
    let out = assert_ok(&src);
    // Iteration 0 reads a (0) and writes b (1); iteration 1 the reverse.
    let user_nodes = out.split("FusedGroup").next().unwrap_or_default();
    let nodes = user_nodes.split("NodeSpec").skip(1).collect::<Vec<_>>();
    assert_eq!(nodes.len(), 3);
    assert!(
        nodes[0].contains("binding : 0u32 , buffer : 0usize")
            && nodes[0].contains("binding : 1u32 , buffer : 1usize")
    );
    assert!(
        nodes[1].contains("binding : 0u32 , buffer : 1usize")
            && nodes[1].contains("binding : 1u32 , buffer : 0usize")
    );
    assert!(nodes[2].contains("binding : 0u32 , buffer : 0usize"));
}

#[test]
fn binding_a_buffer_read_only_and_writable_is_an_error() {
    let src = format!(
        "struct G; {} inout a[n]; node k(src: a, dst: a) over n;",
        copy_kernel("k", "f32", "64")
    );
    assert_error(
        &src,
        &["node `k` binds buffer `a` read-only through `src` and writable through `dst`"],
    );
}

#[test]
fn binding_a_buffer_writable_twice_is_one_write() {
    let src = "struct G;
        kernel k = wgsl {
            @group(0) @binding(0) var<storage, read_write> y: array<f32>;
            @group(0) @binding(1) var<storage, read_write> y4: array<vec4<f32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&y4) { y4[g.x] = vec4<f32>(1.0); }
                if g.x < arrayLength(&y) { y[g.x] = 2.0; }
            }
        };
        output y[4 * n];
        node k(y: y, y4: y) over n;";
    assert_ok(src);
}

#[test]
fn fixed_size_bindings_need_enough_elements() {
    let src = "struct G;
        kernel h = \"
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 256>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { atomicAdd(&hist[src[g.x] & 255u], 1u); }
        \";
        input x[n]; inout hist[16];
        node h(src: x, hist: hist) over n;";
    assert_error(
        src,
        &[
            "kernel `h` binds `hist` as array<atomic<u32>, 256>, which needs 256 element(s), but buffer `hist` has 16",
        ],
    );
    assert_ok(&src.replace("hist[16]", "hist[256]"));
}

#[test]
fn empty_graphs_and_reserved_names() {
    assert_error("pub struct G;", &["graph `G` has no nodes"]);
    assert_error(
        &saxpy(&format!("{SAXPY_NODES} input n[4];")),
        &["`n` cannot name a buffer"],
    );
    assert_error(
        &format!(
            "struct G; {} input x[n]; output y[n];",
            copy_kernel("k", "f32", "64")
        ),
        &["has no nodes"],
    );
    assert_error(
        &format!(
            "struct G; {} input x[n]; output y[n]; repeat 100000 as i {{ node k(src: x, dst: y) over n; }}",
            copy_kernel("k", "f32", "64")
        ),
        &["unrolls to 100000 nodes; at most 4096"],
    );
}

#[test]
fn every_error_of_an_invocation_is_reported() {
    // A syntax error, a WGSL error, and (not reached: the graph is not
    // analysed when the syntax is broken) nothing else.
    let src = "pub struct G;
        kernel bad = \"fn main( {\";
        kernel bad2 = wgsl { @compute fn main() {} };
        input x[n];
        node bogus;
        output y[n];";
    let errors = errors(src);
    assert!(errors.len() >= 3, "{errors:#?}");
    assert!(errors.iter().any(|e| e.contains("kernel `bad`")));
    assert!(errors.iter().any(|e| e.contains("kernel `bad2`")));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("expected the node's bindings"))
    );

    // Graph errors: four different mistakes, four errors.
    let src = saxpy(
        "node scale(src: x, dst: q) over n;
         node add(a: t, b: y, params: params, out: out, extra: x) over n;
         node add2 = sub(a: t) over n;
         node add3 = add(a: t, b: params, params: params, out: out) over n;",
    );
    let errors = errors_of(&src);
    assert!(
        errors.iter().any(|e| e.contains("unknown buffer `q`")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("no binding `extra`")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("unknown kernel `sub`")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("`params` is a `uniform` buffer")),
        "{errors:#?}"
    );
}

#[test]
fn errors_come_with_a_stub_of_the_type() {
    let out = expand(&saxpy("node scale(src: x, dst: nope) over n;")).to_string();
    assert!(out.contains("compile_error"));
    assert!(out.contains("pub struct Saxpy"), "{out}");
    assert!(out.contains("pub struct SaxpyOutputs"), "{out}");
    assert!(
        out.contains("pub fn run <") && out.contains("graph! failed to compile"),
        "{out}"
    );
    // No header: only the errors.
    let out = expand("input x[n];").to_string();
    assert!(
        out.contains("compile_error") && !out.contains("impl"),
        "{out}"
    );
}

/// A graph around one kernel of `decls` sized `@workgroup_size(size)`.
fn override_graph(decls: &str, size: &str, nodes: &str) -> String {
    format!(
        "struct G; kernel k = \"{decls}
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @compute @workgroup_size({size})
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ v[g.x] = g.x; }}\";
        output out[n]; {nodes}"
    )
}

/// The `workgroup_size` fields of a graph's `SPEC`, in order (kernels,
/// then nodes).
fn spec_sizes(out: &str) -> Vec<String> {
    out.split("workgroup_size : ")
        .skip(1)
        .map(|rest| {
            let rest = rest.replace("u32", "").replace(' ', "");
            let rest = rest
                .strip_prefix("::core::option::Option::")
                .unwrap_or(&rest);
            if rest.starts_with("None") {
                return "None".to_owned();
            }
            let end = rest.find(']').map_or(rest.len(), |i| i + 1);
            rest[..end].replace("Some(", "")
        })
        .collect()
}

#[test]
fn override_workgroup_sizes_are_evaluated_by_naga_per_node() {
    let select = "override BIG: bool = false; override WG: u32 = select(64u, 256u, BIG);";
    let out = assert_ok(&override_graph(
        select,
        "WG",
        "node small = k(v: out) over n; node big = k(v: out) over n with { BIG = true };",
    ));
    assert_eq!(spec_sizes(&out), ["[64,1,1]", "None", "[256,1,1]"], "{out}");
    // Arithmetic on other overrides, per node and per iteration.
    let out = assert_ok(&override_graph(
        "override A: u32 = 32u; override WG = A * 2u;",
        "WG",
        "repeat 3 as i { node s = k(v: out) over n with { A = 8 * (i + 1) }; } node d = k(v: out) over n;",
    ));
    assert_eq!(
        spec_sizes(&out),
        ["[64,1,1]", "[16,1,1]", "[32,1,1]", "[48,1,1]", "None"],
        "{out}"
    );
    // `@id(N)`: set by name, passed to wgpu by id.
    let out = assert_ok(&override_graph(
        "@id(3) override BIG: bool = false; @id(9) override WG: u32 = select(16u, 128u, BIG);",
        "WG",
        "node s = k(v: out) over n with { BIG = 1 };",
    ));
    assert!(
        out.contains("Cow :: Borrowed (\"3\") , value : 1f64"),
        "{out}"
    );
    assert_eq!(spec_sizes(&out), ["[16,1,1]", "[128,1,1]"], "{out}");
    // The evaluated size is checked against the default limits.
    assert_error(
        &override_graph(
            "override BIG: bool = false; override WG: u32 = select(64u, 512u, BIG);",
            "WG",
            "node s = k(v: out) over n with { BIG = 1 };",
        ),
        &[
            "node `s`: workgroup size [512, 1, 1] exceeds WebGPU's default maxComputeWorkgroupSizeX = 256",
        ],
    );
}

#[test]
fn override_workgroup_sizes_that_cannot_be_known_are_errors() {
    // Never set: the existing per-node check names the fix.
    assert_error(
        &override_graph("override WG: u32;", "WG", "node s = k(v: out) over n;"),
        &[
            "node `s` must set override `WG` of kernel `k`, which has no default: `with { WG = ... }`",
        ],
    );
    // Set to a size naga rejects.
    let src = override_graph(
        "override WG: u32;",
        "WG",
        "node s = k(v: out) over n with { WG = 0 };",
    );
    let errs = errors(&src);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].starts_with("node `s`: the workgroup size of kernel `k` cannot be known with `with { WG }`: its workgroup size evaluates to zero"),
        "{errs:#?}"
    );
    // A default naga cannot evaluate, not fixed by the node.
    assert_error(
        &override_graph(
            "override D: u32 = 0u; override WG: u32 = 64u / D;",
            "WG",
            "node s = k(v: out) over n;",
        ),
        &[
            "node `s`: the workgroup size of kernel `k` cannot be known with its override defaults: naga cannot evaluate its `override`s",
        ],
    );
    // ... and fixed by it.
    let out = assert_ok(&override_graph(
        "override D: u32 = 0u; override WG: u32 = 64u / D;",
        "WG",
        "node s = k(v: out) over n with { D = 4 };",
    ));
    assert_eq!(spec_sizes(&out), ["[16,1,1]", "[16,1,1]"], "{out}");
    // A kernel no node runs has nowhere to get the value from.
    let src = format!(
        "{} kernel unused = \"override WG: u32; @compute @workgroup_size(WG) fn main() {{}}\";",
        override_graph("", "64", "node s = k(v: out) over n;")
    );
    let errs = errors(&src);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0]
            == "kernel `unused`: no node runs it, so its workgroup size cannot be known at compile time: override `WG` has no default; give it one (`override WG = ...;`) or remove the kernel",
        "{errs:#?}"
    );
}

#[test]
fn sizes_that_never_run_or_always_overflow_are_errors() {
    let g = |size: &str, extra: &str| {
        format!(
            "struct G; {extra} kernel k = \"@group(0) @binding(0) var<storage, read_write> v: array<u32>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ v[g.x] = 1u; }}\";
             output out[n]; node k(v: out) {size};"
        )
    };
    let never = "node `k` would never run: this size is always 0 invocations; give it at least one (`over n`, `over 1`) or remove the node";
    for size in ["over 0", "over 0 * n", "over n * 0", "over (0 * n) / 4"] {
        let errs = errors(&g(size, ""));
        assert_eq!(errs, [never], "{size}");
    }
    let errs = errors(&g("grid [n / 4096, 0, 1]", ""));
    assert_eq!(
        errs,
        [
            "node `k` would never run: grid dimension y is always 0 workgroups; every dimension needs at least 1 (write `1` for a dimension the kernel does not use) or remove the node"
        ]
    );
    assert_eq!(errors(&g("grid [0 * n, 1, 1]", "")).len(), 1);
    let errs = errors(&g("grid [4294967296, n, 1]", "limits native;"));
    assert_eq!(
        errs,
        [
            "node `k`: grid dimension x is 4294967296 workgroups, more than a dispatch can hold (4294967295 per dimension, on any device); spread the work over the other dimensions"
        ]
    );
    let errs = errors(&g("grid [1, n + 4294967296, 1]", ""));
    assert!(errs.iter().any(|e| e.contains("grid dimension y is at least 4294967296 workgroups for every `n`")), "{errs:#?}");
    let errs = errors(&g("grid [n, 1, 65536]", ""));
    assert_eq!(
        errs,
        [
            "node `k`: grid dimension z is 65536 workgroups, over the WebGPU default limit maxComputeWorkgroupsPerDimension = 65535; spread the work over the other dimensions, or write `limits native;` in graph! to check against the device's own limits at run time instead"
        ]
    );
    // A device may allow more: only the dispatch's own bound under `limits native;`.
    assert_ok(&g("grid [n, 1, 65536]", "limits native;"));
    assert_ok(&g("grid [65535, 4294967295 / 65535, 1]", "limits native;"));
    assert_ok(&g("grid [n / 4096, 65535, 1]", ""));
    assert_ok(&g("over 1", ""));

    // A buffer that is always empty.
    let src = "struct G; kernel k = \"@group(0) @binding(0) var<storage, read_write> v: array<u32>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { v[g.x] = 1u; }\";
             output out[0 * n]; node k(v: out) over n;";
    let errs = errors(src);
    assert_eq!(
        errs,
        [
            "buffer `out` would always be empty: its length is always 0 elements; give it at least one (`out[n]`, `out[1]`) or remove it"
        ]
    );
}
