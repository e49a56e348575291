//! One test per kind of bad input: the exact `BackendError` variant, a
//! message that ends with what to do, and, for errors raised by a run,
//! nothing submitted (and, for planning errors, nothing allocated).

use crate::common;

use common::*;
use vyre_graph::spec::{BufferClass, DispatchSize, Extent, GraphSpec};
use vyre_graph::{
    BackendError, DispatchConfig, Feed, Gpu, GpuBufferHandle, GpuCounters, GpuDispatchGraph,
    GpuResource, Graph, Sink, WgpuPipeline,
};

/// `x -> y` with `y = x * 3 + 1`.
fn one_step() -> GraphSpec {
    graph_spec(
        "one_step",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node("scale", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N)],
    )
}

fn one_step_graph(gpu: &Gpu) -> Graph {
    Graph::new(gpu, one_step()).expect("graph")
}

/// Assert that the message ends with `advice` and return it.
fn message_ends_with(err: &BackendError, advice: &str) -> String {
    let message = err.to_string();
    assert!(
        message.ends_with(advice),
        "message {message:?} does not end with {advice:?}"
    );
    message
}

/// Nothing reached the queue since `before`.
fn nothing_submitted(gpu: &Gpu, before: &GpuCounters) {
    let delta = gpu.counters().since(before);
    assert_eq!(
        delta.submissions, 0,
        "a failed run submitted work: {delta:?}"
    );
}

/// Nothing reached the queue and nothing was allocated or uploaded since `before`.
fn nothing_done(gpu: &Gpu, before: &GpuCounters) {
    let delta = gpu.counters().since(before);
    assert_eq!(delta.submissions, 0, "{delta:?}");
    assert_eq!(delta.buffers_created, 0, "{delta:?}");
    assert_eq!(delta.bind_groups_created, 0, "{delta:?}");
    assert_eq!(delta.bytes_uploaded, 0, "{delta:?}");
}

fn run(graph: &Graph, n: u64, feeds: &[Feed<'_>], sinks: &mut [Sink<'_>]) -> BackendError {
    graph
        .run(&DispatchConfig::default(), n, feeds, sinks)
        .expect_err("the run should fail")
}

#[test]
fn input_not_a_multiple_of_the_element_size() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = vec![0u8; 4001];
    let mut y = vec![0u32; 1000];
    let before = gpu.counters();
    let err = run(
        &graph,
        1000,
        &[Feed::Host(&x)],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::MisalignedInput { buffer, len: 4001, element_size: 4 } if buffer == "x"),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "not a multiple of its 4-byte element; pass whole elements",
    );
    nothing_done(&gpu, &before);

    let err = graph
        .infer_problem_size(&[Feed::Host(&x)])
        .expect_err("misaligned");
    assert!(
        matches!(err, BackendError::MisalignedInput { len: 4001, .. }),
        "{err:?}"
    );
}

#[test]
fn input_larger_than_the_storage_binding_limit() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let max = gpu
        .limits()
        .max_storage_buffer_binding_size
        .min(gpu.limits().max_buffer_size);
    let n = max / 4 + 1;
    // Zeroed and never written: the allocation stays virtual, and the run
    // must refuse it before uploading anything.
    let x = vec![0u8; usize::try_from(n * 4).expect("fits usize")];
    let before = gpu.counters();
    let err = run(&graph, n, &[Feed::Host(&x)], &mut [Sink::Skip]);
    assert!(
        matches!(&err, BackendError::BufferTooLarge { buffer, bytes, max: m, .. } if buffer == "x" && *bytes == n * 4 && *m == max),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "(a Gpu opened with `GpuOptions::with_default_limits` has lower limits than the adapter's own)",
    );
    nothing_done(&gpu, &before);
    drop(x);

    // A small input whose graph plans a huge intermediate is refused too.
    let spec = graph_with_huge_intermediate();
    let graph = Graph::new(&gpu, spec).expect("graph");
    let x = data(100, 1);
    let mut y = vec![0u32; 100];
    let before = gpu.counters();
    let err = run(
        &graph,
        100,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::BufferTooLarge { buffer, bytes, .. } if buffer == "huge" && *bytes == 4 << 40),
        "{err:?}"
    );
    nothing_done(&gpu, &before);
    let err = graph
        .plan(&DispatchConfig::default(), 100)
        .expect_err("plan");
    assert!(
        matches!(err, BackendError::BufferTooLarge { .. }),
        "{err:?}"
    );
    assert_eq!(graph.cached_plans(), 0);
}

fn graph_with_huge_intermediate() -> GraphSpec {
    graph_spec(
        "huge_intermediate",
        vec![
            unary("mul3_add1", MUL3_ADD1),
            unary("xor_shift3", XOR_SHIFT3),
        ],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer(
                "huge",
                BufferClass::Intermediate,
                4,
                Extent::constant(1 << 40),
            ),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![
            node("fill", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N),
            node("drain", 1, &[(0, 0, 1), (0, 1, 2)], OVER_N),
        ],
    )
}

#[test]
fn input_and_output_lengths_must_match_the_plan() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(999, 2);
    let mut y = vec![0u32; 1000];
    let before = gpu.counters();
    let err = run(
        &graph,
        1000,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::LengthMismatch { buffer, n: 1000, expected: 4000, actual: 3996 } if buffer == "x"),
        "{err:?}"
    );
    message_ends_with(&err, "but has 3996; size it as the graph declares");
    nothing_done(&gpu, &before);

    let x = data(1000, 3);
    let mut y = vec![0u32; 1001];
    let err = run(
        &graph,
        1000,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::LengthMismatch { buffer, expected: 4000, actual: 4004, .. } if buffer == "y"),
        "{err:?}"
    );
    message_ends_with(&err, "; size it as the graph declares");
    nothing_done(&gpu, &before);
}

#[test]
fn resident_handle_from_another_device() {
    let _serial = serial();
    let gpu = gpu();
    let other = Gpu::new().expect("a second device");
    assert_ne!(other.id(), gpu.id());
    let graph = one_step_graph(&gpu);
    let x = data(256, 4);
    let foreign = GpuBufferHandle::from_slice(&other, &x).expect("handle");
    assert_eq!(foreign.gpu_id(), other.id());
    let mut y = vec![0u32; 256];
    let before = gpu.counters();
    let err = run(
        &graph,
        256,
        &[Feed::Device(&foreign)],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, .. } if buffer == "x"),
        "{err:?}"
    );
    let message = message_ends_with(
        &err,
        "; make or import it with the graph's Gpu (clones of a Gpu share handles)",
    );
    assert!(message.contains("another Gpu"), "{message}");
    nothing_done(&gpu, &before);

    // As an output sink too.
    let foreign_out = GpuBufferHandle::zeroed(&other, 256 * 4).expect("handle");
    let err = run(
        &graph,
        256,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Device(&foreign_out)],
    );
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, .. } if buffer == "y"),
        "{err:?}"
    );
    nothing_done(&gpu, &before);
    let err = foreign.read(&gpu).expect_err("read on the wrong device");
    assert!(matches!(err, BackendError::InvalidHandle { .. }), "{err:?}");
}

#[test]
fn released_or_too_small_resident_handle() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(256, 5);
    let handle = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    let mut y = vec![0u32; 256];
    // It works while alive, and the plan keeps its bind groups on it...
    graph
        .run(
            &DispatchConfig::default(),
            256,
            &[Feed::Device(&handle)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run with a live handle");
    let clone = handle.clone();
    handle.release();
    assert!(clone.is_released(), "release frees every clone");
    // ...but once released it is refused before anything is encoded.
    let before = gpu.counters();
    let err = run(
        &graph,
        256,
        &[Feed::Device(&clone)],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, .. } if buffer == "x"),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "it was released; keep the handle alive until every run that uses it",
    );
    nothing_done(&gpu, &before);
    let err = clone.read(&gpu).expect_err("read after release");
    assert!(matches!(err, BackendError::InvalidHandle { .. }), "{err:?}");
    nothing_submitted(&gpu, &before);

    let small = GpuBufferHandle::zeroed(&gpu, 4).expect("handle");
    let err = run(
        &graph,
        256,
        &[Feed::Device(&small)],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(matches!(err, BackendError::InvalidHandle { .. }), "{err:?}");
    let message = message_ends_with(&err, "; make it with the size the graph declares");
    assert!(
        message.contains("holds 4 bytes but 1024 are needed"),
        "{message}"
    );
    nothing_submitted(&gpu, &before);
}

#[test]
fn problem_size_zero() {
    let _serial = serial();
    let gpu = gpu();
    // Every output of the one-step graph is empty at n = 0: the run has
    // them without running anything.
    let graph = one_step_graph(&gpu);
    let before = gpu.counters();
    let report = graph
        .run(
            &DispatchConfig::default(),
            0,
            &[Feed::Host(&[])],
            &mut [Sink::Host(&mut [])],
        )
        .expect("n = 0 with every output empty");
    assert_eq!((report.n, report.submissions, report.dispatches), (0, 0, 0));
    nothing_done(&gpu, &before);
    assert_eq!(
        graph
            .infer_problem_size(&[Feed::Host(&[])])
            .expect("an empty input gives n = 0"),
        0
    );
    // An output of constant length is not determined at n = 0 (no
    // reduction's identity): refused, with nothing done.
    let spec = graph_spec(
        "constant_output",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::constant(12)),
        ],
        vec![node(
            "scale",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Invocations(Extent::N),
        )],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let before = gpu.counters();
    let mut y = [0u8; 48];
    let err = run(&graph, 0, &[Feed::Host(&[])], &mut [Sink::Host(&mut y)]);
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "asked to run with problem size 0; pass at least one element",
    );
    nothing_done(&gpu, &before);
    let err = graph
        .plan(&DispatchConfig::default(), 0)
        .expect_err("plan 0");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err:?}"
    );

    let err = graph
        .infer_problem_size(&[Feed::Host(&[])])
        .expect_err("empty input");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err:?}"
    );
    let message = message_ends_with(&err, "; pass at least one element");
    assert!(message.contains("input `x` is empty"), "{message}");
    // A non-empty input does determine it.
    let x = data(12, 6);
    assert_eq!(
        graph
            .infer_problem_size(&[Feed::Host(bytes(&x))])
            .expect("n"),
        12
    );

    // An input of constant length cannot determine n.
    let spec = graph_spec(
        "constant_input",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::constant(12)),
            buffer("y", BufferClass::Output, 4, Extent::constant(12)),
        ],
        vec![node(
            "scale",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Invocations(Extent::constant(12)),
        )],
    );
    let constant = Graph::new(&gpu, spec).expect("graph");
    let err = constant
        .infer_problem_size(&[Feed::Host(bytes(&x))])
        .expect_err("not inferable");
    assert!(
        matches!(err, BackendError::InvalidProblemSize { .. }),
        "{err:?}"
    );
    message_ends_with(&err, "cannot be inferred; pass n explicitly");

    // An input of length 2 * n given an odd length names itself and the fix.
    let spec = graph_spec(
        "pairs",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::scaled(2, 1, 0)),
            buffer("y", BufferClass::Output, 4, Extent::scaled(2, 1, 0)),
        ],
        vec![node(
            "scale",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Invocations(Extent::scaled(2, 1, 0)),
        )],
    );
    let pairs = Graph::new(&gpu, spec).expect("graph");
    let odd = data(13, 7);
    let err = pairs
        .infer_problem_size(&[Feed::Host(bytes(&odd))])
        .expect_err("13 is not 2 * n");
    let message = message_ends_with(&err, "; pass a multiple of 2 elements");
    assert!(message.contains("input `x` holds 13 elements"), "{message}");
    assert_eq!(
        pairs
            .infer_problem_size(&[Feed::Host(bytes(&odd[..12]))])
            .expect("12 is 2 * 6"),
        6
    );
}

#[test]
fn grid_that_cannot_be_folded() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "too_many_workgroups",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node(
            "huge",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Invocations(Extent::constant(u64::MAX / 2)),
        )],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let x = data(100, 7);
    let mut y = vec![0u32; 100];
    let before = gpu.counters();
    let err = run(
        &graph,
        100,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    let workgroups = (u64::MAX / 2).div_ceil(64);
    assert!(
        matches!(&err, BackendError::GridTooLarge { node, workgroups: w, max: m } if node == "huge" && *w == workgroups && *m == max),
        "{err:?}"
    );
    message_ends_with(&err, "; split the problem or use a larger workgroup size");
    nothing_done(&gpu, &before);
    assert_eq!(graph.cached_plans(), 0);

    // An explicit grid over the per-dimension limit is refused the same way,
    // before anything is submitted.
    let graph = one_step_graph(&gpu);
    let before = gpu.counters();
    let err = graph
        .run(
            &DispatchConfig::default().with_grid_override([max.saturating_add(1), 1, 1]),
            100,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Skip],
        )
        .expect_err("grid override over the limit");
    assert!(
        matches!(&err, BackendError::GridTooLarge { node, .. } if node == "scale"),
        "{err:?}"
    );
    nothing_submitted(&gpu, &before);
}

#[test]
fn readback_over_max_output_bytes() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(1000, 8);
    let mut y = vec![0u32; 1000];
    let config = DispatchConfig::default().with_max_output_bytes(100);
    let before = gpu.counters();
    let err = graph
        .run(
            &config,
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect_err("over the cap");
    assert!(
        matches!(
            err,
            BackendError::OutputTooLarge {
                requested: 4000,
                limit: 100
            }
        ),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "; raise the limit, read fewer outputs (`Sink::Skip`), or keep them resident",
    );
    nothing_done(&gpu, &before);

    // The cap counts only what is read back: the same run with its output
    // skipped goes through.
    let before = gpu.counters();
    graph
        .run(&config, 1000, &[Feed::Host(bytes(&x))], &mut [Sink::Skip])
        .expect("skipped output");
    let delta = gpu.counters().since(&before);
    assert_eq!(delta.submissions, 1);
    assert_eq!(delta.bytes_read_back, 0);
}

#[test]
fn node_binding_the_kernel_does_not_declare() {
    let _serial = serial();
    let gpu = gpu();
    let mut spec = one_step();
    spec.nodes.to_mut()[0] = node("extra", 0, &[(0, 0, 0), (0, 1, 1), (0, 5, 1)], OVER_N);
    let before = gpu.counters();
    let err = Graph::new(&gpu, spec).expect_err("undeclared binding");
    assert!(
        matches!(&err, BackendError::BindingMismatch { node, kernel, reason }
            if node == "extra" && kernel == "mul3_add1" && reason.contains("group 0, binding 5 is not declared")),
        "{err:?}"
    );
    let message = message_ends_with(&err, "; bind only those");
    assert!(
        message.contains("src (group 0, binding 0, var<storage, read>"),
        "{message}"
    );
    assert!(
        message.contains("dst (group 0, binding 1, var<storage, read_write>"),
        "{message}"
    );
    assert_eq!(
        gpu.counters().since(&before).pipelines_created,
        0,
        "validated before compiling"
    );
}

#[test]
fn node_missing_a_binding() {
    let _serial = serial();
    let gpu = gpu();
    let mut spec = one_step();
    spec.nodes.to_mut()[0] = node("partial", 0, &[(0, 0, 0)], OVER_N);
    let err = Graph::new(&gpu, spec).expect_err("missing binding");
    assert!(
        matches!(&err, BackendError::BindingMismatch { node, reason, .. }
            if node == "partial" && reason.starts_with("`dst` is not bound")),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("is not bound; bind every binding the kernel declares: "),
        "{message}"
    );
    assert!(message.contains("src (group 0, binding 0"), "{message}");
    assert!(message.contains("dst (group 0, binding 1"), "{message}");
}

#[test]
fn wrong_input_count() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(10, 9);
    let mut y = vec![0u32; 10];
    let before = gpu.counters();
    let err = run(
        &graph,
        10,
        &[Feed::Host(bytes(&x)), Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::InputCountMismatch { expected: 1, given: 2, names, .. } if names == "x"),
        "{err:?}"
    );
    message_ends_with(&err, "; pass them in declaration order");
    nothing_done(&gpu, &before);
    let err = graph.infer_problem_size(&[]).expect_err("no inputs");
    assert!(
        matches!(err, BackendError::InputCountMismatch { given: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn wrong_sink_count() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(10, 10);
    let mut y = vec![0u32; 10];
    let before = gpu.counters();
    let err = run(&graph, 10, &[Feed::Host(bytes(&x))], &mut []);
    assert!(
        matches!(&err, BackendError::OutputCountMismatch { expected: 1, given: 0, names, .. } if names == "y"),
        "{err:?}"
    );
    message_ends_with(&err, "(`Sink::Skip` for outputs you do not need)");
    let err = run(
        &graph,
        10,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y)), Sink::Skip],
    );
    assert!(
        matches!(err, BackendError::OutputCountMismatch { given: 2, .. }),
        "{err:?}"
    );
    nothing_done(&gpu, &before);
}

#[test]
fn plan_over_the_device_memory_budget() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let x = data(1000, 11);
    let mut y = vec![0u32; 1000];
    let budget = DispatchConfig::default().with_device_memory_budget_bytes(1024);
    let before = gpu.counters();
    let err = graph
        .run(
            &budget,
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect_err("over budget");
    // x, y and y's readback buffer: 3 × 4000 bytes.
    assert!(
        matches!(
            err,
            BackendError::DeviceOutOfMemory {
                requested: 12_000,
                available: 1024
            }
        ),
        "{err:?}"
    );
    message_ends_with(
        &err,
        "; raise `device_memory_budget_bytes` or shrink the problem",
    );
    nothing_done(&gpu, &before);
    assert_eq!(graph.cached_plans(), 0, "nothing allocated, nothing cached");

    // A plan already cached is held to the budget of each run.
    graph
        .run(
            &DispatchConfig::default(),
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("unbounded run");
    let before = gpu.counters();
    let err = graph
        .run(
            &budget,
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect_err("cached plan over budget");
    assert!(
        matches!(
            err,
            BackendError::DeviceOutOfMemory {
                requested: 12_000,
                ..
            }
        ),
        "{err:?}"
    );
    nothing_done(&gpu, &before);
    let err = graph.plan(&budget, 1000).expect_err("plan over budget");
    assert!(
        matches!(err, BackendError::DeviceOutOfMemory { .. }),
        "{err:?}"
    );
    // A budget that fits runs.
    let fits = DispatchConfig::default().with_device_memory_budget_bytes(12_000);
    graph
        .run(
            &fits,
            1000,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run within budget");
}

const BROKEN_WGSL: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    dst[g.x] = src[g.x] * ;
}
";

const FIX_THE_WGSL: &str = "fix the WGSL, or the binding description when it disagrees with the WGSL (graph! checks both at compile time; hand-built kernels are only checked here)";

#[test]
fn broken_wgsl_is_an_error_not_a_panic() {
    let _serial = serial();
    let gpu = gpu();
    let mut spec = one_step();
    spec.kernels.to_mut()[0] = unary("broken", BROKEN_WGSL);
    let err = Graph::new(&gpu, spec).expect_err("broken WGSL");
    assert!(
        matches!(&err, BackendError::KernelCompileFailed { kernel, message } if kernel == "broken" && !message.is_empty()),
        "{err:?}"
    );
    message_ends_with(&err, FIX_THE_WGSL);

    let err = WgpuPipeline::new(&gpu, unary("broken", BROKEN_WGSL)).expect_err("broken WGSL");
    assert!(
        matches!(err, BackendError::KernelCompileFailed { .. }),
        "{err:?}"
    );

    // The device is still usable afterwards.
    let graph = one_step_graph(&gpu);
    let x = data(100, 12);
    let mut y = vec![0u32; 100];
    graph
        .run(
            &DispatchConfig::default(),
            100,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run after a compile failure");
    assert_same(
        &y,
        &x.iter().map(|&v| mul3_add1(v)).collect::<Vec<_>>(),
        "after failure",
    );
}

/// Declares `src` as `read_write`, where the description says read-only.
const SRC_READ_WRITE: &str = "
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
}
";

#[test]
fn binding_description_that_disagrees_with_the_wgsl() {
    let _serial = serial();
    let gpu = gpu();
    // The description says `src` is read-only; the WGSL declares it read_write.
    let mut spec = one_step();
    spec.kernels.to_mut()[0] = unary("lying", SRC_READ_WRITE);
    let err = Graph::new(&gpu, spec).expect_err("access mismatch");
    assert!(
        matches!(&err, BackendError::KernelCompileFailed { kernel, .. } if kernel == "lying"),
        "{err:?}"
    );
    message_ends_with(&err, FIX_THE_WGSL);

    // The description puts `dst` at binding 2; the WGSL at binding 1.
    let mut spec = one_step();
    spec.kernels.to_mut()[0] = kernel(
        "moved",
        MUL3_ADD1,
        [64, 1, 1],
        &[read("src", 0, 0, 4), write("dst", 0, 2, 4)],
    );
    spec.nodes.to_mut()[0] = node("scale", 0, &[(0, 0, 0), (0, 2, 1)], OVER_N);
    let err = Graph::new(&gpu, spec).expect_err("binding mismatch");
    assert!(
        matches!(&err, BackendError::KernelCompileFailed { kernel, .. } if kernel == "moved"),
        "{err:?}"
    );

    // The description names an entry point the WGSL does not have.
    let mut missing_entry = unary("no_entry", MUL3_ADD1);
    missing_entry.entry_point = "nope".into();
    let err = WgpuPipeline::new(&gpu, missing_entry).expect_err("no such entry point");
    assert!(
        matches!(err, BackendError::KernelCompileFailed { .. }),
        "{err:?}"
    );

    // A uniform binding described as storage.
    let mut spec = one_step();
    spec.kernels.to_mut()[0] = kernel(
        "uniform_as_storage",
        AFFINE_UNIFORM,
        [64, 1, 1],
        &[
            read("src", 0, 0, 4),
            read("params", 0, 1, 16),
            write("dst", 0, 2, 4),
        ],
    );
    spec.buffers
        .to_mut()
        .push(buffer("p", BufferClass::Input, 16, Extent::constant(1)));
    spec.nodes.to_mut()[0] = node("affine", 0, &[(0, 0, 0), (0, 1, 2), (0, 2, 1)], OVER_N);
    let err = Graph::new(&gpu, spec).expect_err("uniform described as storage");
    assert!(
        matches!(&err, BackendError::KernelCompileFailed { kernel, .. } if kernel == "uniform_as_storage"),
        "{err:?}"
    );
}

#[test]
fn node_writing_an_input_buffer() {
    let _serial = serial();
    let gpu = gpu();
    let mut spec = one_step();
    spec.nodes
        .to_mut()
        .push(node("overwrite", 0, &[(0, 0, 1), (0, 1, 0)], OVER_N));
    let err = Graph::new(&gpu, spec).expect_err("writes an input");
    assert!(
        matches!(&err, BackendError::InvalidProgram { graph, .. } if graph == "one_step"),
        "{err:?}"
    );
    let message = message_ends_with(&err, "; declare it as an inout or intermediate buffer");
    assert!(
        message.contains("node `overwrite` writes `x`, which is read-only (Input)"),
        "{message}"
    );
}

#[test]
fn intermediate_read_before_write() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "early_read",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("t", BufferClass::Intermediate, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![
            node("early", 0, &[(0, 0, 1), (0, 1, 2)], OVER_N),
            node("late", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N),
        ],
    );
    let err = Graph::new(&gpu, spec).expect_err("read before write");
    assert!(
        matches!(err, BackendError::InvalidProgram { .. }),
        "{err:?}"
    );
    let message = message_ends_with(&err, "; write it first or make it an input");
    assert!(
        message.contains("node `early` reads `t` before any node writes it"),
        "{message}"
    );
}

#[test]
fn output_never_written() {
    let _serial = serial();
    let gpu = gpu();
    let mut spec = one_step();
    spec.buffers
        .to_mut()
        .push(buffer("z", BufferClass::Output, 4, Extent::N));
    let err = Graph::new(&gpu, spec).expect_err("output never written");
    assert!(
        matches!(err, BackendError::InvalidProgram { .. }),
        "{err:?}"
    );
    let message = message_ends_with(&err, "; bind it to a kernel binding that writes it");
    assert!(message.contains("no node writes output `z`"), "{message}");
}

#[test]
fn seed_dispatch_graph_rejects_bad_ops_before_submitting() {
    let _serial = serial();
    let gpu = gpu();
    let mul = WgpuPipeline::new(&gpu, unary("mul3_add1", MUL3_ADD1)).expect("pipeline");
    let before = gpu.counters();

    let mut ops = GpuDispatchGraph::new();
    ops.push(&mul, bytes(&data(10, 13)).to_vec());
    ops.push(&mul, vec![0u8; 6]);
    let err = ops
        .dispatch(&DispatchConfig::default())
        .expect_err("misaligned op input");
    assert!(
        matches!(
            err,
            BackendError::MisalignedInput {
                len: 6,
                element_size: 4,
                ..
            }
        ),
        "{err:?}"
    );
    message_ends_with(&err, "; pass whole elements");
    nothing_done(&gpu, &before);

    let uniform_kernel = kernel(
        "affine",
        AFFINE_UNIFORM,
        [64, 1, 1],
        &[
            read("src", 0, 0, 4),
            uniform("params", 0, 1, 16),
            write("dst", 0, 2, 4),
        ],
    );
    let affine = WgpuPipeline::new(&gpu, uniform_kernel).expect("pipeline");
    let mut ops = GpuDispatchGraph::new();
    ops.push(&affine, bytes(&data(10, 14)).to_vec());
    let err = ops
        .dispatch(&DispatchConfig::default())
        .expect_err("uniform op");
    assert!(
        matches!(&err, BackendError::BindingMismatch { node, .. } if node == "op 0"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("build a Graph for kernels with uniforms"),
        "{err}"
    );
    nothing_submitted(&gpu, &before);

    let other = Gpu::new().expect("a second device");
    let foreign_pipeline =
        WgpuPipeline::new(&other, unary("mul3_add1", MUL3_ADD1)).expect("pipeline");
    let mut ops = GpuDispatchGraph::new();
    ops.push(&mul, bytes(&data(10, 15)).to_vec());
    ops.push(&foreign_pipeline, bytes(&data(10, 16)).to_vec());
    let err = ops
        .dispatch(&DispatchConfig::default())
        .expect_err("pipelines of two devices");
    assert!(
        matches!(&err, BackendError::BindingMismatch { node, .. } if node == "op 1"),
        "{err:?}"
    );
    message_ends_with(&err, "; compile every op on one Gpu");

    let foreign_input = GpuBufferHandle::from_slice(&other, &data(10, 17)).expect("handle");
    let mut ops = GpuDispatchGraph::new();
    ops.push(&mul, GpuResource::Resident(foreign_input));
    let err = ops
        .dispatch(&DispatchConfig::default())
        .expect_err("foreign resident input");
    assert!(matches!(err, BackendError::InvalidHandle { .. }), "{err:?}");
    nothing_done(&gpu, &before);
}

/// Records a run of `graph` (the two-step spec) on `x` into `encoder`, its
/// output read back into `y`.
fn record_two_step<'g>(
    graph: &'g Graph,
    encoder: &mut vyre_graph::wgpu::CommandEncoder,
    x: &[u32],
    y: &mut [u32],
) -> vyre_graph::RecordedRun<'g> {
    graph
        .record(
            encoder,
            &DispatchConfig::default(),
            x.len() as u64,
            &[Feed::Host(bytes(x))],
            &[Sink::Host(bytes_mut(y))],
        )
        .expect("record")
}

fn assert_not_submitted(result: Result<vyre_graph::RunReport, BackendError>, what: &str) {
    match result {
        Err(err @ BackendError::NotSubmitted) => {
            message_ends_with(&err, "then read");
        }
        other => panic!("{what}: expected NotSubmitted, got {other:?}"),
    }
}

/// `Graph::record` then `read` without the recorded commands ever running:
/// the encoder dropped, or other work submitted instead, read blocking or
/// async. Each is `NotSubmitted`, never an `Ok` with stale or zero data;
/// the right submission reads correctly, and the same graph runs normally.
#[test]
fn reading_a_recorded_run_whose_commands_never_ran_is_not_submitted() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("unsubmitted")).expect("graph");
    let n = 1000;
    let device = gpu.device();
    // A good recorded run first: its plan's readback holds its results.
    let x = data(n, 1);
    let mut y = vec![0u32; n];
    let mut encoder = device.create_command_encoder(&Default::default());
    let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
    let submission = gpu.queue().submit([encoder.finish()]);
    recorded
        .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
        .expect("read");
    assert_same(&y, &two_step_cpu(&x), "a read after the right submission");

    // The encoder dropped unsubmitted, read blocking.
    let x = data(n, 2);
    let mut encoder = device.create_command_encoder(&Default::default());
    let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
    drop(encoder);
    let read = recorded.read(gpu.queue().submit([]), &mut [Sink::Host(bytes_mut(&mut y))]);
    assert_not_submitted(read, "a dropped encoder");

    // Only other work submitted (a copy of the application's own), the
    // encoder still alive; submitted late, it writes only into the plan
    // that the failed read dropped.
    let mut encoder = device.create_command_encoder(&Default::default());
    let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
    let scratch = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    let other = GpuBufferHandle::zeroed(&gpu, 4 * n as u64).expect("handle");
    let mut work = device.create_command_encoder(&Default::default());
    work.copy_buffer_to_buffer(scratch.buffer(), 0, other.buffer(), 0, 4 * n as u64);
    let submission = gpu.queue().submit([work.finish()]);
    let read = recorded.read(submission, &mut [Sink::Host(bytes_mut(&mut y))]);
    assert_not_submitted(read, "other work submitted");
    gpu.queue().submit([encoder.finish()]);

    // The encoder dropped, read async.
    let mut encoder = device.create_command_encoder(&Default::default());
    let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
    drop(encoder);
    let read = pollster::block_on(recorded.read_async(&mut [Sink::Host(bytes_mut(&mut y))]));
    assert_not_submitted(read, "a dropped encoder, read async");

    // The right submission, read blocking and async: right.
    for round in 0..2 {
        let x = data(n, 3 + round);
        let mut encoder = device.create_command_encoder(&Default::default());
        let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
        let submission = gpu.queue().submit([encoder.finish()]);
        let mut sinks = [Sink::Host(bytes_mut(&mut y))];
        if round == 0 {
            recorded.read(submission, &mut sinks).expect("read");
        } else {
            pollster::block_on(recorded.read_async(&mut sinks)).expect("read async");
        }
        assert_same(&y, &two_step_cpu(&x), &format!("submitted, round {round}"));
    }
    // Checking the stamp allocates nothing: a recorded run from the cache
    // makes no buffer and no bind group.
    let before = gpu.counters();
    let mut encoder = device.create_command_encoder(&Default::default());
    let recorded = record_two_step(&graph, &mut encoder, &x, &mut y);
    let submission = gpu.queue().submit([encoder.finish()]);
    let report = recorded
        .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
        .expect("read");
    assert!(report.cache_hit);
    let spent = gpu.counters().since(&before);
    assert_eq!((spent.buffers_created, spent.bind_groups_created), (0, 0));
    assert_same(&y, &two_step_cpu(&x), "a steady-state recorded run");

    // The same graph runs normally, blocking and async, at the same size.
    let x = data(n, 9);
    let (y, _) = run_host(&graph, &x);
    assert_same(&y, &two_step_cpu(&x), "run after the misuse");
    let mut y = vec![0u32; n];
    pollster::block_on(graph.run_async(
        &DispatchConfig::default(),
        n as u64,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Host(bytes_mut(&mut y))],
    ))
    .expect("async run");
    assert_same(&y, &two_step_cpu(&x), "async run after the misuse");
}

vyre_graph::graph! {
    /// Sums the channels of each column of a two-row rgba8unorm texture.
    pub struct Columns;

    kernel sums = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var<storage, read_write> sums: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&sums) { return; }
            var total = 0u;
            for (var y = 0u; y < 2u; y++) {
                let c = vec4<u32>(round(textureLoad(src, vec2<u32>(g.x, y), 0) * 255.0));
                total += c.x + c.y + c.z + c.w;
            }
            sums[g.x] = total;
        }
    ";

    input texture src[n, 2] rgba8unorm;
    output sums[n];

    node sums(src: src, sums: sums) over n;
}

/// A 4 x 4 rgba8unorm texture made with plain wgpu on `gpu`'s device.
fn small_texture(gpu: &Gpu) -> vyre_graph::GpuTextureHandle {
    let texture = gpu
        .device()
        .create_texture(&vyre_graph::wgpu::TextureDescriptor {
            label: Some("small"),
            size: vyre_graph::wgpu::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: vyre_graph::wgpu::TextureDimension::D2,
            format: vyre_graph::wgpu::TextureFormat::Rgba8Unorm,
            usage: vyre_graph::wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
    vyre_graph::GpuTextureHandle::from_wgpu(gpu, texture)
}

/// A texture handle misused is a texture in the message, never a "resident
/// buffer"; a buffer handle read on another device names no graph buffer.
/// The graph then runs right.
#[test]
fn misused_handles_are_named_for_what_they_are() {
    let _serial = serial();
    let gpu = gpu();
    let graph = one_step_graph(&gpu);
    let texture = small_texture(&gpu);
    let mut y = vec![0u32; 16];
    let before = gpu.counters();
    let err = graph
        .run(
            &DispatchConfig::default(),
            16,
            &[Feed::Texture(&texture)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect_err("a texture for a buffer");
    nothing_submitted(&gpu, &before);
    assert!(
        matches!(&err, BackendError::InvalidTexture { buffer, .. } if buffer == "x"),
        "{err:?}"
    );
    let message = message_ends_with(&err, "pass host elements or a `GpuBufferHandle`");
    assert!(
        message.starts_with("the texture passed for `x` cannot be used: `x` is a buffer"),
        "{message}"
    );
    let err = graph
        .run(
            &DispatchConfig::default(),
            16,
            &[Feed::Host(bytes(&[1; 16]))],
            &mut [Sink::Texture(&texture)],
        )
        .expect_err("a texture for a buffer output");
    assert!(
        matches!(&err, BackendError::InvalidTexture { buffer, .. } if buffer == "y"),
        "{err:?}"
    );

    // Read back on another device: no graph resource to name.
    let other = Gpu::new().expect("a second Gpu");
    let err = texture.read(&other).expect_err("another Gpu's texture");
    let message = message_ends_with(&err, "read it with its own");
    assert!(
        message.starts_with("the texture cannot be used: it belongs to another Gpu"),
        "{message}"
    );
    let handle = GpuBufferHandle::from_slice(&gpu, &[1u32; 16]).expect("handle");
    let err = handle.read(&other).expect_err("another Gpu's buffer");
    assert!(matches!(err, BackendError::InvalidHandle { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with(
            "`GpuBufferHandle::read` cannot use the resident buffer: it belongs to another Gpu"
        ),
        "{message}"
    );

    // A resident buffer where a texture goes: named as what it is, with
    // what to pass instead.
    let columns = Columns::new(&gpu).expect("graph");
    let texels = GpuBufferHandle::from_slice(&gpu, &[0x0102_0304u32; 8]).expect("handle");
    let err = columns
        .graph()
        .run(
            &DispatchConfig::default(),
            4,
            &[Feed::Device(&texels)],
            &mut [Sink::Skip],
        )
        .expect_err("a buffer for a texture");
    let message = err.to_string();
    assert!(
        matches!(err, BackendError::TextureMismatch { .. })
            && message.contains("passed a resident buffer (`GpuBufferHandle`) of 32 bytes")
            && message.contains("pass a `GpuTextureHandle`"),
        "{message}"
    );
    let pixels = [[1u8, 2, 3, 4]; 8];
    let out = columns.run(&pixels[..]).expect("host texels");
    assert_eq!(out.sums, [20; 4]);

    // The same graph, right.
    let x = data(16, 4);
    let mut y = vec![0u32; 16];
    graph
        .run(
            &DispatchConfig::default(),
            16,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    let want: Vec<u32> = x.iter().map(|&v| mul3_add1(v)).collect();
    assert_same(&y, &want, "after the misused handles");
}

/// An imported buffer's errors name it (by its label, or as an imported
/// buffer) and the call that refused it: the method of the handle, or the
/// run and the graph buffer it was passed for.
#[test]
fn imported_buffers_are_named_in_their_errors() {
    use vyre_graph::wgpu::{BufferDescriptor, BufferUsages};
    let _serial = serial();
    let gpu = gpu();
    let make = |label: &str, usage: BufferUsages| {
        gpu.device().create_buffer(&BufferDescriptor {
            label: Some(label),
            size: 256 * 4,
            usage,
            mapped_at_creation: false,
        })
    };
    let storage = BufferUsages::STORAGE;
    let copies = BufferUsages::COPY_SRC | BufferUsages::COPY_DST;
    let labelled =
        GpuBufferHandle::from_wgpu_with_label(&gpu, make("vertices", storage), "vertices")
            .expect("import");
    assert_eq!(labelled.label(), Some("vertices"));
    let unlabelled = GpuBufferHandle::from_wgpu(&gpu, make("unnamed", storage)).expect("import");
    assert_eq!(unlabelled.label(), None);
    let before = gpu.counters();

    // Read back without COPY_SRC: the call and the handle are named.
    let err = labelled.read_as::<u32>(&gpu).expect_err("no COPY_SRC");
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, .. } if buffer.is_empty()),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "`GpuBufferHandle::read_as` cannot use the imported buffer `vertices`: its wgpu buffer has usage STORAGE, which lacks COPY_SRC (`read_as` copies it into a staging buffer to read it back); create it with `BufferUsages::COPY_SRC` added"
    );
    let err = unlabelled.read(&gpu).expect_err("no COPY_SRC");
    let message = message_ends_with(&err, "create it with `BufferUsages::COPY_SRC` added");
    assert!(
        message.starts_with(
            "`GpuBufferHandle::read` cannot use an imported buffer (no label): its wgpu buffer has usage STORAGE, which lacks COPY_SRC (`read` copies it"
        ),
        "{message}"
    );
    assert!(!message.contains("this run"), "{message}");
    nothing_done(&gpu, &before);

    // Passed to a run: the graph buffer it was passed for, and the handle.
    let graph = one_step_graph(&gpu);
    let copy_only = GpuBufferHandle::from_wgpu_with_label(&gpu, make("copies", copies), "copies")
        .expect("import");
    let mut y = vec![0u32; 256];
    let err = run(
        &graph,
        256,
        &[Feed::Device(&copy_only)],
        &mut [Sink::Host(bytes_mut(&mut y))],
    );
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, .. } if buffer == "x"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the resident buffer passed for `x` cannot be used: it is the imported buffer `copies`, and its wgpu buffer has usage COPY_SRC | COPY_DST, which lacks STORAGE (the run binds it in place as input `x`); create it with `BufferUsages::STORAGE` added"
    );
    let x = data(256, 3);
    let err = run(
        &graph,
        256,
        &[Feed::Host(bytes(&x))],
        &mut [Sink::Device(&unlabelled)],
    );
    let message = message_ends_with(&err, "create it with `BufferUsages::COPY_DST` added");
    assert!(
        message.starts_with(
            "the resident buffer passed for `y` cannot be used: it is an imported buffer (no label), and its wgpu buffer has usage STORAGE, which lacks COPY_DST (the run copies output `y` into it)"
        ),
        "{message}"
    );
    nothing_done(&gpu, &before);

    // Refused at import: the call and the label.
    let ragged = gpu.device().create_buffer(&BufferDescriptor {
        label: Some("ragged"),
        size: 6,
        usage: storage,
        mapped_at_creation: false,
    });
    let err = GpuBufferHandle::from_wgpu_with_label(&gpu, ragged, "ragged").expect_err("6 bytes");
    let message = message_ends_with(
        &err,
        "a storage buffer holds whole 4-byte words (at least one)",
    );
    assert!(
        message.starts_with(
            "`GpuBufferHandle::from_wgpu` cannot import the buffer `ragged`: it is 6 bytes"
        ),
        "{message}"
    );

    // A resident buffer of vyre's own is still "the resident buffer".
    let own = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    own.release();
    let err = own.read_as::<u32>(&gpu).expect_err("released");
    assert_eq!(
        err.to_string(),
        "`GpuBufferHandle::read_as` cannot use the resident buffer: it was released; keep the handle alive until it is read"
    );
}
