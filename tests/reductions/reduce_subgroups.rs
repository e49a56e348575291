//! Reductions of a graph that declares `features [subgroups]`: the end of
//! each workgroup's reduction runs through subgroup shuffles (a butterfly
//! through the operation itself), so max and min keep their NaN and
//! signed-zero rules. Checked against the CPU at every subgroup size ± 1
//! (4 to 128), the workgroup size ± 1 and a level's segment ± 1, and the
//! same bits on 20 runs of one adapter.

use crate::common;

use common::gpu;

mod g {
    use vyre_graph::graph;
    graph! {
        pub struct Sub;
        features [subgroups];
        input x[n];
        input k[n];
        output s[1];
        output hi[1];
        output lo[1];
        output rows[n / 8];
        node total = reduce sum<f32>(x) -> s;
        node top = reduce max<f32>(x) -> hi;
        node least = reduce min<i32>(k) -> lo;
        node per_row = reduce max<f32>(x) over [n / 8, 8] -> rows;
    }
}

fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

/// `max` as the graph defines it on f32: NaN wins, `+0` above `-0`.
fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a == b {
        f32::from_bits(a.to_bits() & b.to_bits())
    } else if b > a {
        b
    } else {
        a
    }
}

fn check(graph: &g::Sub, n: usize, special: bool) {
    let r = lcg(n as u32 + 3, n);
    let mut x: Vec<f32> = r
        .iter()
        .map(|&v| (v >> 9) as f32 / 4096.0 - 1024.0)
        .collect();
    let k: Vec<i32> = r.iter().map(|&v| v as i32).collect();
    if special && n > 3 {
        x[n / 2] = -0.0;
        x[n / 3] = f32::INFINITY;
    }
    let out = graph.run(&x, &k).expect("runs");
    let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let abs: f64 = x.iter().map(|&v| f64::from(v).abs()).sum();
    if exact.is_finite() {
        let bound = 64.0 * f64::from(f32::EPSILON) * abs;
        assert!(
            (f64::from(out.s[0]) - exact).abs() <= bound,
            "sum at n = {n}: {} vs {exact}",
            out.s[0]
        );
    }
    let top = x.iter().copied().fold(f32::NEG_INFINITY, fmax);
    assert_eq!(out.hi[0].to_bits(), top.to_bits(), "max at n = {n}");
    assert_eq!(out.lo[0], *k.iter().min().expect("n > 0"), "min at n = {n}");
    for (row, chunk) in x.chunks_exact(8).enumerate() {
        let want = chunk.iter().copied().fold(f32::NEG_INFINITY, fmax);
        assert_eq!(
            out.rows[row].to_bits(),
            want.to_bits(),
            "row {row} at n = {n}"
        );
    }
}

#[test]
fn subgroup_reductions_match_the_cpu_at_every_subgroup_size() {
    let gpu = gpu();
    let graph = g::Sub::new(&gpu).expect("graph (lavapipe has subgroups)");
    let mut sizes = vec![1, 2, 3];
    for w in [4usize, 8, 16, 32, 64, 128, 256, 32_768] {
        sizes.extend([w - 1, w, w + 1]);
    }
    sizes.push(100_003);
    for &n in &sizes {
        check(&graph, n, false);
        check(&graph, n, true);
    }
    // NaN wins the max.
    let mut x = vec![1.0f32; 1000];
    x[777] = f32::NAN;
    let k = vec![0i32; 1000];
    assert!(graph.run(&x, &k).expect("runs").hi[0].is_nan());
}

#[test]
fn subgroup_reductions_give_the_same_bits_on_20_runs() {
    let gpu = gpu();
    let graph = g::Sub::new(&gpu).expect("graph");
    let n = 300_001;
    let x: Vec<f32> = lcg(9, n).iter().map(|&v| (v >> 8) as f32 / 77.0).collect();
    let k = vec![1i32; n];
    let first = graph.run(&x, &k).expect("runs").s[0].to_bits();
    for _ in 0..19 {
        assert_eq!(graph.run(&x, &k).expect("runs").s[0].to_bits(), first);
    }
}
