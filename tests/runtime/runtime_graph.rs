//! GPU integration tests of `Graph` and the seed `GpuDispatchGraph`: results
//! against CPU references, one submission per run, buffer aliasing, resident
//! handles, grid folding, the launch-plan cache, threads and uniforms.

use crate::common;

use std::collections::BTreeSet;

use common::*;
use vyre_graph::spec::{BindingKind, BindingSpec, BufferClass, DispatchSize, Extent, GridFold};
use vyre_graph::{
    DispatchConfig, Feed, Gpu, GpuBufferHandle, GpuDispatchGraph, GpuResource, Graph, Sink,
    WgpuPipeline, launch_accounting,
};

#[test]
fn chain_of_sixteen_kernels_is_one_submission_with_two_aliased_intermediate_slots() {
    const NODES: usize = 16;
    const N: usize = 1_000_000;
    let _serial = serial();
    let gpu = gpu();
    let kernels = vec![
        unary("mul3_add1", MUL3_ADD1),
        unary("xor_shift3", XOR_SHIFT3),
        unary("rotate_add", ROTATE_ADD),
    ];
    let cpu_ops: [fn(u32) -> u32; 3] = [mul3_add1, xor_shift3, rotate_add];
    // Buffer 0 is x, 1..NODES are t0..t14, NODES is y; node i reads i, writes i + 1.
    let mut buffers = vec![buffer("x", BufferClass::Input, 4, Extent::N)];
    for i in 0..NODES - 1 {
        buffers.push(buffer(
            &format!("t{i}"),
            BufferClass::Intermediate,
            4,
            Extent::N,
        ));
    }
    buffers.push(buffer("y", BufferClass::Output, 4, Extent::N));
    let nodes = (0..NODES)
        .map(|i| {
            node(
                &format!("step{i}"),
                i % 3,
                &[(0, 0, i), (0, 1, i + 1)],
                OVER_N,
            )
        })
        .collect();
    let graph = Graph::new(&gpu, graph_spec("chain16", kernels, buffers, nodes)).expect("graph");
    assert_eq!(
        graph.pipeline_count(),
        3,
        "one pipeline per distinct kernel"
    );

    // Aliasing: x and y get a slot each, the 15 intermediates share 2.
    let description = graph.describe();
    let intermediate_slots: BTreeSet<usize> = description
        .buffers
        .iter()
        .filter(|b| b.class == BufferClass::Intermediate)
        .map(|b| b.slot)
        .collect();
    assert_eq!(intermediate_slots.len(), 2, "{description}");
    assert_eq!(graph.analysis().slot_count, 4, "{description}");
    assert_eq!(description.slot_count, 4);
    let io_slots = [description.buffers[0].slot, description.buffers[NODES].slot];
    assert!(io_slots.iter().all(|s| !intermediate_slots.contains(s)));
    assert_ne!(io_slots[0], io_slots[1]);
    assert_eq!(description.level_count as usize, NODES);
    let peak = graph.peak_bytes(N as u64);
    assert!(peak.aliased < peak.unaliased, "{peak:?}");
    assert_eq!(peak.aliased, 4 * 4 * N as u64, "x, y and two shared slots");
    assert_eq!(peak.unaliased, (NODES as u64 + 1) * 4 * N as u64);

    let x = data(N, 1);
    let mut want = x.clone();
    for i in 0..NODES {
        for v in &mut want {
            *v = cpu_ops[i % 3](*v);
        }
    }
    let before = gpu.counters();
    let (y, report) = run_host(&graph, &x);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &want, "chain of 16");
    assert_eq!(delta.submissions, 1, "{delta:?}");
    assert_eq!(report.submissions, 1);
    assert!(!report.cache_hit);
    // The plan allocates one buffer per slot plus one readback buffer (and
    // one staging buffer for its 4 MB input): the aliasing is real, not
    // only in the analysis.
    assert_eq!(delta.staged_uploads, 1, "{delta:?}");
    assert_eq!(delta.buffers_created, 4 + 1 + 1, "{delta:?}");
    assert_eq!(delta.bytes_read_back, 4 * N as u64);
    assert_eq!(delta.bytes_uploaded, 4 * N as u64);
}

#[test]
fn diamond_levels_and_result() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "diamond",
        vec![
            unary("mul3_add1", MUL3_ADD1),
            unary("xor_shift3", XOR_SHIFT3),
            unary("rotate_add", ROTATE_ADD),
            binary("add", ADD),
        ],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("ta", BufferClass::Intermediate, 4, Extent::N),
            buffer("tb", BufferClass::Intermediate, 4, Extent::N),
            buffer("tc", BufferClass::Intermediate, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![
            node("a", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N),
            node("b", 1, &[(0, 0, 1), (0, 1, 2)], OVER_N),
            node("c", 2, &[(0, 0, 1), (0, 1, 3)], OVER_N),
            node("d", 3, &[(0, 0, 2), (0, 1, 3), (0, 2, 4)], OVER_N),
        ],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let description = graph.describe();
    let levels: Vec<u32> = description.nodes.iter().map(|n| n.level).collect();
    assert_eq!(levels, [0, 1, 1, 2], "{description}");
    assert_eq!(description.level_count, 3);
    assert_eq!(description.nodes[1].depends_on, [0]);
    assert_eq!(description.nodes[2].depends_on, [0]);
    assert_eq!(description.nodes[3].depends_on, [1, 2]);

    let x = data(10_007, 2);
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            let a = mul3_add1(v);
            xor_shift3(a).wrapping_add(rotate_add(a))
        })
        .collect();
    let before = gpu.counters();
    let (y, _) = run_host(&graph, &x);
    assert_same(&y, &want, "diamond");
    assert_eq!(gpu.counters().since(&before).submissions, 1);
}

#[test]
fn resident_handles_chain_two_runs_without_readback() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("resident_chain")).expect("graph");
    let n = 40_000usize;
    let x = data(n, 3);
    let y_index = graph.spec().buffer_index("y").expect("y");
    let handle = graph.create_buffer(y_index, n as u64).expect("handle");
    assert_eq!(handle.size(), 4 * n as u64);

    let before = gpu.counters();
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Device(&handle)],
        )
        .expect("run 1");
    let after_first = gpu.counters();
    let first = after_first.since(&before);
    assert_eq!(
        first.bytes_read_back, 0,
        "run 1 kept its output on the device: {first:?}"
    );
    assert_eq!(first.submissions, 1);

    let mut y = vec![0u32; n];
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Device(&handle)],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run 2");
    let second = gpu.counters().since(&after_first);
    assert_eq!(second.submissions, 1);
    assert_eq!(
        second.bytes_read_back,
        4 * n as u64,
        "only the final output is read back"
    );
    assert_eq!(
        second.bytes_uploaded, 0,
        "the resident input is bound in place: {second:?}"
    );
    let want = two_step_cpu(&two_step_cpu(&x));
    assert_same(&y, &want, "two chained runs");
    // The handle still holds run 1's output.
    assert_same(
        &handle.read_as::<u32>(&gpu).expect("read"),
        &two_step_cpu(&x),
        "handle",
    );
}

#[test]
fn resident_input_fed_again_with_the_same_handle_makes_no_bind_group() {
    let _serial = serial();
    let gpu = gpu();
    let reader = Graph::new(&gpu, two_step_spec("reader")).expect("reader");
    // A second graph writes new contents into the handle between runs.
    let writer = Graph::new(&gpu, one_step_spec("writer")).expect("writer");
    let n = 5_000usize;
    let x1 = data(n, 4);
    let handle = GpuBufferHandle::from_slice(&gpu, &x1).expect("handle");
    let run_reader = |feed: &GpuBufferHandle| {
        let mut y = vec![0u32; n];
        reader
            .run(
                &DispatchConfig::default(),
                n as u64,
                &[Feed::Device(feed)],
                &mut [Sink::Host(bytes_mut(&mut y))],
            )
            .expect("reader run");
        y
    };
    assert_same(
        &run_reader(&handle),
        &two_step_cpu(&x1),
        "first resident run",
    );

    let x2 = data(n, 5);
    writer
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytes(&x2))],
            &mut [Sink::Device(&handle)],
        )
        .expect("writer run");
    let written: Vec<u32> = x2.iter().map(|&v| mul3_add1(v)).collect();

    let before = gpu.counters();
    let y = run_reader(&handle);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &two_step_cpu(&written), "same handle, new contents");
    assert_eq!(delta.bind_groups_created, 0, "{delta:?}");
    assert_eq!(delta.buffers_created, 0, "{delta:?}");
    assert_eq!(delta.bytes_uploaded, 0, "{delta:?}");
    assert_eq!(delta.submissions, 1);

    // Another handle does rebind, and is the one read.
    let x3 = data(n, 6);
    let other = GpuBufferHandle::from_slice(&gpu, &x3).expect("other handle");
    let before = gpu.counters();
    let y = run_reader(&other);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &two_step_cpu(&x3), "another handle");
    assert!(delta.bind_groups_created > 0, "{delta:?}");
    assert_eq!(delta.buffers_created, 0, "{delta:?}");

    // And host data after resident data goes to the plan's own buffer again.
    let (y, report) = run_host(&reader, &x2);
    assert!(report.cache_hit);
    assert_same(&y, &two_step_cpu(&x2), "host input after resident inputs");
}

#[test]
fn folded_grid_covers_every_element_exactly() {
    const N: u32 = 70_000;
    let _serial = serial();
    let gpu = gpu();
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    assert!(
        max < N,
        "this device launches {max} workgroups per dimension, so {N} needs no fold and the test proves nothing"
    );
    let mut folded = kernel(
        "folded_index",
        FOLDED_INDEX,
        [1, 1, 1],
        &[write("dst", 0, 0, 4)],
    );
    // It computes its index from every dimension of the grid.
    folded.fold = GridFold::Linear;
    let spec = graph_spec(
        "folded",
        vec![folded],
        vec![buffer("y", BufferClass::Output, 4, Extent::N)],
        vec![node("index", 0, &[(0, 0, 0)], OVER_N)],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let mut y = vec![u32::MAX; N as usize];
    let report = graph
        .run(
            &DispatchConfig::default(),
            u64::from(N),
            &[],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    assert!(report.plan.worker_groups >= N, "{:?}", report.plan);
    let want: Vec<u32> = (0..N).map(|i| i * 2).collect();
    assert_same(&y, &want, "folded grid");
}

#[test]
fn plan_cache_hits_allocate_nothing_and_evictions_reallocate() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("cached")).expect("graph");
    let small = data(1000, 7);
    let large = data(1500, 8);

    let before = gpu.counters();
    let (y, report) = run_host(&graph, &small);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &two_step_cpu(&small), "first run");
    assert!(!report.cache_hit);
    assert!(
        delta.buffers_created > 0 && delta.bind_groups_created > 0,
        "{delta:?}"
    );
    assert_eq!(graph.cached_plans(), 1);

    let small2 = data(1000, 9);
    let before = gpu.counters();
    let (y, report) = run_host(&graph, &small2);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &two_step_cpu(&small2), "cached run");
    assert!(report.cache_hit);
    assert_eq!(report.cache_entries, 1);
    assert_eq!(delta.buffers_created, 0, "{delta:?}");
    assert_eq!(delta.bind_groups_created, 0, "{delta:?}");
    assert_eq!(delta.pipelines_created, 0, "{delta:?}");
    assert_eq!(delta.submissions, 1);

    let before = gpu.counters();
    let (y, report) = run_host(&graph, &large);
    let delta = gpu.counters().since(&before);
    assert_same(&y, &two_step_cpu(&large), "new size");
    assert!(!report.cache_hit);
    assert!(
        delta.buffers_created > 0 && delta.bind_groups_created > 0,
        "{delta:?}"
    );
    assert_eq!(report.cache_entries, 2);
    assert_eq!(graph.cached_plans(), 2);

    // One plan only: alternating sizes evict each other.
    let tiny = Graph::with_cache_capacity(&gpu, two_step_spec("tiny_cache"), 1).expect("graph");
    for (round, x) in [&small, &large, &small].into_iter().enumerate() {
        let before = gpu.counters();
        let (y, report) = run_host(&tiny, x);
        let delta = gpu.counters().since(&before);
        assert_same(&y, &two_step_cpu(x), "capacity 1");
        assert!(!report.cache_hit, "round {round}: the size was evicted");
        assert!(delta.buffers_created > 0, "round {round}: {delta:?}");
        assert_eq!(tiny.cached_plans(), 1, "round {round}");
    }
    let (_, report) = run_host(&tiny, &small);
    assert!(report.cache_hit, "the most recent size stays cached");
}

#[test]
fn grid_override_applies_to_its_run_only() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, one_step_spec("override")).expect("graph");
    let n = 1000usize;
    let x = data(n, 10);
    // One workgroup of 64: only the first 64 elements are computed.
    let mut y = vec![0u32; n];
    graph
        .run(
            &DispatchConfig::default().with_grid_override([1, 1, 1]),
            n as u64,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("override run");
    let full: Vec<u32> = x.iter().map(|&v| mul3_add1(v)).collect();
    assert_same(&y[..64], &full[..64], "overridden grid");
    assert!(
        y[64..].iter().all(|&v| v == 0),
        "one workgroup computed more than 64 elements"
    );
    // The next run of the same size, without the override, uses the planned grid.
    let (y, report) = run_host(&graph, &x);
    assert!(report.cache_hit);
    assert_same(&y, &full, "run after an overridden run");
}

/// A seed op kernel built with the documented `BindingSpec::storage`.
fn seed_kernel(label: &str, wgsl: &str, outputs: &[&'static str]) -> vyre_graph::spec::KernelSpec {
    let mut bindings = vec![BindingSpec::storage(
        "src",
        0,
        0,
        BindingKind::ReadOnlyStorage,
        4,
    )];
    for (binding, name) in (1..).zip(outputs) {
        bindings.push(BindingSpec::storage(
            name,
            0,
            binding,
            BindingKind::ReadWriteStorage,
            4,
        ));
    }
    kernel(label, wgsl, [64, 1, 1], &bindings)
}

#[test]
fn seed_dispatch_graph_is_one_submission_and_matches_launch_accounting() {
    let _serial = serial();
    let gpu = gpu();
    let pipeline = |k| WgpuPipeline::new(&gpu, k).expect("pipeline");
    let mul = pipeline(seed_kernel("mul3_add1", MUL3_ADD1, &["dst"]));
    let xor = pipeline(seed_kernel("xor_shift3", XOR_SHIFT3, &["dst"]));
    let rot = pipeline(seed_kernel("rotate_add", ROTATE_ADD, &["dst"]));
    let split = pipeline(seed_kernel("split", SPLIT, &["lo", "hi"]));

    let inputs = [
        data(1000, 11),
        data(333, 12),
        data(4096, 13),
        data(777, 14),
        data(65, 15),
    ];
    let resident = GpuBufferHandle::from_slice(&gpu, &inputs[4]).expect("resident");
    let mut ops = GpuDispatchGraph::new();
    ops.push(&mul, bytes(&inputs[0]).to_vec());
    ops.push(&xor, bytes(&inputs[1]).to_vec());
    ops.push(&rot, bytes(&inputs[2]).to_vec());
    ops.push(&split, bytes(&inputs[3]).to_vec());
    ops.push(&mul, GpuResource::Resident(resident));
    assert_eq!(ops.len(), 5);

    let before = gpu.counters();
    let results = ops.dispatch(&DispatchConfig::default()).expect("dispatch");
    let delta = gpu.counters().since(&before);
    let accounting = launch_accounting(ops.len());
    assert_eq!(delta.submissions, accounting.graph_submissions, "{delta:?}");
    assert_eq!(accounting.sequential_submissions, 5);

    let map = |x: &[u32], f: fn(u32) -> u32| -> Vec<u32> { x.iter().map(|&v| f(v)).collect() };
    let want: Vec<Vec<Vec<u32>>> = vec![
        vec![map(&inputs[0], mul3_add1)],
        vec![map(&inputs[1], xor_shift3)],
        vec![map(&inputs[2], rotate_add)],
        vec![map(&inputs[3], mul3_add1), map(&inputs[3], xor_shift3)],
        vec![map(&inputs[4], mul3_add1)],
    ];
    assert_eq!(results.len(), want.len());
    for (op, (got, want)) in results.iter().zip(&want).enumerate() {
        assert_eq!(got.len(), want.len(), "outputs of op {op}");
        for (k, (got, want)) in got.iter().zip(want).enumerate() {
            let got: Vec<u32> = bytemuck::pod_collect_to_vec(got);
            assert_same(&got, want, &format!("op {op} output {k}"));
        }
    }

    let empty = GpuDispatchGraph::new();
    assert!(empty.is_empty());
    let before = gpu.counters();
    let results = empty
        .dispatch(&DispatchConfig::default())
        .expect("empty dispatch");
    let delta = gpu.counters().since(&before);
    assert!(results.is_empty());
    assert_eq!(delta.submissions, launch_accounting(0).graph_submissions);
    assert_eq!(delta.submissions, 0);
    assert_eq!(delta.buffers_created, 0);
}

#[test]
fn runtime_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Gpu>();
    assert_send_sync::<Graph>();
    assert_send_sync::<GpuBufferHandle>();
    assert_send_sync::<WgpuPipeline>();
    assert_send_sync::<GpuDispatchGraph>();
}

#[test]
fn one_graph_runs_from_four_threads() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("threads")).expect("graph");
    let before = gpu.counters();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let graph = &graph;
            s.spawn(move || {
                for i in 0..10u32 {
                    let n = 500 + 97 * t as usize + 13 * i as usize;
                    let x = data(n, 100 * t + i);
                    let (y, report) = run_host(graph, &x);
                    assert_eq!(report.n, n as u64);
                    assert_same(
                        &y,
                        &two_step_cpu(&x),
                        &format!("thread {t} run {i} (n = {n})"),
                    );
                }
            });
        }
    });
    assert_eq!(gpu.counters().since(&before).submissions, 40);
}

#[test]
fn uniform_parameters_change_between_runs() {
    let _serial = serial();
    let gpu = gpu();
    let params_size = u32::try_from(size_of::<AffineParams>()).expect("small");
    assert_eq!(params_size, 16);
    let spec = graph_spec(
        "affine",
        vec![kernel(
            "affine",
            AFFINE_UNIFORM,
            [64, 1, 1],
            &[
                read("src", 0, 0, 4),
                uniform("params", 0, 1, params_size),
                write("dst", 0, 2, 4),
            ],
        )],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer(
                "params",
                BufferClass::Uniform,
                params_size,
                Extent::constant(1),
            ),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node(
            "affine",
            0,
            &[(0, 0, 0), (0, 1, 1), (0, 2, 2)],
            OVER_N,
        )],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let n = 3000usize;
    let x = data(n, 16);
    let mut previous: Option<Vec<u32>> = None;
    for (round, (scale, offset)) in [(3u32, 7u32), (5, 11), (0xFFFF_FFFF, 1)]
        .into_iter()
        .enumerate()
    {
        let params = AffineParams {
            scale,
            offset,
            pad: [0; 2],
        };
        let feeds = [
            Feed::Host(bytes(&x)),
            Feed::Host(bytemuck::bytes_of(&params)),
        ];
        assert_eq!(graph.infer_problem_size(&feeds).expect("infer"), n as u64);
        let mut y = vec![0u32; n];
        let before = gpu.counters();
        let report = graph
            .run(
                &DispatchConfig::default(),
                n as u64,
                &feeds,
                &mut [Sink::Host(bytes_mut(&mut y))],
            )
            .expect("run");
        let delta = gpu.counters().since(&before);
        assert_eq!(report.cache_hit, round > 0);
        assert_eq!(delta.bytes_uploaded, 4 * n as u64 + 16, "{delta:?}");
        let want: Vec<u32> = x
            .iter()
            .map(|&v| v.wrapping_mul(scale).wrapping_add(offset))
            .collect();
        assert_same(&y, &want, &format!("uniform round {round}"));
        assert_ne!(
            previous.as_ref(),
            Some(&y),
            "round {round} repeated the previous result"
        );
        previous = Some(y);
    }
}

#[test]
fn explicit_workgroup_grid_dispatch() {
    let _serial = serial();
    let gpu = gpu();
    // ceil(n / 64) workgroups spelt as an explicit grid.
    let spec = graph_spec(
        "explicit_grid",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node(
            "scale",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Workgroups([
                Extent::scaled(1, 64, 0),
                Extent::constant(1),
                Extent::constant(1),
            ]),
        )],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let x = data(6401, 17);
    let (y, report) = run_host(&graph, &x);
    assert_eq!(report.plan.worker_groups, 101);
    assert_same(
        &y,
        &x.iter().map(|&v| mul3_add1(v)).collect::<Vec<_>>(),
        "explicit grid",
    );
}

#[test]
fn in_out_buffer_updated_in_place_and_resident_copy_left_alone() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "in_place",
        vec![kernel(
            "in_place",
            IN_PLACE_MUL3_ADD1,
            [64, 1, 1],
            &[read_write("data", 0, 0, 4)],
        )],
        vec![buffer("v", BufferClass::InOut, 4, Extent::N)],
        vec![
            node("first", 0, &[(0, 0, 0)], OVER_N),
            node("second", 0, &[(0, 0, 0)], OVER_N),
        ],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    assert_eq!(
        graph.describe().nodes[1].depends_on,
        [0],
        "in-place updates are ordered"
    );
    let n = 2049usize;
    let x = data(n, 20);
    let twice: Vec<u32> = x.iter().map(|&v| mul3_add1(mul3_add1(v))).collect();
    let mut v = vec![0u32; n];
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Host(bytes_mut(&mut v))],
        )
        .expect("host run");
    assert_same(&v, &twice, "in place, host input");

    // A resident InOut input is copied into the graph's buffer: the handle
    // keeps its contents.
    let handle = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
    let mut v = vec![0u32; n];
    let report = graph
        .run(
            &DispatchConfig::default().with_timeout(std::time::Duration::from_secs(60)),
            n as u64,
            &[Feed::Device(&handle)],
            &mut [Sink::Host(bytes_mut(&mut v))],
        )
        .expect("resident run");
    assert!(report.cache_hit);
    assert_same(&v, &twice, "in place, resident input");
    assert_same(
        &handle.read_as::<u32>(&gpu).expect("read"),
        &x,
        "the resident input is untouched",
    );
}

#[test]
fn two_outputs_with_skip_device_and_host_sinks() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "split",
        vec![kernel(
            "split",
            SPLIT,
            [64, 1, 1],
            &[
                read("src", 0, 0, 4),
                write("lo", 0, 1, 4),
                write("hi", 0, 2, 4),
            ],
        )],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("lo", BufferClass::Output, 4, Extent::N),
            buffer("hi", BufferClass::Output, 4, Extent::N),
        ],
        vec![node("split", 0, &[(0, 0, 0), (0, 1, 1), (0, 2, 2)], OVER_N)],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let n = 777usize;
    let x = data(n, 21);
    let lo: Vec<u32> = x.iter().map(|&v| mul3_add1(v)).collect();
    let hi: Vec<u32> = x.iter().map(|&v| xor_shift3(v)).collect();

    let mut got_hi = vec![0u32; n];
    let before = gpu.counters();
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Skip, Sink::Host(bytes_mut(&mut got_hi))],
        )
        .expect("skip lo");
    assert_same(&got_hi, &hi, "second output after a skipped one");
    assert_eq!(gpu.counters().since(&before).bytes_read_back, 4 * n as u64);

    let lo_handle = graph.create_buffer(1, n as u64).expect("handle");
    let mut got_hi = vec![0u32; n];
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Device(&lo_handle), Sink::Host(bytes_mut(&mut got_hi))],
        )
        .expect("device lo");
    assert_same(&got_hi, &hi, "host output beside a device output");
    assert_same(
        &lo_handle.read_as::<u32>(&gpu).expect("read"),
        &lo,
        "device output",
    );
}

#[test]
fn f32_kernel_bound_across_groups_zero_and_two() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "groups",
        vec![kernel(
            "f32_groups",
            F32_GROUPS_0_AND_2,
            [64, 1, 1],
            &[read("src", 0, 3, 4), write("dst", 2, 0, 4)],
        )],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node("affine", 0, &[(0, 3, 0), (2, 0, 1)], OVER_N)],
    );
    let graph = Graph::new(&gpu, spec).expect("graph");
    let n = 4321usize;
    let x: Vec<f32> = data(n, 22)
        .iter()
        .map(|&v| f32::from(u16::try_from(v >> 16).expect("16 bits")) - 30_000.0)
        .collect();
    let mut y = vec![0f32; n];
    graph
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Host(bytemuck::cast_slice(&x))],
            &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
        )
        .expect("run");
    for (i, (&got, &v)) in y.iter().zip(&x).enumerate() {
        // Integer-valued inputs: the result is exact, so compare bits.
        assert_eq!(
            got.to_bits(),
            (v * 2.0 + 0.5).to_bits(),
            "element {i}: {got} for {v}"
        );
    }
}

#[test]
fn override_constants_make_pipelines_and_set_the_node_workgroup_size() {
    let _serial = serial();
    let gpu = gpu();
    let mut by_3 = node("by_3", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N);
    by_3.overrides = vec![
        vyre_graph::spec::OverrideValue {
            name: "factor".into(),
            value: 3.0,
        },
        vyre_graph::spec::OverrideValue {
            name: "wg".into(),
            value: 32.0,
        },
    ]
    .into();
    // The kernel's default is 256 per workgroup; this node runs 32.
    by_3.workgroup_size = Some([32, 1, 1]);
    let mut by_5 = node("by_5", 0, &[(0, 0, 1), (0, 1, 2)], OVER_N);
    by_5.overrides = vec![vyre_graph::spec::OverrideValue {
        name: "factor".into(),
        value: 5.0,
    }]
    .into();
    let spec = graph_spec(
        "overrides",
        vec![kernel(
            "override_mul",
            OVERRIDE_MUL,
            [256, 1, 1],
            &[read("src", 0, 0, 4), write("dst", 0, 1, 4)],
        )],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("t", BufferClass::Intermediate, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![by_3, by_5],
    );
    let before = gpu.counters();
    let graph = Graph::new(&gpu, spec).expect("graph");
    assert_eq!(graph.pipeline_count(), 2);
    assert_eq!(gpu.counters().since(&before).pipelines_created, 2);
    let x = data(10_000, 23);
    let (y, report) = run_host(&graph, &x);
    // The largest grid is by_3's: 10 000 / 32 workgroups.
    assert_eq!(report.plan.workgroup_size_x, 32, "{:?}", report.plan);
    assert_eq!(report.plan.worker_groups, 313, "{:?}", report.plan);
    assert_same(
        &y,
        &x.iter().map(|&v| v.wrapping_mul(15)).collect::<Vec<_>>(),
        "x * 3 * 5",
    );
}

#[test]
fn planning_ahead_and_an_uncached_graph() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, two_step_spec("planned")).expect("graph");
    let plan = graph.plan(&DispatchConfig::default(), 3000).expect("plan");
    assert_eq!(plan.queue_len, 3000);
    assert_eq!(graph.cached_plans(), 1);
    let x = data(3000, 24);
    let before = gpu.counters();
    let (y, report) = run_host(&graph, &x);
    let delta = gpu.counters().since(&before);
    assert!(report.cache_hit, "plan() cached the launch plan");
    assert_eq!(report.plan, plan);
    assert_eq!(delta.buffers_created, 0, "{delta:?}");
    assert_same(&y, &two_step_cpu(&x), "planned run");

    // Capacity 0: every run plans and allocates afresh, and caches nothing.
    let uncached = Graph::with_cache_capacity(&gpu, two_step_spec("uncached"), 0).expect("graph");
    for round in 0..2 {
        let before = gpu.counters();
        let (y, report) = run_host(&uncached, &x);
        let delta = gpu.counters().since(&before);
        assert!(!report.cache_hit);
        assert!(delta.buffers_created > 0, "round {round}: {delta:?}");
        assert_eq!(uncached.cached_plans(), 0);
        assert_same(&y, &two_step_cpu(&x), "uncached run");
    }
}
