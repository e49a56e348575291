//! Kernels of `graph!` on folded grids: past 65,535 workgroups the runtime
//! folds an `over` size into y and z, and `graph!` wraps each kernel's
//! entry point so that it still sees linear positions. Every kind of kernel
//! is checked element by element against the CPU at the last unfolded size
//! (65,535 workgroups), one invocation past it, one workgroup past it and
//! about 5,000,000; a hand-built kernel that may index with `g.x` alone is
//! refused on a folded grid.

use crate::common;

use common::*;
use vyre_graph::grid::{fold_grid, workgroups_for};
use vyre_graph::spec::{BufferClass, Extent, GridFold};
use vyre_graph::{BackendError, DispatchConfig, Feed, Graph, Sink, graph};

/// One grid dimension's limit on the test device.
fn max_per_dimension() -> u64 {
    let max = gpu().limits().max_compute_workgroups_per_dimension;
    assert_eq!(
        max, 65_535,
        "these sizes assume 65,535 workgroups per dimension"
    );
    u64::from(max)
}

/// Problem sizes around the fold point of a node whose one workgroup covers
/// `per_workgroup` elements: the last unfolded size, one more, one
/// workgroup more, and about five million.
fn sizes(per_workgroup: u64) -> [usize; 4] {
    let last = max_per_dimension() * per_workgroup;
    [last, last + 1, last + per_workgroup, 5_000_003].map(|n| usize::try_from(n).expect("fits"))
}

/// Asserts that `n` elements at `per_workgroup` need a folded grid exactly
/// when `n` is past the last unfolded size.
fn assert_folds(n: usize, per_workgroup: u64) {
    let workgroups = workgroups_for(n as u64, u32::try_from(per_workgroup).expect("small"));
    let grid = fold_grid(workgroups, 65_535).expect("fits");
    let folded = grid[1] > 1 || grid[2] > 1;
    assert_eq!(folded, n as u64 > 65_535 * per_workgroup, "{n}: {grid:?}");
}

/// Element-by-element comparison that names the first wrong element.
#[track_caller]
fn assert_same(what: &str, n: usize, gpu: &[u32], cpu: &[u32]) {
    assert_eq!(gpu.len(), cpu.len(), "{what} at n = {n}: length");
    if gpu == cpu {
        return;
    }
    if let Some(i) = (0..cpu.len()).find(|&i| gpu.get(i) != cpu.get(i)) {
        let wrong = (0..cpu.len()).filter(|&i| gpu.get(i) != cpu.get(i)).count();
        panic!(
            "{what} at n = {n}: element {i} is {:?}, the CPU says {:?} ({wrong} elements wrong)",
            gpu.get(i),
            cpu.get(i)
        );
    }
}

/// `x[i] * 3 + i`: what most kernels below write at `i`.
fn reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .zip(0u32..)
        .map(|(&v, i)| v.wrapping_mul(3).wrapping_add(i))
        .collect()
}

/// Runs `run` at every size of `sizes(per_workgroup)` against [`reference`].
fn check(what: &str, per_workgroup: u64, run: impl Fn(&[u32]) -> Vec<u32>) {
    for n in sizes(per_workgroup) {
        assert_folds(n, per_workgroup);
        let x = data(n, n as u32);
        assert_same(what, n, &run(&x), &reference(&x));
    }
}

graph! {
    /// (a) `global_invocation_id.x` alone.
    pub struct GidX;
    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.x;
            if i < arrayLength(&y) { y[i] = x[i] * 3u + i; }
        }
    };
    input x[n];
    output y[n];
    node k(x: x, y: y) over n;
}

#[test]
fn a_global_invocation_id_x_alone() {
    let _serial = serial();
    let graph = GidX::new(&gpu()).expect("compiles");
    assert_eq!(GidX::SPEC.kernels[0].fold, GridFold::Linear);
    check("g.x", 64, |x| graph.run(x).expect("runs").y);
}

graph! {
    /// (b) `workgroup_id` and `local_invocation_id`.
    pub struct WorkgroupLocal;
    kernel k = "
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
            let i = wg.x * 64u + l.x;
            if i < arrayLength(&y) { y[i] = x[i] * 3u + i; }
        }
    ";
    input x[n];
    output y[n];
    node k(x: x, y: y) over n;
}

#[test]
fn b_workgroup_id_and_local_invocation_id() {
    let _serial = serial();
    let graph = WorkgroupLocal::new(&gpu()).expect("compiles");
    check("wg.x * 64 + l.x", 64, |x| graph.run(x).expect("runs").y);
}

graph! {
    /// (c) A grid-stride loop: a quarter as many invocations as elements,
    /// each walking with the stride `num_workgroups.x * 16` and adding to
    /// `y`, so an element visited twice (or never) is wrong.
    pub struct GridStride;
    kernel k = "
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(16)
        fn main(@builtin(global_invocation_id) g: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
            let stride = nwg.x * 16u;
            for (var i = g.x; i < arrayLength(&y); i += stride) {
                y[i] += x[i] * 3u + i;
            }
        }
    ";
    input x[n];
    inout y[n];
    node k(x: x, y: y) over n / 4;
}

#[test]
fn c_grid_stride_loop_with_num_workgroups() {
    let _serial = serial();
    let graph = GridStride::new(&gpu()).expect("compiles");
    // One workgroup covers 16 invocations of 4 elements each.
    for n in sizes(64) {
        assert_folds(n, 64);
        let x = data(n, n as u32);
        let y = data(n, 7);
        let cpu: Vec<u32> = reference(&x)
            .iter()
            .zip(&y)
            .map(|(r, y)| r.wrapping_add(*y))
            .collect();
        assert_same("grid-stride", n, &graph.run(&x, &y).expect("runs").y, &cpu);
    }
}

graph! {
    /// (d) `local_invocation_index` beside `global_invocation_id`.
    pub struct LocalIndex;
    kernel k = "
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(local_invocation_index) li: u32,
                @builtin(global_invocation_id) g: vec3<u32>) {
            let i = (g.x / 64u) * 64u + li;
            if i < arrayLength(&y) { y[i] = x[i] * 3u + i; }
        }
    ";
    input x[n];
    output y[n];
    node k(x: x, y: y) over n;
}

#[test]
fn d_local_invocation_index() {
    let _serial = serial();
    let graph = LocalIndex::new(&gpu()).expect("compiles");
    check("local_invocation_index", 64, |x| {
        graph.run(x).expect("runs").y
    });
}

graph! {
    /// (e) A workgroup size from an override, set per node: 2 * 16 = 32
    /// (the default would be 256).
    pub struct OverrideSize;
    kernel k = "
        override WG: u32 = 128u;
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(WG * 2u)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.x;
            if i < arrayLength(&y) { y[i] = x[i] * 3u + i; }
        }
    ";
    input x[n];
    output y[n];
    node k(x: x, y: y) over n with { WG = 16 };
}

#[test]
fn e_override_workgroup_size_per_node() {
    let _serial = serial();
    let graph = OverrideSize::new(&gpu()).expect("compiles");
    assert_eq!(OverrideSize::SPEC.node_workgroup_size(0), [32, 1, 1]);
    check("WG = 16", 32, |x| graph.run(x).expect("runs").y);
}

graph! {
    /// (f) One kernel run by a `grid` node, which reads `g.y` (rows of an
    /// explicit grid) and by an `over` node.
    pub struct GridAndOver;
    kernel k = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
            let i = g.x + g.y * nwg.x * 64u;
            if i < arrayLength(&dst) { dst[i] = src[i] * 3u + g.y; }
        }
    ";
    input x[n];
    intermediate t[n];
    output y[n];
    node rows = k(src: x, dst: t) grid [n / 256, 4, 1];
    node flat = k(src: t, dst: y) over n;
}

#[test]
fn f_kernel_of_a_grid_node_and_an_over_node() {
    let _serial = serial();
    let spec = GridAndOver::SPEC;
    // The grid node keeps the original entry point, the over node runs the
    // wrapped one.
    let kernels: Vec<(&str, &str, GridFold)> = spec
        .kernels
        .iter()
        .map(|k| (&*k.label, &*k.entry_point, k.fold))
        .collect();
    assert_eq!(
        kernels,
        [
            ("k", "main", GridFold::XOnly),
            ("k", "vyre_linear_main", GridFold::Linear)
        ]
    );
    assert_eq!(
        spec.nodes.iter().map(|n| n.kernel).collect::<Vec<_>>(),
        [0, 1]
    );
    let graph = GridAndOver::new(&gpu()).expect("compiles");
    assert_eq!(graph.graph().pipeline_count(), 2);
    let d = graph.describe();
    assert_eq!(
        d.nodes.iter().map(|n| &*n.kernel).collect::<Vec<_>>(),
        ["k", "k"]
    );
    for n in sizes(64) {
        assert_folds(n, 64);
        let x = data(n, n as u32);
        // Row r of the grid covers ceil(n / 256) * 64 elements.
        let row = (n as u64).div_ceil(256) * 64;
        let cpu: Vec<u32> = x
            .iter()
            .zip(0u64..)
            .map(|(&v, i)| {
                v.wrapping_mul(3)
                    .wrapping_add((i / row) as u32)
                    .wrapping_mul(3)
            })
            .collect();
        assert_same("grid then over", n, &graph.run(&x).expect("runs").y, &cpu);
    }
}

#[test]
fn hand_built_x_only_kernel_is_refused_on_a_folded_grid() {
    let _serial = serial();
    let gpu = gpu();
    let spec = graph_spec(
        "x_only",
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node("scale", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N)],
    );
    assert_eq!(spec.kernels[0].fold, GridFold::XOnly);
    let graph = Graph::new(&gpu, spec).expect("graph");
    let [last, past, ..] = sizes(64);
    let run = |x: &[u32], y: &mut [u32]| {
        graph.run(
            &DispatchConfig::default(),
            x.len() as u64,
            &[Feed::Host(bytes(x))],
            &mut [Sink::Host(bytes_mut(y))],
        )
    };

    // The last unfolded size runs.
    let x = data(last, 1);
    let mut y = vec![0u32; last];
    run(&x, &mut y).expect("unfolded size runs");
    let cpu: Vec<u32> = x
        .iter()
        .map(|v| v.wrapping_mul(3).wrapping_add(1))
        .collect();
    assert_same("x-only, unfolded", last, &y, &cpu);

    // One more element needs a folded grid: refused before anything runs.
    let x = data(past, 2);
    let mut y = vec![0u32; past];
    let before = gpu.counters();
    let err = run(&x, &mut y).expect_err("folded grid refused");
    assert!(
        matches!(&err, BackendError::GridNotFoldable { node, kernel, workgroups, max }
            if node == "scale" && kernel == "mul3_add1" && *workgroups == 65_536 && *max == 65_535),
        "{err:?}"
    );
    assert!(err.to_string().contains("GridFold::Linear"), "{err}");
    assert_eq!(
        gpu.counters().since(&before).submissions,
        0,
        "nothing submitted"
    );
    assert!(y.iter().all(|&v| v == 0), "nothing written");
}
