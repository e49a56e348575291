//! A typed graph on another engine (`Name::with_engine`): an `Engine` of
//! the test's own wraps a `Graph` and counts every call, so that each test
//! proves the typed `run_batch`, `run_many` and their `async` twins go
//! through the engine (and nothing else does), with every output checked
//! element by element against the CPU; an engine running another graph is
//! refused with an error that says what to pass instead.

use std::cell::Cell;

use crate::common;

use common::{assert_same, data, gpu, serial};
use vyre_graph::spec::GraphSpec;
use vyre_graph::{
    BackendError, BatchReport, DispatchConfig, Engine, Feed, Graph, Instance, RunReport, graph,
};

/// Calls that reached the engine, by method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Calls {
    sizes: usize,
    batches: usize,
    batches_async: usize,
    streams: usize,
    streams_async: usize,
    /// Instances handed over, over all batch and stream calls.
    instances: usize,
}

/// An engine that runs on one `Graph` and counts what it is asked to do.
#[derive(Debug)]
struct Counting {
    graph: Graph,
    calls: Cell<Calls>,
}

impl Counting {
    fn new(graph: Graph) -> Self {
        Counting {
            graph,
            calls: Cell::new(Calls::default()),
        }
    }

    fn count(&self, f: impl FnOnce(&mut Calls)) {
        let mut calls = self.calls.get();
        f(&mut calls);
        self.calls.set(calls);
    }

    fn calls(&self) -> Calls {
        self.calls.get()
    }
}

impl Engine for Counting {
    fn spec(&self) -> &GraphSpec {
        self.graph.spec()
    }

    fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> vyre_graph::Result<u64> {
        self.count(|c| c.sizes += 1);
        self.graph.instance_size(index, feeds)
    }

    fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> vyre_graph::Result<BatchReport> {
        self.count(|c| {
            c.batches += 1;
            c.instances += instances.len();
        });
        self.graph.run_batch(config, instances)
    }

    async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> vyre_graph::Result<BatchReport> {
        self.count(|c| {
            c.batches_async += 1;
            c.instances += instances.len();
        });
        self.graph.run_batch_async(config, instances).await
    }

    fn run_many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<vyre_graph::Result<RunReport>> {
        self.count(|c| {
            c.streams += 1;
            c.instances += instances.len();
        });
        self.graph.run_many(config, depth, instances)
    }

    async fn run_many_async(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<vyre_graph::Result<RunReport>> {
        self.count(|c| {
            c.streams_async += 1;
            c.instances += instances.len();
        });
        self.graph.run_many_async(config, depth, instances).await
    }
}

mod graphs {
    use super::graph;

    graph! {
        /// One input; `n` inferred from its length.
        pub struct Lcg;

        kernel step = wgsl {
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let i = g.x;
                if i < arrayLength(&src) { dst[i] = src[i] * 1664525u + 1013904223u; }
            }
        };

        input x[n];
        output y[n];

        node step(src: x, dst: y) over n;
    }

    graph! {
        /// `n` is a parameter: no input's length gives it.
        pub struct Ramp;

        kernel fill = wgsl {
            @group(0) @binding(0) var<storage, read> k: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&dst) { dst[g.x] = g.x * k[0] + k[1]; }
            }
        };

        input k[2];
        output y[n];

        node fill(k: k, dst: y) over n;
    }

    graph! {
        /// Two inputs and two outputs (one an inout).
        pub struct Mix;

        kernel mix = wgsl {
            @group(0) @binding(0) var<storage, read> a: array<u32>;
            @group(0) @binding(1) var<storage, read_write> z: array<u32>;
            @group(0) @binding(2) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let i = g.x;
                if i < arrayLength(&a) {
                    y[i] = a[i] + z[i];
                    z[i] = z[i] ^ a[i];
                }
            }
        };

        input a[n];
        inout z[n];
        output y[n];

        node mix(a: a, z: z, y: y) over n;
    }

    pub mod elsewhere {
        use super::graph;

        graph! {
            /// Another graph named `Lcg`: the same name, another kernel.
            pub struct Lcg;

            kernel step = wgsl {
                @group(0) @binding(0) var<storage, read> src: array<u32>;
                @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    let i = g.x;
                    if i < arrayLength(&src) { dst[i] = src[i] + 1u; }
                }
            };

            input x[n];
            output y[n];

            node step(src: x, dst: y) over n;
        }
    }
}
use graphs::{Lcg, Mix, Ramp};

fn lcg_cpu(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|v| v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223))
        .collect()
}

fn ramp_cpu(n: usize, k: [u32; 2]) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(k[0]).wrapping_add(k[1]))
        .collect()
}

/// `(y, z)` of `Mix` on the CPU.
fn mix_cpu(a: &[u32], z: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let y = a.iter().zip(z).map(|(a, z)| a.wrapping_add(*z)).collect();
    let z = a.iter().zip(z).map(|(a, z)| z ^ a).collect();
    (y, z)
}

/// `Lcg` on the counting engine.
fn lcg_on_counting() -> Lcg<Counting> {
    let graph = Graph::new(&gpu(), Lcg::SPEC).expect("Graph::new");
    Lcg::with_engine(Counting::new(graph)).expect("with_engine")
}

const SIZES: [usize; 6] = [100, 257, 1, 1000, 257, 64];

#[test]
fn a_typed_batch_and_stream_go_through_the_engine_and_are_right() {
    let _serial = serial();
    let lcg = lcg_on_counting();
    let config = DispatchConfig::default();
    let xs: Vec<Vec<u32>> = SIZES.iter().zip(1..).map(|(&n, s)| data(n, s)).collect();
    let inputs: Vec<&[u32]> = xs.iter().map(|x| &x[..]).collect();

    let outputs = lcg.run_batch(&config, &inputs).expect("run_batch");
    assert_eq!(outputs.len(), xs.len());
    for (k, (out, x)) in outputs.iter().zip(&xs).enumerate() {
        assert_same(&out.y, &lcg_cpu(x), &format!("run_batch, instance {k}"));
    }
    let want = Calls {
        sizes: xs.len(),
        batches: 1,
        instances: xs.len(),
        ..Calls::default()
    };
    assert_eq!(
        lcg.engine().calls(),
        want,
        "one batch call, a size per instance"
    );

    let streamed = lcg.run_many(&config, 3, &inputs);
    assert_eq!(streamed.len(), xs.len());
    for (k, (out, x)) in streamed.into_iter().zip(&xs).enumerate() {
        let out = out.unwrap_or_else(|e| panic!("run_many, instance {k}: {e}"));
        assert_same(&out.y, &lcg_cpu(x), &format!("run_many, instance {k}"));
    }
    let calls = lcg.engine().calls();
    assert_eq!((calls.batches, calls.streams), (1, 1), "{calls:?}");
    assert_eq!(calls.instances, 2 * xs.len(), "{calls:?}");
    assert_eq!(calls.sizes, 2 * xs.len(), "{calls:?}");
}

#[test]
fn the_async_twins_go_through_the_engine_and_are_right() {
    let _serial = serial();
    let lcg = lcg_on_counting();
    let config = DispatchConfig::default();
    let xs: Vec<Vec<u32>> = SIZES.iter().zip(7..).map(|(&n, s)| data(n, s)).collect();
    let inputs: Vec<&[u32]> = xs.iter().map(|x| &x[..]).collect();

    let outputs =
        pollster::block_on(lcg.run_batch_async(&config, &inputs)).expect("run_batch_async");
    for (k, (out, x)) in outputs.iter().zip(&xs).enumerate() {
        assert_same(
            &out.y,
            &lcg_cpu(x),
            &format!("run_batch_async, instance {k}"),
        );
    }
    let streamed = pollster::block_on(lcg.run_many_async(&config, 2, &inputs));
    assert_eq!(streamed.len(), xs.len());
    for (k, (out, x)) in streamed.into_iter().zip(&xs).enumerate() {
        let out = out.unwrap_or_else(|e| panic!("run_many_async, instance {k}: {e}"));
        assert_same(
            &out.y,
            &lcg_cpu(x),
            &format!("run_many_async, instance {k}"),
        );
    }
    let calls = lcg.engine().calls();
    assert_eq!(
        calls,
        Calls {
            sizes: 2 * xs.len(),
            batches_async: 1,
            streams_async: 1,
            instances: 2 * xs.len(),
            ..Calls::default()
        },
        "only the async methods were called, once each"
    );
}

#[test]
fn a_graph_taking_n_runs_its_batches_on_the_engine() {
    let _serial = serial();
    let graph = Graph::new(&gpu(), Ramp::SPEC).expect("Graph::new");
    let ramp = Ramp::with_engine(Counting::new(graph)).expect("with_engine");
    let config = DispatchConfig::default();
    let ks: Vec<[u32; 2]> = vec![[3, 1], [0, 7], [5, 9], [1, 0]];
    let ns: [u64; 4] = [64, 1, 1000, 300];
    let instances: Vec<(u64, &[u32])> = ns.iter().zip(&ks).map(|(&n, k)| (n, &k[..])).collect();
    let outputs = ramp.run_batch(&config, &instances).expect("run_batch");
    let streamed = ramp.run_many(&config, 2, &instances);
    let async_outputs =
        pollster::block_on(ramp.run_batch_async(&config, &instances)).expect("run_batch_async");
    let async_streamed = pollster::block_on(ramp.run_many_async(&config, 4, &instances));
    for (k, (&n, key)) in ns.iter().zip(&ks).enumerate() {
        let want = ramp_cpu(n as usize, *key);
        assert_same(&outputs[k].y, &want, &format!("run_batch, instance {k}"));
        assert_same(
            &async_outputs[k].y,
            &want,
            &format!("run_batch_async, instance {k}"),
        );
        for (what, each) in [("run_many", &streamed), ("run_many_async", &async_streamed)] {
            match &each[k] {
                Ok(out) => assert_same(&out.y, &want, &format!("{what}, instance {k}")),
                Err(e) => panic!("{what}, instance {k}: {e}"),
            }
        }
    }
    let calls = ramp.engine().calls();
    // `n` is each instance's own: nothing asks the engine for a size.
    assert_eq!(
        calls,
        Calls {
            sizes: 0,
            batches: 1,
            batches_async: 1,
            streams: 1,
            streams_async: 1,
            instances: 4 * ns.len(),
        }
    );
}

#[test]
fn a_graph_of_several_inputs_runs_on_the_engine_and_again_after_an_error() {
    let _serial = serial();
    let graph = Graph::new(&gpu(), Mix::SPEC).expect("Graph::new");
    let mix = Mix::with_engine(Counting::new(graph)).expect("with_engine");
    let config = DispatchConfig::default();
    let cases: Vec<(Vec<u32>, Vec<u32>)> = [5usize, 1000, 5, 300]
        .iter()
        .zip(11..)
        .map(|(&n, s)| (data(n, s), data(n, s + 100)))
        .collect();
    let inputs: Vec<(&[u32], &[u32])> = cases.iter().map(|(a, z)| (&a[..], &z[..])).collect();
    let check = |outputs: &[graphs::MixOutputs], what: &str| {
        assert_eq!(outputs.len(), cases.len(), "{what}");
        for (k, ((a, z), out)) in cases.iter().zip(outputs).enumerate() {
            let (y, z) = mix_cpu(a, z);
            assert_same(&out.y, &y, &format!("{what}, instance {k}: y"));
            assert_same(&out.z, &z, &format!("{what}, instance {k}: z"));
        }
    };
    check(
        &mix.run_batch(&config, &inputs).expect("run_batch"),
        "run_batch",
    );

    // A short `z` in instance 1: the error names it, and nothing runs.
    let before = mix.engine().calls();
    let bad = vec![inputs[0], (inputs[1].0, &inputs[1].1[..10])];
    let err = mix.run_batch(&config, &bad).expect_err("a short inout");
    assert!(
        matches!(err, BackendError::BatchInstance { index: 1, .. }),
        "{err:?}"
    );
    assert_eq!(mix.engine().calls().batches, before.batches + 1);
    // The stream reports that instance's error alone.
    let streamed = mix.run_many(&config, 2, &bad);
    assert!(streamed[0].is_ok(), "{:?}", streamed[0]);
    assert!(streamed[1].is_err(), "instance 1 must fail");

    // The same object runs right again.
    check(
        &mix.run_batch(&config, &inputs).expect("run_batch again"),
        "run_batch after an error",
    );
    let streamed: Vec<_> = pollster::block_on(mix.run_many_async(&config, 3, &inputs))
        .into_iter()
        .map(|r| r.expect("run_many_async after an error"))
        .collect();
    check(&streamed, "run_many_async after an error");
}

#[test]
fn empty_batches_and_size_zero_instances_on_the_engine() {
    let _serial = serial();
    let lcg = lcg_on_counting();
    let config = DispatchConfig::default();
    let none: [&[u32]; 0] = [];
    assert!(
        lcg.run_batch(&config, &none)
            .expect("empty batch")
            .is_empty()
    );
    assert!(lcg.run_many(&config, 2, &none).is_empty());
    let calls = lcg.engine().calls();
    assert_eq!((calls.batches, calls.streams, calls.instances), (1, 1, 0));
    // An instance of size 0 (an empty input): its output is empty at
    // n = 0, so it is answered, beside the others (docs/api.md, "Size 0").
    let x = data(100, 3);
    let empty: &[u32] = &[];
    let out = lcg
        .run_batch(&config, &[&x[..], empty, &x[..]])
        .expect("a size-0 instance");
    assert_same(&out[0].y, &lcg_cpu(&x), "instance 0");
    assert!(out[1].y.is_empty(), "instance 1: {:?}", out[1].y);
    assert_same(&out[2].y, &lcg_cpu(&x), "instance 2");
    let ran = pollster::block_on(lcg.run_many_async(&config, 2, &[empty, &x[..]]));
    assert!(ran[0].as_ref().expect("size 0").y.is_empty());
    assert_same(
        &ran[1].as_ref().expect("after size 0").y,
        &lcg_cpu(&x),
        "stream",
    );
}

#[test]
fn with_engine_refuses_an_engine_running_another_graph() {
    let _serial = serial();
    let gpu = gpu();
    // Another graph altogether.
    let ramp = Graph::new(&gpu, Ramp::SPEC).expect("Graph::new");
    let err = Lcg::with_engine(Counting::new(ramp)).expect_err("another graph's engine");
    let BackendError::InvalidProgram { graph, reason } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(graph, "Ramp");
    let message = err.to_string();
    for part in [
        "`Lcg::with_engine` was given an engine running graph `Ramp`, not `Lcg`",
        "GraphSet::new(&gpus, Lcg::SPEC)",
        "Graph::new(&gpu, Lcg::SPEC)",
    ] {
        assert!(
            message.contains(part),
            "{message:?} lacks {part:?} ({reason})"
        );
    }
    // Another graph of the same name (declared in another module).
    let namesake = Graph::new(&gpu, graphs::elsewhere::Lcg::SPEC).expect("Graph::new");
    let err = Lcg::with_engine(namesake).expect_err("a namesake's engine");
    let message = err.to_string();
    assert!(
        message.contains("another graph named `Lcg`") && message.contains("Lcg::SPEC"),
        "{message}"
    );
    // Each refusal leaves everything usable: the right engine is taken, and
    // runs.
    let lcg = lcg_on_counting();
    let x = data(500, 9);
    let out = lcg
        .run_batch(&DispatchConfig::default(), &[&x[..]])
        .expect("run_batch");
    assert_same(&out[0].y, &lcg_cpu(&x), "after the refusals");
}

#[test]
fn with_engine_given_a_graph_is_the_whole_one_gpu_api() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Graph::new(&gpu, Lcg::SPEC).expect("Graph::new");
    // `Lcg<Graph>`, the type `Lcg::new` makes: single runs too.
    let lcg: Lcg = Lcg::with_engine(graph).expect("with_engine");
    let x = data(300, 5);
    assert_same(&lcg.run(&x[..]).expect("run").y, &lcg_cpu(&x), "run");
    let out = lcg
        .run_batch(&DispatchConfig::default(), &[&x[..]])
        .expect("run_batch");
    assert_same(&out[0].y, &lcg_cpu(&x), "run_batch");
    assert!(std::ptr::eq(lcg.engine(), lcg.graph()));
    // The type's own constructor and its engine agree.
    let made = Lcg::new(&gpu).expect("new");
    assert_eq!(made.engine().spec(), &Lcg::SPEC);
    // Debug shows the engine, as it showed the graph.
    let counted = lcg_on_counting();
    let shown = format!("{counted:?}");
    assert!(shown.starts_with("Lcg { graph: Counting {"), "{shown}");
}
