//! A `graph!` type on a device set: `Chain::with_engine(GraphSet)` and its
//! typed `run_batch`, `run_many` and async twins, spread over the devices
//! and checked element by element against the CPU.

use vyre_graph::{DispatchConfig, GraphSet};

use crate::cases::{Case, Chain, ChainOutputs, cases, lavapipe};

/// Each case's typed outputs into the case, then the CPU's check.
fn check(cases: &mut [Case], outs: Vec<ChainOutputs>, what: &str) {
    assert_eq!(outs.len(), cases.len(), "{what}: one output per instance");
    for (k, (case, out)) in cases.iter_mut().zip(outs).enumerate() {
        case.y_out = out.y;
        case.z_out = out.z;
        case.check(&format!("{what}: instance {k}"));
    }
}

#[test]
fn a_typed_graph_runs_its_batches_and_streams_on_a_set() {
    let gpus = lavapipe(2);
    let set = Chain::with_engine(GraphSet::new(&gpus, Chain::SPEC).expect("graph set"))
        .expect("a set built from Chain::SPEC runs Chain");
    let config = DispatchConfig::default();
    for count in [1usize, 2, 37, 300] {
        let sizes: Vec<usize> = (0..count).map(|i| [1, 64, 1000, 4097][i % 4]).collect();
        let mut want = cases(&sizes, count as u32);
        let inputs: Vec<(&[u32], &[u32])> = want
            .iter()
            .map(|c| (c.x.as_slice(), c.z.as_slice()))
            .collect();
        let outs = set
            .run_batch(&config, &inputs)
            .expect("typed batch on a set");
        let streamed: Vec<_> = set
            .run_many(&config, 2, &inputs)
            .into_iter()
            .collect::<Result<_, _>>()
            .expect("typed stream on a set");
        let awaited =
            pollster::block_on(set.run_batch_async(&config, &inputs)).expect("typed async batch");
        check(&mut want, outs, &format!("run_batch of {count}"));
        check(&mut want, streamed, &format!("run_many of {count}"));
        check(&mut want, awaited, &format!("run_batch_async of {count}"));
    }
    // The batch was spread: each device ran a share of the last batches.
    let learned = (0..2)
        .filter(|&d| set.engine().throughput(d, 1000).is_some())
        .count();
    assert_eq!(learned, 2, "both devices ran instances and were measured");
}

#[test]
fn a_set_of_another_graph_is_refused_by_name() {
    let gpus = lavapipe(1);
    let other = GraphSet::new(&gpus, crate::cases::Evens::SPEC).expect("graph set");
    let err = Chain::with_engine(other).expect_err("Evens' set is not Chain's");
    let message = err.to_string();
    assert!(
        message.contains("Evens") && message.contains("Chain::SPEC"),
        "the error names the graph it was given and what to pass: {message}"
    );
}
