//! `describe()` says what a plan really allocates: a fused group's
//! intermediates live in registers and are never allocated, and the
//! device slots it reports are the buffers a plan creates, as the
//! runtime's counters count them.

use crate::common;

use common::*;
use vyre_graph::{Description, Gpu, GpuCounters};

macro_rules! both {
    ($m:ident { $($body:tt)* }) => {
        #[allow(dead_code)]
        mod $m {
            use vyre_graph::graph;
            graph! { pub struct Fused; $($body)* }
            graph! { pub struct Unfused; fuse off; $($body)* }
        }
    };
}

both!(chain {
    // Three element-wise nodes: `graph!` fuses all three into one dispatch.
    kernel add = wgsl {
        override K: u32 = 1u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 3u + K; }
        }
    };
    input x[n];
    intermediate a[n];
    intermediate b[n];
    output y[n];
    node first = add(src: x, dst: a) over n;
    node second = add(src: a, dst: b) over n with { K = 2u };
    node third = add(src: b, dst: y) over n with { K = 5u };
});

/// What the first run at size `n` of a fresh plan did, and the bytes of
/// device buffers it left allocated (its cached plan).
fn first_run(gpu: &Gpu, run: impl FnOnce(&[u32]) -> Vec<u32>, n: usize) -> (GpuCounters, u64) {
    let x = data(n, n as u32);
    let before = gpu.counters();
    let y = run(&x);
    let after = gpu.counters();
    let spent = after.since(&before);
    let kept = after.live_buffer_bytes - before.live_buffer_bytes;
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            let v = v.wrapping_mul(3).wrapping_add(1);
            let v = v.wrapping_mul(3).wrapping_add(2);
            v.wrapping_mul(3).wrapping_add(5)
        })
        .collect();
    assert_same(&y, &want, "chain");
    (spent, kept)
}

/// The buffers and bytes a plan of size `n` of a graph `d` describes
/// creates, checked against the counters of its first runs at `n` and at
/// `2n`: one buffer per device slot (placeholders included), one readback
/// buffer per output and one uniform per grid-stride loop; the device
/// slots and the readback grow with `n`, the placeholders do not.
fn assert_allocates_as_described(
    d: &Description,
    gpu: &Gpu,
    run: &dyn Fn(&[u32]) -> Vec<u32>,
    n: usize,
) {
    let outputs = 1;
    let loops = d.grid_stride.iter().flatten().count() as u64;
    let small = first_run(gpu, run, n);
    let large = first_run(gpu, run, 2 * n);
    for (spent, _) in [&small, &large] {
        assert_eq!(
            spent.buffers_created,
            d.slot_count as u64 + outputs + loops,
            "buffers created by one plan\n{d}"
        );
    }
    // Every buffer of the graph is `[n] x 4 bytes`: what grows with `n` is
    // the device slots that are not placeholders, and the readback.
    let growing = (d.slot_count - d.placeholder_slots) as u64 + outputs;
    assert_eq!(
        large.1 - small.1,
        growing * 4 * n as u64,
        "bytes that grow with n\n{d}"
    );
}

#[test]
fn a_fused_graphs_description_agrees_with_what_its_plans_allocate() {
    let _serial = serial();
    let gpu = gpu();
    let fused = chain::Fused::new(&gpu).expect("fused");
    let d = fused.describe();
    assert_eq!(d.fused.len(), 1, "{d}");
    let text = d.to_string();
    assert!(
        text.starts_with(
            "graph Fused: 3 nodes, 3 levels, 2 buffers in 2 device slots, 2 more kept in registers by fused dispatches (not allocated; 2 unbound placeholder slots of 32 bytes stand in their place)\n"
        ),
        "{text}"
    );
    for name in ["a", "b"] {
        let line =
            format!("buffer `{name}` Intermediate [n] x 4 bytes, in registers (never allocated)");
        assert!(text.contains(&line), "`{line}` missing from:\n{text}");
    }
    assert!(
        text.contains("buffer `x` Input [n] x 4 bytes, slot 0"),
        "{text}"
    );
    let in_registers: Vec<&str> = d
        .buffers
        .iter()
        .filter(|b| b.in_registers)
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(in_registers, ["a", "b"]);
    assert_eq!((d.slot_count, d.placeholder_slots), (4, 2));
    assert_eq!(Description::PLACEHOLDER_BYTES, 32);
    assert_allocates_as_described(&d, &gpu, &|x| fused.run(x).expect("fused runs").y, 10_000);

    // The same graph unfused: every buffer in a device slot of its own.
    let unfused = chain::Unfused::new(&gpu).expect("unfused");
    let d = unfused.describe();
    assert!(
        d.to_string()
            .starts_with("graph Unfused: 3 nodes, 3 levels, 4 buffers in 4 device slots\n"),
        "{d}"
    );
    assert!(d.buffers.iter().all(|b| !b.in_registers), "{d}");
    assert_eq!(d.placeholder_slots, 0);
    assert_allocates_as_described(
        &d,
        &gpu,
        &|x| unfused.run(x).expect("unfused runs").y,
        10_000,
    );
}
