//! Reductions and scans at the limits the runtime works around or
//! enforces, element by element against the CPU:
//! - per-row reductions and scans of 65,535 rows ± 1 (one workgroup per
//!   row, so the grid folds into a second dimension past 65,535);
//! - whole-buffer sums and scans whose source is exactly the device's
//!   largest storage binding, and one element past it: an error naming
//!   the limit (never a wrong `Ok`), after which the same graph runs
//!   correctly again.

use crate::common;

use common::gpu;
use vyre_graph::BackendError;

mod g {
    use vyre_graph::graph;
    graph! {
        pub struct PerRow;
        input x[n];
        output s[n];
        output m[n / 2];
        output p[n];
        node sum = reduce sum<u32>(x) over [n, 1] -> s;
        node top = reduce max<u32>(x) over [n / 2, 2] -> m;
        node run = scan inclusive sum<u32>(x) over [n / 2, 2] -> p;
    }
    graph! { pub struct SumU32; input x[n]; output s[1]; node total = reduce add<u32>(x) -> s; }
    graph! { pub struct ScanU32; input x[n]; output y[n]; node p = scan exclusive add<u32>(x) -> y; }
}

fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s >> 3
        })
        .collect()
}

fn exclusive(x: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    x.iter()
        .map(|&v| {
            let before = acc;
            acc = acc.wrapping_add(v);
            before
        })
        .collect()
}

// Slow on a CPU adapter (one workgroup per row of one element: 131,074
// of them), so in the full run (`--features slow-tests`, which CI runs),
// not in the README's command.
#[cfg(feature = "slow-tests")]
#[test]
fn per_row_reductions_and_scans_past_65535_rows() {
    let graph = g::PerRow::new(&gpu()).expect("graph");
    for rows in [65_535usize, 65_536, 65_537] {
        // `over [n / 2, 2]` at n = 2 * rows: `rows` rows of 2; `over [n, 1]`
        // at n: n rows of 1.
        let n = 2 * rows;
        let x = lcg(rows as u32, n);
        let out = graph.run(&x).expect("runs");
        assert_eq!(out.s, x, "rows of one element at n = {n}");
        for r in 0..rows {
            let (a, b) = (x[2 * r], x[2 * r + 1]);
            assert_eq!(out.m[r], a.max(b), "max of row {r} of {rows}");
            assert_eq!(
                (out.p[2 * r], out.p[2 * r + 1]),
                (a, a.wrapping_add(b)),
                "scan of row {r} of {rows}"
            );
        }
    }
}

/// The elements of the largest binding of `u32`s, when that is a size this
/// test can allocate twice on the host (lavapipe's 128 MiB is).
fn at_binding_limit() -> usize {
    let limit = gpu().limits().max_storage_buffer_binding_size;
    assert!(
        limit <= 1 << 30,
        "this adapter binds {limit} bytes: the test is sized for adapters up to 1 GiB (lavapipe: 128 MiB)"
    );
    usize::try_from(limit / 4).expect("fits")
}

fn is_too_large(err: &BackendError) -> bool {
    matches!(err, BackendError::BufferTooLarge { limit, .. } if limit.contains("max_storage_buffer_binding_size"))
}

#[test]
fn whole_sums_at_the_binding_limit_and_one_element_past_it() {
    let n = at_binding_limit();
    let sum = g::SumU32::new(&gpu()).expect("graph");
    let mut x = lcg(7, n + 1);
    let want = x[..n].iter().fold(0u32, |a, &b| a.wrapping_add(b));
    assert_eq!(sum.run(&x[..n]).expect("at the limit").s, [want]);
    let err = sum.run(&x).expect_err("one element past the binding limit");
    assert!(is_too_large(&err), "{err}");
    x.truncate(1000);
    let small = x.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    assert_eq!(sum.run(&x).expect("runs again").s, [small]);
}

#[test]
fn whole_scans_at_the_binding_limit_and_one_element_past_it() {
    let n = at_binding_limit();
    let scan = g::ScanU32::new(&gpu()).expect("graph");
    let mut x = lcg(9, n + 1);
    let y = scan.run(&x[..n]).expect("at the limit").y;
    let want = exclusive(&x[..n]);
    if let Some(i) = (0..n).find(|&i| y[i] != want[i]) {
        panic!("y[{i}] = {} at n = {n}, want {}", y[i], want[i]);
    }
    drop((y, want));
    let err = scan
        .run(&x)
        .expect_err("one element past the binding limit");
    assert!(is_too_large(&err), "{err}");
    x.truncate(70_001);
    assert_eq!(scan.run(&x).expect("runs again").y, exclusive(&x));
}
