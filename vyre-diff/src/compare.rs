//! Comparing a run's outputs with what they must be: element by element
//! (floats as numbers: `-0.0` equals `0.0`, a NaN any NaN), within a bound
//! for rounded sums, as multisets for append buffers; and an append
//! buffer's raw bytes (count, then items) turned into its items.

use vyre_graph::Graph;

use crate::case::Expected;

/// One run's outputs, in declaration order.
pub type Outputs = Vec<Vec<u8>>;

fn word(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
}

/// The host outputs' buffer indices.
pub fn outputs(graph: &Graph) -> Vec<usize> {
    graph.spec().host_outputs().collect()
}

/// `raw` with each append output (its header, then its capacity) cut to
/// its items: as many as the count says, at most the capacity.
pub fn items(graph: &Graph, mut raw: Outputs) -> Outputs {
    for (out, b) in raw.iter_mut().zip(outputs(graph)) {
        let spec = &graph.spec().buffers[b];
        if spec.append.is_none() || out.len() < 4 {
            continue;
        }
        let header = spec.header_bytes as usize;
        let size = spec.element_size as usize;
        let count = word(out, 0) as usize;
        let room = out.len().saturating_sub(header) / size.max(1);
        let end = header + count.min(room) * size;
        *out = out[header.min(out.len())..end.min(out.len())].to_vec();
    }
    raw
}

/// The words of `b` in a canonical order, floats as numbers (`-0.0` as
/// `0.0`, every NaN as one).
fn sorted(b: &[u8], float: bool) -> Vec<u32> {
    let mut v: Vec<u32> = (0..b.len() / 4)
        .map(|i| {
            let w = word(b, i);
            let x = f32::from_bits(w);
            match () {
                _ if float && x.is_nan() => f32::NAN.to_bits(),
                _ if float && x == 0.0 => 0,
                _ => w,
            }
        })
        .collect();
    v.sort_unstable();
    v
}

/// The first difference between `got` and `want`, if any.
pub fn differs(got: &Outputs, want: &[Expected], names: &[String]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} outputs, want {}", got.len(), want.len()));
    }
    let elems = |b: &[u8]| b.len() / 4;
    for ((g, w), name) in got.iter().zip(want).zip(names) {
        match w {
            Expected::Exact { bytes, float } => {
                if g.len() != bytes.len() {
                    return Some(format!(
                        "`{name}` has {} elements, want {}",
                        elems(g),
                        elems(bytes)
                    ));
                }
                for i in 0..elems(g) {
                    let (a, b) = (word(g, i), word(bytes, i));
                    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                    // As numbers for floats: -0.0 equals 0.0, and a NaN any
                    // NaN (WGSL does not say which NaN an operation gives).
                    let same = a == b || (*float && (x == y || (x.is_nan() && y.is_nan())));
                    if !same {
                        return Some(describe(name, i, a, b, *float));
                    }
                }
            }
            Expected::Multiset { bytes, float } => {
                if g.len() != bytes.len() {
                    return Some(format!(
                        "append output `{name}` has {} items, want {}",
                        elems(g),
                        elems(bytes)
                    ));
                }
                let (a, b) = (sorted(g, *float), sorted(bytes, *float));
                if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                    return Some(format!(
                        "append output `{name}` holds other items: sorted, {}",
                        describe(name, i, a[i], b[i], *float)
                    ));
                }
            }
            Expected::Near { want, tol } => {
                if elems(g) != want.len() {
                    return Some(format!(
                        "`{name}` has {} elements, want {}",
                        elems(g),
                        want.len()
                    ));
                }
                for i in 0..want.len() {
                    let a = f64::from(f32::from_bits(word(g, i)));
                    if (a - want[i]).abs() > tol[i] || a.is_nan() {
                        return Some(format!(
                            "`{name}`[{i}] is {a}, want {} within {}",
                            want[i], tol[i]
                        ));
                    }
                }
            }
        }
    }
    None
}

fn describe(name: &str, i: usize, got: u32, want: u32, float: bool) -> String {
    if float {
        format!(
            "`{name}`[{i}] is {}, want {}",
            f32::from_bits(got),
            f32::from_bits(want)
        )
    } else {
        format!(
            "`{name}`[{i}] is {got} ({} as i32), want {want} ({} as i32)",
            got as i32, want as i32
        )
    }
}

/// The unfused run's outputs as what a fused mode must give exactly
/// (append outputs as multisets).
pub fn same_bits(base: &Outputs, want: &[Expected]) -> Vec<Expected> {
    base.iter()
        .zip(want)
        .map(|(b, w)| match w {
            Expected::Multiset { float, .. } => Expected::Multiset {
                bytes: b.clone(),
                float: *float,
            },
            _ => Expected::Exact {
                bytes: b.clone(),
                float: w.is_float(),
            },
        })
        .collect()
}
