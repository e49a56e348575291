//! Traces of runs as Chrome trace / Perfetto JSON: [`RunReport::write_trace`]
//! for one run, [`Trace`] for many. Written from finished reports, after
//! the run: nothing here runs while a graph runs.
//!
//! Each graph is a process (`pid`), with a `host` thread for the run and its
//! phases, a `GPU pass` thread for the compute pass, and one thread per node
//! as written (a fused group has one; a loop's iterations of a node share
//! their node's), all as complete (`"ph": "X"`) events in microseconds.

use std::fmt::Write as _;

use super::report::RunReport;
use crate::plan::tracks::Tracks;

/// Chrome trace / Perfetto JSON of many runs, on one timeline: open it at
/// <https://ui.perfetto.dev> or `chrome://tracing`, or draw it with
/// `docs/pictures/trace_svg.py`.
///
/// ```no_run
/// # fn f(graph: &vyre_graph::Graph, x: &[u32], y: &mut [u32]) -> Result<(), Box<dyn std::error::Error>> {
/// use vyre_graph::{DispatchConfig, Feed, Sink, Trace};
/// let config = DispatchConfig::default().with_profile(true);
/// let mut trace = Trace::new();
/// for _ in 0..3 {
///     let feeds = [Feed::Host(bytemuck::cast_slice(x))];
///     let mut sinks = [Sink::Host(bytemuck::cast_slice_mut(y))];
///     trace.push(&graph.run(&config, x.len() as u64, &feeds, &mut sinks)?);
/// }
/// trace.write("runs.json")?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Trace {
    runs: Vec<RunReport>,
}

impl Trace {
    /// An empty trace.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a run (its report is copied; runs are drawn where they happened,
    /// relative to the earliest run in the trace).
    pub fn push(&mut self, report: &RunReport) {
        self.runs.push(report.clone());
    }

    /// Runs in the trace.
    #[must_use]
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether it holds no run.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The trace as JSON text.
    #[must_use]
    pub fn to_json(&self) -> String {
        let origin = self.runs.iter().filter_map(|r| r.started).min();
        // A process per graph object (two graphs of one name get two).
        let mut graphs: Vec<&std::sync::Arc<Tracks>> = Vec::new();
        let mut events: Vec<String> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let mut cursor = 0.0f64;
        for report in &self.runs {
            let pid = match graphs
                .iter()
                .position(|g| std::sync::Arc::ptr_eq(g, &report.tracks))
            {
                Some(p) => p + 1,
                None => {
                    let same = graphs
                        .iter()
                        .filter(|g| g.graph == report.tracks.graph)
                        .count();
                    graphs.push(&report.tracks);
                    metadata(&mut events, graphs.len(), &report.tracks, same);
                    graphs.len()
                }
            };
            let start = match (origin, report.started) {
                (Some(o), Some(s)) => micros(s.saturating_duration_since(o).as_nanos()),
                _ => cursor,
            };
            let note = run_events(&mut events, pid, start, report);
            if let Some(note) = note
                && !notes.contains(&note)
            {
                notes.push(note);
            }
            cursor = start + micros(u128::from(host_total(report)));
        }
        let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"otherData\":{");
        out.push_str("\"tool\":\"vyre-graph\"");
        let gpu = if notes.is_empty() {
            "measured with timestamp queries; each dispatch's time includes the control dispatches recorded before it; the GPU clock is not the host's: the pass is drawn ending where the host's wait ended (starting no earlier than the submission), its dispatches end to end from its start".to_string()
        } else {
            notes.join("; ")
        };
        let _ = write!(out, ",\"gpu_times\":{}", quote(&gpu));
        out.push_str("},\"traceEvents\":[\n");
        out.push_str(&events.join(",\n"));
        out.push_str("\n]}\n");
        out
    }

    /// Write the trace as JSON to `path`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.to_json())
    }
}

impl RunReport {
    /// This run as Chrome trace / Perfetto JSON (see [`Trace`]).
    #[must_use]
    pub fn to_trace_json(&self) -> String {
        let mut trace = Trace::new();
        trace.push(self);
        trace.to_json()
    }

    /// Write this run as a Chrome trace / Perfetto JSON file: the host
    /// phases on a `host` track, the compute pass and every node's GPU time
    /// on tracks of their own when the run was profiled
    /// ([`DispatchConfig::with_profile`](crate::DispatchConfig::with_profile))
    /// on a device with timestamps (else the file says why GPU times are
    /// missing). See [`Trace`] for many runs in one file.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write_trace(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.to_trace_json())
    }

    /// Why this run's trace has no GPU times (or only the pass's), if so.
    fn gpu_note(&self) -> Option<String> {
        if !self.profiled {
            return Some(
                "GPU times unavailable: the run was not profiled (DispatchConfig::with_profile(true))"
                    .into(),
            );
        }
        if self.gpu_ns.is_none() {
            return Some(
                "GPU times unavailable: the device has no timestamp queries (wgpu::Features::TIMESTAMP_QUERY)"
                    .into(),
            );
        }
        if self.dispatch_gpu_ns.is_empty() && !self.tracks.dispatches.is_empty() {
            return Some("per-node GPU times unavailable: the device has no timestamps inside passes (TIMESTAMP_QUERY_INSIDE_PASSES); the pass is timed whole".into());
        }
        None
    }
}

/// Host nanoseconds of a run's phases together.
fn host_total(r: &RunReport) -> u64 {
    let p = &r.phases;
    [
        p.check_ns,
        p.plan_ns,
        p.bind_ns,
        p.encode_ns,
        p.submit_ns,
        p.wait_ns,
        p.copy_ns,
    ]
    .iter()
    .fold(0u64, |a, b| a.saturating_add(*b))
}

/// The process and thread names (and their order) of graph `pid`.
/// `same`: graphs of this name before it in the trace.
fn metadata(events: &mut Vec<String>, pid: usize, tracks: &Tracks, same: usize) {
    let name = |kind: &str, tid: usize, name: &str| {
        format!(
            "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{kind}\",\"args\":{{\"name\":{}}}}}",
            quote(name)
        )
    };
    let order = |tid: usize| {
        format!(
            "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{tid}}}}}"
        )
    };
    let process = match same {
        0 => format!("graph {}", tracks.graph),
        k => format!("graph {} ({})", tracks.graph, k + 1),
    };
    events.push(name("process_name", 0, &process));
    events.push(name("thread_name", 0, "host"));
    events.push(name("thread_name", 1, "GPU pass"));
    for tid in 0..tracks.tracks.len() + 2 {
        events.push(order(tid));
    }
    for (t, track) in tracks.tracks.iter().enumerate() {
        events.push(name("thread_name", t + 2, track));
    }
}

/// The events of one run starting at `start` µs; returns why GPU times are
/// missing, if they are.
fn run_events(events: &mut Vec<String>, pid: usize, start: f64, r: &RunReport) -> Option<String> {
    let note = r.gpu_note();
    let p = &r.phases;
    let mut args = format!(
        "\"n\":{},\"cache_hit\":{},\"submissions\":{},\"dispatches\":{}",
        r.n, r.cache_hit, r.submissions, r.dispatches
    );
    if let Some(ns) = r.gpu_ns {
        let _ = write!(args, ",\"gpu_us\":{}", micros(u128::from(ns)));
    }
    for (l, report) in r.loops.iter().enumerate() {
        let _ = write!(
            args,
            ",\"loop {l}\":{}",
            quote(&format!(
                "{} of {} recorded iterations did work{}",
                report.iterations,
                report.recorded,
                if report.stopped { ", stopped" } else { "" }
            ))
        );
    }
    if let Some(note) = &note {
        let _ = write!(args, ",\"gpu\":{}", quote(note));
    }
    let total = micros(u128::from(host_total(r)));
    events.push(complete(
        pid,
        0,
        &format!("run n={}", r.n),
        start,
        total,
        &args,
    ));
    // The phases end to end, in order (wait and copy-out interleave in
    // fact: copies start as each buffer maps; the trace shows their sums).
    let phases = [
        ("check", p.check_ns),
        ("plan", p.plan_ns),
        ("bind", p.bind_ns),
        ("encode", p.encode_ns),
        ("submit", p.submit_ns),
        ("wait", p.wait_ns),
        ("copy-out", p.copy_ns),
    ];
    let mut at = start;
    let (mut submitted, mut waited) = (start, start);
    for (name, ns) in phases {
        let dur = micros(u128::from(ns));
        events.push(complete(pid, 0, name, at, dur, ""));
        if name == "submit" {
            submitted = at;
        }
        at += dur;
        if name == "wait" {
            waited = at;
        }
    }
    // The GPU's clock is not the host's: the pass is drawn ending where the
    // wait ended (the host saw it finish then), or starting at the
    // submission if it was longer than the submission and the wait.
    let gpu_start = r.gpu_ns.map_or(submitted, |ns| {
        (waited - micros(u128::from(ns))).max(submitted)
    });
    let submitted = gpu_start;
    if let Some(ns) = r.gpu_ns {
        let pass = format!("\"dispatches\":{}", r.dispatches);
        events.push(complete(
            pid,
            1,
            &format!("{} pass", r.tracks.graph),
            submitted,
            micros(u128::from(ns)),
            &pass,
        ));
    }
    gpu_events(events, pid, submitted, r);
    note
}

/// Each dispatch's GPU time on its node's track, end to end from the
/// pass's start.
fn gpu_events(events: &mut Vec<String>, pid: usize, pass_start: f64, r: &RunReport) {
    let mut at = pass_start;
    for (d, &ns) in r.tracks.dispatches.iter().zip(&r.dispatch_gpu_ns) {
        let dur = micros(u128::from(ns));
        let mut args = String::new();
        let mut name = d.name.clone();
        if !d.members.is_empty() {
            let _ = write!(
                args,
                "\"fused\":{},",
                quote(&format!(
                    "{} nodes in one dispatch: {}",
                    d.members.len(),
                    d.members.join(", ")
                ))
            );
            name = format!("{name} [{}]", d.members.join(" + "));
        }
        if let Some((l, label, i)) = &d.iteration {
            let _ = write!(args, "\"loop\":{},\"iteration\":{i},", quote(label));
            let worked = r.loops.get(*l).is_none_or(|l| *i < l.iterations as usize);
            let _ = write!(args, "\"did_work\":{worked},");
            name = format!("{name} #{i}{}", if worked { "" } else { " (skipped)" });
        }
        let _ = write!(args, "\"control_dispatches_before\":{}", d.control);
        events.push(complete(pid, d.track + 2, &name, at, dur, &args));
        at += dur;
    }
}

/// A complete event.
fn complete(pid: usize, tid: usize, name: &str, ts: f64, dur: f64, args: &str) -> String {
    format!(
        "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"name\":{},\"ts\":{ts:.3},\"dur\":{dur:.3},\"args\":{{{args}}}}}",
        quote(name)
    )
}

/// Nanoseconds as microseconds.
fn micros(ns: u128) -> f64 {
    ns as f64 / 1e3
}

/// `s` as a JSON string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quote_escapes_what_json_needs() {
        assert_eq!(quote("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
