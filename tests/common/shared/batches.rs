//! `Chain` (two element-wise steps and an accumulator: stackable) and
//! `Evens` (an append output: not stackable), the graphs of the batch tests
//! of both suites (`tests/batches/batch.rs`,
//! `vyre-web/tests/browser/batches.rs`).

pub mod chain {
    use vyre_graph::graph;
    graph! {
        /// Two element-wise steps and an accumulator: stackable.
        pub struct Chain;

        kernel step = wgsl {
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let i = g.x;
                if i < arrayLength(&src) { dst[i] = src[i] * 1664525u + 1013904223u; }
            }
        };
        kernel acc = wgsl {
            @group(0) @binding(0) var<storage, read> a: array<u32>;
            @group(0) @binding(1) var<storage, read_write> z: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&a) { z[g.x] = z[g.x] ^ a[g.x]; }
            }
        };

        input x[n];
        inout z[n];
        intermediate t[n];
        output y[n];

        node first = step(src: x, dst: t) over n;
        node second = step(src: t, dst: y) over n;
        node mix = acc(a: y, z: z) over n;
    }
}

pub mod evens {
    use vyre_graph::graph;
    graph! {
        /// Keeps the even values of `x`: an append output, not stackable.
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

        input x[n];
        append hits[n];

        node keep(x: x, hits: hits) over n;
    }
}
pub use chain::Chain;
pub use evens::Evens;
