//! Append buffers and indirect dispatch (`tests/data_dependent/append.rs`):
//! a filter appends the even values of its input; a node over the count
//! (`over count(hits)`) and a node on a grid another node wrote from the
//! count (`grid indirect(args)`) consume them; over the capacity is
//! `AppendOverflow`, and the graph runs again. Items are compared with the
//! CPU as sets (their order is the atomics'), each consumer's result item by
//! item.

use crate::common::{assert_same, gpu};

use vyre_graph::{BackendError, DispatchConfig};
use wasm_bindgen_test::wasm_bindgen_test;

mod evens {
    use vyre_graph::graph;
    graph! {
        /// Keeps the even values of `x` (up to `n / 4`), then a node sized by
        /// the count writes `2 * item + 1` for each, and another, on the grid
        /// that `size` writes from the count, `3 * item`.
        pub struct Evens;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };
        kernel double = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let items = min(hits.count, arrayLength(&hits.items));
                if g.x < items { out[g.x] = hits.items[g.x] * 2u + 1u; }
            }
        };
        kernel size = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> args: array<u32>;
            @compute @workgroup_size(1)
            fn main() {
                let items = min(hits.count, arrayLength(&hits.items));
                args[0] = (items + 63u) / 64u;
                args[1] = 1u;
                args[2] = 1u;
            }
        };
        kernel triple = wgsl {
            struct HitsIn { count: u32, items: array<u32> }
            @group(0) @binding(0) var<storage, read> hits: HitsIn;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let items = min(hits.count, arrayLength(&hits.items));
                if g.x < items { out[g.x] = hits.items[g.x] * 3u; }
            }
        };

        input x[n];
        append hits[n / 4];
        intermediate args[3];
        output doubled[n / 4];
        output tripled[n / 4];

        node keep(x: x, hits: hits) over n;
        node double(hits: hits, out: doubled) over count(hits);
        node size(hits: hits, args: args) grid [1, 1, 1];
        node triple(hits: hits, out: tripled) grid indirect(args);
    }
}
use evens::Evens;

/// `n` values with exactly `even` even ones, spread out.
fn with_evens(n: usize, even: usize) -> Vec<u32> {
    let step = (n / even.max(1)).max(1);
    (0..n)
        .map(|i| {
            let wanted = even > 0 && i % step == 0 && i / step < even;
            (i as u32) * 2 + u32::from(!wanted)
        })
        .collect()
}

/// Runs `Evens` on `x`, checks it against the CPU, returns the item count.
async fn check(graph: &Evens, x: &[u32]) -> usize {
    let out = graph
        .run_async(&DispatchConfig::default(), x)
        .await
        .expect("run");
    let mut want: Vec<u32> = x.iter().copied().filter(|v| v % 2 == 0).collect();
    want.sort_unstable();
    let mut got = out.hits.clone();
    got.sort_unstable();
    assert_same(&got, &want, &format!("appended items, n = {}", x.len()));
    assert_eq!(out.doubled.len(), x.len().div_ceil(4));
    for (i, item) in out.hits.iter().enumerate() {
        assert_eq!(out.doubled[i], item * 2 + 1, "doubled[{i}] (over count)");
        assert_eq!(out.tripled[i], item * 3, "tripled[{i}] (grid indirect)");
    }
    out.hits.len()
}

#[wasm_bindgen_test]
async fn appends_drive_indirect_dispatches_over_zero_one_and_many_items() {
    let graph = Evens::new_async(&gpu().await).await.expect("graph");
    for (n, even) in [
        (4, 0),
        (4, 1),
        (64, 16),
        (1000, 250),
        (4096, 1000),
        (100_000, 25_000),
    ] {
        assert_eq!(check(&graph, &with_evens(n, even)).await, even, "n = {n}");
    }
}

#[wasm_bindgen_test]
async fn an_append_over_its_capacity_is_an_error_then_the_graph_runs_again() {
    let graph = Evens::new_async(&gpu().await).await.expect("graph");
    let n = 1000; // capacity 250
    let err = match graph
        .run_async(&DispatchConfig::default(), &with_evens(n, 251))
        .await
    {
        Ok(_) => panic!("one item over the capacity must be an error"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, BackendError::AppendOverflow { buffer, count: 251, capacity: 250, .. } if buffer == "hits"),
        "{err:?}"
    );
    assert!(err.to_string().contains("grow"), "the fix is named: {err}");
    assert_eq!(check(&graph, &with_evens(n, 100)).await, 100);
}
