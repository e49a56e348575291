//! Built-in reductions (`node total = reduce sum(x) -> s;`) on a real
//! device, every operation and type against a CPU reference: sizes 1, the
//! workgroup size (256) ± 1, a round of the 8 lanes of every invocation
//! (2,048) ± 1, a level's segment (32,768) ± 1, larger sizes, and for
//! `u32` sum one element past 65,535 × 256 (the partial buffers are then
//! at their largest tested). f32 sums are compared with a compensated
//! (Kahan, in f64) CPU sum within `64 · ε · Σ|xᵢ|` (for these sizes each
//! element passes through at most 16 sequential additions in its lane, 3
//! levels of the lanes' tree and 8 of the workgroup's per reduction level,
//! two levels); integers exactly, wrapping as WGSL's `+` does; max/min
//! of f32 bit for bit, with NaN, infinities and signed zeros. Every result
//! is the same bits on 20 runs. An empty input (problem size 0) gives the
//! operation's identity without a run, and the same graph then runs
//! correctly; a graph whose outputs are not determined at 0 refuses it.

use crate::common;

use common::gpu;
use vyre_graph::graph;

mod g {
    use vyre_graph::graph;
    graph! { pub struct SumF32; input x[n]; output s[1]; node total = reduce sum<f32>(x) -> s; }
    graph! { pub struct MaxF32; input x[n]; output s[1]; node total = reduce max<f32>(x) -> s; }
    graph! { pub struct MinF32; input x[n]; output s[1]; node total = reduce min<f32>(x) -> s; }
    graph! { pub struct SumU32; input x[n]; output s[1]; node total = reduce add<u32>(x) -> s; }
    graph! { pub struct MaxU32; input x[n]; output s[1]; node total = reduce max<u32>(x) -> s; }
    graph! { pub struct MinU32; input x[n]; output s[1]; node total = reduce min<u32>(x) -> s; }
    graph! { pub struct SumI32; input x[n]; output s[1]; node total = reduce sum<i32>(x) -> s; }
    graph! { pub struct MaxI32; input x[n]; output s[1]; node total = reduce max<i32>(x) -> s; }
    graph! { pub struct MinI32; input x[n]; output s[1]; node total = reduce min<i32>(x) -> s; }
    graph! {
        pub struct RowsF32;
        input x[n];
        output m[n / 100];
        output s[n / 100];
        node rmax = reduce max<f32>(x) over [n / 100, 100] -> m;
        node rsum = reduce sum<f32>(x) over [n / 100, 100] -> s;
    }
    graph! {
        /// Segments of length 1, and a constant number of rows.
        pub struct RowsOne;
        input x[n];
        output one[n];
        output four[4];
        node r1 = reduce sum<u32>(x) over [n, 1] -> one;
        node r4 = reduce sum<u32>(x) over [4, n / 4] -> four;
    }
}

graph! {
    /// The type of the element, by the kernel that binds it.
    pub struct Inferred;
    kernel square = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<i32>;
        @group(0) @binding(1) var<storage, read_write> y: array<i32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * x[g.x]; }
        }
    };
    input x[n];
    intermediate y[n];
    output s[1];
    node square(x: x, y: y) over n;
    node total = reduce sum(y) -> s;
}

const SIZES: [usize; 13] = [
    1, 2, 255, 256, 257, 2047, 2048, 2049, 32767, 32768, 32769, 100_000, 1_000_003,
];

/// A deterministic pseudo-random sequence.
fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

fn floats(seed: u32, n: usize) -> Vec<f32> {
    lcg(seed, n)
        .into_iter()
        .map(|v| (v >> 8) as f32 / (1 << 23) as f32 - 1.0)
        .collect()
}

/// Kahan sum in f64, and the sum of magnitudes.
fn kahan(x: &[f32]) -> (f64, f64) {
    let (mut sum, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for &v in x {
        let y = f64::from(v) - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
        abs += f64::from(v).abs();
    }
    (sum, abs)
}

fn check_f32_sum(got: f32, x: &[f32], what: &str) {
    let (exact, abs) = kahan(x);
    let bound = 64.0 * f64::from(f32::EPSILON) * abs;
    assert!(
        (f64::from(got) - exact).abs() <= bound,
        "{what}: n = {}: got {got}, Kahan sum {exact}, bound {bound}",
        x.len()
    );
}

fn max_f32(x: &[f32]) -> f32 {
    x.iter().fold(f32::NEG_INFINITY, |a, &b| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            f32::from_bits(a.to_bits() & b.to_bits())
        } else {
            a.max(b)
        }
    })
}

fn min_f32(x: &[f32]) -> f32 {
    x.iter().fold(f32::INFINITY, |a, &b| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            f32::from_bits(a.to_bits() | b.to_bits())
        } else {
            a.min(b)
        }
    })
}

/// Same bits, with NaN equal to any NaN.
fn same_f32(got: f32, want: f32, what: &str) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{what}: got {got} ({:#x}), want {want} ({:#x})",
        got.to_bits(),
        want.to_bits()
    );
}

#[test]
fn f32_sum_max_min_at_every_size() {
    let gpu = gpu();
    let (sum, max, min) = (
        g::SumF32::new(&gpu).expect("sum"),
        g::MaxF32::new(&gpu).expect("max"),
        g::MinF32::new(&gpu).expect("min"),
    );
    for (i, &n) in SIZES.iter().enumerate() {
        let x = floats(i as u32 + 1, n);
        check_f32_sum(sum.run(&x[..]).expect("sum runs").s[0], &x, "sum");
        same_f32(max.run(&x[..]).expect("max runs").s[0], max_f32(&x), "max");
        same_f32(min.run(&x[..]).expect("min runs").s[0], min_f32(&x), "min");
    }
}

#[test]
fn integer_sum_max_min_at_every_size_wrapping() {
    let gpu = gpu();
    let (su, xu, nu) = (
        g::SumU32::new(&gpu).expect("sum"),
        g::MaxU32::new(&gpu).expect("max"),
        g::MinU32::new(&gpu).expect("min"),
    );
    let (si, xi, ni) = (
        g::SumI32::new(&gpu).expect("sum"),
        g::MaxI32::new(&gpu).expect("max"),
        g::MinI32::new(&gpu).expect("min"),
    );
    for (i, &n) in SIZES.iter().enumerate() {
        // Full-range values: the sums wrap many times.
        let u = lcg(i as u32 + 7, n);
        let want = u.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(su.run(&u[..]).expect("runs").s, [want], "u32 sum, n = {n}");
        assert_eq!(
            xu.run(&u[..]).expect("runs").s,
            [*u.iter().max().unwrap()],
            "u32 max, n = {n}"
        );
        assert_eq!(
            nu.run(&u[..]).expect("runs").s,
            [*u.iter().min().unwrap()],
            "u32 min, n = {n}"
        );
        let s: Vec<i32> = u.iter().map(|&v| v as i32).collect();
        let want = s.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(si.run(&s[..]).expect("runs").s, [want], "i32 sum, n = {n}");
        assert_eq!(
            xi.run(&s[..]).expect("runs").s,
            [*s.iter().max().unwrap()],
            "i32 max, n = {n}"
        );
        assert_eq!(
            ni.run(&s[..]).expect("runs").s,
            [*s.iter().min().unwrap()],
            "i32 min, n = {n}"
        );
    }
    // Extremes: the identities must not leak into the result.
    let ends = [i32::MIN, i32::MAX, -1, 0];
    assert_eq!(xi.run(&ends[..1]).expect("runs").s, [i32::MIN]);
    assert_eq!(ni.run(&ends[1..2]).expect("runs").s, [i32::MAX]);
    assert_eq!(si.run(&ends[..2]).expect("runs").s, [-1]);
    assert_eq!(nu.run(&[u32::MAX][..]).expect("runs").s, [u32::MAX]);
    assert_eq!(su.run(&[u32::MAX, 2][..]).expect("runs").s, [1]);
}

#[test]
fn u32_sum_past_65535_workgroups_of_256() {
    let gpu = gpu();
    let sum = g::SumU32::new(&gpu).expect("sum");
    for n in [65_535 * 256 - 1, 65_535 * 256 + 1] {
        let u = lcg(3, n);
        let want = u.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(sum.run(&u[..]).expect("runs").s, [want], "n = {n}");
    }
}

#[test]
fn nan_infinities_and_signed_zeros() {
    let gpu = gpu();
    let (sum, max, min) = (
        g::SumF32::new(&gpu).expect("sum"),
        g::MaxF32::new(&gpu).expect("max"),
        g::MinF32::new(&gpu).expect("min"),
    );
    let cases: Vec<Vec<f32>> = vec![
        vec![-0.0, 0.0],
        vec![0.0, -0.0],
        vec![-0.0],
        vec![-0.0; 5000],
        vec![1.0, f32::NAN, 3.0],
        vec![f32::INFINITY, -1.0],
        vec![f32::NEG_INFINITY, f32::INFINITY],
        vec![f32::NEG_INFINITY; 300],
        {
            let mut v = floats(9, 10_000);
            v[7777] = f32::NAN;
            v
        },
    ];
    for x in &cases {
        let what = format!("{:?}", &x[..x.len().min(3)]);
        same_f32(
            max.run(&x[..]).expect("runs").s[0],
            max_f32(x),
            &format!("max {what}"),
        );
        same_f32(
            min.run(&x[..]).expect("runs").s[0],
            min_f32(x),
            &format!("min {what}"),
        );
    }
    same_f32(
        sum.run(&[f32::INFINITY, 1.0][..]).expect("runs").s[0],
        f32::INFINITY,
        "inf sum",
    );
    assert!(
        sum.run(&[f32::INFINITY, f32::NEG_INFINITY][..])
            .expect("runs")
            .s[0]
            .is_nan()
    );
}

#[test]
fn same_bits_on_20_runs() {
    let gpu = gpu();
    let sum = g::SumF32::new(&gpu).expect("sum");
    let x = floats(11, 300_001);
    let first = sum.run(&x[..]).expect("runs").s[0];
    check_f32_sum(first, &x, "sum");
    for run in 1..20 {
        let again = sum.run(&x[..]).expect("runs").s[0];
        assert_eq!(again.to_bits(), first.to_bits(), "run {run}");
    }
}

#[test]
fn per_row_reductions() {
    let gpu = gpu();
    let rows = g::RowsF32::new(&gpu).expect("rows");
    // Sizes that leave a partial last row of 1, 50 and 99 elements: it is
    // a row of its own (`n / 100` rounds up).
    for n in [1, 100, 250, 25_600, 100_099] {
        let x = floats(5, n);
        let out = rows.run(&x[..]).expect("runs");
        assert_eq!(out.m.len(), n.div_ceil(100), "rows at n = {n}");
        for (r, row) in x.chunks(100).enumerate() {
            same_f32(out.m[r], max_f32(row), &format!("row {r} max"));
            check_f32_sum(out.s[r], row, &format!("row {r} sum"));
        }
    }
    let one = g::RowsOne::new(&gpu).expect("rows of one");
    // Four rows of ceil(n / 4) columns: the last rows partial, or empty
    // (the identity) when the columns run out first.
    for n in [4, 5, 6, 7, 1023, 1024, 40_005] {
        let u = lcg(2, n);
        let out = one.run(&u[..]).expect("runs");
        assert_eq!(out.one, u, "segments of one element, n = {n}");
        let mut want: Vec<u32> = u
            .chunks(n.div_ceil(4))
            .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
            .collect();
        want.resize(4, 0);
        assert_eq!(out.four, want, "four rows, n = {n}");
    }
}

#[test]
fn element_type_from_the_kernel_that_binds_it() {
    let graph = Inferred::new(&gpu()).expect("compiles");
    for n in [1, 257, 70_000] {
        let x: Vec<i32> = lcg(4, n)
            .into_iter()
            .map(|v| (v >> 20) as i32 - 2048)
            .collect();
        let want = x
            .iter()
            .fold(0i32, |a, &b| a.wrapping_add(b.wrapping_mul(b)));
        assert_eq!(graph.run(&x[..]).expect("runs").s, [want], "n = {n}");
    }
}

#[test]
fn an_empty_input_reduces_to_the_identity() {
    // A device of its own: the submission count below must see only this
    // test's work, and the other tests of this binary run beside it.
    let gpu = vyre_graph::Gpu::new().expect("a device");
    let none: &[f32] = &[];
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let sum = g::SumF32::new(&gpu).expect("graph");
    assert_eq!(bits(&sum.run(none).expect("n = 0").s), [0.0f32.to_bits()]);
    let top = g::MaxF32::new(&gpu)
        .expect("graph")
        .run(none)
        .expect("n = 0")
        .s;
    assert_eq!(top, [f32::NEG_INFINITY]);
    let low = g::MinF32::new(&gpu)
        .expect("graph")
        .run(none)
        .expect("n = 0")
        .s;
    assert_eq!(low, [f32::INFINITY]);
    let none: &[u32] = &[];
    assert_eq!(g::SumU32::new(&gpu).unwrap().run(none).unwrap().s, [0]);
    assert_eq!(g::MaxU32::new(&gpu).unwrap().run(none).unwrap().s, [0]);
    assert_eq!(
        g::MinU32::new(&gpu).unwrap().run(none).unwrap().s,
        [u32::MAX]
    );
    let none: &[i32] = &[];
    assert_eq!(g::SumI32::new(&gpu).unwrap().run(none).unwrap().s, [0]);
    assert_eq!(
        g::MaxI32::new(&gpu).unwrap().run(none).unwrap().s,
        [i32::MIN]
    );
    assert_eq!(
        g::MinI32::new(&gpu).unwrap().run(none).unwrap().s,
        [i32::MAX]
    );
    // Per-row: no rows at n = 0 (`over [n / 100, 100]`, `over [n, 1]`), or
    // a constant number of empty rows (`over [4, n / 4]`), each the
    // identity.
    let rows = g::RowsF32::new(&gpu).unwrap().run(&[][..]).unwrap();
    assert!(rows.m.is_empty() && rows.s.is_empty());
    let ones = g::RowsOne::new(&gpu).unwrap().run(&[][..]).unwrap();
    assert!(ones.one.is_empty());
    assert_eq!(ones.four, [0; 4]);
    // Through a fused producer: the source is empty too.
    assert_eq!(Inferred::new(&gpu).unwrap().run(&[][..]).unwrap().s, [0]);
    // A run at n = 0 submits nothing, and the graph then runs as before.
    let before = gpu.counters();
    let (out, report) = sum
        .run_reported(&vyre_graph::DispatchConfig::default(), &[][..])
        .expect("n = 0");
    assert_eq!((out.s.len(), report.n, report.submissions), (1, 0, 0));
    assert_eq!(gpu.counters().since(&before).submissions, 0);
    assert_eq!(sum.run(&[1.5f32, 2.0, 3.0][..]).expect("runs").s, [6.5]);
    // Into a resident output too.
    let top = g::MaxF32::new(&gpu).unwrap();
    let resident = top.run_resident(&[][..]).expect("n = 0 resident");
    let got: Vec<f32> = resident.s.read_as(&gpu).expect("read");
    assert_eq!(got, [f32::NEG_INFINITY]);
}

graph! {
    /// A reduction over a buffer of constant length, and one whose output
    /// a kernel also writes: neither is determined at n = 0.
    pub struct NotAtZero;
    kernel bump = wgsl {
        @group(0) @binding(0) var<storage, read_write> s: array<u32>;
        @compute @workgroup_size(1)
        fn main() { s[0] += 1u; }
    };
    input x[n];
    input w[16];
    output s[1];
    output t[1];
    node total = reduce add<u32>(x) -> s;
    node bump(s: s) grid [1, 1, 1];
    node weights = reduce add<u32>(w) -> t;
}

#[test]
fn outputs_not_determined_at_n_0_refuse_it() {
    let graph = NotAtZero::new(&gpu()).expect("graph");
    let w: Vec<u32> = (1..=16).collect();
    let err = graph.run(&[][..], &w).expect_err("n = 0");
    assert!(
        matches!(err, vyre_graph::BackendError::InvalidProblemSize { .. }),
        "{err}"
    );
    let out = graph.run(&[5u32, 6][..], &w).expect("runs");
    assert_eq!((out.s, out.t), (vec![12], vec![136]));
}
