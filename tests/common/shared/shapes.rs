//! `Shapes`: three nodes, two of which fuse, and its CPU reference; the
//! graph of the trace tests of both suites (`tests/runtime/trace.rs`,
//! `vyre-web/tests/browser/trace.rs`).
#![allow(dead_code)]

use vyre_graph::graph;

graph! {
    /// `y[i] = u[i] + u[i + 1]` with `u = (x + 1) * 2`: `inc` and `dbl`
    /// fuse; `pair` reads a neighbour, so it stays a node of its own.
    pub struct Shapes;

    kernel inc = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> t: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { t[g.x] = x[g.x] + 1u; }
        }
    };
    kernel dbl = wgsl {
        @group(0) @binding(0) var<storage, read> t: array<u32>;
        @group(0) @binding(1) var<storage, read_write> u: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&t) { u[g.x] = t[g.x] * 2u; }
        }
    };
    kernel pair = wgsl {
        @group(0) @binding(0) var<storage, read> u: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&u);
            if g.x < n { y[g.x] = u[g.x] + u[min(g.x + 1u, n - 1u)]; }
        }
    };

    input x[n];
    intermediate t[n];
    intermediate u[n];
    output y[n];

    node inc(x: x, t: t) over n;
    node dbl(t: t, u: u) over n;
    node pair(u: u, y: y) over n;
}

/// What `Shapes` computes, on the CPU.
pub fn shapes_cpu(x: &[u32]) -> Vec<u32> {
    let u: Vec<u32> = x
        .iter()
        .map(|v| v.wrapping_add(1).wrapping_mul(2))
        .collect();
    (0..u.len())
        .map(|i| u[i].wrapping_add(u[(i + 1).min(u.len() - 1)]))
        .collect()
}
