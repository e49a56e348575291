//! The async twins of batches and streams, run natively through
//! `pollster`: `Graph::run_batch_async` (stacked runs of mixed sizes, and
//! recorded copies) and `Graph::run_many_async` (runs overlapped in a
//! stream), every output checked element by element against the CPU.

use crate::common;

use common::{assert_same, data, gpu, serial, two_step_cpu, two_step_spec};
use vyre_graph::{DispatchConfig, Feed, Graph, Instance, Sink, StreamDepth, graph};

mod lcg {
    use super::graph;
    graph! {
        /// One element-wise step: stackable.
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
}
use lcg::Lcg;

fn lcg_cpu(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|v| v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223))
        .collect()
}

/// One instance per input, each into its own vector.
fn instances<'a>(xs: &'a [Vec<u32>], ys: &'a mut [Vec<u32>]) -> Vec<Instance<'a>> {
    xs.iter()
        .zip(ys)
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect()
}

const SIZES: [usize; 7] = [100, 257, 100, 1000, 257, 64, 100];

#[test]
fn an_async_batch_of_mixed_sizes_runs_stacked_and_right() {
    let _serial = serial();
    assert!(Lcg::SPEC.schedule.expect("schedule").stackable);
    let graph = pollster::block_on(Graph::new_async(&gpu(), Lcg::SPEC)).expect("new_async");
    let xs: Vec<Vec<u32>> = SIZES.iter().zip(1..).map(|(&n, s)| data(n, s)).collect();
    let mut ys = vec![Vec::new(); xs.len()];
    let mut batch = instances(&xs, &mut ys);
    let config = DispatchConfig::default();
    let report =
        pollster::block_on(graph.run_batch_async(&config, &mut batch)).expect("run_batch_async");
    drop(batch);
    assert_eq!(report.stacked, xs.len(), "every instance stacked");
    assert_eq!(report.chunks, 4, "one stacked run per size");
    for (k, (run, (x, y))) in report.runs.iter().zip(xs.iter().zip(&ys)).enumerate() {
        assert!(run.is_ok(), "instance {k}: {run:?}");
        assert_same(y, &lcg_cpu(x), &format!("instance {k}"));
    }
}

#[test]
fn an_async_batch_of_recorded_copies_is_right() {
    let _serial = serial();
    let graph = pollster::block_on(Graph::new_async(&gpu(), two_step_spec("copies_async")))
        .expect("new_async");
    let xs: Vec<Vec<u32>> = SIZES.iter().zip(7..).map(|(&n, s)| data(n, s)).collect();
    let mut ys = vec![Vec::new(); xs.len()];
    let mut batch = instances(&xs, &mut ys);
    let config = DispatchConfig::default();
    let report =
        pollster::block_on(graph.run_batch_async(&config, &mut batch)).expect("run_batch_async");
    drop(batch);
    assert_eq!(
        report.stacked, 0,
        "a graph without a schedule is not stacked"
    );
    for (k, (run, (x, y))) in report.runs.iter().zip(xs.iter().zip(&ys)).enumerate() {
        assert!(run.is_ok(), "instance {k}: {run:?}");
        assert_same(y, &two_step_cpu(x), &format!("instance {k}"));
    }
}

#[test]
fn an_async_stream_delivers_every_run_in_order() {
    let _serial = serial();
    let graph = pollster::block_on(Graph::new_async(&gpu(), two_step_spec("stream_async")))
        .expect("new_async");
    let config = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
    for depth in [1usize, 3] {
        let xs: Vec<Vec<u32>> = SIZES.iter().zip(20..).map(|(&n, s)| data(n, s)).collect();
        let mut ys = vec![Vec::new(); xs.len()];
        let mut runs = instances(&xs, &mut ys);
        let results = pollster::block_on(graph.run_many_async(&config, depth, &mut runs));
        drop(runs);
        assert_eq!(results.len(), xs.len());
        for (k, (r, (x, y))) in results.iter().zip(xs.iter().zip(&ys)).enumerate() {
            assert!(r.is_ok(), "depth {depth}, run {k}: {r:?}");
            assert_same(y, &two_step_cpu(x), &format!("depth {depth}, run {k}"));
        }
    }
}
