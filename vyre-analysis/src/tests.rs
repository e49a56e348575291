//! Hand-computed examples for [`analyse`] and the [`Analysis`] methods.

use crate::BufferClass::{InOut, Input, Intermediate, Output, Uniform};
use crate::{
    Access, Analysis, BufferClass, Edge, Hazard, LiveRange, PeakBytes, Problem, Use, analyse,
    hazard_name,
};

const RAW: Hazard = Hazard::ReadAfterWrite;
const WAR: Hazard = Hazard::WriteAfterRead;
const WAW: Hazard = Hazard::WriteAfterWrite;
const REUSE: Hazard = Hazard::Reuse;

fn e(from: usize, to: usize, buffer: usize, hazard: Hazard) -> Edge {
    Edge {
        from,
        to,
        buffer,
        hazard,
    }
}

fn r(first: usize, last: usize) -> Option<LiveRange> {
    Some(LiveRange { first, last })
}

fn r_(buffer: usize) -> Use {
    Use::read(buffer)
}

fn w(buffer: usize) -> Use {
    Use::write(buffer)
}

fn rw(buffer: usize) -> Use {
    Use::read_write(buffer)
}

fn run(classes: &[BufferClass], nodes: &[Vec<Use>]) -> Analysis {
    analyse(classes, nodes)
}

#[test]
fn access_flags() {
    assert!(Access::Read.reads() && !Access::Read.writes());
    assert!(!Access::Write.reads() && Access::Write.writes());
    assert!(Access::ReadWrite.reads() && Access::ReadWrite.writes());
    assert_eq!(Access::Write.union(Access::Write), Access::Write);
    assert_eq!(Access::Write.union(Access::Read), Access::ReadWrite);
}

#[test]
fn hazard_names() {
    assert_eq!(hazard_name(RAW), "read-after-write");
    assert_eq!(WAR.to_string(), "write-after-read");
    assert_eq!(format!("{WAW}"), "write-after-write");
    assert_eq!(REUSE.name(), "reuse");
    let short: Vec<&str> = [RAW, WAR, WAW, REUSE]
        .iter()
        .map(|h| h.short_name())
        .collect();
    assert_eq!(short, ["RAW", "WAR", "WAW", "reuse"]);
}

/// x -> t0 -> t1 -> t2 -> t3 -> y over five nodes.
fn chain() -> (Vec<BufferClass>, Vec<Vec<Use>>) {
    let classes = vec![
        Input,
        Intermediate,
        Intermediate,
        Intermediate,
        Intermediate,
        Output,
    ];
    let nodes = (0..5).map(|n| vec![r_(n), w(n + 1)]).collect();
    (classes, nodes)
}

#[test]
fn chain_levels_edges_and_alternating_slots() {
    let (classes, nodes) = chain();
    let a = run(&classes, &nodes);
    assert_eq!(a.problems, []);
    assert_eq!(
        a.edges,
        [
            e(0, 1, 1, RAW),
            e(1, 2, 2, RAW),
            e(1, 2, 3, REUSE),
            e(2, 3, 3, RAW),
            e(2, 3, 4, REUSE),
            e(3, 4, 4, RAW),
        ]
    );
    assert_eq!(a.levels, [0, 1, 2, 3, 4]);
    assert_eq!(a.level_count, 5);
    assert_eq!(
        a.live_ranges,
        [r(0, 0), r(0, 1), r(1, 2), r(2, 3), r(3, 4), r(4, 4)]
    );
    // t0/t2 and t1/t3 alternate between two slots.
    assert_eq!(a.slots, [0, 1, 2, 1, 2, 3]);
    assert_eq!(a.slot_count, 4);
    assert_eq!(
        a.nodes_by_level(),
        [vec![0], vec![1], vec![2], vec![3], vec![4]]
    );
    assert_eq!(a.dependencies(0), Vec::<usize>::new());
    assert_eq!(a.dependencies(2), [1]);
    assert_eq!(a.dependencies(99), Vec::<usize>::new());
}

#[test]
fn chain_peak_bytes() {
    let (classes, nodes) = chain();
    let a = run(&classes, &nodes);
    let bytes = [10, 100, 200, 300, 400, 50];
    assert_eq!(a.slot_bytes(&bytes), [10, 300, 400, 50]);
    // Live per node: 110, 300, 500, 700, 450.
    assert_eq!(
        a.peak_bytes(&bytes),
        PeakBytes {
            aliased: 760,
            unaliased: 1060,
            largest_live_set: 700,
        }
    );
    // Too few sizes: the missing ones count as zero.
    assert_eq!(
        a.peak_bytes(&[10, 100]),
        PeakBytes {
            aliased: 110,
            unaliased: 110,
            largest_live_set: 110,
        }
    );
}

#[test]
fn diamond() {
    // a writes 1; b and c read it and write 2 and 3; d reads both.
    let classes = [Input, Intermediate, Intermediate, Intermediate, Output];
    let nodes = vec![
        vec![r_(0), w(1)],
        vec![r_(1), w(2)],
        vec![r_(1), w(3)],
        vec![r_(2), r_(3), w(4)],
    ];
    let a = run(&classes, &nodes);
    assert_eq!(a.problems, []);
    assert_eq!(
        a.edges,
        [
            e(0, 1, 1, RAW),
            e(0, 2, 1, RAW),
            e(1, 3, 2, RAW),
            e(2, 3, 3, RAW)
        ]
    );
    assert_eq!(a.levels, [0, 1, 1, 2]);
    assert_eq!(a.level_count, 3);
    assert_eq!(a.nodes_by_level(), [vec![0], vec![1, 2], vec![3]]);
    assert_eq!(a.dependencies(3), [1, 2]);
    assert_eq!(a.slots, [0, 1, 2, 3, 4]);
}

#[test]
fn write_after_read_on_in_out() {
    let a = run(&[InOut, Output], &[vec![r_(0), w(1)], vec![w(0)]]);
    assert_eq!(a.problems, []);
    assert_eq!(a.edges, [e(0, 1, 0, WAR)]);
    assert_eq!(a.levels, [0, 1]);
    assert_eq!(a.live_ranges, [r(0, 1), r(0, 1)]);
}

#[test]
fn write_after_write_then_read_sees_only_last_writer() {
    let a = run(&[Output], &[vec![w(0)], vec![w(0)], vec![r_(0)]]);
    assert_eq!(a.problems, []);
    assert_eq!(a.edges, [e(0, 1, 0, WAW), e(1, 2, 0, RAW)]);
    assert_eq!(a.levels, [0, 1, 2]);
}

#[test]
fn readers_between_writes() {
    let classes = [Intermediate, Output];
    let nodes = vec![
        vec![w(0)],
        vec![r_(0)],
        vec![r_(0)],
        vec![w(0)],
        vec![r_(0), w(1)],
    ];
    let a = run(&classes, &nodes);
    assert_eq!(a.problems, []);
    assert_eq!(
        a.edges,
        [
            e(0, 1, 0, RAW),
            e(0, 2, 0, RAW),
            e(0, 3, 0, WAW),
            e(1, 3, 0, WAR),
            e(2, 3, 0, WAR),
            e(3, 4, 0, RAW),
        ]
    );
    assert_eq!(a.levels, [0, 1, 1, 2, 3]);
    assert_eq!(a.dependencies(3), [0, 1, 2]);
}

#[test]
fn read_write_in_place() {
    let classes = [Input, Intermediate, Output];
    let nodes = vec![
        vec![r_(0), w(1)],
        vec![rw(1)],
        vec![rw(1)],
        vec![r_(1), w(2)],
    ];
    let a = run(&classes, &nodes);
    assert_eq!(a.problems, []);
    assert_eq!(
        a.edges,
        [
            e(0, 1, 1, RAW),
            e(0, 1, 1, WAW),
            e(1, 2, 1, RAW),
            e(1, 2, 1, WAW),
            e(2, 3, 1, RAW),
        ]
    );
    assert_eq!(a.levels, [0, 1, 2, 3]);
    assert_eq!(a.dependencies(1), [0]);
}

#[test]
fn read_write_of_unwritten_buffer_reads_first() {
    let a = run(&[Intermediate, Output, InOut], &[vec![rw(0), rw(1), rw(2)]]);
    assert_eq!(
        a.problems,
        [
            Problem::ReadBeforeWrite { node: 0, buffer: 0 },
            Problem::ReadBeforeWrite { node: 0, buffer: 1 },
        ]
    );
}

#[test]
fn independent_nodes_share_level_zero() {
    let classes = [Input, Output, Output, Output];
    let nodes: Vec<Vec<Use>> = (1..4).map(|o| vec![r_(0), w(o)]).collect();
    let a = run(&classes, &nodes);
    assert_eq!(a.problems, []);
    assert_eq!(a.edges, []);
    assert_eq!(a.levels, [0, 0, 0]);
    assert_eq!(a.level_count, 1);
    assert_eq!(a.nodes_by_level(), [vec![0, 1, 2]]);
    assert_eq!(a.live_ranges, [r(0, 2), r(0, 2), r(1, 2), r(2, 2)]);
}

#[test]
fn every_problem_in_order() {
    let classes = [
        Input,        // 0: only written
        Uniform,      // 1
        Intermediate, // 2
        Output,       // 3
        Intermediate, // 4: unused
        Input,        // 5: unused
        Output,       // 6: read, never written
        InOut,        // 7: unused, which is fine
        Uniform,      // 8
    ];
    let nodes = vec![
        vec![w(0), r_(1), r_(8), r_(2)],
        vec![w(2), w(2), r_(99), w(3)],
        vec![r_(2), r_(3), r_(6), w(1)],
    ];
    let a = run(&classes, &nodes);
    assert_eq!(
        a.problems,
        [
            Problem::WritesReadOnly { node: 0, buffer: 0 },
            Problem::ReadBeforeWrite { node: 0, buffer: 2 },
            Problem::DuplicateUse { node: 1, buffer: 2 },
            Problem::NoSuchBuffer {
                node: 1,
                buffer: 99
            },
            Problem::WritesReadOnly { node: 2, buffer: 1 },
            Problem::ReadBeforeWrite { node: 2, buffer: 6 },
            Problem::Unused { buffer: 0 },
            Problem::Unused { buffer: 4 },
            Problem::Unused { buffer: 5 },
            Problem::OutputNeverWritten { buffer: 6 },
        ]
    );
    // Bad uses do not stop the analysis: the write to uniform 1 at node 2
    // still waits for node 0's read of it.
    assert!(a.edges.contains(&e(0, 2, 1, WAR)));
    assert_eq!(a.levels, [0, 1, 2]);
}

#[test]
fn single_problems() {
    let problems = |classes: &[BufferClass], nodes: &[Vec<Use>]| run(classes, nodes).problems;
    assert_eq!(
        problems(&[Uniform], &[vec![rw(0)]]),
        [Problem::WritesReadOnly { node: 0, buffer: 0 }]
    );
    assert_eq!(
        problems(&[Intermediate, Output], &[vec![r_(0), w(1)], vec![w(0)]]),
        [Problem::ReadBeforeWrite { node: 0, buffer: 0 }]
    );
    assert_eq!(
        problems(&[Input, Output], &[vec![r_(0)]]),
        [Problem::OutputNeverWritten { buffer: 1 }]
    );
    assert_eq!(
        problems(&[Input, Uniform, Output], &[vec![r_(0), w(2)]]),
        [Problem::Unused { buffer: 1 }]
    );
    assert_eq!(
        problems(&[Output], &[vec![w(0), w(0), w(0)]]),
        [Problem::DuplicateUse { node: 0, buffer: 0 }]
    );
    assert_eq!(
        problems(&[Output], &[vec![w(0), r_(1)]]),
        [Problem::NoSuchBuffer { node: 0, buffer: 1 }]
    );
    // A write-only InOut and a read-only InOut are both fine.
    assert_eq!(problems(&[InOut, InOut], &[vec![w(0), r_(1)]]), []);
}

#[test]
fn duplicate_uses_are_merged() {
    // Node 1 lists buffer 0 as read and as write: treated as ReadWrite.
    let a = run(&[Output], &[vec![w(0)], vec![r_(0), w(0)], vec![r_(0)]]);
    assert_eq!(a.problems, [Problem::DuplicateUse { node: 1, buffer: 0 }]);
    assert_eq!(a.edges, [e(0, 1, 0, RAW), e(0, 1, 0, WAW), e(1, 2, 0, RAW)]);
}

#[test]
fn disjoint_intermediates_share_a_slot() {
    let classes = [Intermediate, Intermediate, Output];
    let nodes = vec![vec![w(0)], vec![r_(0)], vec![w(1)], vec![r_(1), w(2)]];
    let a = run(&classes, &nodes);
    assert_eq!(a.live_ranges, [r(0, 1), r(2, 3), r(3, 3)]);
    assert_eq!(a.slots, [0, 0, 1]);
    assert_eq!(a.slot_count, 2);
    // Without the reuse edge node 2 would be independent of nodes 0 and 1.
    assert_eq!(
        a.edges,
        [e(0, 1, 0, RAW), e(1, 2, 1, REUSE), e(2, 3, 1, RAW)]
    );
    assert_eq!(a.levels, [0, 1, 2, 3]);
    assert_eq!(a.slot_bytes(&[8, 16, 4]), [16, 4]);
    assert_eq!(
        a.peak_bytes(&[8, 16, 4]),
        PeakBytes {
            aliased: 20,
            unaliased: 28,
            largest_live_set: 20,
        }
    );
}

#[test]
fn reuse_waits_for_every_last_reader() {
    // Nodes 1 and 2 both read t0 last; t1 takes over its slot at node 3.
    let classes = [Intermediate, Intermediate, Output];
    let nodes = vec![
        vec![w(0)],
        vec![r_(0)],
        vec![r_(0)],
        vec![w(1)],
        vec![r_(1), w(2)],
    ];
    let a = run(&classes, &nodes);
    assert_eq!(a.slots, [0, 0, 1]);
    assert_eq!(
        a.edges,
        [
            e(0, 1, 0, RAW),
            e(0, 2, 0, RAW),
            e(1, 3, 1, REUSE),
            e(2, 3, 1, REUSE),
            e(3, 4, 1, RAW),
        ]
    );
    assert_eq!(a.levels, [0, 1, 1, 2, 3]);
}

#[test]
fn overlapping_or_touching_intermediates_do_not_share() {
    // Overlapping: t0 lives 0..=2, t1 lives 1..=3.
    let classes = [Intermediate, Intermediate, Output];
    let nodes = vec![vec![w(0)], vec![w(1)], vec![r_(0)], vec![r_(1), w(2)]];
    let a = run(&classes, &nodes);
    assert_eq!(a.live_ranges, [r(0, 2), r(1, 3), r(3, 3)]);
    assert_eq!(a.slots, [0, 1, 2]);
    assert!(a.edges.iter().all(|e| e.hazard != REUSE));
    // Touching: t0 lives 0..=1 and t1 starts at node 1.
    let nodes = vec![vec![w(0)], vec![r_(0), w(1)], vec![r_(1), w(2)]];
    let a = run(&classes, &nodes);
    assert_eq!(a.slots, [0, 1, 2]);
}

#[test]
fn host_visible_buffers_never_share() {
    // x (Input) is dead after node 0 and t starts at node 1, but only
    // intermediates share; the two outputs live to the end.
    let classes = [Input, Intermediate, Output, Output];
    let nodes = vec![vec![r_(0), w(2)], vec![w(1)], vec![r_(1), w(3)]];
    let a = run(&classes, &nodes);
    assert_eq!(a.live_ranges, [r(0, 0), r(1, 2), r(0, 2), r(2, 2)]);
    assert_eq!(a.slots, [0, 1, 2, 3]);
    assert_eq!(a.slot_count, 4);
}

#[test]
fn unused_buffers_get_own_empty_slots() {
    let a = run(
        &[Intermediate, Intermediate, Output],
        &[vec![w(0)], vec![r_(0), w(2)]],
    );
    assert_eq!(a.problems, [Problem::Unused { buffer: 1 }]);
    assert_eq!(a.live_ranges, [r(0, 1), None, r(1, 1)]);
    assert_eq!(a.slots, [0, 1, 2]);
    assert_eq!(a.slot_bytes(&[4, 1000, 2]), [4, 0, 2]);
    assert_eq!(a.peak_bytes(&[4, 1000, 2]).unaliased, 6);
}

#[test]
fn empty_graph() {
    let a = analyse(&[], &[] as &[Vec<Use>]);
    assert_eq!(
        a,
        Analysis {
            edges: vec![],
            levels: vec![],
            level_count: 0,
            live_ranges: vec![],
            slots: vec![],
            slot_count: 0,
            problems: vec![],
        }
    );
    assert_eq!(a.peak_bytes(&[]), PeakBytes::default());
    assert_eq!(a.nodes_by_level(), Vec::<Vec<usize>>::new());
    assert_eq!(a.dependencies(0), Vec::<usize>::new());
    assert_eq!(
        a.to_dot("g", &[], &[], &[] as &[Vec<Use>]),
        "digraph \"g\" {\n}\n"
    );
}

#[test]
fn buffers_without_nodes() {
    let a = analyse(&[Input, Intermediate, Output, InOut], &[] as &[&[Use]]);
    assert_eq!(a.live_ranges, [None, None, None, None]);
    assert_eq!(a.slots, [0, 1, 2, 3]);
    assert_eq!(
        a.problems,
        [
            Problem::Unused { buffer: 0 },
            Problem::Unused { buffer: 1 },
            Problem::OutputNeverWritten { buffer: 2 },
        ]
    );
    assert_eq!(a.peak_bytes(&[1, 2, 3, 4]), PeakBytes::default());
}

#[test]
fn nodes_without_buffers() {
    let a = analyse(&[], &[[], []] as &[[Use; 0]]);
    assert_eq!(a.levels, [0, 0]);
    assert_eq!(a.level_count, 1);
    assert_eq!(a.peak_bytes(&[5]), PeakBytes::default());
}

#[test]
fn out_of_range_buffers_do_not_panic() {
    let nodes = vec![
        vec![w(0), r_(99)],
        vec![r_(usize::MAX), rw(99)],
        vec![r_(0)],
    ];
    let a = run(&[Output], &nodes);
    assert_eq!(
        a.problems,
        [
            Problem::NoSuchBuffer {
                node: 0,
                buffer: 99
            },
            Problem::NoSuchBuffer {
                node: 1,
                buffer: 99
            },
            Problem::NoSuchBuffer {
                node: 1,
                buffer: usize::MAX
            },
        ]
    );
    assert_eq!(a.edges, [e(0, 2, 0, RAW)]);
    assert_eq!(a.levels, [0, 0, 1]);
    assert_eq!(a.live_ranges, [r(0, 2)]);
    assert_eq!(a.peak_bytes(&[u64::MAX; 200]).aliased, u64::MAX);
    let dot = a.to_dot("g", &[], &[], &nodes);
    assert!(!dot.contains("99"));
}

#[test]
fn accepts_slices_of_slices() {
    let (classes, nodes) = chain();
    let slices: Vec<&[Use]> = nodes.iter().map(Vec::as_slice).collect();
    assert_eq!(analyse(&classes, &slices), analyse(&classes, &nodes));
}

#[test]
fn dot_output() {
    let classes = [Input, Intermediate, Output];
    let nodes = vec![vec![r_(0), w(1)], vec![rw(1)], vec![r_(1), w(2)]];
    let a = run(&classes, &nodes);
    let dot = a.to_dot(
        "my \"graph\"",
        &["sc\"ale", "s\\um"],
        &["x", "t\"1", "y"],
        &nodes,
    );
    let expected = r#"digraph "my \"graph\"" {
    n0 [shape=box, label="sc\"ale\nlevel 0"];
    n1 [shape=box, label="s\\um\nlevel 1"];
    n2 [shape=box, label="node 2\nlevel 2"];
    b0 [shape=ellipse, label="x"];
    b1 [shape=ellipse, label="t\"1"];
    b2 [shape=ellipse, label="y"];
    b0 -> n0;
    n0 -> b1;
    b1 -> n1;
    n1 -> b1;
    b1 -> n2;
    n2 -> b2;
    n0 -> n1 [style=dashed, label="t\"1 RAW"];
    n0 -> n1 [style=dashed, label="t\"1 WAW"];
    n1 -> n2 [style=dashed, label="t\"1 RAW"];
}
"#;
    assert_eq!(dot, expected);
    // Deterministic.
    assert_eq!(
        dot,
        a.to_dot(
            "my \"graph\"",
            &["sc\"ale", "s\\um"],
            &["x", "t\"1", "y"],
            &nodes
        )
    );
}

#[test]
fn dot_reuse_edges_and_missing_names() {
    let classes = [Intermediate, Intermediate, Output];
    let nodes = vec![vec![w(0)], vec![r_(0)], vec![w(1)], vec![r_(1), w(2)]];
    let dot = run(&classes, &nodes).to_dot("g", &[], &["a"], &nodes);
    assert!(dot.contains("    b1 [shape=ellipse, label=\"buffer 1\"];\n"));
    assert!(dot.contains("    n1 -> n2 [style=dashed, label=\"buffer 1 reuse\"];\n"));
    assert!(dot.contains("    n0 -> n1 [style=dashed, label=\"a RAW\"];\n"));
}
