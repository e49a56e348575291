//! Batches and streams (`tests/batches/`): a stacked batch (one size, host
//! instances: one run over `B × n`), a batch of recorded copies (a graph
//! that cannot stack, mixed sizes, one submission), the typed batch, and a
//! stream of runs (`run_many_async`); every output against the CPU.

use crate::common::{assert_same, gpu};

use vyre_graph::{DispatchConfig, Feed, Instance, Sink, StreamDepth};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::shared::batches::{Chain, Evens};

fn lcg(x: u32) -> u32 {
    x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

/// One instance of `Chain`: `x`, `z` in, the outputs read back into
/// `y_out` and `z_out`.
struct Case {
    x: Vec<u32>,
    z: Vec<u32>,
    y_out: Vec<u32>,
    z_out: Vec<u32>,
}

impl Case {
    fn new(n: usize, seed: u32) -> Self {
        Case {
            x: (0..n as u32)
                .map(|i| lcg(i ^ seed.wrapping_mul(7919)))
                .collect(),
            z: (0..n as u32).map(|i| i.wrapping_mul(seed + 3)).collect(),
            y_out: Vec::new(),
            z_out: Vec::new(),
        }
    }

    /// The CPU's `(y, z)`.
    fn want(&self) -> (Vec<u32>, Vec<u32>) {
        let y: Vec<u32> = self.x.iter().map(|&v| lcg(lcg(v))).collect();
        let z = self.z.iter().zip(&y).map(|(z, y)| z ^ y).collect();
        (y, z)
    }
}

#[wasm_bindgen_test]
async fn a_batch_of_one_size_stacks_into_one_run() {
    assert!(Chain::SPEC.schedule.expect("schedule").stackable);
    let graph = Chain::new_async(&gpu().await).await.expect("graph");
    let mut cases: Vec<Case> = (0..16).map(|i| Case::new(1000, i)).collect();
    let mut batch: Vec<Instance<'_>> = cases
        .iter_mut()
        .map(|c| {
            Instance::new(
                c.x.len() as u64,
                vec![
                    Feed::Host(bytemuck::cast_slice(&c.x)),
                    Feed::Host(bytemuck::cast_slice(&c.z)),
                ],
                // Outputs in declaration order: `z` (inout), then `y`.
                vec![Sink::from(&mut c.z_out), Sink::from(&mut c.y_out)],
            )
        })
        .collect();
    let report = graph
        .graph()
        .run_batch_async(&DispatchConfig::default(), &mut batch)
        .await
        .expect("batch");
    drop(batch);
    assert_eq!(report.stacked, 16);
    assert_eq!(report.chunks, 1);
    assert_eq!(report.submissions, 1);
    for (i, c) in cases.iter().enumerate() {
        assert!(report.runs[i].is_ok(), "instance {i}: {:?}", report.runs[i]);
        let (y, z) = c.want();
        assert_same(&c.y_out, &y, &format!("instance {i}: y"));
        assert_same(&c.z_out, &z, &format!("instance {i}: z"));
    }
}

#[wasm_bindgen_test]
async fn a_batch_that_cannot_stack_runs_as_recorded_copies_of_mixed_sizes() {
    assert!(!Evens::SPEC.schedule.expect("schedule").stackable);
    let graph = Evens::new_async(&gpu().await).await.expect("graph");
    let sizes = [1000usize, 64, 1000, 3, 4097];
    let xs: Vec<Vec<u32>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (0..n as u32)
                .map(|i| lcg(i + k as u32 * 31) >> (k * 3))
                .collect()
        })
        .collect();
    let mut hits: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    let mut batch: Vec<Instance<'_>> = xs
        .iter()
        .zip(&mut hits)
        .map(|(x, h)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(h)],
            )
        })
        .collect();
    let report = graph
        .graph()
        .run_batch_async(&DispatchConfig::default(), &mut batch)
        .await
        .expect("batch");
    drop(batch);
    assert_eq!(report.stacked, 0);
    assert_eq!(report.chunks, 1);
    for (k, (x, got)) in xs.iter().zip(&mut hits).enumerate() {
        assert!(report.runs[k].is_ok(), "{:?}", report.runs[k]);
        let mut want: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_same(got, &want, &format!("instance {k}"));
    }
}

#[wasm_bindgen_test]
async fn the_typed_batch_and_stream_match_the_cpu() {
    let graph = Chain::new_async(&gpu().await).await.expect("graph");
    let cases: Vec<Case> = [5usize, 1000, 5, 300, 1000]
        .iter()
        .enumerate()
        .map(|(i, &n)| Case::new(n, i as u32 + 40))
        .collect();
    let inputs: Vec<(&[u32], &[u32])> = cases.iter().map(|c| (&c.x[..], &c.z[..])).collect();
    let outputs = graph
        .run_batch_async(&DispatchConfig::default(), &inputs)
        .await
        .expect("typed batch");
    assert_eq!(outputs.len(), cases.len());
    for (i, (c, out)) in cases.iter().zip(&outputs).enumerate() {
        let (y, z) = c.want();
        assert_same(&out.y, &y, &format!("batch instance {i}: y"));
        assert_same(&out.z, &z, &format!("batch instance {i}: z"));
    }
    // A stream with its runs really in flight together (on a CPU adapter
    // the default depth is 1).
    let config = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
    let results = graph.run_many_async(&config, 3, &inputs).await;
    assert_eq!(results.len(), cases.len());
    for (i, (c, r)) in cases.iter().zip(&results).enumerate() {
        let out = r.as_ref().unwrap_or_else(|e| panic!("stream run {i}: {e}"));
        let (y, z) = c.want();
        assert_same(&out.y, &y, &format!("stream run {i}: y"));
        assert_same(&out.z, &z, &format!("stream run {i}: z"));
    }
}
