//! Problem size 0 has one rule in every way to run (`docs/api.md`, "Size
//! 0"): a graph whose every output is empty at n = 0 or a reduction's
//! identity gets those outputs from every mode, typed and untyped,
//! resident and recorded included, and a graph with any other output is
//! refused by every mode with the same error, then runs correctly at a
//! size above 0. Each mode's result at n = 0 is compared with `run`'s.

use crate::common;

use common::{assert_same, gpu, serial};
use vyre_graph::{BackendError, DispatchConfig, Feed, Graph, Instance, RunReport, Sink, graph};

graph! {
    /// Element-wise: `y = x * 3 + 1`; `y` is empty at n = 0.
    pub struct Affine;

    kernel step = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] * 3u + 1u; }
        }
    };

    input x[n];
    output y[n];
    node step(x: x, y: y) over n;
}

graph! {
    /// A reduction: `y[0]` is the least of `x`, `u32::MAX` (the identity
    /// of `min`) at n = 0.
    pub struct Least;

    input x[n];
    output y[1];
    node lo = reduce min<u32>(x) -> y;
}

graph! {
    /// A kernel's output of constant length: `y[i] = 2 * x[i % n]` for 4
    /// elements, which have no value at n = 0, so n = 0 is refused.
    pub struct Head;

    kernel head = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = 2u * x[g.x % arrayLength(&x)]; }
        }
    };

    input x[n];
    output y[4];
    node head(x: x, y: y) over 4;
}

/// One mode's answer at n = 0: `y`'s elements, or the error (a batch's
/// error unwrapped from `BatchInstance`).
type Answer = Result<Vec<u32>, BackendError>;

/// The empty input.
const NONE: &[u32] = &[];

fn unwrap_batch(e: BackendError) -> BackendError {
    match e {
        BackendError::BatchInstance { source, .. } => *source,
        other => other,
    }
}

/// Every typed way to run graph type `$g` (whose one input is `x` and one
/// output `y`) on the empty input, each with its name; `$after` runs after
/// each mode (a run above 0, checked against the CPU).
macro_rules! typed_modes {
    ($g:ty, $graph:expr, $after:expr) => {{
        let graph: &$g = $graph;
        let after = $after;
        let gpu = graph.graph().gpu().clone();
        let config = DispatchConfig::default();
        let empty: &[u32] = &[];
        let mut answers: Vec<(&'static str, Answer)> = Vec::new();
        answers.push(("run", graph.run(empty).map(|o| o.y)));
        after();
        answers.push(("run_with", graph.run_with(&config, empty).map(|o| o.y)));
        after();
        answers.push((
            "run_reported",
            graph.run_reported(&config, empty).map(|(o, report)| {
                assert_eq!(
                    report.submissions, 0,
                    "run_reported at n = 0 submits nothing"
                );
                o.y
            }),
        ));
        after();
        let mut into = Default::default();
        answers.push((
            "run_into",
            graph
                .run_into(&config, &mut into, empty)
                .map(|_| into.y.clone()),
        ));
        after();
        answers.push((
            "run_async",
            pollster::block_on(graph.run_async(&config, empty)).map(|o| o.y),
        ));
        after();
        answers.push((
            "run_resident",
            graph
                .run_resident(empty)
                .and_then(|r| r.y.read_as::<u32>(&gpu)),
        ));
        after();
        answers.push((
            "run_resident_with",
            graph
                .run_resident_with(&config, empty)
                .and_then(|r| r.y.read_as::<u32>(&gpu)),
        ));
        after();
        // Made for problem size 0, unwritten: as `run` gives them where
        // they are empty; a buffer of zeros where `run` gives a value.
        answers.push((
            "resident_outputs",
            graph
                .resident_outputs(&config, 0)
                .and_then(|r| r.y.read_as::<u32>(&gpu)),
        ));
        after();
        // `record` into buffers made for 0, then read them back.
        let recorded = graph.resident_outputs(&config, 0).and_then(|outputs| {
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            let run = graph.record(&mut encoder, &config, &outputs, empty)?;
            let submission = gpu.queue().submit([encoder.finish()]);
            let report = run.finish(&submission);
            assert_eq!(report.dispatches, 0, "record at n = 0 records nothing");
            outputs.y.read_as::<u32>(&gpu)
        });
        answers.push(("record", recorded));
        after();
        answers.push((
            "run_batch",
            graph
                .run_batch(&config, &[empty])
                .map(|mut o| o.remove(0).y)
                .map_err(unwrap_batch),
        ));
        after();
        for depth in [1usize, 3] {
            let mut ran = graph.run_many(&config, depth, &[empty, empty]);
            assert_eq!(ran.len(), 2);
            let second = ran
                .pop()
                .expect("two results")
                .map(|o| o.y)
                .map_err(unwrap_batch);
            let first = ran
                .pop()
                .expect("two results")
                .map(|o| o.y)
                .map_err(unwrap_batch);
            assert_eq!(
                format!("{first:?}"),
                format!("{second:?}"),
                "run_many at depth {depth}: both runs of size 0 alike"
            );
            let name = if depth == 1 {
                "run_many d1"
            } else {
                "run_many d3"
            };
            answers.push((name, first));
            after();
        }
        answers
    }};
}

/// Every untyped way to run `graph` (one input, one output) at n = 0,
/// `after` run after each.
fn untyped_modes(graph: &Graph, after: &dyn Fn()) -> Vec<(&'static str, Answer)> {
    let gpu = graph.gpu().clone();
    let config = DispatchConfig::default();
    let feeds = [Feed::Host(&[])];
    let mut answers: Vec<(&'static str, Answer)> = Vec::new();
    let into_vec = |run: &mut dyn FnMut(&mut [Sink<'_>]) -> vyre_graph::Result<RunReport>| {
        let mut y: Vec<u32> = Vec::new();
        run(&mut [Sink::from(&mut y)]).map(|report| {
            assert_eq!(report.submissions, 0, "n = 0 submits nothing");
            y
        })
    };
    answers.push((
        "Graph::run",
        into_vec(&mut |sinks| graph.run(&config, 0, &feeds, sinks)),
    ));
    after();
    answers.push((
        "Graph::run_async",
        into_vec(&mut |sinks| pollster::block_on(graph.run_async(&config, 0, &feeds, sinks))),
    ));
    after();
    // A host sink recorded, then the same sink read.
    let recorded = {
        let mut y: Vec<u32> = Vec::new();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        let run = graph.record(&mut encoder, &config, 0, &feeds, &[Sink::from(&mut y)]);
        run.and_then(|run| {
            let submission = gpu.queue().submit([encoder.finish()]);
            run.read(submission, &mut [Sink::from(&mut y)])
        })
        .map(|_| y)
    };
    answers.push(("Graph::record + read", recorded));
    after();
    // A resident sink made for n = 0.
    let b = graph.spec().host_outputs().next().expect("one output");
    let resident = graph.create_buffer(b, 0).and_then(|h| {
        graph.run(&config, 0, &feeds, &mut [Sink::Device(&h)])?;
        h.read_as::<u32>(&gpu)
    });
    answers.push(("Graph::run into a resident sink", resident));
    after();
    let batch = {
        let mut y: Vec<u32> = Vec::new();
        let mut one = [Instance::new(0, feeds.to_vec(), vec![Sink::from(&mut y)])];
        let ran = graph
            .run_batch(&config, &mut one)
            .and_then(|mut report| report.runs.remove(0));
        drop(one);
        ran.map(|_| y).map_err(unwrap_batch)
    };
    answers.push(("Graph::run_batch", batch));
    after();
    for depth in [1usize, 3] {
        let (mut y0, mut y1): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut two = [
            Instance::new(0, feeds.to_vec(), vec![Sink::from(&mut y0)]),
            Instance::new(0, feeds.to_vec(), vec![Sink::from(&mut y1)]),
        ];
        let mut ran = graph.run_many(&config, depth, &mut two);
        drop(two);
        let second = ran.pop().expect("two results");
        let first = ran.pop().expect("two results");
        assert_eq!(
            first.is_ok(),
            second.is_ok(),
            "run_many d{depth}: both alike"
        );
        let name = if depth == 1 {
            "Graph::run_many d1"
        } else {
            "Graph::run_many d3"
        };
        if second.is_ok() {
            assert_eq!(y0, y1, "run_many d{depth}: both runs of size 0 alike");
        }
        answers.push((name, first.map(|_| y0).map_err(unwrap_batch)));
        after();
    }
    answers
}

/// The typed modes given `n` itself rather than finding it from an input
/// (`resident_outputs`, and `record` into its buffers): their refusal is
/// [`Graph::check_problem_size`]'s at 0, where the others' says which
/// input is empty, with the same reason.
const GIVEN_N: [&str; 2] = ["resident_outputs", "record"];

/// Every answer is `reference`'s: the same elements, or the same error
/// (`given_n`'s for the modes in [`GIVEN_N`]).
fn all_alike(
    answers: &[(&'static str, Answer)],
    (reference, given_n): (&Answer, &Answer),
    what: &str,
) {
    for (mode, answer) in answers {
        let reference = if GIVEN_N.contains(mode) {
            given_n
        } else {
            reference
        };
        match (answer, reference) {
            (Ok(got), Ok(want)) => assert_same(got, want, &format!("{what}, {mode}")),
            (Err(got), Err(want)) => {
                assert!(
                    matches!(got, BackendError::InvalidProblemSize { .. }),
                    "{what}, {mode}: {got:?}"
                );
                assert_eq!(got.to_string(), want.to_string(), "{what}, {mode}");
            }
            (got, want) => panic!("{what}, {mode}: {got:?}, but run gives {want:?}"),
        }
    }
}

#[test]
fn an_element_wise_graph_gives_empty_outputs_in_every_mode() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Affine::new(&gpu).expect("graph");
    let reference: Answer = graph.run(NONE).map(|o| o.y);
    assert_eq!(reference.as_ref().ok(), Some(&Vec::new()), "run(0)");
    let above = || {
        let x: Vec<u32> = (0..300u32).map(|i| i * 13 + 5).collect();
        let want: Vec<u32> = x.iter().map(|v| v * 3 + 1).collect();
        assert_same(&graph.run(&x).expect("run(300)").y, &want, "Affine at 300");
    };
    all_alike(
        &typed_modes!(Affine, &graph, above),
        (&reference, &reference),
        "Affine",
    );
    let both = (&reference, &reference);
    all_alike(
        &untyped_modes(graph.graph(), &above),
        both,
        "Affine untyped",
    );
    // A resident output of size 0 is empty, though a word backs it.
    let resident = graph.run_resident(NONE).expect("run_resident(0)");
    assert_eq!(resident.y.size(), 0);
    // And an empty resident buffer feeds another run of size 0.
    let again = graph
        .run(&resident.y)
        .expect("fed an empty resident buffer");
    assert!(again.y.is_empty());
}

#[test]
fn a_reduction_gives_its_identity_in_every_mode() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Least::new(&gpu).expect("graph");
    let reference: Answer = graph.run(NONE).map(|o| o.y);
    assert_eq!(reference.as_ref().ok(), Some(&vec![u32::MAX]), "run(0)");
    let above = || {
        let x: Vec<u32> = (0..1000u32).map(|i| 5000 - i * 3).collect();
        let out = graph.run(&x).expect("run(1000)");
        assert_same(&out.y, &[*x.iter().min().expect("x")], "Least at 1000");
    };
    let answers = typed_modes!(Least, &graph, above);
    // `resident_outputs` only makes the buffer: the identity comes with a
    // run (`run_resident`, `record`), as for any other output.
    let (made, ran): (Vec<_>, Vec<_>) = answers
        .into_iter()
        .partition(|(mode, _)| *mode == "resident_outputs");
    assert_eq!(
        made[0].1.as_ref().ok(),
        Some(&vec![0]),
        "a made buffer is zeroed"
    );
    all_alike(&ran, (&reference, &reference), "Least");
    let both = (&reference, &reference);
    all_alike(&untyped_modes(graph.graph(), &above), both, "Least untyped");
}

#[test]
fn a_graph_with_values_at_zero_is_refused_by_every_mode_and_then_runs() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Head::new(&gpu).expect("graph");
    let reference: Answer = graph.run(NONE).map(|o| o.y);
    assert!(
        matches!(reference, Err(BackendError::InvalidProblemSize { .. })),
        "run(0): {reference:?}"
    );
    let check = |graph: &Head, n: u32| {
        let x: Vec<u32> = (0..n).map(|i| i * 7 + 3).collect();
        let want: Vec<u32> = (0..4).map(|i| 2 * x[i % x.len()]).collect();
        let out = graph.run(&x).expect("a run above 0");
        assert_same(&out.y, &want, &format!("Head at {n}"));
    };
    // Each refusal leaves the graph whole: after each, it runs at sizes
    // above 0 (3 also below the output's 4 elements).
    let above = || {
        check(&graph, 10);
        check(&graph, 3);
    };
    let typed = typed_modes!(Head, &graph, above);
    let given_n: Answer = graph
        .graph()
        .check_problem_size(&DispatchConfig::default(), 0)
        .map(|()| Vec::new());
    all_alike(&typed, (&reference, &given_n), "Head");
    // Both say why, alike.
    for refusal in [&reference, &given_n] {
        let message = refusal.as_ref().expect_err("refused").to_string();
        assert!(
            message.contains("graph `Head` has no value at n = 0 for output `y` (4 elements)"),
            "{message}"
        );
    }
    let untyped_reference: Answer = {
        let mut y: Vec<u32> = Vec::new();
        let feeds = [Feed::Host(&[])];
        graph
            .graph()
            .run(
                &DispatchConfig::default(),
                0,
                &feeds,
                &mut [Sink::from(&mut y)],
            )
            .map(|_| y)
    };
    assert!(matches!(
        untyped_reference,
        Err(BackendError::InvalidProblemSize { .. })
    ));
    let both = (&untyped_reference, &untyped_reference);
    all_alike(&untyped_modes(graph.graph(), &above), both, "Head untyped");
    check(&graph, 1);
    check(&graph, 100);
}
