//! Fusion on write (an element-wise consumer of a scan's output folded
//! into the scan's store) and two reductions of one source in one pass,
//! each built as written and with `fuse off;` and run on the same inputs:
//! outputs bit for bit equal, and equal to a CPU reference. `describe()`
//! shows the fused scan (`<label>__scan__writes_<consumer>`) and the
//! paired first level (`<a>__level1__and_<b>__level1..`). Also: a graph
//! declaring `features [subgroups]` runs right where the adapter has
//! them, and is refused with `UnsupportedFeature` where the device lacks
//! them; rows of 0 columns reduce to the identity.

use crate::common;

use common::{gpu, serial};
use vyre_graph::{BackendError, Gpu, GpuOptions, wgpu};

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
            pub use u::Unfused;
        }
    };
}

both!(scan_then_map {
    // `y` is an intermediate only `scale` reads: never written when fused.
    kernel scale = wgsl {
        @group(0) @binding(0) var<storage, read> y: array<f32>;
        @group(0) @binding(1) var<storage, read> w: array<f32>;
        @group(0) @binding(2) var<storage, read_write> z: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&z) { z[g.x] = y[g.x] * w[g.x] - 1.0; }
        }
    };
    input x[n];
    input w[n];
    intermediate y[n];
    output z[n];
    node p = scan inclusive sum<f32>(x) -> y;
    node scale(y: y, w: w, z: z) over n;
});

both!(scan_output_and_map {
    // `y` is an output: still written, and its consumer fused.
    kernel bump = wgsl {
        @group(0) @binding(0) var<storage, read> y: array<u32>;
        @group(0) @binding(1) var<storage, read_write> z: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&z) { z[g.x] = (y[g.x] ^ 0x5555u) * 3u; }
        }
    };
    input x[n];
    output y[n];
    output z[n];
    node p = scan exclusive max(x) -> y;
    node bump(y: y, z: z) over n;
});

both!(rows_scan_then_map {
    kernel neg = wgsl {
        @group(0) @binding(0) var<storage, read> y: array<i32>;
        @group(0) @binding(1) var<storage, read_write> z: array<i32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&z) { z[g.x] = -y[g.x]; }
        }
    };
    input x[n];
    intermediate y[n];
    output z[n];
    node p = scan inclusive sum<i32>(x) over [n / 100, 100] -> y;
    node neg(y: y, z: z) over n;
});

both!(sum_and_squares {
    // The stats pair: sum(x) and sum(x²), the squares fused on read.
    kernel square = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> sq: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&sq) { sq[g.x] = x[g.x] * x[g.x]; }
        }
    };
    input x[n];
    intermediate sq[n];
    output s[1];
    output q[1];
    node square(x: x, sq: sq) over n;
    node sum_x = reduce sum(x) -> s;
    node sum_sq = reduce sum(sq) -> q;
});

both!(two_inputs_min {
    // Two buffers of one length, one operation: paired too.
    input a[n];
    input b[n];
    output s[1];
    output t[1];
    node ma = reduce min<i32>(a) -> s;
    node mb = reduce min<i32>(b) -> t;
});

mod g {
    use vyre_graph::graph;
    graph! {
        pub struct SubgroupSum;
        features [subgroups];
        input x[n];
        output s[1];
        output y[n];
        node total = reduce sum<u32>(x) -> s;
        node p = scan exclusive sum<u32>(x) -> y;
    }
    graph! {
        /// Four rows of ceil(n / 4) columns: the last rows partial or empty.
        pub struct FourRows;
        input x[n];
        output s[4];
        output m[4];
        output y[n];
        node rs = reduce sum<u32>(x) over [4, n / 4] -> s;
        node rm = reduce min<u32>(x) over [4, n / 4] -> m;
        node p = scan inclusive sum<u32>(x) over [4, n / 4] -> y;
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

fn floats(seed: u32, n: usize) -> Vec<f32> {
    lcg(seed, n)
        .into_iter()
        .map(|v| (v >> 8) as f32 / (1 << 22) as f32 - 2.0)
        .collect()
}

const SIZES: [usize; 8] = [1, 255, 256, 257, 2048, 2049, 4097, 300_001];

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_scan_consumer_fuses_into_the_store_with_identical_bits() {
    let _s = serial();
    let gpu = gpu();
    let f = scan_then_map::Fused::new(&gpu).unwrap();
    let u = scan_then_map::Unfused::new(&gpu).unwrap();
    let text = f.describe().to_string();
    assert!(text.contains("p__scan__writes_scale"), "{text}");
    assert!(
        f.to_dot().contains("p__scan__writes_scale"),
        "{}",
        f.to_dot()
    );
    assert!(!u.describe().to_string().contains("__writes_"));
    for n in SIZES {
        let x = floats(1, n);
        let w = floats(2, n);
        let a = f.run(&x[..], &w[..]).unwrap().z;
        let b = u.run(&x[..], &w[..]).unwrap().z;
        assert_eq!(bits(&a), bits(&b), "n = {n}");
        // Against the CPU: the prefix sum within the Kahan-style bound.
        let (mut acc, mut abs) = (0.0f64, 0.0f64);
        for i in 0..n {
            acc += f64::from(x[i]);
            abs += f64::from(x[i]).abs();
            let want = acc * f64::from(w[i]) - 1.0;
            let bound = 64.0 * f64::from(f32::EPSILON) * (abs * f64::from(w[i]).abs() + 1.0);
            assert!(
                (f64::from(a[i]) - want).abs() <= bound,
                "n = {n} at {i}: {} vs {want}",
                a[i]
            );
        }
    }
}

#[test]
fn an_output_scan_is_still_written_when_its_consumer_fuses() {
    let _s = serial();
    let gpu = gpu();
    let f = scan_output_and_map::Fused::new(&gpu).unwrap();
    let u = scan_output_and_map::Unfused::new(&gpu).unwrap();
    assert!(f.describe().to_string().contains("p__scan__writes_bump"));
    for n in SIZES {
        let x = lcg(3, n);
        let a = f.run(&x[..]).unwrap();
        let b = u.run(&x[..]).unwrap();
        let mut m = 0u32;
        let y: Vec<u32> = x
            .iter()
            .map(|&v| {
                let before = m;
                m = m.max(v);
                before
            })
            .collect();
        let z: Vec<u32> = y.iter().map(|v| (v ^ 0x5555).wrapping_mul(3)).collect();
        assert_eq!((&a.y, &a.z), (&b.y, &b.z), "n = {n}");
        assert_eq!(a.y, y, "n = {n}");
        assert_eq!(a.z, z, "n = {n}");
    }
}

#[test]
fn a_row_scan_consumer_fuses() {
    let _s = serial();
    let gpu = gpu();
    let f = rows_scan_then_map::Fused::new(&gpu).unwrap();
    let u = rows_scan_then_map::Unfused::new(&gpu).unwrap();
    assert!(f.describe().to_string().contains("p__rows__writes_neg"));
    for n in [100, 1000, 250_100] {
        let x: Vec<i32> = lcg(4, n).into_iter().map(|v| v as i32).collect();
        let a = f.run(&x[..]).unwrap().z;
        assert_eq!(a, u.run(&x[..]).unwrap().z, "n = {n}");
        for (r, row) in x.chunks(100).enumerate() {
            let mut acc = 0i32;
            for (k, &v) in row.iter().enumerate() {
                acc = acc.wrapping_add(v);
                assert_eq!(a[r * 100 + k], acc.wrapping_neg(), "n = {n} row {r} at {k}");
            }
        }
    }
}

#[test]
fn two_reductions_of_one_source_run_in_one_pass() {
    let _s = serial();
    let gpu = gpu();
    let f = sum_and_squares::Fused::new(&gpu).unwrap();
    let u = sum_and_squares::Unfused::new(&gpu).unwrap();
    let text = f.describe().to_string();
    assert!(
        text.contains("sum_x__level1__and_sum_sq__level1__reads_square")
            || text.contains("sum_sq__level1__reads_square__and_sum_x__level1"),
        "{text}"
    );
    assert!(f.to_dot().contains("__and_"), "{}", f.to_dot());
    for n in SIZES {
        let x = floats(5, n);
        let a = f.run(&x[..]).unwrap();
        let b = u.run(&x[..]).unwrap();
        assert_eq!(
            (a.s[0].to_bits(), a.q[0].to_bits()),
            (b.s[0].to_bits(), b.q[0].to_bits()),
            "n = {n}"
        );
        let (s, q, abs) = x.iter().fold((0.0f64, 0.0f64, 0.0f64), |(s, q, abs), &v| {
            let v = f64::from(v);
            (s + v, q + f64::from((v * v) as f32), abs + v.abs())
        });
        let eps = 64.0 * f64::from(f32::EPSILON);
        assert!(
            (f64::from(a.s[0]) - s).abs() <= eps * abs,
            "n = {n}: sum {} vs {s}",
            a.s[0]
        );
        assert!(
            (f64::from(a.q[0]) - q).abs() <= eps * q,
            "n = {n}: squares {} vs {q}",
            a.q[0]
        );
    }
    let f = two_inputs_min::Fused::new(&gpu).unwrap();
    let u = two_inputs_min::Unfused::new(&gpu).unwrap();
    assert!(
        f.describe().to_string().contains("__and_"),
        "{}",
        f.describe()
    );
    for n in SIZES {
        let a: Vec<i32> = lcg(6, n).into_iter().map(|v| v as i32).collect();
        let b: Vec<i32> = lcg(7, n).into_iter().map(|v| (v >> 3) as i32).collect();
        let got = f.run(&a[..], &b[..]).unwrap();
        let want = (*a.iter().min().unwrap(), *b.iter().min().unwrap());
        assert_eq!((got.s[0], got.t[0]), want, "n = {n}");
        let off = u.run(&a[..], &b[..]).unwrap();
        assert_eq!((off.s[0], off.t[0]), want, "n = {n}");
    }
}

#[test]
fn subgroups_run_where_the_device_has_them_and_are_refused_where_not() {
    let _s = serial();
    let gpu = gpu();
    // Lavapipe has subgroups; any adapter without them must refuse.
    match g::SubgroupSum::new(&gpu) {
        Ok(graph) => {
            assert!(gpu.device().features().contains(wgpu::Features::SUBGROUP));
            for n in [1, 257, 4097, 70_000] {
                let x = lcg(8, n);
                let out = graph.run(&x[..]).unwrap();
                assert_eq!(
                    out.s,
                    [x.iter().fold(0u32, |a, &b| a.wrapping_add(b))],
                    "n = {n}"
                );
                let mut acc = 0u32;
                for (i, &v) in x.iter().enumerate() {
                    assert_eq!(out.y[i], acc, "n = {n} at {i}");
                    acc = acc.wrapping_add(v);
                }
            }
        }
        Err(BackendError::UnsupportedFeature { feature, .. }) => {
            assert_eq!(feature, "subgroups");
            assert!(!gpu.device().features().contains(wgpu::Features::SUBGROUP));
        }
        Err(e) => panic!("{e}"),
    }
    let bare = Gpu::with_options(GpuOptions::default().with_features(wgpu::Features::empty()))
        .expect("a device without features");
    match g::SubgroupSum::new(&bare) {
        Err(BackendError::UnsupportedFeature {
            graph,
            feature,
            wgpu,
        }) => {
            assert_eq!(
                (graph.as_str(), feature, wgpu),
                ("SubgroupSum", "subgroups", "SUBGROUP")
            );
        }
        Err(e) => panic!("expected UnsupportedFeature, got {e}"),
        Ok(_) => panic!("a device without SUBGROUP made the graph"),
    }
}

/// `over [4, n / 4]` has ceil(n / 4) columns, as every size `n / k`
/// rounds up: every element belongs to a row, the last rows are partial
/// or (below 4 elements) empty, and an empty row's reduction is the
/// identity, its scan nothing.
#[test]
fn a_constant_row_count_covers_every_element_in_partial_rows() {
    let _s = serial();
    let gpu = gpu();
    let graph = g::FourRows::new(&gpu).unwrap();
    for n in [1usize, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 4097, 4098, 4099] {
        let x = lcg(9, n);
        let out = graph.run(&x[..]).unwrap();
        let cols = n.div_ceil(4);
        let mut scanned = 0;
        for r in 0..4 {
            let (start, end) = ((r * cols).min(n), ((r + 1) * cols).min(n));
            let row = &x[start..end];
            let sum = row.iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(out.s[r], sum, "n = {n} row {r}");
            let min = row.iter().copied().min().unwrap_or(u32::MAX);
            assert_eq!(out.m[r], min, "n = {n} row {r}");
            let mut acc = 0u32;
            for (k, &v) in row.iter().enumerate() {
                acc = acc.wrapping_add(v);
                assert_eq!(out.y[start + k], acc, "n = {n} row {r} at {k}");
                scanned += 1;
            }
        }
        assert_eq!(scanned, n, "n = {n}: every element is in a row");
    }
}
