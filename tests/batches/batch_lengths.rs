//! Batches of graphs whose kernels compute with `arrayLength`: stacked, a
//! buffer of `B` instances holds `B × n` elements, so such a graph must run
//! its instances as recorded copies (each seeing its own length). The three
//! graphs here once ran stacked and returned wrong results; each batch is
//! checked element by element against single runs and the CPU, at mixed
//! sizes, through `run_batch` (typed and untyped) and `run_many`.

use crate::common;

use common::{gpu, serial};
use vyre_graph::{DispatchConfig, Feed, Graph, Instance, Sink, graph};

mod graphs {
    use super::graph;

    graph! {
        /// `y = x + len` where `len = arrayLength(&x)`, named by a `let`
        /// that is also the bounds check.
        pub struct WithLen;
        kernel k = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let len = arrayLength(&x);
                if g.x < len { y[g.x] = x[g.x] + len; }
            }
        };
        input x[n];
        output y[n];
        node k(x: x, y: y) over n;
    }

    graph! {
        /// `y = x % arrayLength(&y)`.
        pub struct ModLen;
        kernel k = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) { y[g.x] = x[g.x] % arrayLength(&y); }
            }
        };
        input x[n];
        output y[n];
        node k(x: x, y: y) over n;
    }

    graph! {
        /// `t = 2x; y = t + arrayLength(&t)`, a chain that fuses.
        pub struct FusedLen;
        kernel double = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> t: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) { t[g.x] = 2u * x[g.x]; }
            }
        };
        kernel plus_len = wgsl {
            @group(0) @binding(0) var<storage, read> t: array<u32>;
            @group(0) @binding(1) var<storage, read_write> y: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&t) { y[g.x] = t[g.x] + arrayLength(&t); }
            }
        };
        input x[n];
        intermediate t[n];
        output y[n];
        node double(x: x, t: t) over n;
        node plus_len(t: t, y: y) over n;
    }
}
use graphs::{FusedLen, ModLen, WithLen};

/// Sizes of one batch: repeated sizes (which would stack), one past a
/// workgroup, and one of a single element.
const SIZES: [usize; 6] = [100, 100, 65, 1, 100, 300];

fn input(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed * 977) % 100_000)
        .collect()
}

fn check(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {}, want {}", got[i], want[i]);
    }
}

/// One instance per input, each writing its own output vector.
fn instances<'a>(xs: &'a [Vec<u32>], ys: &'a mut [Vec<u32>]) -> Vec<Instance<'a>> {
    xs.iter()
        .zip(ys.iter_mut())
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect()
}

/// Runs `SIZES` through the untyped `run_batch` and `run_many` of `graph`
/// and checks each instance against `cpu(x)`.
fn untyped(graph: &Graph, cpu: fn(&[u32]) -> Vec<u32>, what: &str) {
    let xs: Vec<Vec<u32>> = SIZES
        .iter()
        .enumerate()
        .map(|(i, &n)| input(n, i as u32))
        .collect();
    let mut ys: Vec<Vec<u32>> = SIZES.iter().map(|&n| vec![0; n]).collect();
    let mut batch = instances(&xs, &mut ys);
    let report = graph
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect("batch");
    assert_eq!(
        report.stacked, 0,
        "{what}: computes with a length, never stacked"
    );
    for r in &report.runs {
        r.as_ref().expect("instance");
    }
    drop(batch);
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        check(y, &cpu(x), &format!("{what}: run_batch instance {i}"));
    }
    let mut ys: Vec<Vec<u32>> = SIZES.iter().map(|&n| vec![0; n]).collect();
    let mut stream = instances(&xs, &mut ys);
    for r in graph.run_many(&DispatchConfig::default(), 3, &mut stream) {
        r.expect("stream run");
    }
    drop(stream);
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        check(y, &cpu(x), &format!("{what}: run_many instance {i}"));
    }
}

macro_rules! typed_against_single_runs {
    ($ty:ty, $cpu:expr, $what:literal) => {{
        let _serial = serial();
        let gpu = gpu();
        assert!(
            !<$ty>::SPEC.schedule.expect("schedule").stackable,
            "{}: must not be stackable",
            $what
        );
        let graph = <$ty>::new(&gpu).expect("graph");
        let xs: Vec<Vec<u32>> = SIZES
            .iter()
            .enumerate()
            .map(|(i, &n)| input(n, i as u32))
            .collect();
        let refs: Vec<&[u32]> = xs.iter().map(|x| &x[..]).collect();
        let batch = graph
            .run_batch(&DispatchConfig::default(), &refs)
            .expect("typed batch");
        for (i, (x, out)) in xs.iter().zip(&batch).enumerate() {
            let single = graph.run(&x[..]).expect("single run");
            check(&single.y, &$cpu(x), &format!("{}: run {i}", $what));
            check(&out.y, &single.y, &format!("{}: batch {i} vs run", $what));
        }
        untyped(graph.graph(), $cpu, $what);
    }};
}

#[test]
fn a_length_named_by_let_runs_each_instance_at_its_own_length() {
    typed_against_single_runs!(
        WithLen,
        |x: &[u32]| -> Vec<u32> { x.iter().map(|v| v + x.len() as u32).collect() },
        "WithLen"
    );
}

#[test]
fn a_length_as_a_modulus_runs_each_instance_at_its_own_length() {
    typed_against_single_runs!(
        ModLen,
        |x: &[u32]| -> Vec<u32> { x.iter().map(|v| v % x.len() as u32).collect() },
        "ModLen"
    );
}

#[test]
fn a_fused_chain_adding_a_length_runs_each_instance_at_its_own_length() {
    typed_against_single_runs!(
        FusedLen,
        |x: &[u32]| -> Vec<u32> { x.iter().map(|v| 2 * v + x.len() as u32).collect() },
        "FusedLen"
    );
}
