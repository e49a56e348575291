//! Workgroup sizes from `override` expressions naga evaluates at compile
//! time (issue 7): a `select`-sized kernel run with its default and with a
//! node's `with { BIG = true }`. Every invocation records the size, the
//! workgroup count and its place as the GPU saw them, checked element by
//! element against a CPU reference; `SPEC`, the plan and the run report
//! must agree.

use crate::common;

use vyre_graph::{DispatchConfig, graph};

graph! {
    /// One kernel whose size is `select(64u, 256u, BIG)`, run both ways.
    pub struct Selected;

    kernel probe = "
        override BIG: bool = false;
        override WG: u32 = select(64u, 256u, BIG);
        @group(0) @binding(0) var<storage, read_write> info: array<u32>;
        @compute @workgroup_size(WG)
        fn main(
            @builtin(global_invocation_id) g: vec3<u32>,
            @builtin(local_invocation_id) l: vec3<u32>,
            @builtin(workgroup_id) w: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>,
        ) {
            let i = g.x;
            if i < arrayLength(&info) / 4u {
                info[4u * i] = WG;
                info[4u * i + 1u] = l.x;
                info[4u * i + 2u] = w.x;
                info[4u * i + 3u] = nwg.x;
            }
        }
    ";

    output small[4 * n];
    output big[4 * n];

    node default_size = probe(info: small) over n;
    node big_size = probe(info: big) over n with { BIG = true };
}

graph! {
    /// The big size alone, so the plan's largest grid is its grid.
    pub struct OnlyBig;

    kernel probe = "
        override BIG: bool = false;
        override A: u32 = 16u;
        override WG: u32 = select(A * 4u, A * 16u, BIG);
        @group(0) @binding(0) var<storage, read_write> info: array<u32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            if g.x < arrayLength(&info) / 2u {
                info[2u * g.x] = WG;
                info[2u * g.x + 1u] = nwg.x;
            }
        }
    ";

    output out[2 * n];

    node only = probe(info: out) over n with { BIG = true };
}

/// What each invocation of a `wg`-sized dispatch over `n` records.
fn reference(n: u32, wg: u32) -> Vec<u32> {
    let groups = n.div_ceil(wg);
    (0..n).flat_map(|i| [wg, i % wg, i / wg, groups]).collect()
}

#[test]
fn select_sized_kernels_run_with_the_size_naga_evaluated() {
    let _serial = common::serial();
    let gpu = common::gpu();
    assert_eq!(Selected::SPEC.kernels[0].workgroup_size, [64, 1, 1]);
    assert_eq!(Selected::SPEC.nodes[0].workgroup_size, None);
    assert_eq!(Selected::SPEC.nodes[1].workgroup_size, Some([256, 1, 1]));
    assert_eq!(Selected::SPEC.node_workgroup_size(0), [64, 1, 1]);
    assert_eq!(Selected::SPEC.node_workgroup_size(1), [256, 1, 1]);

    let graph = Selected::new(&gpu).expect("compiles");
    let n = 10_000u32;
    let (out, report) = graph
        .run_reported(&DispatchConfig::default(), u64::from(n))
        .expect("runs");
    let check = |got: &[u32], wg: u32| {
        let want = reference(n, wg);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "WG {wg}: element {i} (invocation {}, field {})",
                i / 4,
                i % 4
            );
        }
    };
    check(&out.small, 64);
    check(&out.big, 256);

    // The largest grid is the default node's: ceil(10,000 / 64) = 157
    // workgroups of 64 (naga's [1, 1, 1] placeholder would launch 10,000).
    assert_eq!(report.plan.worker_groups, 157);
    assert_eq!(report.plan.workgroup_size_x, 64);
    let plan = graph
        .graph()
        .plan(&DispatchConfig::default(), u64::from(n))
        .expect("plan");
    assert_eq!(plan.worker_groups, 157);
}

#[test]
fn override_arithmetic_sizes_each_grid() {
    let _serial = common::serial();
    let gpu = common::gpu();
    assert_eq!(OnlyBig::SPEC.kernels[0].workgroup_size, [64, 1, 1]);
    assert_eq!(OnlyBig::SPEC.nodes[0].workgroup_size, Some([256, 1, 1]));
    let graph = OnlyBig::new(&gpu).expect("compiles");
    let n = 1_000u32;
    let (out, report) = graph
        .run_reported(&DispatchConfig::default(), u64::from(n))
        .expect("runs");
    let want: Vec<u32> = (0..n).flat_map(|_| [256, n.div_ceil(256)]).collect();
    assert_eq!(out.out, want);
    assert_eq!(report.plan.worker_groups, 4);
    assert_eq!(report.plan.workgroup_size_x, 256);
}
