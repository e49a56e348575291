//! Stage `transform/stack.rs`: which graphs may run their instances
//! stacked, and why the others may not (one case per reason).

use super::*;
use crate::analyse;
use crate::diag::Diagnostics;
use crate::parse as input;
use crate::timings::Timer;

/// The whole front end up to stage 5 (transform); the stacking verdict.
fn verdict(src: &str) -> Result<(), &'static str> {
    let mut diag = Diagnostics::new();
    let graph = input::parse(tokens(src), &mut diag);
    assert!(diag.is_empty(), "{:?}", diag.messages());
    let caps = crate::model::features::capabilities(&graph.features);
    let fuse_on = graph.fuse_off.is_none();
    let checked = crate::check::check_kernels(&graph.kernels, caps, &mut diag);
    let lowered = crate::lower::lower(graph, checked, caps, &mut diag);
    assert!(diag.is_empty(), "{:?}", diag.messages());
    let (graph, interfaces) = (lowered.graph.clone(), &lowered.checked.interfaces);
    let a = analyse::analyse(graph, interfaces, &lowered.identities, &mut diag).expect("analyses");
    assert!(diag.is_empty(), "{:?}", diag.messages());
    let timer = Timer::start();
    let a = crate::transform::transform(a, lowered, caps, fuse_on, &timer, &mut diag)
        .expect("transforms");
    a.stackable
}

/// A kernel `k` reading `src` and writing `dst` with `body`.
fn kernel(name: &str, body: &str) -> String {
    format!(
        r#"kernel {name} = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ {body} }}
        ";"#
    )
}

const STEP: &str = "let i = g.x; if i < arrayLength(&src) { dst[i] = src[i] * 3u + 1u; }";

fn chain(body: &str, decls: &str, nodes: &str) -> String {
    format!("pub struct S; {} {decls} {nodes}", kernel("k", body))
}

const PLAIN: &str = "input x[n]; intermediate t[n]; output y[n];";
const TWO: &str = "node a = k(src: x, dst: t) over n; node b = k(src: t, dst: y) over n;";

#[test]
fn an_elementwise_chain_stacks_fused_or_not() {
    assert_eq!(verdict(&chain(STEP, PLAIN, TWO)), Ok(()));
    let unfused = chain(STEP, &format!("fuse off; {PLAIN}"), TWO);
    assert_eq!(verdict(&unfused), Ok(()));
    // The bounds check written the other way round, and no check at all.
    let other = "if arrayLength(&src) <= g.x { return; } dst[g.x] = src[g.x] + 1u;";
    assert_eq!(verdict(&chain(other, PLAIN, TWO)), Ok(()));
    assert_eq!(
        verdict(&chain("dst[g.x] = src[g.x] + 1u;", PLAIN, TWO)),
        Ok(())
    );
    // The spec says so.
    let out = assert_ok(&chain(STEP, PLAIN, TWO));
    assert!(out.contains("stackable : true"), "{out}");
}

#[test]
fn a_kernel_that_computes_with_its_index_does_not_stack() {
    let body = "if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + g.x; }";
    assert_eq!(
        verdict(&chain(body, PLAIN, TWO)),
        Err("a kernel that computes with its invocation index")
    );
    let out = assert_ok(&chain(body, PLAIN, TWO));
    assert!(out.contains("stackable : false"), "{out}");
    let passed = "if g.x < 100u { dst[g.x] = src[g.x]; }";
    assert_eq!(
        verdict(&chain(passed, PLAIN, TWO)),
        Err("a kernel that computes with its invocation index")
    );
}

#[test]
fn a_neighbour_read_does_not_stack() {
    let body = "if g.x + 1u < arrayLength(&src) { dst[g.x] = src[g.x + 1u]; }";
    assert_eq!(
        verdict(&chain(body, PLAIN, TWO)),
        Err("a kernel that reads or writes at another index than its own")
    );
}

#[test]
fn a_buffer_of_another_size_does_not_stack() {
    let decls = "input x[n]; intermediate t[2 * n]; output y[n];";
    assert_eq!(
        verdict(&chain(STEP, decls, TWO)),
        Err("a buffer whose size is not exactly n elements")
    );
    let constant = "input x[n]; intermediate t[64]; output y[n];";
    assert_eq!(
        verdict(&chain(STEP, constant, TWO)),
        Err("a buffer whose size is not exactly n elements")
    );
}

#[test]
fn a_node_over_another_size_does_not_stack() {
    let nodes = "node a = k(src: x, dst: t) over n / 2; node b = k(src: t, dst: y) over n;";
    assert_eq!(
        verdict(&chain(STEP, PLAIN, nodes)),
        Err("a node not over n")
    );
}

#[test]
fn a_uniform_does_not_stack() {
    assert_eq!(verdict(&saxpy(SAXPY_NODES)), Err("a uniform buffer"));
}

#[test]
fn workgroup_memory_does_not_stack() {
    let src = r#"pub struct W;
        kernel k = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            var<workgroup> tile: array<u32, 64>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
                tile[l] = src[g.x];
                workgroupBarrier();
                dst[g.x] = tile[63u - l];
            }
        ";
        input x[n]; output y[n];
        node k(src: x, dst: y) over n;"#;
    assert_eq!(verdict(src), Err("a kernel that is not element-wise"));
}

#[test]
fn an_append_output_does_not_stack() {
    let src = r#"pub struct A;
        kernel keep = "
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&src) && src[g.x] % 2u == 0u {
                    let at = atomicAdd(&hits.count, 1u);
                    if at < arrayLength(&hits.items) { hits.items[at] = src[g.x]; }
                }
            }
        ";
        input x[n]; append hits[n];
        node keep(src: x, hits: hits) over n;"#;
    assert_eq!(verdict(src), Err("an append buffer"));
}

#[test]
fn a_loop_does_not_stack() {
    let src = r#"pub struct L;
        kernel dec = "
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        ";
        inout v[n];
        intermediate flag[1];
        repeat up to 10 as i until zero(flag) { node dec(v: v, flag: flag) over n; }"#;
    assert_eq!(verdict(src), Err("a loop that stops itself"));
}

#[test]
fn a_texture_does_not_stack() {
    let src = r#"pub struct T;
        kernel k = "
            @group(0) @binding(0) var t: texture_storage_1d<r32float, write>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { textureStore(t, g.x, vec4<f32>(1.0)); }
        ";
        output texture_1d t[n] r32float;
        node k(t: t) over n;"#;
    assert_eq!(verdict(src), Err("a texture"));
}

#[test]
fn a_kernel_taking_other_ids_does_not_stack() {
    // Fusion takes this kernel as element-wise (it indexes with `g.x`), but
    // `nwg.x` of a stacked run is B times that of one instance.
    let src = r#"pub struct S;
        kernel k = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
                if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + nwg.x; }
            }
        ";
        input x[n]; intermediate t[n]; output y[n];
        node a = k(src: x, dst: t) over n; node b = k(src: t, dst: y) over n;"#;
    assert_eq!(
        verdict(src),
        Err("a kernel that computes with its invocation index")
    );
}

const LENGTH: Result<(), &str> = Err("a kernel that computes with `arrayLength`");

#[test]
fn a_length_used_as_a_value_does_not_stack() {
    // Stacked, every buffer holds B × n elements: a kernel that adds a
    // length, or reduces modulo one, would see another number.
    let named = "let len = arrayLength(&src); if g.x < len { dst[g.x] = src[g.x] + len; }";
    assert_eq!(verdict(&chain(named, PLAIN, TWO)), LENGTH);
    let modulo = "if g.x < arrayLength(&src) { dst[g.x] = src[g.x] % arrayLength(&dst); }";
    assert_eq!(verdict(&chain(modulo, PLAIN, TWO)), LENGTH);
    let stored = "var l = arrayLength(&src); if g.x < l { dst[g.x] = src[g.x]; }";
    assert_ne!(verdict(&chain(stored, PLAIN, TWO)), Ok(()));
    let indexed = "if g.x < arrayLength(&src) { dst[g.x] = src[g.x]; } dst[0] = arrayLength(&src);";
    assert_ne!(verdict(&chain(indexed, PLAIN, TWO)), Ok(()));
    // A fused chain whose second step adds the intermediate's length.
    let second = kernel(
        "plus_len",
        "if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + arrayLength(&src); }",
    );
    let src = format!(
        "pub struct S; {} {second} {PLAIN} \
         node a = k(src: x, dst: t) over n; node b = plus_len(src: t, dst: y) over n;",
        kernel("k", STEP)
    );
    assert_eq!(verdict(&src), LENGTH);
    let out = assert_ok(&src);
    assert!(out.contains("stackable : false"), "{out}");
}

#[test]
fn a_length_in_a_helper_does_not_stack() {
    let src = r#"pub struct H;
        kernel k = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            fn count() -> u32 { return arrayLength(&src); }
            fn twice(v: u32) -> u32 { return v * 2u + count(); }
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&src) { dst[g.x] = twice(src[g.x]); }
            }
        ";
        input x[n]; output y[n];
        node k(src: x, dst: y) over n;"#;
    assert_eq!(verdict(src), LENGTH);
    // A helper without a length still stacks, and so does a bounds check
    // against another buffer's length.
    let plain = src.replace(" + count()", "");
    assert_eq!(verdict(&plain), Ok(()));
    let other = "if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] + 1u; }";
    assert_eq!(verdict(&chain(other, PLAIN, TWO)), Ok(()));
}
