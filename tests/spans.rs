//! `tracing` spans (feature `tracing`): a hand-written subscriber collects
//! every span with its parent and its `graph` field, and the test checks the
//! names and the nesting that docs/profiling.md documents: `Graph::new`;
//! `run` holding check, plan, bind, encode, submit, wait and copy-out in
//! that order; `run_async` likewise; `record`, then the recorded run's
//! wait and copy-out; `run_batch` and `run_many` holding their runs' phases.
//! Every run's output is checked against the CPU.
#![cfg(feature = "tracing")]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use vyre_graph::{DispatchConfig, Feed, Graph, Instance, Sink};

/// One span: its name, its parent (an index into the list), its `graph`.
#[derive(Clone, Debug)]
struct Span {
    name: &'static str,
    parent: Option<usize>,
    graph: Option<String>,
}

#[derive(Default)]
struct Collect {
    spans: Mutex<Vec<Span>>,
    /// The entered spans of the test's thread (runs here are blocking, on
    /// the calling thread).
    stack: Mutex<Vec<usize>>,
}

struct GraphField(Option<String>);
impl Visit for GraphField {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "graph" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let parent = if attrs.is_root() {
            None
        } else if let Some(p) = attrs.parent() {
            Some(p.into_u64() as usize - 1)
        } else {
            self.stack.lock().unwrap().last().copied()
        };
        let mut graph = GraphField(None);
        attrs.record(&mut graph);
        let mut spans = self.spans.lock().unwrap();
        spans.push(Span {
            name: attrs.metadata().name(),
            parent,
            graph: graph.0,
        });
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, id: &Id) {
        self.stack.lock().unwrap().push(id.into_u64() as usize - 1);
    }
    fn exit(&self, _: &Id) {
        self.stack.lock().unwrap().pop();
    }
}

/// The spans `f` makes, as (name, parent's name) pairs, in creation order.
fn collect(f: impl FnOnce()) -> Vec<(String, Option<String>, Option<String>)> {
    let sub = Arc::new(Collect::default());
    tracing::subscriber::with_default(sub.clone(), f);
    let spans = sub.spans.lock().unwrap().clone();
    spans
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.parent.map(|p| spans[p].name.to_string()),
                s.graph.clone(),
            )
        })
        .collect()
}

const PHASES: [&str; 7] = [
    "check", "plan", "bind", "encode", "submit", "wait", "copy-out",
];

/// `spans` are `parent` followed by the seven phases, each a child of it.
fn assert_run(spans: &[(String, Option<String>, Option<String>)], parent: &str) {
    assert_eq!(spans[0].0, parent, "{spans:?}");
    let phases: Vec<&str> = spans[1..].iter().map(|s| s.0.as_str()).collect();
    assert_eq!(phases, PHASES, "{spans:?}");
    for s in &spans[1..] {
        assert_eq!(s.1.as_deref(), Some(parent), "{s:?} nests in {parent}");
    }
}

fn run_once(graph: &Graph, x: &[u32]) {
    let (y, _) = run_host(graph, x);
    assert_same(&y, &two_step_cpu(x), "y");
}

#[test]
fn graph_new_and_every_run_have_their_spans_nested_as_documented() {
    let _serial = serial();
    let gpu = gpu();
    let x = data(5000, 9);
    let mut graph = None;
    let spans =
        collect(|| graph = Some(Graph::new(&gpu, two_step_spec("spanned")).expect("graph")));
    let graph = graph.expect("built");
    assert_eq!(spans[0].0, "Graph::new");
    assert_eq!(spans[0].1, None);
    assert_eq!(spans[0].2.as_deref(), Some("spanned"));

    // A blocking run, twice (the first plans, the second reuses the plan).
    for _ in 0..2 {
        let spans = collect(|| run_once(&graph, &x));
        assert_eq!(spans.len(), 8, "{spans:?}");
        assert_run(&spans, "run");
        assert_eq!(spans[0].2.as_deref(), Some("spanned"));
    }

    // An async run.
    let spans = collect(|| {
        let mut y = vec![0u32; x.len()];
        let feeds = [Feed::Host(bytes(&x))];
        let mut sinks = [Sink::Host(bytes_mut(&mut y))];
        let config = DispatchConfig::default();
        pollster::block_on(graph.run_async(&config, x.len() as u64, &feeds, &mut sinks))
            .expect("run");
        assert_same(&y, &two_step_cpu(&x), "async y");
    });
    assert_run(&spans, "run_async");

    // A recorded run: record holds the first four phases; submitting is
    // the application's; the read holds wait and copy-out.
    let spans = collect(|| {
        let mut y = vec![0u32; x.len()];
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        let recorded = graph
            .record(
                &mut encoder,
                &DispatchConfig::default(),
                x.len() as u64,
                &[Feed::Host(bytes(&x))],
                &[Sink::Host(bytes_mut(&mut y))],
            )
            .expect("record");
        let submission = gpu.queue().submit([encoder.finish()]);
        recorded
            .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
            .expect("read");
        assert_same(&y, &two_step_cpu(&x), "recorded y");
    });
    let names: Vec<(&str, Option<&str>)> = spans
        .iter()
        .map(|s| (s.0.as_str(), s.1.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            ("record", None),
            ("check", Some("record")),
            ("plan", Some("record")),
            ("bind", Some("record")),
            ("encode", Some("record")),
            ("wait", None),
            ("copy-out", None),
        ]
    );
}

#[test]
fn batches_and_streams_hold_their_runs_spans() {
    let _serial = serial();
    let graph = Graph::new(&gpu(), two_step_spec("batched")).expect("graph");
    let xs: Vec<Vec<u32>> = (0..3).map(|i| data(1000 + i * 10, i as u32)).collect();
    for (what, depth) in [("run_batch", 0usize), ("run_many", 1), ("run_many", 2)] {
        let mut ys: Vec<Vec<u32>> = xs.iter().map(|x| vec![0u32; x.len()]).collect();
        let spans = collect(|| {
            let mut instances: Vec<Instance<'_>> = xs
                .iter()
                .zip(ys.iter_mut())
                .map(|(x, y)| {
                    Instance::new(
                        x.len() as u64,
                        vec![Feed::Host(bytes(x))],
                        vec![Sink::Host(bytes_mut(y))],
                    )
                })
                .collect();
            let config = DispatchConfig::default();
            if depth == 0 {
                let report = graph.run_batch(&config, &mut instances).expect("batch");
                assert!(report.runs.iter().all(Result::is_ok));
            } else {
                let runs = graph.run_many(&config, depth, &mut instances);
                assert!(runs.iter().all(Result::is_ok));
            }
        });
        for (x, y) in xs.iter().zip(&ys) {
            assert_same(y, &two_step_cpu(x), what);
        }
        assert_eq!(spans[0].0, what);
        assert_eq!(spans[0].1, None);
        assert_eq!(spans[0].2.as_deref(), Some("batched"));
        // Every other span is inside it, and every phase appears.
        let inside = |i: usize| {
            let mut p = spans[i].1.clone();
            let mut depth = 0;
            while let Some(name) = p {
                if name == what {
                    return true;
                }
                depth += 1;
                assert!(depth < 10);
                p = spans.iter().find(|s| s.0 == name).and_then(|s| s.1.clone());
            }
            false
        };
        for i in 1..spans.len() {
            assert!(inside(i), "{:?} outside {what}: {spans:?}", spans[i]);
        }
        for phase in PHASES {
            assert!(spans.iter().any(|s| s.0 == phase), "{phase} in {spans:?}");
        }
    }
}
