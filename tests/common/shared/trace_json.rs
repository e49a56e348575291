//! Reading a run's Chrome trace JSON back (`RunReport::to_trace_json`,
//! `Trace::to_json`) and checking its host track, for the trace tests of
//! both suites (`tests/runtime/trace.rs`, `vyre-web/tests/browser/trace.rs`).
#![allow(dead_code)]

use serde_json::Value;
use vyre_graph::RunReport;

pub fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}):\n{json}"))
}

/// The complete events of `trace` on thread `tid` of process 1.
pub fn events_on(trace: &Value, tid: u64) -> Vec<&Value> {
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 1 && e["tid"] == tid)
        .collect()
}

/// Thread names of process 1, by tid.
pub fn thread_names(trace: &Value) -> Vec<(u64, String)> {
    let mut names: Vec<(u64, String)> = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1)
        .map(|e| {
            (
                e["tid"].as_u64().expect("tid"),
                e["args"]["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    names.sort();
    names
}

pub fn ts(e: &Value) -> f64 {
    e["ts"].as_f64().expect("ts")
}
pub fn dur(e: &Value) -> f64 {
    e["dur"].as_f64().expect("dur")
}

/// The host track: one run event, and the seven phases in order inside it,
/// end to end, each as long as the report says.
pub fn check_host_track(trace: &Value, report: &RunReport) {
    let host = events_on(trace, 0);
    assert_eq!(host.len(), 8, "{host:?}");
    assert!(
        host[0]["name"]
            .as_str()
            .expect("name")
            .starts_with("run n=")
    );
    let names: Vec<&str> = host[1..]
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "check", "plan", "bind", "encode", "submit", "wait", "copy-out"
        ]
    );
    let p = report.phases;
    let want = [
        p.check_ns,
        p.plan_ns,
        p.bind_ns,
        p.encode_ns,
        p.submit_ns,
        p.wait_ns,
        p.copy_ns,
    ];
    let (run_start, run_end) = (ts(host[0]), ts(host[0]) + dur(host[0]));
    let mut at = run_start;
    for (e, ns) in host[1..].iter().zip(want) {
        assert!((dur(e) - ns as f64 / 1e3).abs() < 0.002, "{e} vs {ns} ns");
        assert!(
            (ts(e) - at).abs() < 0.01,
            "{e} starts where the last phase ended"
        );
        at = ts(e) + dur(e);
    }
    assert!((at - run_end).abs() < 0.01, "the phases fill the run");
}
