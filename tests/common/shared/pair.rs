//! `Pair`: two inputs of `n` elements, `y = x * 3 + z`, and its CPU
//! reference. Used by the error tests of both suites (a wrong input length,
//! a lost device) natively (`tests/errors/`) and in the browser
//! (`vyre-web/tests/browser/errors.rs`, `device_lost.rs`).
#![allow(dead_code)]

use vyre_graph::graph;

graph! {
    /// Two inputs of `n` elements: `y = x * 3 + z`.
    pub struct Pair;

    kernel mix = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read> z: array<u32>;
        @group(0) @binding(2) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * 3u + z[g.x]; }
        }
    };

    input x[n];
    input z[n];
    output y[n];

    node mix(x: x, z: z, y: y) over n;
}

/// What `Pair` computes, on the CPU.
pub fn pair_cpu(x: &[u32], z: &[u32]) -> Vec<u32> {
    x.iter()
        .zip(z)
        .map(|(x, z)| x.wrapping_mul(3).wrapping_add(*z))
        .collect()
}
