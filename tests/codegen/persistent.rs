//! Grid-stride ("persistent") launches of fused groups: the same graph run
//! with `GridStride::Never` (one workgroup per 64 elements), `Always`,
//! `Auto` and a few fixed workgroup counts gives the same bytes, and the
//! CPU's, at sizes around every limit the launch works around: the
//! adapter's grid-stride workgroup count, the 65,535 workgroups of one grid
//! dimension (past which the plain grid folds), and 1,024 steps per
//! invocation.

use crate::common;

use vyre_graph::{DispatchConfig, GridStride, MAX_STRIDE_STEPS, graph};

graph! {
    /// A fusable chain: a conditional write into a register-held
    /// intermediate (odd elements leave it unwritten, so it must read as 0
    /// in every element of a loop, as in a fresh invocation), then two
    /// steps reading it, one also reading a neighbour of the input.
    pub struct Chain;

    kernel evens = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) && (src[g.x] & 1u) == 0u { dst[g.x] = src[g.x] + 5u; }
        }
    ";
    kernel mix = "
        @group(0) @binding(0) var<storage, read> a: array<u32>;
        @group(0) @binding(1) var<storage, read> b: array<u32>;
        @group(0) @binding(2) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) {
                let next = b[(g.x + 1u) % arrayLength(&b)];
                dst[g.x] = a[g.x] * 2654435761u + (next ^ (g.x << 3u));
            }
        }
    ";
    kernel last = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = (src[g.x] >> 7u) ^ src[g.x]; }
        }
    ";

    input x[n];
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node evens(src: x, dst: t) over n;
    node mix(a: t, b: x, dst: u) over n;
    node last(src: u, dst: y) over n;
}

fn cpu(x: &[u32]) -> Vec<u32> {
    let n = x.len();
    (0..n)
        .map(|i| {
            let t = if x[i] & 1 == 0 {
                x[i].wrapping_add(5)
            } else {
                0
            };
            let next = x[(i + 1) % n];
            let u = t
                .wrapping_mul(2_654_435_761)
                .wrapping_add(next ^ ((i as u32) << 3));
            (u >> 7) ^ u
        })
        .collect()
}

fn config(mode: GridStride) -> DispatchConfig {
    DispatchConfig::default().with_grid_stride(mode)
}

#[test]
fn the_chain_fuses_with_a_loop_entry() {
    let spec = &Chain::SPEC;
    assert_eq!(spec.fused.len(), 1);
    assert_eq!(spec.fused[0].nodes.len(), 3);
    assert!(spec.fused[0].grid_stride_entry.is_some());
    let gpu = common::gpu();
    let chain = Chain::new(&gpu).expect("chain");
    let text = chain.describe().to_string();
    assert!(text.contains("can run as a grid-stride loop"), "{text}");
}

#[test]
fn every_mode_matches_the_cpu_around_the_limits() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let chain = Chain::new(&gpu).expect("chain");
    let auto = gpu.grid_stride_workgroups(64) as usize;
    let fold = 65_535 * 64;
    let mut sizes = vec![
        1,
        63,
        64,
        65,
        auto * 64 - 1,
        auto * 64,
        auto * 64 + 1,
        fold - 1,
        fold,
        fold + 1,
        5_000_003,
    ];
    // Where the 1,024-step floor takes over from the adapter's count.
    let steps = MAX_STRIDE_STEPS as usize;
    sizes.push(auto * steps * 64 + 1);
    sizes.sort_unstable();
    sizes.dedup();
    for n in sizes {
        let x = common::data(n, n as u32);
        let want = cpu(&x);
        let plain = chain
            .run_with(&config(GridStride::Never), &x)
            .expect("plain")
            .y;
        common::assert_same(&plain, &want, &format!("plain at n = {n}"));
        let mut modes = vec![
            GridStride::Auto,
            GridStride::Always,
            GridStride::Workgroups(1),
            GridStride::Workgroups(3),
        ];
        if n > 1 {
            modes.push(GridStride::Workgroups(65_535));
        }
        for mode in modes {
            let (got, report) = chain.run_reported(&config(mode), &x).expect("looped");
            common::assert_same(&got.y, &plain, &format!("{mode:?} at n = {n}"));
            // The plan says how many workgroups the fused dispatch launched.
            let plain_workgroups = n.div_ceil(64) as u64;
            let launched = u64::from(report.plan.worker_groups);
            let expected = mode
                .workgroups(plain_workgroups, auto as u32, 65_535)
                .map_or(plain_workgroups, u64::from);
            if plain_workgroups <= 65_535 {
                assert_eq!(launched, expected, "{mode:?} at n = {n}");
            }
            assert!(
                launched * 64 * MAX_STRIDE_STEPS >= n as u64,
                "{mode:?} at n = {n}: {launched} workgroups"
            );
        }
    }
}

#[test]
fn errors_then_a_looped_run_of_the_same_graph() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let chain = Chain::new(&gpu).expect("chain");
    // An empty run has an empty output and launches nothing.
    let empty: Vec<u32> = Vec::new();
    let out = chain
        .run_with(&config(GridStride::Always), &empty)
        .expect("n = 0");
    assert!(out.y.is_empty());
    // An overridden grid is launched as given (no loop): too few
    // workgroups cover only part, but the run itself is fine.
    let x = common::data(10_000, 3);
    let overridden = DispatchConfig::default()
        .with_grid_stride(GridStride::Always)
        .with_grid_override([1, 1, 1]);
    let (_, report) = chain.run_reported(&overridden, &x).expect("overridden");
    // The plan's own (plain) grid: no loop ran.
    assert_eq!(report.plan.worker_groups, 10_000u32.div_ceil(64));
    let budget = config(GridStride::Always).with_device_memory_budget_bytes(16);
    assert!(chain.run_with(&budget, &x).is_err());
    let got = chain
        .run_with(&config(GridStride::Workgroups(2)), &x)
        .expect("after errors");
    common::assert_same(&got.y, &cpu(&x), "after errors");
}
