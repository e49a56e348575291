//! A panic inside wgpu or naga while a kernel compiles (naga 30's SPIR-V
//! writer panics on some WGSL its validator accepts) is an error of
//! `Graph::new` and of every generated `new`, naming the kernel and its
//! entry point, and the same `Gpu` goes on: it builds and runs other
//! graphs, and the same graph type again.

use crate::common;

use std::sync::{Arc, Mutex};

use common::*;
use vyre_graph::__private::inject_backend_panics;
use vyre_graph::{BackendError, Gpu, Graph, graph};

graph! {
    /// `y = x * 2 + 5`.
    pub struct Affine;

    kernel affine = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] * 2u + 5u; }
        }
    };

    input x[n];
    output y[n];

    node affine(x: x, y: y) over n;
}

fn affine_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|v| v.wrapping_mul(2).wrapping_add(5))
        .collect()
}

/// The caught panic, with what its message must say.
fn assert_backend_panic(
    err: &BackendError,
    (kernel, entry): (&str, &str),
    stage: &str,
    panic_text: &str,
) {
    match err {
        BackendError::BackendPanicked {
            kernel: k,
            entry_point,
            stage: s,
            message,
        } => {
            assert_eq!(k, kernel, "{err}");
            assert_eq!(entry_point, entry, "{err}");
            assert!(s.contains(stage), "{err}");
            assert!(message.contains(panic_text), "{err}");
        }
        other => panic!("expected BackendPanicked, got {other:?}"),
    }
    let text = err.to_string();
    for part in [
        format!("kernel `{kernel}`"),
        format!("entry point `{entry}`"),
        panic_text.to_string(),
        "passed naga's validation".to_string(),
        "WGPU_BACKEND".to_string(),
        "report the kernel".to_string(),
        "the Gpu stays usable".to_string(),
    ] {
        assert!(text.contains(&part), "`{part}` missing from: {text}");
    }
}

/// Runs [`two_step_spec`] and [`Affine`] on `gpu` and checks every element.
fn runs_correctly(gpu: &Gpu, seed: u32) {
    let x = data(10_007, seed);
    let graph = Graph::new(gpu, two_step_spec("after_a_panic")).expect("another graph builds");
    let (y, _) = run_host(&graph, &x);
    assert_same(&y, &two_step_cpu(&x), "two-step graph after a caught panic");
    let affine = Affine::new(gpu).expect("the same graph type builds again");
    let out = affine.run(&x).expect("and runs");
    assert_same(&out.y, &affine_reference(&x), "Affine after a caught panic");
}

#[test]
fn a_panic_while_creating_a_shader_module_is_an_error_and_the_gpu_goes_on() {
    let _serial = serial();
    let gpu = gpu();
    let injected = "injected panic inside create_shader_module";

    // The untyped front door: the first kernel's module panics.
    inject_backend_panics(&gpu, 1);
    let err = Graph::new(&gpu, two_step_spec("panics")).expect_err("the panic is an error");
    assert_backend_panic(&err, ("mul3_add1", "main"), "shader module", injected);
    runs_correctly(&gpu, 1);

    // Two panics in a row: two graphs fail, the third builds.
    inject_backend_panics(&gpu, 2);
    let err = Graph::new(&gpu, two_step_spec("panics")).expect_err("first kernel");
    assert_backend_panic(&err, ("mul3_add1", "main"), "shader module", injected);
    let err = Graph::new(&gpu, two_step_spec("panics")).expect_err("again");
    assert_backend_panic(&err, ("mul3_add1", "main"), "shader module", injected);
    runs_correctly(&gpu, 2);

    // The typed front door: the generated `new` returns the error, and the
    // same type builds and runs afterwards.
    inject_backend_panics(&gpu, 1);
    let err = Affine::new(&gpu).expect_err("the typed new returns the error");
    // `graph!` renames the entry point of a kernel it rewrites.
    assert_backend_panic(
        &err,
        ("affine", "vyre_linear_main"),
        "shader module",
        injected,
    );
    runs_correctly(&gpu, 3);
}

/// A caught panic leaves no error scope pushed on the thread: a device
/// error outside any scope of the runtime still reaches the device's
/// uncaptured-error handler (a scope left behind would swallow it).
#[test]
fn a_caught_panic_leaves_no_error_scope_behind() {
    let _serial = serial();
    // A device of its own: the test replaces its uncaptured-error handler.
    let gpu = Gpu::new().expect("gpu");
    let uncaptured = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&uncaptured);
    gpu.device()
        .on_uncaptured_error(Arc::new(move |e: vyre_graph::wgpu::Error| {
            seen.lock().expect("handler lock").push(e.to_string());
        }));
    // Two bindings numbered 0 in one layout: always a validation error.
    let invalid_layout = |gpu: &Gpu| {
        let entry = vyre_graph::wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: vyre_graph::wgpu::ShaderStages::COMPUTE,
            ty: vyre_graph::wgpu::BindingType::Buffer {
                ty: vyre_graph::wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let _ =
            gpu.device()
                .create_bind_group_layout(&vyre_graph::wgpu::BindGroupLayoutDescriptor {
                    label: Some("duplicate bindings"),
                    entries: &[entry, entry],
                });
    };
    // The control: without a panic, the error reaches the handler.
    invalid_layout(&gpu);
    assert_eq!(uncaptured.lock().expect("lock").len(), 1, "control");

    inject_backend_panics(&gpu, 1);
    let err = Graph::new(&gpu, two_step_spec("scopes")).expect_err("the panic is an error");
    assert!(
        matches!(err, BackendError::BackendPanicked { .. }),
        "{err:?}"
    );
    invalid_layout(&gpu);
    let errors = uncaptured.lock().expect("lock").clone();
    assert_eq!(errors.len(), 2, "the error after the panic: {errors:?}");
    runs_correctly(&gpu, 4);
}

graph! {
    /// `y = x + 1` through a function that takes a pointer to an element of
    /// a local array: valid WGSL that naga 30 validates, and whose SPIR-V
    /// naga's writer panics on ("Expression [N] is not cached").
    pub struct PointerToElement;

    kernel bump = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        fn add_one(p: ptr<function, u32>) { *p = *p + 1u; }
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&x) { return; }
            var a = array<u32, 4>(x[g.x], x[g.x], x[g.x], x[g.x]);
            let i = g.x % 4u;
            add_one(&a[i]);
            y[g.x] = a[i];
        }
    };

    input x[n];
    output y[n];

    node bump(x: x, y: y) over n;
}

/// The real thing: naga's SPIR-V writer panics inside wgpu's call. On
/// Vulkan the typed `new` returns the error and the `Gpu` goes on; on a
/// backend whose writer handles the kernel (OpenGL), it builds and runs
/// correctly.
#[test]
fn naga_spirv_writer_panic_on_a_pointer_to_an_array_element() {
    let _serial = serial();
    let gpu = gpu();
    let vulkan = gpu.adapter().backend == vyre_graph::wgpu::Backend::Vulkan;
    match PointerToElement::new(&gpu) {
        // naga 30.0.2's SPIR-V writer panics while the pipeline is created.
        Err(err) if vulkan => {
            assert_backend_panic(
                &err,
                ("bump", "vyre_linear_main"),
                "compute pipeline",
                "is not cached",
            );
        }
        Err(err) => assert!(
            matches!(err, BackendError::BackendPanicked { .. }),
            "{err:?}"
        ),
        Ok(graph) => {
            assert!(
                !vulkan,
                "naga's SPIR-V writer no longer panics on this kernel: pick another that makes it panic, or drop this test"
            );
            let x = data(1000, 9);
            let out = graph.run(&x).expect("run");
            let want: Vec<u32> = x.iter().map(|v| v.wrapping_add(1)).collect();
            assert_same(&out.y, &want, "pointer to an element");
        }
    }
    runs_correctly(&gpu, 5);
}
