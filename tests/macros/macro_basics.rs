//! The expansion against the real runtime: every graph here must
//! type-check, and runs on the GPU (Mesa's lavapipe is enough); without an
//! adapter the run tests fail with the setup step.

// Generated items must be documented: users may deny missing docs.
#![deny(missing_docs)]

// Shadow common names: generated code must use fully qualified paths.
#[allow(dead_code)]
type Result = ();
#[allow(dead_code)]
struct Vec;
#[allow(dead_code)]
struct Option;

use vyre_graph::graph;

use crate::common;

graph! {
    /// y = a * x + b, then doubled.
    pub struct Saxpy;

    kernel axpb = wgsl {
        struct Params { a: f32, b: vec4<f32> }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> t: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&t) { t[g.x] = params.a * x[g.x] + params.b.x; }
        }
    };
    kernel double = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * 2.0; }
        }
    ";

    input x[n];
    uniform params;
    intermediate t[n];
    output y[n];

    node axpb(x: x, params: params, t: t) over n;
    node double(src: t, dst: y) over n;
}

graph! {
    /// Adds one to every element several times, ping-ponging two buffers;
    /// the size is a parameter (no input gives it).
    pub(crate) struct Counter;

    kernel inc = "
        override STEP: u32 = 1;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(32)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] + STEP; }
        }
    ";
    kernel fill = "
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(32)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    ";

    intermediate a[n];
    output b[n];

    node fill(out: a) over n;
    repeat 3 as i {
        node inc(src: ping(a, b), dst: pong(a, b)) over n with { STEP = i + 1 };
    }
}

graph! {
    /// A file kernel.
    pub struct Adder;
    kernel add = file "tests/kernels/add.wgsl";
    input a[n];
    input b[n];
    output c[n];
    node add(a: a, b: b, c: c) over n;
}

#[test]
fn specs_are_static_data() {
    const SPEC: &vyre_graph::spec::GraphSpec = &Saxpy::SPEC;
    assert_eq!(SPEC.name, "Saxpy");
    // Two declared kernels, plus the one `scale` and `add` are fused into.
    assert_eq!(SPEC.kernels.len(), 3);
    assert_eq!(SPEC.fused.len(), 1);
    assert_eq!(*SPEC.fused[0].nodes, [0, 1]);
    assert_eq!(SPEC.buffers.len(), 4);
    assert_eq!(SPEC.nodes.len(), 2);
    assert_eq!(SPEC.host_inputs().collect::<std::vec::Vec<_>>(), [0, 1]);
    assert_eq!(SPEC.host_outputs().collect::<std::vec::Vec<_>>(), [3]);
    assert_eq!(SPEC.buffers[1].element_size, 32);
    assert_eq!(std::mem::size_of::<Params>(), 32);
    let p = Params {
        a: 1.0,
        ..Default::default()
    };
    assert_eq!(p._pad0, [0; 12]);

    let c = &Counter::SPEC;
    let labels: std::vec::Vec<&str> = c.nodes.iter().map(|n| n.label.as_ref()).collect();
    assert_eq!(labels, ["fill", "inc[0]", "inc[1]", "inc[2]"]);
    assert_eq!(c.nodes[3].overrides[0].value, 3.0);
    assert!(
        Adder::SPEC.kernels[0]
            .source
            .contains("c[g.x] = a[g.x] + b[g.x]")
    );
}

#[test]
fn saxpy_runs() -> std::result::Result<(), vyre_graph::BackendError> {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Saxpy::new(&gpu)?;
    let x: std::vec::Vec<f32> = (0..100).map(|i| i as f32).collect();
    let params = Params {
        a: 3.0,
        b: [1.0, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    let out = graph.run(&x, &params)?;
    let expected: std::vec::Vec<f32> = x.iter().map(|v| (3.0 * v + 1.0) * 2.0).collect();
    assert_eq!(out.y, expected);
    // Resident outputs feed another run.
    let resident = graph.run_resident(&x, &params)?;
    let again = graph.run(&resident.y, &params)?;
    assert_eq!(again.y[1], ((3.0 * 8.0) + 1.0) * 2.0);
    assert!(!graph.to_dot().is_empty());
    let _ = graph.describe();
    // The generated type is `Debug`, through its runtime graph.
    let printed = format!("{graph:?}");
    assert!(
        printed.starts_with("Saxpy { graph: Graph { name: \"Saxpy\""),
        "{printed}"
    );
    Ok(())
}

#[test]
fn counter_runs() -> std::result::Result<(), vyre_graph::BackendError> {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = Counter::new(&gpu)?;
    let out = graph.run(40)?;
    // a = i; then +1 (a -> b), +2 (b -> a), +3 (a -> b).
    assert_eq!(out.b.len(), 40);
    assert_eq!(out.b[5], 5 + 1 + 2 + 3);
    let adder = Adder::new(&gpu)?;
    let c = adder.run(&[1.0f32, 2.0][..], &[10.0f32, 20.0][..])?.c;
    assert_eq!(c, [11.0, 22.0]);
    Ok(())
}
