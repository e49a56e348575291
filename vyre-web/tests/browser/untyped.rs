//! The untyped `Graph` on the web (`docs/api.md`, "The untyped `Graph`"):
//! a hand-built spec of two `+1` nodes, made with `Graph::new_async` and run
//! with `run_async`, `run_batch_async` and `run_many_async`, every output
//! against the CPU; a steady run allocates nothing.

use std::borrow::Cow;

use crate::common::{assert_same, own_gpu};

use vyre_graph::spec::{
    BindingKind, BindingSpec, BufferClass, BufferSpec, DispatchSize, Extent, GraphSpec, GridFold,
    KernelSpec, NodeBinding, NodeSpec,
};
use vyre_graph::{DispatchConfig, Feed, Graph, Instance, Sink, StreamDepth};
use wasm_bindgen_test::wasm_bindgen_test;

const ADD_ONE: &str = "
    @group(0) @binding(0) var<storage, read> src: array<u32>;
    @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + 1u; }
    }";

/// `x -> t -> y`, each step `+1`.
fn plus_two() -> GraphSpec {
    let kernel = KernelSpec {
        label: "add_one".into(),
        source: ADD_ONE.into(),
        entry_point: "main".into(),
        workgroup_size: [64, 1, 1],
        bindings: vec![
            BindingSpec::storage("src", 0, 0, BindingKind::ReadOnlyStorage, 4),
            BindingSpec::storage("dst", 0, 1, BindingKind::ReadWriteStorage, 4),
        ]
        .into(),
        fold: GridFold::XOnly,
    };
    let buffer = |name: &'static str, class| BufferSpec {
        name: name.into(),
        class,
        element_size: 4,
        len: Extent::N,
        header_bytes: 0,
        texture: None,
        append: None,
        empty_value: None,
    };
    let node = |src: usize, dst: usize| NodeSpec {
        label: "add_one".into(),
        kernel: 0,
        bindings: vec![
            NodeBinding {
                group: 0,
                binding: 0,
                buffer: src,
            },
            NodeBinding {
                group: 0,
                binding: 1,
                buffer: dst,
            },
        ]
        .into(),
        overrides: Cow::Borrowed(&[]),
        workgroup_size: None,
        size: DispatchSize::Invocations(Extent::N),
    };
    GraphSpec {
        name: "plus_two".into(),
        kernels: vec![kernel].into(),
        buffers: vec![
            buffer("x", BufferClass::Input),
            buffer("t", BufferClass::Intermediate),
            buffer("y", BufferClass::Output),
        ]
        .into(),
        nodes: vec![node(0, 1), node(1, 2)].into(),
        features: Cow::Borrowed(&[]),
        schedule: None,
        fused: Cow::Borrowed(&[]),
        loops: Cow::Borrowed(&[]),
    }
}

fn plus(x: &[u32], k: u32) -> Vec<u32> {
    x.iter().map(|v| v.wrapping_add(k)).collect()
}

#[wasm_bindgen_test]
async fn a_hand_built_graph_runs_and_a_steady_run_allocates_nothing() {
    let gpu = own_gpu().await;
    let graph = Graph::new_async(&gpu, plus_two()).await.expect("graph");
    let config = DispatchConfig::default();
    for round in 0..3u32 {
        let x: Vec<u32> = (0..1000).map(|i| i * 3 + round).collect();
        let mut y = vec![0u32; 1000];
        let before = gpu.counters();
        let report = graph
            .run_async(
                &config,
                1000,
                &[Feed::Host(bytemuck::cast_slice(&x))],
                &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
            )
            .await
            .expect("run");
        let spent = gpu.counters().since(&before);
        assert_eq!(report.submissions, 1);
        assert_same(&y, &plus(&x, 2), &format!("round {round}"));
        if round > 0 {
            assert!(report.cache_hit, "round {round}");
            assert_eq!(spent.buffers_created, 0, "round {round}: {spent:?}");
            assert_eq!(spent.bind_groups_created, 0, "round {round}: {spent:?}");
        }
    }
}

#[wasm_bindgen_test]
async fn untyped_batches_and_streams() {
    let gpu = own_gpu().await;
    let graph = Graph::new_async(&gpu, plus_two()).await.expect("graph");
    let xs: Vec<Vec<u32>> = [7usize, 1000, 64, 1000, 4097]
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n as u32).map(|i| i ^ (k as u32 * 0x9e37)).collect())
        .collect();

    let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut batch: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut ys)
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let report = graph
        .run_batch_async(&DispatchConfig::default(), &mut batch)
        .await
        .expect("batch");
    drop(batch);
    for (k, (x, y)) in xs.iter().zip(&ys).enumerate() {
        assert!(report.runs[k].is_ok(), "{:?}", report.runs[k]);
        assert_same(y, &plus(x, 2), &format!("batch instance {k}"));
    }

    let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut stream: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut ys)
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let config = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
    let results = graph.run_many_async(&config, 3, &mut stream).await;
    drop(stream);
    for (k, ((x, y), r)) in xs.iter().zip(&ys).zip(&results).enumerate() {
        assert!(r.is_ok(), "stream run {k}: {r:?}");
        assert_same(y, &plus(x, 2), &format!("stream run {k}"));
    }
}
