//! Traces in the browser (`tests/runtime/trace.rs` natively): a run's
//! report has its host phases, timed with the browser's clock
//! (`performance.now()` through `web-time`); `to_trace_json()` and a
//! `Trace` of several runs are valid JSON with the host track, its seven
//! phases in order and as long as the report says, a process per graph
//! and the runs in order. GPU times: WebGPU's `timestamp-query` where the
//! adapter offers it (then a `GPU pass` event as long as `gpu_ns`; WebGPU
//! has no timestamps inside passes, so no per-node times, and the trace
//! says so), else `gpu_ns` is `None` and the trace says why.

use crate::common::{assert_same, gpu, lcg};
use crate::shared::shapes::{Shapes, shapes_cpu};
use crate::shared::trace_json::{check_host_track, dur, events_on, parse, thread_names, ts};

use vyre_graph::{DispatchConfig, RunReport, Trace};
use wasm_bindgen_test::wasm_bindgen_test;

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn phases_ns(r: &RunReport) -> [u64; 7] {
    let p = r.phases;
    [
        p.check_ns,
        p.plan_ns,
        p.bind_ns,
        p.encode_ns,
        p.submit_ns,
        p.wait_ns,
        p.copy_ns,
    ]
}

/// What the trace says of GPU times, checked against what the device has.
fn check_gpu_times(trace: &serde_json::Value, report: &RunReport, timestamps: bool) {
    let note = trace["otherData"]["gpu_times"].as_str().expect("gpu_times");
    if timestamps {
        let ns = report
            .gpu_ns
            .expect("a profiled run on a device with timestamps");
        let pass = events_on(trace, 1);
        assert_eq!(pass.len(), 1, "one GPU pass event");
        assert!(
            (dur(pass[0]) - ns as f64 / 1e3).abs() < 0.002,
            "{}",
            pass[0]
        );
        // WebGPU has no timestamps inside passes: the pass is timed whole.
        assert!(report.dispatch_gpu_ns.is_empty());
        assert!(events_on(trace, 2).is_empty() && events_on(trace, 3).is_empty());
        assert!(note.contains("per-node GPU times unavailable"), "{note}");
    } else {
        assert_eq!(report.gpu_ns, None);
        for tid in 1..4 {
            assert!(events_on(trace, tid).is_empty(), "no GPU events on {tid}");
        }
        assert!(
            note.contains("GPU times unavailable") && note.contains("TIMESTAMP_QUERY"),
            "{note}"
        );
    }
    assert_eq!(trace["otherData"]["tool"], "vyre-graph");
}

#[wasm_bindgen_test]
async fn a_runs_report_has_host_phases_and_its_traces_are_valid_json() {
    let gpu = gpu().await;
    let timestamps = gpu.has_timestamps();
    web_sys::console::log_1(
        &format!("timestamp queries on {}: {timestamps}", gpu.adapter()).into(),
    );
    let graph = Shapes::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default().with_profile(true);
    let mut trace = Trace::new();
    // 1M elements: the wait and the copy-out last milliseconds on
    // SwiftShader, well above the browser's clock resolution (100 µs in a
    // page without cross-origin isolation); the first run also plans and
    // allocates. The other phases may fall below that resolution and read 0.
    for (round, n) in [1usize << 20, 1 << 20, 1000].into_iter().enumerate() {
        let x = lcg(round as u32 + 1, n);
        let start = now_ms();
        let (out, report) = graph
            .run_reported_async(&config, &x)
            .await
            .expect("a profiled run");
        let wall_ms = now_ms() - start;
        assert_same(&out.y, &shapes_cpu(&x), "y");
        let phases = phases_ns(&report);
        web_sys::console::log_1(
            &format!(
                "run {round} (n = {n}): phases {phases:?} ns, gpu_ns {:?}, wall {wall_ms:.2} ms",
                report.gpu_ns
            )
            .into(),
        );
        let total_ms = phases.iter().sum::<u64>() as f64 / 1e6;
        assert!(
            total_ms <= wall_ms + 0.2,
            "the phases ({total_ms} ms) fit in the run's wall time ({wall_ms} ms)"
        );
        if n == 1 << 20 {
            assert!(report.phases.wait_ns > 0, "a 1M-element wait: {phases:?}");
            assert!(report.phases.copy_ns > 0, "a 4 MB copy-out: {phases:?}");
            assert!(report.phases.bind_ns > 0, "a 4 MB upload: {phases:?}");
        }
        if round == 0 {
            assert!(!report.cache_hit);
            assert!(report.phases.plan_ns > 0, "the first run plans: {phases:?}");
        }
        let one = parse(&report.to_trace_json());
        check_host_track(&one, &report);
        check_gpu_times(&one, &report, timestamps);
        let names = thread_names(&one);
        assert_eq!(names[0], (0, "host".into()));
        assert_eq!(names[1], (1, "GPU pass".into()));
        trace.push(&report);
    }

    // Several runs in one trace: one process for the graph, the runs in
    // order on its host track, never overlapping.
    assert_eq!(trace.len(), 3);
    let json = trace.to_json();
    let value = parse(&json);
    let events = value["traceEvents"].as_array().expect("events");
    let processes: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(processes, ["graph Shapes"]);
    let runs: Vec<(f64, f64, String)> = events
        .iter()
        .filter(|e| {
            e["ph"] == "X"
                && e["tid"] == 0
                && e["name"].as_str().is_some_and(|n| n.starts_with("run "))
        })
        .map(|e| {
            (
                ts(e),
                ts(e) + dur(e),
                e["name"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let names: Vec<&str> = runs.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(names, ["run n=1048576", "run n=1048576", "run n=1000"]);
    assert_eq!(runs[0].0, 0.0, "the first run starts the timeline");
    for w in runs.windows(2) {
        assert!(w[1].0 >= w[0].1 - 0.01, "runs in order, apart: {w:?}");
    }
    // Writing a file is not for the web: the same trace comes as a string.
    let err = trace
        .write("trace.json")
        .expect_err("no file system in a browser");
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported, "{err}");
}
