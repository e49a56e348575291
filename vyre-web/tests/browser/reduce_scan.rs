//! Built-in reductions and scans (`tests/reductions/`) at sizes around the
//! workgroup size (256) and a tile (2,048), against the CPU: integer sums
//! exactly (wrapping), max and min of i32, f32 sums within the bound the
//! native tests use, scans element by element.

use crate::common::{assert_same, gpu, lcg};

use vyre_graph::DispatchConfig;
use wasm_bindgen_test::wasm_bindgen_test;

mod g {
    use vyre_graph::graph;
    graph! { pub struct SumU32; input x[n]; output s[1]; node total = reduce add<u32>(x) -> s; }
    graph! { pub struct MaxI32; input x[n]; output s[1]; node total = reduce max<i32>(x) -> s; }
    graph! { pub struct SumF32; input x[n]; output s[1]; node total = reduce sum<f32>(x) -> s; }
    graph! { pub struct IncU32; input x[n]; output y[n]; node p = scan inclusive sum<u32>(x) -> y; }
    graph! { pub struct ExcMinI32; input x[n]; output y[n]; node p = scan exclusive min<i32>(x) -> y; }
}

const SIZES: [usize; 9] = [1, 255, 256, 257, 1000, 2047, 2048, 2049, 100_000];

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

#[wasm_bindgen_test]
async fn reductions_around_the_workgroup_size() {
    let gpu = gpu().await;
    let config = DispatchConfig::default();
    let sum = g::SumU32::new_async(&gpu).await.expect("sum");
    let max = g::MaxI32::new_async(&gpu).await.expect("max");
    let fsum = g::SumF32::new_async(&gpu).await.expect("f32 sum");
    for (i, &n) in SIZES.iter().enumerate() {
        let u = lcg(i as u32 + 1, n);
        let want = u.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        let got = sum.run_async(&config, &u).await.expect("sum runs").s;
        assert_eq!(got, [want], "u32 sum, n = {n}");

        let s: Vec<i32> = u.iter().map(|&v| v as i32).collect();
        let want = s.iter().copied().fold(i32::MIN, i32::max);
        let got = max.run_async(&config, &s).await.expect("max runs").s;
        assert_eq!(got, [want], "i32 max, n = {n}");

        // f32 sums: within 64 · ε · Σ|xᵢ| of the f64 sum (tests/reductions/reduce.rs).
        let f: Vec<f32> = u
            .iter()
            .map(|&v| (v >> 8) as f32 / (1 << 23) as f32 - 1.0)
            .collect();
        let exact: f64 = f.iter().map(|&v| f64::from(v)).sum();
        let bound =
            64.0 * f64::from(f32::EPSILON) * f.iter().map(|&v| f64::from(v).abs()).sum::<f64>();
        let got = fsum.run_async(&config, &f).await.expect("f32 sum runs").s;
        assert!(
            (f64::from(got[0]) - exact).abs() <= bound,
            "f32 sum, n = {n}: got {}, exact {exact}, bound {bound}",
            got[0]
        );
    }
}

#[wasm_bindgen_test]
async fn scans_around_the_workgroup_size() {
    let gpu = gpu().await;
    let config = DispatchConfig::default();
    let inc = g::IncU32::new_async(&gpu).await.expect("inclusive");
    let exc = g::ExcMinI32::new_async(&gpu).await.expect("exclusive");
    for (i, &n) in SIZES.iter().enumerate() {
        let u = lcg(i as u32 + 11, n);
        let got = inc.run_async(&config, &u).await.expect("inclusive runs").y;
        let want = scan(&u, 0, true, u32::wrapping_add);
        assert_same(&got, &want, &format!("inclusive u32 sum, n = {n}"));

        let s: Vec<i32> = u.iter().map(|&v| v as i32).collect();
        let got = exc.run_async(&config, &s).await.expect("exclusive runs").y;
        let want = scan(&s, i32::MAX, false, i32::min);
        assert_same(&got, &want, &format!("exclusive i32 min, n = {n}"));
    }
}
