//! `Graph::record_profiled` (feature `profiler`): a graph recorded into the
//! application's encoder opens a `wgpu-profiler` scope per dispatch inside
//! the application's own query, and the application's profiler reports them
//! nested there, with times inside the parent's; the outputs are checked
//! against the CPU, and the same profiler's next frame sees the next run.
#![cfg(feature = "profiler")]

mod common;

use common::*;
use vyre_graph::wgpu_profiler::{GpuProfiler, GpuProfilerSettings, GpuTimerQueryResult};
use vyre_graph::{DispatchConfig, Feed, Graph, ProfilerScope, Sink};

/// One frame: the application's "frame" query holding the graph's run.
fn frame(
    gpu: &vyre_graph::Gpu,
    graph: &Graph,
    profiler: &mut GpuProfiler,
    x: &[u32],
) -> Vec<GpuTimerQueryResult> {
    let mut y = vec![0u32; x.len()];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let frame = profiler.begin_query("frame", &mut encoder);
    let scope = ProfilerScope {
        profiler,
        parent: Some(&frame),
    };
    let recorded = graph
        .record_profiled(
            &mut encoder,
            &DispatchConfig::default(),
            x.len() as u64,
            &[Feed::Host(bytes(x))],
            &[Sink::Host(bytes_mut(&mut y))],
            scope,
        )
        .expect("record");
    profiler.end_query(&mut encoder, frame);
    profiler.resolve_queries(&mut encoder);
    let submission = gpu.queue().submit([encoder.finish()]);
    recorded
        .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
        .expect("read");
    assert_same(&y, &two_step_cpu(x), "y");
    profiler.end_frame().expect("end frame");
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    profiler
        .process_finished_frame(gpu.queue().get_timestamp_period())
        .expect("the frame is finished")
}

#[test]
fn a_recorded_graph_shows_a_scope_per_node_inside_the_applications_query() {
    let _serial = serial();
    let gpu = gpu();
    assert!(
        gpu.device()
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES),
        "lavapipe has timestamps inside passes"
    );
    // The unfused two-step graph: two nodes, two scopes.
    let graph = Graph::new(&gpu, two_step_spec("scoped")).expect("graph");
    let mut profiler =
        GpuProfiler::new(gpu.device(), GpuProfilerSettings::default()).expect("profiler");
    for n in [1000usize, 70_000] {
        let x = data(n, n as u32);
        let results = frame(&gpu, &graph, &mut profiler, &x);
        assert_eq!(results.len(), 1, "{results:?}");
        let top = &results[0];
        assert_eq!(top.label, "frame");
        let labels: Vec<&str> = top
            .nested_queries
            .iter()
            .map(|q| q.label.as_str())
            .collect();
        assert_eq!(labels, ["scale", "mix"]);
        let outer = top.time.clone().expect("the frame is timed");
        let mut last_end = outer.start;
        for q in &top.nested_queries {
            let t = q.time.clone().expect("the node is timed");
            assert!(t.start <= t.end, "{q:?}");
            assert!(
                t.start >= last_end && t.end <= outer.end,
                "{q:?} inside the frame, in order"
            );
            last_end = t.end;
        }
    }
    // A plain `record` opens no scope: the frame is alone.
    let x = data(500, 5);
    let mut y = vec![0u32; x.len()];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let frame = profiler.begin_query("frame", &mut encoder);
    let recorded = graph
        .record(
            &mut encoder,
            &DispatchConfig::default(),
            x.len() as u64,
            &[Feed::Host(bytes(&x))],
            &[Sink::Host(bytes_mut(&mut y))],
        )
        .expect("record");
    profiler.end_query(&mut encoder, frame);
    profiler.resolve_queries(&mut encoder);
    let submission = gpu.queue().submit([encoder.finish()]);
    recorded
        .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
        .expect("read");
    assert_same(&y, &two_step_cpu(&x), "plain y");
    profiler.end_frame().expect("end frame");
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let results = profiler
        .process_finished_frame(gpu.queue().get_timestamp_period())
        .expect("finished");
    assert_eq!(results.len(), 1);
    assert!(results[0].nested_queries.is_empty());
}

/// A device with timestamps in encoders but not inside passes: one scope
/// for the graph's pass (through the pass's timestamp writes), inside the
/// application's query, and no scope per node.
#[test]
fn without_timestamps_inside_passes_the_pass_is_one_scope() {
    let _serial = serial();
    let (adapter, device, queue) = pollster::block_on(async {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions::default())
            .await
            .expect("adapter");
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                required_features: wgpu::Features::TIMESTAMP_QUERY
                    | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
                ..Default::default()
            })
            .await
            .expect("device");
        (adapter, device, queue)
    });
    assert!(
        !device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    );
    let gpu = vyre_graph::Gpu::from_wgpu(Some(adapter), device, queue);
    let graph = Graph::new(&gpu, two_step_spec("passed")).expect("graph");
    let mut profiler =
        GpuProfiler::new(gpu.device(), GpuProfilerSettings::default()).expect("profiler");
    for n in [64usize, 30_000] {
        let x = data(n, 11);
        let results = frame(&gpu, &graph, &mut profiler, &x);
        assert_eq!(results.len(), 1, "{results:?}");
        let top = &results[0];
        assert_eq!(top.label, "frame");
        assert_eq!(top.nested_queries.len(), 1, "{top:?}");
        let pass = &top.nested_queries[0];
        assert_eq!(pass.label, "passed");
        assert!(pass.nested_queries.is_empty());
        let (outer, inner) = (
            top.time.clone().expect("frame timed"),
            pass.time.clone().expect("pass timed"),
        );
        assert!(inner.start >= outer.start && inner.end <= outer.end && inner.start <= inner.end);
    }
}
