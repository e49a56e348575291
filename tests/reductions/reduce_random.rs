//! Seeded random runs of graphs that mix element-wise nodes, reductions
//! and scans, compared element by element with the CPU. The graphs are
//! fixed at compile time (`graph!`); what varies with the seed is the
//! element-wise operation (chosen by a uniform), its constants, the
//! problem size (among 1, 255, 256, 257, 4,095, 4,096, 4,097 and random
//! ones), and the data, with NaN, infinities and signed zeros mixed in for
//! floats and values that wrap for integers. Each graph is built fused (as
//! written: producers fused on read, consumers on write, reductions
//! paired) and with `fuse off;`; both must agree bit for bit and with the
//! CPU. A problem size of 0 is refused and the same graph then runs
//! right; one scan and one reduction run at 65,535 × 256 ± 1.

use crate::common;

use common::{gpu, serial};

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

both!(ints {
    // y = op(x) (fused into the reductions' and the scan's loads), the
    // scan's output mapped again (fused into its store).
    kernel map = wgsl {
        struct P { op: u32, k: u32 }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<uniform> p: P;
        @group(0) @binding(2) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) {
                let v = x[g.x];
                var r = v;
                switch p.op {
                    case 0u: { r = v * p.k; }
                    case 1u: { r = v ^ p.k; }
                    case 2u: { r = v + p.k; }
                    default: { r = (v >> 3u) * (v & 7u); }
                }
                y[g.x] = r;
            }
        }
    };
    kernel after = wgsl {
        @group(0) @binding(0) var<storage, read> s: array<u32>;
        @group(0) @binding(1) var<storage, read_write> z: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&z) { z[g.x] = s[g.x] * 2654435761u + 1u; }
        }
    };
    input x[n];
    uniform p;
    intermediate y[n];
    intermediate s[n];
    output z[n];
    output total[1];
    output total_x[1];
    output top[1];
    output low[1];
    node map(x: x, p: p, y: y) over n;
    node sum_y = reduce sum(y) -> total;
    node sum_x = reduce sum(x) -> total_x;
    node max_x = reduce max(x) -> top;
    node min_x = reduce min(x) -> low;
    node pre = scan exclusive sum(y) -> s;
    node after(s: s, z: z) over n;
});

both!(floats {
    kernel scale = wgsl {
        struct Q { a: f32, b: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<uniform> q: Q;
        @group(0) @binding(2) var<storage, read_write> y: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * q.a + q.b; }
        }
    };
    input x[n];
    uniform q;
    intermediate y[n];
    output hi[1];
    output lo[1];
    output run_max[n];
    output rows[4];
    node scale(x: x, q: q, y: y) over n;
    node h = reduce max(y) -> hi;
    node l = reduce min(x) -> lo;
    node r = scan inclusive max(x) -> run_max;
    node w = reduce min(x) over [4, n / 4] -> rows;
});

/// xorshift64*: the seeded source of every choice.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const FIXED: [usize; 7] = [1, 255, 256, 257, 4095, 4096, 4097];

fn sizes(rng: &mut Rng) -> Vec<usize> {
    let mut v = FIXED.to_vec();
    v.extend((0..5).map(|_| 1 + rng.below(200_000) as usize));
    v
}

fn map_cpu(op: u32, k: u32, v: u32) -> u32 {
    match op {
        0 => v.wrapping_mul(k),
        1 => v ^ k,
        2 => v.wrapping_add(k),
        _ => (v >> 3).wrapping_mul(v & 7),
    }
}

#[test]
fn integer_graphs_match_the_cpu_on_random_runs() {
    let _s = serial();
    let gpu = gpu();
    let f = ints::Fused::new(&gpu).unwrap();
    let u = ints::Unfused::new(&gpu).unwrap();
    let plan = f.describe().to_string();
    for part in ["__reads_map", "__writes_after", "__and_"] {
        assert!(plan.contains(part), "{part} in:\n{plan}");
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in sizes(&mut rng) {
        let (op, k) = (rng.below(4) as u32, rng.next() as u32 | 1);
        let x: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let a = f.run(&x[..], &ints::f::P { op, k }).unwrap();
        let b = u.run(&x[..], &ints::u::P { op, k }).unwrap();
        let y: Vec<u32> = x.iter().map(|&v| map_cpu(op, k, v)).collect();
        let mut acc = 0u32;
        let z: Vec<u32> = y
            .iter()
            .map(|&v| {
                let before = acc;
                acc = acc.wrapping_add(v);
                before.wrapping_mul(2_654_435_761).wrapping_add(1)
            })
            .collect();
        let what = format!("n = {n}, op {op}, k {k}");
        assert_eq!(a.total, [acc], "{what}: sum");
        assert_eq!(
            a.total_x,
            [x.iter().fold(0u32, |s, &v| s.wrapping_add(v))],
            "{what}: sum of x"
        );
        assert_eq!(a.total_x, b.total_x, "{what}");
        assert_eq!(a.top, [*x.iter().max().unwrap()], "{what}: max");
        assert_eq!(a.low, [*x.iter().min().unwrap()], "{what}: min");
        assert_eq!(a.z, z, "{what}: scan then map");
        assert_eq!(
            (&a.total, &a.top, &a.low, &a.z),
            (&b.total, &b.top, &b.low, &b.z),
            "{what}"
        );
    }
}

/// Max/min as the kernels define them: NaN wins, `+0` above `-0`.
fn fold(x: impl IntoIterator<Item = f32>, max: bool) -> f32 {
    let init = if max {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    };
    x.into_iter().fold(init, |a, b| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            let bits = if max {
                a.to_bits() & b.to_bits()
            } else {
                a.to_bits() | b.to_bits()
            };
            f32::from_bits(bits)
        } else if max {
            a.max(b)
        } else {
            a.min(b)
        }
    })
}

fn all_bits(hi: f32, lo: f32, run: &[f32], rows: &[f32]) -> Vec<u32> {
    [hi, lo]
        .iter()
        .chain(run)
        .chain(rows)
        .map(|v| v.to_bits())
        .collect()
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn float_graphs_match_the_cpu_with_nan_infinities_and_signed_zeros() {
    let _s = serial();
    let gpu = gpu();
    let f = floats::Fused::new(&gpu).unwrap();
    let u = floats::Unfused::new(&gpu).unwrap();
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0];
    for n in sizes(&mut rng) {
        let (qa, qb) = ((rng.below(9) as f32 - 4.0) * 0.5, rng.below(5) as f32 - 2.0);
        let mut x: Vec<f32> = (0..n)
            .map(|_| (rng.next() >> 40) as f32 / (1u64 << 20) as f32 - 8.0)
            .collect();
        // Some runs get no special value, others one or several.
        for _ in 0..rng.below(4) {
            let at = rng.below(n as u64) as usize;
            x[at] = specials[rng.below(5) as usize];
        }
        let a = f.run(&x[..], &floats::f::Q { a: qa, b: qb }).unwrap();
        let b = u.run(&x[..], &floats::u::Q { a: qa, b: qb }).unwrap();
        let what = format!("n = {n}, a = {qa}, b = {qb}");
        let y = x.iter().map(|&v| v * qa + qb);
        assert!(same(a.hi[0], fold(y, true)), "{what}: max {}", a.hi[0]);
        assert!(
            same(a.lo[0], fold(x.iter().copied(), false)),
            "{what}: min {}",
            a.lo[0]
        );
        let mut m = f32::NEG_INFINITY;
        for (i, &v) in x.iter().enumerate() {
            m = fold([m, v], true);
            assert!(same(a.run_max[i], m), "{what}: running max at {i}");
        }
        // `over [4, n / 4]`: ceil(n / 4) columns, the last rows partial.
        let cols = n.div_ceil(4);
        for r in 0..4 {
            let row = x[(r * cols).min(n)..((r + 1) * cols).min(n)]
                .iter()
                .copied();
            assert!(same(a.rows[r], fold(row, false)), "{what}: row {r}");
        }
        let fused = all_bits(a.hi[0], a.lo[0], &a.run_max, &a.rows);
        let unfused = all_bits(b.hi[0], b.lo[0], &b.run_max, &b.rows);
        assert_eq!(fused, unfused, "{what}: fused and unfused");
    }
}

#[test]
fn twenty_runs_give_the_same_bits_and_size_zero_gives_identities() {
    let _s = serial();
    let gpu = gpu();
    let f = ints::Fused::new(&gpu).unwrap();
    let p = ints::f::P {
        op: 0,
        k: 2_654_435_761,
    };
    let empty = f.run(&[][..], &p).expect("size 0");
    assert!(empty.z.is_empty());
    assert_eq!(
        (empty.total, empty.total_x, empty.top, empty.low),
        (vec![0], vec![0], vec![0], vec![u32::MAX])
    );
    let mut rng = Rng(42);
    let x: Vec<u32> = (0..300_007).map(|_| rng.next() as u32).collect();
    let first = f.run(&x[..], &p).unwrap();
    for _ in 0..19 {
        let again = f.run(&x[..], &p).unwrap();
        assert_eq!((&again.total, &again.z), (&first.total, &first.z));
    }
}

#[test]
fn a_scan_and_reductions_past_65535_workgroups() {
    let _s = serial();
    let gpu = gpu();
    let f = ints::Fused::new(&gpu).unwrap();
    let mut rng = Rng(7);
    for n in [65_535 * 256 - 1, 65_535 * 256 + 1] {
        let x: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let out = f.run(&x[..], &ints::f::P { op: 2, k: 5 }).unwrap();
        let mut acc = 0u32;
        for (i, &v) in x.iter().enumerate() {
            assert_eq!(
                out.z[i],
                acc.wrapping_mul(2_654_435_761).wrapping_add(1),
                "n = {n} at {i}"
            );
            acc = acc.wrapping_add(v.wrapping_add(5));
        }
        assert_eq!(out.total, [acc], "n = {n}");
        assert_eq!(out.top, [*x.iter().max().unwrap()], "n = {n}");
    }
}
