//! The committed pictures of graphs are today's `to_dot()`: the examples'
//! graphs that live in their own module files (bfs, radix_sort) are built
//! here and compared with `docs/pictures/graphs/*.dot`. Every example's is
//! compared in CI by `docs/pictures/graphs.sh --check`, which runs them.

use crate::common;

#[path = "../../examples/bfs/graph.rs"]
#[allow(dead_code)]
mod bfs;

#[path = "../../examples/radix_sort/graph.rs"]
#[allow(dead_code)]
mod radix;

fn committed(name: &str) -> String {
    let path = format!(
        "{}/docs/pictures/graphs/{name}.dot",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn same(name: &str, today: &str) {
    assert!(
        committed(name) == today,
        "docs/pictures/graphs/{name}.dot is not today's to_dot(): run docs/pictures/graphs.sh\n{today}"
    );
}

#[test]
fn the_committed_dot_files_are_todays_to_dot() {
    let _serial = common::serial();
    let gpu = common::gpu();
    same("bfs", &bfs::device::Bfs::new(&gpu).expect("bfs").to_dot());
    same(
        "radix_sort",
        &radix::RadixSort::new(&gpu).expect("radix").to_dot(),
    );
    same(
        "radix_sort_pairs",
        &radix::RadixSortPairs::new(&gpu).expect("pairs").to_dot(),
    );
}

/// A profiled graph's picture has each node's GPU time; the committed ones
/// were drawn before any run, so they have none.
#[test]
fn a_profiled_graphs_picture_shows_its_node_times() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let graph = vyre_graph::Graph::new(&gpu, common::two_step_spec("timed")).expect("graph");
    assert!(!graph.to_dot().contains(" µs"));
    let x = common::data(10_000, 1);
    let mut y = vec![0u32; x.len()];
    graph
        .run(
            &vyre_graph::DispatchConfig::default().with_profile(true),
            x.len() as u64,
            &[vyre_graph::Feed::Host(common::bytes(&x))],
            &mut [vyre_graph::Sink::Host(common::bytes_mut(&mut y))],
        )
        .expect("run");
    common::assert_same(&y, &common::two_step_cpu(&x), "y");
    let dot = graph.to_dot();
    assert_eq!(dot.matches(" µs").count(), 2, "{dot}");
    assert!(!committed("bfs").contains(" µs"));
}
