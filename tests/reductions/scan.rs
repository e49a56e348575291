//! Built-in scans (`node p = scan inclusive|exclusive sum(x) -> y;`) on a
//! real device, against a CPU reference element by element: sizes 1, the
//! workgroup size (256) ± 1, a tile (2,048) ± 1, a segment (32,768) ± 1
//! and several segments (each scanned in 16 tiles carried from tile to
//! tile, the way the segments' offsets are scanned when there are more
//! than 2,048 of them), integer sums wrapping, max and min, f32 sums within a
//! stated bound, per-row scans (rows of one element too), and the same
//! bits on 20 runs.

use crate::common;

use common::gpu;

mod g {
    use vyre_graph::graph;
    graph! { pub struct IncU32; input x[n]; output y[n]; node p = scan inclusive sum<u32>(x) -> y; }
    graph! { pub struct ExcU32; input x[n]; output y[n]; node p = scan exclusive add<u32>(x) -> y; }
    graph! { pub struct IncMaxI32; input x[n]; output y[n]; node p = scan inclusive max<i32>(x) -> y; }
    graph! { pub struct ExcMinI32; input x[n]; output y[n]; node p = scan exclusive min<i32>(x) -> y; }
    graph! { pub struct IncF32; input x[n]; output y[n]; node p = scan inclusive sum<f32>(x) -> y; }
    graph! { pub struct ExcMaxF32; input x[n]; output y[n]; node p = scan exclusive max<f32>(x) -> y; }
    graph! {
        pub struct Rows;
        input x[n];
        output inc[n];
        output exc[n];
        output ones[n];
        node a = scan inclusive sum<u32>(x) over [n / 3000, 3000] -> inc;
        node b = scan exclusive sum<u32>(x) over [n / 3000, 3000] -> exc;
        node c = scan exclusive sum<u32>(x) over [n, 1] -> ones;
    }
}

const SIZES: [usize; 13] = [
    1,
    2,
    255,
    256,
    257,
    2047,
    2048,
    2049,
    32767,
    32768,
    32769,
    100_000,
    4 * 32768 + 5,
];

fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

/// The scan of `x` by `f` from `id`, inclusive or exclusive.
fn scan<T: Copy>(x: &[T], id: T, inclusive: bool, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = id;
    x.iter()
        .map(|&v| {
            let before = acc;
            acc = f(acc, v);
            if inclusive { acc } else { before }
        })
        .collect()
}

fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at {i}: got {:?}, want {:?}",
            got[i], want[i]
        );
    }
}

#[test]
fn integer_scans_at_every_size() {
    let gpu = gpu();
    let (inc, exc) = (
        g::IncU32::new(&gpu).expect("inc"),
        g::ExcU32::new(&gpu).expect("exc"),
    );
    let (max, min) = (
        g::IncMaxI32::new(&gpu).expect("max"),
        g::ExcMinI32::new(&gpu).expect("min"),
    );
    for (i, &n) in SIZES.iter().enumerate() {
        let u = lcg(i as u32 + 1, n);
        let what = format!("n = {n}");
        first_difference(
            &inc.run(&u[..]).expect("runs").y,
            &scan(&u, 0, true, u32::wrapping_add),
            &format!("inclusive u32 sum, {what}"),
        );
        first_difference(
            &exc.run(&u[..]).expect("runs").y,
            &scan(&u, 0, false, u32::wrapping_add),
            &format!("exclusive u32 sum, {what}"),
        );
        let s: Vec<i32> = u.iter().map(|&v| v as i32).collect();
        first_difference(
            &max.run(&s[..]).expect("runs").y,
            &scan(&s, i32::MIN, true, i32::max),
            &format!("inclusive i32 max, {what}"),
        );
        first_difference(
            &min.run(&s[..]).expect("runs").y,
            &scan(&s, i32::MAX, false, i32::min),
            &format!("exclusive i32 min, {what}"),
        );
    }
}

#[test]
fn f32_scans() {
    let gpu = gpu();
    let (inc, max) = (
        g::IncF32::new(&gpu).expect("inc"),
        g::ExcMaxF32::new(&gpu).expect("max"),
    );
    for &n in &[1, 257, 2049, 100_000] {
        let x: Vec<f32> = lcg(3, n)
            .into_iter()
            .map(|v| (v >> 8) as f32 / (1 << 24) as f32)
            .collect();
        let got = inc.run(&x[..]).expect("runs").y;
        // Non-negative terms: every partial sum is within n·ε of the exact one.
        let mut exact = 0.0f64;
        for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
            exact += f64::from(v);
            let bound = 2.0 * (i as f64 + 64.0) * f64::from(f32::EPSILON) * exact.max(1e-30);
            assert!(
                (f64::from(g) - exact).abs() <= bound,
                "n = {n}, element {i}: {g} vs {exact}"
            );
        }
        let want = scan(&x, f32::NEG_INFINITY, false, f32::max);
        let got = max.run(&x[..]).expect("runs").y;
        first_difference(
            &got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            &want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "exclusive f32 max (bits)",
        );
    }
}

#[test]
fn same_bits_on_20_runs() {
    let inc = g::IncF32::new(&gpu()).expect("inc");
    let x: Vec<f32> = lcg(8, 300_001)
        .into_iter()
        .map(|v| (v >> 8) as f32 / (1 << 23) as f32 - 1.0)
        .collect();
    let first: Vec<u32> = inc
        .run(&x[..])
        .expect("runs")
        .y
        .iter()
        .map(|v| v.to_bits())
        .collect();
    for run in 1..20 {
        let again: Vec<u32> = inc
            .run(&x[..])
            .expect("runs")
            .y
            .iter()
            .map(|v| v.to_bits())
            .collect();
        first_difference(&again, &first, &format!("run {run}"));
    }
}

#[test]
fn per_row_scans() {
    let rows = g::Rows::new(&gpu()).expect("rows");
    // Whole rows, and a partial last row of 1 and 2,999 elements; 100
    // rows and more (300,000 rows of one element: about 100 s on a CPU
    // adapter, one workgroup per row) in the full run only.
    let sizes: &[usize] = if cfg!(feature = "slow-tests") {
        &[3000, 9000, 9001, 300_000, 302_999]
    } else {
        &[3000, 9000, 9001, 30_000, 32_999]
    };
    for &n in sizes {
        let u = lcg(6, n);
        let out = rows.run(&u[..]).expect("runs");
        let inc: Vec<u32> = u
            .chunks(3000)
            .flat_map(|c| scan(c, 0, true, u32::wrapping_add))
            .collect();
        let exc: Vec<u32> = u
            .chunks(3000)
            .flat_map(|c| scan(c, 0, false, u32::wrapping_add))
            .collect();
        first_difference(&out.inc, &inc, &format!("rows inclusive, n = {n}"));
        first_difference(&out.exc, &exc, &format!("rows exclusive, n = {n}"));
        first_difference(&out.ones, &vec![0; n], "rows of one element, exclusive");
    }
}
