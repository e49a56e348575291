//! The oracle's reductions and scans: each row combined in order on the
//! CPU; a float sum in `f64` (exact for the generator's values) with the
//! bound its GPU result must meet, the other results exactly.

use std::ops::Range;

use crate::grammar::ir::{ReduceOp, Shape};

/// An element type a reduction or scan works on.
pub trait Value: Copy {
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
    fn identity(op: ReduceOp) -> Self;
    /// `Some` for a float, whose sum is rounded on the GPU.
    fn as_f64(self) -> Option<f64>;
    fn from_f64(v: f64) -> Self;
}

impl Value for u32 {
    fn combine(op: ReduceOp, a: u32, b: u32) -> u32 {
        match op {
            ReduceOp::Sum => a.wrapping_add(b),
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        }
    }
    fn identity(op: ReduceOp) -> u32 {
        if op == ReduceOp::Min { u32::MAX } else { 0 }
    }
    fn as_f64(self) -> Option<f64> {
        None
    }
    fn from_f64(v: f64) -> u32 {
        v as u32
    }
}

impl Value for i32 {
    fn combine(op: ReduceOp, a: i32, b: i32) -> i32 {
        match op {
            ReduceOp::Sum => a.wrapping_add(b),
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        }
    }
    fn identity(op: ReduceOp) -> i32 {
        match op {
            ReduceOp::Sum => 0,
            ReduceOp::Max => i32::MIN,
            ReduceOp::Min => i32::MAX,
        }
    }
    fn as_f64(self) -> Option<f64> {
        None
    }
    fn from_f64(v: f64) -> i32 {
        v as i32
    }
}

impl Value for f32 {
    fn combine(op: ReduceOp, a: f32, b: f32) -> f32 {
        match op {
            ReduceOp::Sum => a + b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        }
    }
    fn identity(op: ReduceOp) -> f32 {
        match op {
            ReduceOp::Sum => 0.0,
            ReduceOp::Max => f32::NEG_INFINITY,
            ReduceOp::Min => f32::INFINITY,
        }
    }
    fn as_f64(self) -> Option<f64> {
        Some(f64::from(self))
    }
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

/// The rows of a source of `len` elements at problem size `n`: every size
/// `n / k` rounds up, and row `r` holds `r × cols .. (r + 1) × cols`, cut
/// at the source's end.
pub fn rows(len: usize, shape: Shape, n: usize) -> Vec<Range<usize>> {
    let cut = |a: usize, b: usize| a.min(len)..b.min(len);
    match shape {
        Shape::Whole => std::iter::once(0..len).collect(),
        Shape::Cols(k) => {
            let k = k as usize;
            (0..n.div_ceil(k))
                .map(|r| cut(r * k, (r + 1) * k))
                .collect()
        }
        Shape::Rows(r) => {
            let cols = len.div_ceil(r as usize).max(1);
            (0..r as usize)
                .map(|i| cut(i * cols, (i + 1) * cols))
                .collect()
        }
    }
}

/// How far a float sum of values whose magnitudes add up to `abs` may be
/// from the exact sum: the GPU adds in a tree of at most `log2(len)` levels
/// after sequential runs of up to 8, each addition off by half an ulp.
fn bound(len: usize, abs: f64) -> f64 {
    let levels = (usize::BITS - len.leading_zeros()) as f64;
    (2.0 * levels + 16.0) * f64::from(f32::EPSILON) * abs
}

/// Per-row (or whole) reduction of `src` into `out_len` values, and, for a
/// float sum, each value's bound (empty when exact).
pub fn reduce<T: Value>(
    src: &[T],
    op: ReduceOp,
    shape: Shape,
    n: usize,
    out_len: usize,
) -> (Vec<T>, Vec<f64>) {
    let mut out = Vec::with_capacity(out_len);
    let mut tol = Vec::new();
    let rounded = op == ReduceOp::Sum && T::identity(op).as_f64().is_some();
    for row in rows(src.len(), shape, n).into_iter().take(out_len) {
        let xs = &src[row];
        if rounded {
            let sum: f64 = xs.iter().filter_map(|x| x.as_f64()).sum();
            let abs: f64 = xs.iter().filter_map(|x| x.as_f64()).map(f64::abs).sum();
            out.push(T::from_f64(sum));
            tol.push(bound(xs.len(), abs));
        } else {
            out.push(
                xs.iter()
                    .fold(T::identity(op), |a, &b| T::combine(op, a, b)),
            );
        }
    }
    while out.len() < out_len {
        out.push(T::identity(op));
        if rounded {
            tol.push(0.0);
        }
    }
    (out, tol)
}

/// Per-row (or whole) scan of `src`, and, for a float sum, each element's
/// bound (empty when exact).
pub fn scan<T: Value>(
    src: &[T],
    op: ReduceOp,
    inclusive: bool,
    shape: Shape,
    n: usize,
) -> (Vec<T>, Vec<f64>) {
    let mut out = vec![T::identity(op); src.len()];
    let rounded = op == ReduceOp::Sum && T::identity(op).as_f64().is_some();
    let mut tol = if rounded {
        vec![0.0; src.len()]
    } else {
        Vec::new()
    };
    for row in rows(src.len(), shape, n) {
        let mut acc = T::identity(op);
        let (mut sum, mut abs) = (0.0f64, 0.0f64);
        for j in row.clone() {
            let x = src[j];
            if rounded {
                let v = x.as_f64().unwrap_or(0.0);
                if inclusive {
                    sum += v;
                    abs += v.abs();
                }
                out[j] = T::from_f64(sum);
                tol[j] = bound(row.len(), abs);
                if !inclusive {
                    sum += v;
                    abs += v.abs();
                }
            } else if inclusive {
                acc = T::combine(op, acc, x);
                out[j] = acc;
            } else {
                out[j] = acc;
                acc = T::combine(op, acc, x);
            }
        }
    }
    (out, tol)
}
