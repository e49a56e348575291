//! Traces of runs (`RunReport::write_trace`, `Trace`): valid Chrome trace
//! JSON with a host track of the run's phases, one track per node (a fused
//! group's and a loop's iterations on their node's), node times that add
//! up to the pass's, and a trace of a run on a device without timestamps
//! that has its host phases and says GPU times are unavailable. Every run's
//! output is checked against the CPU first.

use crate::common;

use common::*;
use vyre_graph::{DispatchConfig, Gpu, GpuOptions, Graph, Trace};

mod shapes {
    use vyre_graph::graph;
    graph! {
        /// Decrements every value to 0, one per iteration, at most 6.
        pub struct Countdown;

        kernel dec = wgsl {
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
        };

        inout v[n];
        intermediate flag[1];

        repeat up to 6 as i until zero(flag) {
            node dec(v: v, flag: flag) over n;
        }
    }
}
use crate::shared::shapes::{Shapes, shapes_cpu};
use crate::shared::trace_json::*;
use shapes::Countdown;

#[test]
fn a_profiled_run_has_a_track_per_node_and_times_that_add_up_to_the_pass() {
    let _serial = serial();
    let gpu = gpu();
    assert!(gpu.has_timestamps(), "lavapipe has timestamps");
    let graph = Shapes::new(&gpu).expect("graph");
    let x = data(100_000, 7);
    let config = DispatchConfig::default().with_profile(true);
    // The first run of a plan on lavapipe spends milliseconds in the pass
    // outside any dispatch (compiling on first use): trace a warm one.
    let mut last = None;
    for _ in 0..3 {
        let (out, report) = graph.run_reported(&config, &x).expect("run");
        assert_same(&out.y, &shapes_cpu(&x), "y");
        last = Some(report);
    }
    let report = last.expect("ran");
    let trace = parse(&report.to_trace_json());
    check_host_track(&trace, &report);
    // inc and dbl fuse: two dispatches, two node tracks.
    assert_eq!(graph.graph().spec().fused.len(), 1, "inc and dbl fuse");
    let names = thread_names(&trace);
    assert_eq!(names.len(), 4, "host, GPU pass, two dispatches: {names:?}");
    assert_eq!(names[0], (0, "host".into()));
    assert_eq!(names[1], (1, "GPU pass".into()));
    assert!(names[2].1.starts_with("fused: "), "{names:?}");
    assert_eq!(names[3].1, "node 2: pair");
    let pass = events_on(&trace, 1);
    assert_eq!(pass.len(), 1);
    let pass_us = report.gpu_ns.expect("profiled") as f64 / 1e3;
    assert!((dur(pass[0]) - pass_us).abs() < 0.002);
    let fused = events_on(&trace, 2);
    assert_eq!(fused.len(), 1);
    assert_eq!(
        fused[0]["args"]["fused"],
        "2 nodes in one dispatch: inc, dbl"
    );
    let pair = events_on(&trace, 3);
    assert_eq!(pair.len(), 1);
    assert_eq!(pair[0]["name"], "pair");
    // Node times lie inside the pass and sum to it, within the timestamp
    // resolution (the gaps before the first dispatch's stamp and after the
    // last's are the pass's alone).
    let period_us = f64::from(gpu.queue().get_timestamp_period()) / 1e3;
    let sum = dur(fused[0]) + dur(pair[0]);
    assert!(sum > 0.0, "the dispatches took time");
    assert!(
        sum <= pass_us + 2.0 * period_us + 0.002,
        "{sum} > {pass_us}"
    );
    assert!(
        sum > 0.5 * pass_us,
        "the dispatches are most of the pass: {sum} of {pass_us} µs"
    );
    assert!(
        ts(fused[0]) >= ts(pass[0])
            && ts(pair[0]) + dur(pair[0]) <= ts(pass[0]) + dur(pass[0]) + 0.01
    );
    assert_eq!(trace["otherData"]["tool"], "vyre-graph");
}

#[test]
fn a_loops_iterations_share_their_nodes_track_and_say_whether_they_worked() {
    let _serial = serial();
    let graph = Countdown::new(&gpu()).expect("graph");
    let v: Vec<u32> = (0..5000u32).map(|i| i % 4).collect();
    let config = DispatchConfig::default().with_profile(true);
    let (out, report) = graph.run_reported(&config, &v).expect("run");
    // Values up to 3: three iterations, then the flag stays zero.
    let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(3)).collect();
    assert_same(&out.v, &want, "v");
    assert_eq!(report.loops[0].iterations, 3);
    let trace = parse(&report.to_trace_json());
    check_host_track(&trace, &report);
    let names = thread_names(&trace);
    assert_eq!(
        names.len(),
        3,
        "one node track for six iterations: {names:?}"
    );
    let dec = events_on(&trace, 2);
    assert_eq!(dec.len(), 6, "every recorded iteration is shown");
    for (i, e) in dec.iter().enumerate() {
        assert_eq!(e["args"]["iteration"], i as u64);
        assert_eq!(e["args"]["did_work"], i < 3, "{e}");
        assert_eq!(e["args"]["control_dispatches_before"], 1, "its gate: {e}");
    }
    let run = &events_on(&trace, 0)[0];
    assert_eq!(
        run["args"]["loop 0"],
        "3 of 6 recorded iterations did work, stopped"
    );
}

/// A device made without timestamp queries: the trace has the host phases
/// and says why GPU times are missing; then the same graph on a device with
/// them traces GPU times again.
#[test]
fn without_timestamps_a_trace_has_host_phases_and_says_gpu_times_are_unavailable() {
    let _serial = serial();
    let plain = Gpu::with_options(GpuOptions::default().with_timestamps(false)).expect("gpu");
    assert!(!plain.has_timestamps());
    let graph = Graph::new(&plain, two_step_spec("plain")).expect("graph");
    let x = data(4096, 3);
    let mut y = vec![0u32; x.len()];
    let config = DispatchConfig::default().with_profile(true);
    let report = graph
        .run(
            &config,
            x.len() as u64,
            &[vyre_graph::Feed::Host(bytes(&x))],
            &mut [vyre_graph::Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    assert_same(&y, &two_step_cpu(&x), "y");
    assert_eq!(report.gpu_ns, None);
    let trace = parse(&report.to_trace_json());
    check_host_track(&trace, &report);
    for tid in 1..4 {
        assert!(events_on(&trace, tid).is_empty(), "no GPU events on {tid}");
    }
    let note = trace["otherData"]["gpu_times"].as_str().expect("note");
    assert!(
        note.contains("GPU times unavailable") && note.contains("TIMESTAMP_QUERY"),
        "{note}"
    );
    assert_eq!(events_on(&trace, 0)[0]["args"]["gpu"], note);
    // A run that did not ask says so too.
    let (y2, unprofiled) = run_host(&graph, &x);
    assert_same(&y2, &two_step_cpu(&x), "y again");
    let trace = parse(&unprofiled.to_trace_json());
    let note = trace["otherData"]["gpu_times"].as_str().expect("note");
    assert!(note.contains("not profiled"), "{note}");
    // The same spec on a device with timestamps: node tracks again.
    let timed = Graph::new(&gpu(), two_step_spec("timed")).expect("graph");
    let mut y3 = vec![0u32; x.len()];
    let report = timed
        .run(
            &config,
            x.len() as u64,
            &[vyre_graph::Feed::Host(bytes(&x))],
            &mut [vyre_graph::Sink::Host(bytes_mut(&mut y3))],
        )
        .expect("run");
    assert_same(&y3, &two_step_cpu(&x), "y timed");
    let trace = parse(&report.to_trace_json());
    assert_eq!(events_on(&trace, 2).len(), 1);
    assert_eq!(events_on(&trace, 3).len(), 1);
}

/// Many runs of two graphs in one file: a process per graph, runs in the
/// order they ran, never overlapping on the host track; written and read
/// back from disk.
#[test]
fn a_trace_of_many_runs_keeps_their_order_and_a_process_per_graph() {
    let _serial = serial();
    let shapes = Shapes::new(&gpu()).expect("graph");
    let countdown = Countdown::new(&gpu()).expect("graph");
    let config = DispatchConfig::default().with_profile(true);
    let mut trace = Trace::new();
    assert!(trace.is_empty());
    for n in [1usize, 1000, 70_000] {
        let x = data(n, n as u32);
        let (out, report) = shapes.run_reported(&config, &x).expect("run");
        assert_same(&out.y, &shapes_cpu(&x), "y");
        trace.push(&report);
        let v: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
        let (out, report) = countdown.run_reported(&config, &v).expect("run");
        assert_same(
            &out.v,
            &v.iter().map(|x| x.saturating_sub(2)).collect::<Vec<_>>(),
            "v",
        );
        trace.push(&report);
    }
    assert_eq!(trace.len(), 6);
    let dir = std::env::temp_dir().join(format!("vyre-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("many.json");
    trace.write(&path).expect("write");
    let json = std::fs::read_to_string(&path).expect("read");
    let _ = std::fs::remove_dir_all(&dir);
    let value = parse(&json);
    let events = value["traceEvents"].as_array().expect("events");
    let processes: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(processes, ["graph Shapes", "graph Countdown"]);
    let runs: Vec<(f64, f64, u64)> = events
        .iter()
        .filter(|e| {
            e["ph"] == "X" && e["tid"] == 0 && e["name"].as_str().unwrap().starts_with("run ")
        })
        .map(|e| (ts(e), ts(e) + dur(e), e["pid"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        runs.iter().map(|r| r.2).collect::<Vec<_>>(),
        [1, 2, 1, 2, 1, 2]
    );
    assert_eq!(runs[0].0, 0.0, "the first run starts the timeline");
    for w in runs.windows(2) {
        assert!(w[1].0 >= w[0].1 - 0.01, "runs in order, apart: {w:?}");
    }
}
