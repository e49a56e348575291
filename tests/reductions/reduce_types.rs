//! Reductions and scans over the types that need a device feature: `f16`
//! (`shader_f16`), `u64` and `i64` (`shader_int64`), `f64` (`shader_f64`),
//! every operation against a CPU reference at sizes 1, 255, 256, 257,
//! 4,095, 4,096, 4,097 (even sizes next to those for `f16`, and one larger
//! for the 64-bit types), the same bits on 20 runs.
//!
//! Float sums use values whose every partial sum is exact in the type
//! (integers, or multiples of 1/1024, well inside the significand), so the
//! result is exact whatever the combining order and is compared bit for
//! bit. `max`/`min` are compared bit for bit too, with NaN, infinities and
//! both zeros among the inputs. 64-bit integer sums wrap, as WGSL's `+`.
//!
//! A type whose feature the adapter lacks is not skipped: its graph must
//! then be refused with `UnsupportedFeature`. A device opened without any
//! feature refuses every one of these graphs the same way.

use crate::common;

use common::{gpu, serial};
use vyre_graph::half::f16;
use vyre_graph::{BackendError, Gpu, GpuOptions, graph, wgpu};

graph! {
    pub struct OpsF16;
    features [shader_f16];
    // An even length: `reduce` over `f16` requires it (see F16_SIZES).
    input x[2 * n];
    output s[1];
    output hi[1];
    output lo[1];
    output inc[2 * n];
    output exc[2 * n];
    node ts = reduce sum<f16>(x) -> s;
    node th = reduce max<f16>(x) -> hi;
    node tl = reduce min<f16>(x) -> lo;
    node pi = scan inclusive sum<f16>(x) -> inc;
    node pe = scan exclusive max<f16>(x) -> exc;
}

graph! {
    pub struct OpsF64;
    features [shader_f64];
    input x[n];
    output s[1];
    output hi[1];
    output lo[1];
    output inc[n];
    output exc[n];
    node ts = reduce sum<f64>(x) -> s;
    node th = reduce max<f64>(x) -> hi;
    node tl = reduce min<f64>(x) -> lo;
    node pi = scan inclusive sum<f64>(x) -> inc;
    node pe = scan exclusive max<f64>(x) -> exc;
}

graph! {
    pub struct OpsU64;
    features [shader_int64];
    input x[n];
    output s[1];
    output hi[1];
    output lo[1];
    output inc[n];
    output exc[n];
    output rows[n / 10];
    node ts = reduce sum<u64>(x) -> s;
    node th = reduce max<u64>(x) -> hi;
    node tl = reduce min<u64>(x) -> lo;
    node pi = scan inclusive sum<u64>(x) -> inc;
    node pe = scan exclusive min<u64>(x) over [n / 10, 10] -> exc;
    node rs = reduce sum<u64>(x) over [n / 10, 10] -> rows;
}

graph! {
    pub struct OpsI64;
    features [shader_int64];
    input x[n];
    output s[1];
    output hi[1];
    output lo[1];
    output inc[n];
    output exc[n];
    node ts = reduce sum<i64>(x) -> s;
    node th = reduce max<i64>(x) -> hi;
    node tl = reduce min<i64>(x) -> lo;
    node pi = scan inclusive sum<i64>(x) -> inc;
    node pe = scan exclusive max<i64>(x) -> exc;
}

const SIZES: [usize; 7] = [1, 255, 256, 257, 4095, 4096, 4097];

/// `f16` sizes are even: a storage binding is a whole number of 4-byte
/// words, so WGSL's `arrayLength` of an odd count of `f16` counts the
/// padding half-word too (docs/reductions.md, limits).
const F16_SIZES: [usize; 7] = [2, 254, 256, 258, 4094, 4096, 4098];

fn lcg64(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s ^ (s >> 29)
        })
        .collect()
}

/// Whether the device has `f`; when not, `made` must be the refusal
/// naming it (a test never skips silently).
fn has<T>(gpu: &Gpu, f: wgpu::Features, name: &str, made: Result<T, BackendError>) -> Option<T> {
    if gpu.device().features().contains(f) {
        return Some(made.unwrap_or_else(|e| panic!("{name}: {e}")));
    }
    match made {
        Err(BackendError::UnsupportedFeature { feature, .. }) => assert_eq!(feature, name),
        Err(e) => panic!("{name}: expected UnsupportedFeature, got {e}"),
        Ok(_) => panic!("{name}: a device without it made the graph"),
    }
    None
}

/// Float max/min as the kernels define them, on the bits of any float
/// type (`sign` is its sign bit): NaN wins, `+0` above `-0` for max.
fn fold_minmax(
    bits: &[u64],
    sign: u64,
    max: bool,
    is_nan: impl Fn(u64) -> bool,
    lt: impl Fn(u64, u64) -> bool,
    init: u64,
) -> Vec<u64> {
    let mut acc = init;
    let mut out = Vec::with_capacity(bits.len());
    for &b in bits {
        out.push(acc);
        acc = if is_nan(acc) {
            acc
        } else if is_nan(b) {
            b
        } else if (acc | b) & !sign == 0 {
            if max { acc & b } else { acc | b }
        } else if (max && lt(acc, b)) || (!max && lt(b, acc)) {
            b
        } else {
            acc
        };
    }
    out.push(acc);
    out
}

/// The exclusive prefixes of the fold and, last, the whole fold.
fn f16_minmax(x: &[f16], max: bool) -> Vec<f16> {
    let bits: Vec<u64> = x.iter().map(|v| u64::from(v.to_bits())).collect();
    let init = if max {
        f16::NEG_INFINITY
    } else {
        f16::INFINITY
    };
    fold_minmax(
        &bits,
        0x8000,
        max,
        |b| f16::from_bits(b as u16).is_nan(),
        |a, b| f16::from_bits(a as u16) < f16::from_bits(b as u16),
        u64::from(init.to_bits()),
    )
    .into_iter()
    .map(|b| f16::from_bits(b as u16))
    .collect()
}

fn f64_minmax(x: &[f64], max: bool) -> Vec<f64> {
    let bits: Vec<u64> = x.iter().map(|v| v.to_bits()).collect();
    let init = if max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    fold_minmax(
        &bits,
        1 << 63,
        max,
        |b| f64::from_bits(b).is_nan(),
        |a, b| f64::from_bits(a) < f64::from_bits(b),
        init.to_bits(),
    )
    .into_iter()
    .map(f64::from_bits)
    .collect()
}

/// Inputs whose partial sums are all exact: integers in -1..=1, at most
/// 1,024 of them non-zero (f16 holds integers to 2,048 exactly), with the
/// special values after `specials` (for max/min only: sums skip them).
fn f16_input(n: usize, seed: u64) -> Vec<f16> {
    let step = n.div_ceil(1024).max(1);
    lcg64(seed, n)
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            let v = if i % step == 0 {
                (r % 3) as f32 - 1.0
            } else {
                0.0
            };
            f16::from_f32(v)
        })
        .collect()
}

fn f16_specials(n: usize) -> Vec<f16> {
    let mut x = f16_input(n, 7);
    let specials = [
        f16::NEG_ZERO,
        f16::ZERO,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::NAN,
    ];
    for (k, s) in specials.into_iter().enumerate() {
        if n > 16 * (k + 1) {
            x[n - 1 - 16 * k] = s;
        }
    }
    x
}

fn same_f16(got: &[f16], want: &[f16], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}: at {i}: got {g} ({:#06x}), want {w} ({:#06x})",
            g.to_bits(),
            w.to_bits()
        );
    }
}

fn same_f64(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}: at {i}: got {g:e}, want {w:e}"
        );
    }
}

#[test]
fn f16_every_operation_against_the_cpu() {
    let _s = serial();
    let gpu = gpu();
    let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F16,
        "shader_f16",
        OpsF16::new(&gpu),
    ) else {
        return;
    };
    for n in F16_SIZES {
        let x = f16_input(n, n as u64);
        let out = g.run(&x).expect("run");
        let mut acc = f16::ZERO;
        let inc: Vec<f16> = x
            .iter()
            .map(|&v| {
                acc = f16::from_f32(acc.to_f32() + v.to_f32());
                acc
            })
            .collect();
        same_f16(&out.s, &[acc], &format!("f16 sum n={n}"));
        same_f16(&out.inc, &inc, &format!("f16 inclusive sum n={n}"));
        let sp = f16_specials(n);
        let out = g.run(&sp).expect("run");
        let hi = f16_minmax(&sp, true);
        let lo = f16_minmax(&sp, false);
        same_f16(&out.hi, &hi[n..], &format!("f16 max n={n}"));
        same_f16(&out.lo, &lo[n..], &format!("f16 min n={n}"));
        same_f16(&out.exc, &hi[..n], &format!("f16 exclusive max n={n}"));
    }
}

#[test]
fn f64_every_operation_against_the_cpu() {
    let _s = serial();
    let gpu = gpu();
    let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F64,
        "shader_f64",
        OpsF64::new(&gpu),
    ) else {
        return;
    };
    for n in SIZES.into_iter().chain([100_003]) {
        // Multiples of 1/1024 below 2^20: every partial sum is exact.
        let x: Vec<f64> = lcg64(n as u64, n)
            .iter()
            .map(|&r| ((r % (1 << 30)) as f64 - (1u64 << 29) as f64) / 1024.0)
            .collect();
        let out = g.run(&x).expect("run");
        let mut acc = 0.0f64;
        let inc: Vec<f64> = x
            .iter()
            .map(|&v| {
                acc += v;
                acc
            })
            .collect();
        same_f64(&out.s, &[acc], &format!("f64 sum n={n}"));
        same_f64(&out.inc, &inc, &format!("f64 inclusive sum n={n}"));
        let mut sp = x.clone();
        let specials = [-0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300];
        for (k, s) in specials.into_iter().enumerate() {
            if n > 16 * (k + 1) {
                sp[n - 1 - 16 * k] = s;
            }
        }
        let out = g.run(&sp).expect("run");
        let hi = f64_minmax(&sp, true);
        let lo = f64_minmax(&sp, false);
        same_f64(&out.hi, &hi[n..], &format!("f64 max n={n}"));
        same_f64(&out.lo, &lo[n..], &format!("f64 min n={n}"));
        same_f64(&out.exc, &hi[..n], &format!("f64 exclusive max n={n}"));
    }
}

#[test]
fn signed_zeros_alone_keep_their_order() {
    let _s = serial();
    let gpu = gpu();
    if let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F16,
        "shader_f16",
        OpsF16::new(&gpu),
    ) {
        for x in [[f16::NEG_ZERO, f16::ZERO], [f16::ZERO, f16::NEG_ZERO]] {
            let out = g.run(&x[..]).expect("run");
            assert_eq!(out.hi[0].to_bits(), 0, "f16 max of ±0 is +0");
            assert_eq!(out.lo[0].to_bits(), 0x8000, "f16 min of ±0 is -0");
        }
    }
    if let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F64,
        "shader_f64",
        OpsF64::new(&gpu),
    ) {
        for x in [[-0.0f64, 0.0], [0.0, -0.0]] {
            let out = g.run(&x[..]).expect("run");
            assert_eq!(out.hi[0].to_bits(), 0, "f64 max of ±0 is +0");
            assert_eq!(out.lo[0].to_bits(), 1 << 63, "f64 min of ±0 is -0");
        }
    }
}

#[test]
fn u64_and_i64_wrap_and_match_the_cpu() {
    let _s = serial();
    let gpu = gpu();
    let f = wgpu::Features::SHADER_INT64;
    let u = has(&gpu, f, "shader_int64", OpsU64::new(&gpu));
    let i = has(&gpu, f, "shader_int64", OpsI64::new(&gpu));
    let (Some(u), Some(i)) = (u, i) else {
        return;
    };
    for n in SIZES.into_iter().chain([100_003]) {
        let n = n.max(10);
        let x = lcg64(n as u64 + 1, n);
        let out = u.run(&x).expect("run u64");
        let mut acc = 0u64;
        let inc: Vec<u64> = x
            .iter()
            .map(|&v| {
                acc = acc.wrapping_add(v);
                acc
            })
            .collect();
        assert_eq!(out.s, [acc], "u64 sum n={n}");
        assert_eq!(out.inc, inc, "u64 inclusive sum n={n}");
        assert_eq!(out.hi, [*x.iter().max().unwrap_or(&0)], "u64 max n={n}");
        assert_eq!(
            out.lo,
            [*x.iter().min().unwrap_or(&u64::MAX)],
            "u64 min n={n}"
        );
        let rows = n / 10;
        for r in 0..rows {
            let row = &x[r * 10..(r + 1) * 10];
            let want = row.iter().fold(0u64, |a, &b| a.wrapping_add(b));
            assert_eq!(out.rows[r], want, "u64 row sum {r} n={n}");
            let mut m = u64::MAX;
            for (k, &v) in row.iter().enumerate() {
                assert_eq!(
                    out.exc[r * 10 + k],
                    m,
                    "u64 row exclusive min {r}.{k} n={n}"
                );
                m = m.min(v);
            }
        }
        let y: Vec<i64> = x.iter().map(|&v| v as i64).collect();
        let out = i.run(&y).expect("run i64");
        let mut acc = 0i64;
        let mut best = i64::MIN;
        for (k, &v) in y.iter().enumerate() {
            assert_eq!(out.exc[k], best, "i64 exclusive max at {k} n={n}");
            acc = acc.wrapping_add(v);
            best = best.max(v);
            assert_eq!(out.inc[k], acc, "i64 inclusive sum at {k} n={n}");
        }
        assert_eq!(out.s, [acc], "i64 sum n={n}");
        assert_eq!(out.hi, [best], "i64 max n={n}");
        assert_eq!(
            out.lo,
            [*y.iter().min().unwrap_or(&i64::MAX)],
            "i64 min n={n}"
        );
    }
    // The extremes: MIN and MAX themselves, and a sum that wraps.
    let y = [i64::MAX, 1, i64::MIN, -1, i64::MIN];
    let out = i.run(&y[..]).expect("run i64");
    let want = y.iter().fold(0i64, |a, &b| a.wrapping_add(b));
    assert_eq!((out.s[0], out.hi[0], out.lo[0]), (want, i64::MAX, i64::MIN));
}

#[test]
fn the_same_bits_on_20_runs() {
    let _s = serial();
    let gpu = gpu();
    let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F64,
        "shader_f64",
        OpsF64::new(&gpu),
    ) else {
        return;
    };
    // Values whose sum rounds: the order decides the last bits.
    let x: Vec<f64> = lcg64(3, 70_001)
        .iter()
        .map(|&r| (r >> 11) as f64 * 1e-9 - 4e6)
        .collect();
    let first = g.run(&x).expect("run");
    for _ in 0..19 {
        let again = g.run(&x).expect("run");
        assert_eq!(again.s[0].to_bits(), first.s[0].to_bits());
        assert!(
            again
                .inc
                .iter()
                .zip(&first.inc)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
}

#[test]
fn a_device_without_the_features_refuses_each_graph() {
    let _s = serial();
    let bare = Gpu::with_options(GpuOptions::default().with_features(wgpu::Features::empty()))
        .expect("a device without shader features");
    let name = |r: Result<(), BackendError>| match r {
        Err(BackendError::UnsupportedFeature { feature, .. }) => feature,
        Err(e) => panic!("expected UnsupportedFeature, got {e}"),
        Ok(()) => panic!("a device without the feature made the graph"),
    };
    assert_eq!(name(OpsF16::new(&bare).map(drop)), "shader_f16");
    assert_eq!(name(OpsF64::new(&bare).map(drop)), "shader_f64");
    assert_eq!(name(OpsU64::new(&bare).map(drop)), "shader_int64");
    assert_eq!(name(OpsI64::new(&bare).map(drop)), "shader_int64");
}

#[test]
fn empty_inputs_give_each_types_identity() {
    let _s = serial();
    let gpu = gpu();
    if let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F16,
        "shader_f16",
        OpsF16::new(&gpu),
    ) {
        let out = g.run(&[][..]).expect("n = 0");
        let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&out.s), [0]);
        assert_eq!(out.hi, [f16::NEG_INFINITY]);
        assert_eq!(out.lo, [f16::INFINITY]);
        assert!(out.inc.is_empty() && out.exc.is_empty());
    }
    if let Some(g) = has(
        &gpu,
        wgpu::Features::SHADER_F64,
        "shader_f64",
        OpsF64::new(&gpu),
    ) {
        let out = g.run(&[][..]).expect("n = 0");
        assert_eq!(out.s[0].to_bits(), 0);
        assert_eq!(
            (out.hi, out.lo),
            (vec![f64::NEG_INFINITY], vec![f64::INFINITY])
        );
    }
    let f = wgpu::Features::SHADER_INT64;
    if let Some(g) = has(&gpu, f, "shader_int64", OpsU64::new(&gpu)) {
        let out = g.run(&[][..]).expect("n = 0");
        assert_eq!((out.s, out.hi, out.lo), (vec![0], vec![0], vec![u64::MAX]));
        assert!(out.rows.is_empty());
    }
    if let Some(g) = has(&gpu, f, "shader_int64", OpsI64::new(&gpu)) {
        let out = g.run(&[][..]).expect("n = 0");
        assert_eq!(
            (out.s, out.hi, out.lo),
            (vec![0], vec![i64::MIN], vec![i64::MAX])
        );
    }
}
