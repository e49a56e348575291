//! Fusion on read: an element-wise node whose output only a reduction or
//! scan reads is folded into the reduction's load (the intermediate is
//! never written). Each graph is built fused (as written) and with
//! `fuse off;`, and both are run on the same inputs: outputs byte for byte
//! equal, and equal to a CPU reference. `describe()` names the fused
//! readers (`<label>__reads_<producer>`), and graphs where fusion must not
//! apply keep their nodes.

use crate::common;

use common::gpu;

macro_rules! both {
    ($m:ident { $($body:tt)* }) => {
        #[allow(dead_code)]
        mod $m {
            pub mod f {
                use vyre_graph::graph;
                graph! { pub struct Fused; $($body)* }
            }
            pub mod u {
                use vyre_graph::graph;
                graph! { pub struct Unfused; fuse off; $($body)* }
            }
            pub use f::Fused;
            #[allow(unused_imports)]
            pub use u::Unfused;
        }
    };
}

both!(affine_sum {
    kernel affine = wgsl {
        struct P { a: f32, b: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> p: P;
        @group(0) @binding(2) var<storage, read_write> y: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) {
                let t = p.a * x[g.x] + p.b;
                y[g.x] = t * t;
            }
        }
    };
    input x[n];
    uniform p;
    intermediate y[n];
    output s[1];
    node affine(x: x, p: p, y: y) over n;
    node total = reduce sum(y) -> s;
});

both!(square_scan {
    kernel square = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * x[g.x] + 1u; }
        }
    };
    input x[n];
    intermediate y[n];
    output out[n];
    node square(x: x, y: y) over n;
    node p = scan exclusive sum(y) -> out;
});

both!(rows_max {
    kernel neg = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<i32>;
        @group(0) @binding(1) var<storage, read_write> y: array<i32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = -x[g.x]; }
        }
    };
    input x[n];
    intermediate y[n];
    output m[n / 50];
    node neg(x: x, y: y) over n;
    node rmax = reduce max(y) over [n / 50, 50] -> m;
});

both!(shared_source {
    // `y` is also read by another node: it must be written, so no fusion.
    kernel square = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * 3u; }
        }
    };
    input x[n];
    intermediate y[n];
    output z[n];
    output s[1];
    node square(x: x, y: y) over n;
    node again = square(x: y, y: z) over n;
    node total = reduce sum(y) -> s;
});

fn lcg(seed: u32, n: usize) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

const SIZES: [usize; 6] = [1, 255, 4097, 50_000, 100_000, 1_000_000];

#[test]
fn map_then_sum_fuses_with_identical_bits() {
    let gpu = gpu();
    let (fused, unfused) = (
        affine_sum::Fused::new(&gpu).unwrap(),
        affine_sum::Unfused::new(&gpu).unwrap(),
    );
    let text = fused.describe().to_string();
    assert!(text.contains("total__level1__reads_affine"), "{text}");
    assert!(!unfused.describe().to_string().contains("__reads_"));
    let p = affine_sum::f::P { a: 0.5, b: -0.25 };
    let q = affine_sum::u::P { a: 0.5, b: -0.25 };
    for &n in &SIZES {
        let x: Vec<f32> = lcg(1, n)
            .into_iter()
            .map(|v| (v >> 8) as f32 / (1 << 24) as f32)
            .collect();
        let a = fused.run(&x[..], &p).unwrap().s[0];
        let b = unfused.run(&x[..], &q).unwrap().s[0];
        assert_eq!(a.to_bits(), b.to_bits(), "n = {n}: fused {a}, unfused {b}");
        let exact: f64 = x
            .iter()
            .map(|&v| {
                let t = f64::from(0.5f32 * v - 0.25);
                t * t
            })
            .sum();
        let abs: f64 = exact.abs();
        assert!(
            (f64::from(a) - exact).abs() <= 64.0 * f64::from(f32::EPSILON) * abs + 1e-6,
            "n = {n}: {a} vs {exact}"
        );
    }
}

#[test]
fn map_then_scan_fuses_with_identical_results() {
    let gpu = gpu();
    let (fused, unfused) = (
        square_scan::Fused::new(&gpu).unwrap(),
        square_scan::Unfused::new(&gpu).unwrap(),
    );
    let text = fused.describe().to_string();
    assert!(
        text.contains("p__totals__reads_square") && text.contains("p__scan__reads_square"),
        "{text}"
    );
    for &n in &SIZES {
        let x = lcg(2, n);
        let a = fused.run(&x[..]).unwrap().out;
        let b = unfused.run(&x[..]).unwrap().out;
        let mut acc = 0u32;
        let want: Vec<u32> = x
            .iter()
            .map(|&v| {
                let before = acc;
                acc = acc.wrapping_add(v.wrapping_mul(v).wrapping_add(1));
                before
            })
            .collect();
        assert_eq!(a, b, "n = {n}");
        assert_eq!(a, want, "n = {n}");
    }
}

#[test]
fn map_then_row_max_fuses() {
    let gpu = gpu();
    let (fused, unfused) = (
        rows_max::Fused::new(&gpu).unwrap(),
        rows_max::Unfused::new(&gpu).unwrap(),
    );
    assert!(
        fused
            .describe()
            .to_string()
            .contains("rmax__rows__reads_neg"),
        "{}",
        fused.describe()
    );
    for n in [50, 5000, 500_000] {
        let x: Vec<i32> = lcg(3, n).into_iter().map(|v| v as i32).collect();
        let a = fused.run(&x[..]).unwrap().m;
        let want: Vec<i32> = x
            .chunks(50)
            .map(|c| c.iter().map(|v| v.wrapping_neg()).max().unwrap())
            .collect();
        assert_eq!(a, unfused.run(&x[..]).unwrap().m, "n = {n}");
        assert_eq!(a, want, "n = {n}");
    }
}

#[test]
fn a_source_other_nodes_read_is_not_fused() {
    let gpu = gpu();
    let g = shared_source::Fused::new(&gpu).unwrap();
    assert!(
        !g.describe().to_string().contains("__reads_"),
        "{}",
        g.describe()
    );
    let x = lcg(4, 10_000);
    let out = g.run(&x[..]).unwrap();
    let y: Vec<u32> = x.iter().map(|v| v.wrapping_mul(3)).collect();
    assert_eq!(out.s, [y.iter().fold(0u32, |a, &b| a.wrapping_add(b))]);
    assert_eq!(
        out.z,
        y.iter().map(|v| v.wrapping_mul(3)).collect::<Vec<_>>()
    );
}
