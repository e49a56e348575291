//! Self-stopping loops (`repeat up to K as i until ..`,
//! `tests/data_dependent/loops.rs`): a frontier that halves until it is
//! empty and a countdown that stops when a flag stays zero, against the CPU,
//! with the `LoopReport` of every run: stopped after some of `K`
//! iterations, after none, and not stopped within `K`; with the learned
//! bound (continuations in later submissions) and with the full bound.

use crate::common::{assert_same, gpu};

use vyre_graph::{DispatchConfig, LoopBound, LoopReport};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::shared::loops::{Countdown, Halving, halving_cpu, ran, report};

#[wasm_bindgen_test]
async fn a_frontier_loop_stops_itself_and_reports_its_levels() {
    let graph = Halving::new_async(&gpu().await).await.expect("graph");
    let cases: [Vec<u32>; 4] = [
        // Values up to 7: levels 7, 3, 1, then empty.
        (0..1000u32).map(|i| i % 8).collect(),
        // Nothing: no level.
        vec![0; 1000],
        // 5,000 halves 12 times: not empty within 10 levels.
        (0..4096u32).map(|i| 5000 + i).collect(),
        (0..4096u32).map(|i| i % 4).collect(),
    ];
    for config in [
        DispatchConfig::default(),
        DispatchConfig::default().with_loop_bound(LoopBound::Full),
    ] {
        for x in &cases {
            let (out, run) = graph
                .run_reported_async(&config, x, &[0u32][..])
                .await
                .expect("run");
            let (acc, want) = halving_cpu(x, 10);
            assert_eq!(run.loops.len(), 1);
            assert_eq!((out.acc[0], ran(run.loops[0])), (acc, want), "{config:?}");
        }
    }
}

#[wasm_bindgen_test]
async fn a_flag_left_at_zero_stops_the_countdown() {
    let graph = Countdown::new_async(&gpu().await).await.expect("graph");
    for (max, n) in [
        (3u32, 1000usize),
        (0, 64),
        (9, 5000),
        (10, 100),
        (25, 100_000),
    ] {
        let v: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (max + 1)).collect();
        let (out, run) = graph
            .run_reported_async(&DispatchConfig::default(), &v)
            .await
            .expect("run");
        // Do-while: the first iteration always runs.
        let iterations = max.clamp(1, 10);
        let want: Vec<u32> = v.iter().map(|x| x.saturating_sub(iterations)).collect();
        assert_same(&out.v, &want, &format!("max {max}"));
        let loops: Vec<LoopReport> = run.loops.into_iter().map(ran).collect();
        assert_eq!(loops, vec![report(iterations, max < 10)], "max {max}");
    }
}
