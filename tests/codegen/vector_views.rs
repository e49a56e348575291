//! Vector views: a kernel may bind a buffer of scalars as `array<vec4<T>>`
//! (or `vec2`) of the same scalar, beside kernels that bind it as
//! `array<T>`, even in the same node; the buffer keeps its scalar type. A
//! buffer shorter than one vector still binds (the plan's buffers are at
//! least 16 bytes). Results are checked against the CPU at lengths around
//! the vector width, then the same graph runs again after an error.

use crate::common;

use common::gpu;
use vyre_graph::{BackendError, GpuBufferHandle, graph};

graph! {
    pub struct SumByQuads;
    kernel quads = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;
        @group(0) @binding(2) var<storage, read_write> s: array<f32>;
        @compute @workgroup_size(1)
        fn main() {
            let n = arrayLength(&x);
            var acc = 0.0;
            for (var q = 0u; q < n / 4u; q++) {
                let v = x4[q];
                acc += (v.x + v.y) + (v.z + v.w);
            }
            for (var i = n / 4u * 4u; i < n; i++) { acc += x[i]; }
            s[0] = acc;
        }
    };
    kernel double = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<vec2<u32>>;
        @group(0) @binding(1) var<storage, read_write> y: array<vec2<u32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = x[g.x] * 2u; }
        }
    };
    kernel widen = wgsl {
        @group(0) @binding(0) var<storage, read> y: array<u32>;
        @group(0) @binding(1) var<storage, read_write> z: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&z) { z[g.x] = y[g.x] + 1u; }
        }
    };
    input x[n];
    input u[n];
    intermediate y[2 * n];
    output s[1];
    output z[2 * n];
    node quads(x: x, x4: x, s: s) grid [1, 1, 1];
    node double(x: u, y: y) over n;
    node widen(y: y, z: z) over 2 * n;
}

fn check(graph: &SumByQuads, n: usize) {
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 + 0.5).collect();
    let u: Vec<[u32; 2]> = (0..n as u32).map(|i| [i * 6 + 1, i * 6 + 4]).collect();
    let out = graph.run(&x, &u).expect("runs");
    let quads: f32 = x
        .chunks_exact(4)
        .map(|c| (c[0] + c[1]) + (c[2] + c[3]))
        .sum::<f32>();
    let want = x[n / 4 * 4..].iter().fold(quads, |a, &b| a + b);
    assert_eq!(out.s[0], want, "sum by quads at n = {n}");
    for (i, (&got, &v)) in out.z.iter().zip(u.iter().flatten()).enumerate() {
        assert_eq!(got, v * 2 + 1, "z[{i}] at n = {n}");
    }
}

#[test]
fn a_buffer_bound_as_scalars_and_as_vectors_is_one_buffer_of_scalars() {
    let gpu = gpu();
    let graph = SumByQuads::new(&gpu).expect("graph");
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 1001, 70_003] {
        check(&graph, n);
    }
}

#[test]
fn a_resident_buffer_shorter_than_a_vector_is_refused_then_the_graph_runs() {
    let gpu = gpu();
    let graph = SumByQuads::new(&gpu).expect("graph");
    // One f32 (4 bytes) as a resident input: the vec4 view needs 16 bytes.
    let short = GpuBufferHandle::from_slice(&gpu, &[1.0f32]).expect("handle");
    let u = [[5u32, 6]];
    let e = graph
        .run(&short, &u[..])
        .expect_err("a 4-byte resident input bound as vec4s is refused");
    assert!(
        matches!(&e, BackendError::InvalidHandle { reason, .. } if reason.contains("at least 16")),
        "unexpected error {e:?}: {e}"
    );
    check(&graph, 9);
}

graph! {
    /// Stores through a writable `vec4` view beside a writable scalar
    /// binding of the same output, the tail element by element: two
    /// writable bindings of one buffer are one use (wgpu allows it).
    pub struct StoreByQuads;
    kernel triple = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @group(0) @binding(2) var<storage, read_write> y4: array<vec4<u32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&x);
            let e = g.x * 4u;
            if e + 4u <= n {
                y4[g.x] = vec4<u32>(x[e], x[e + 1u], x[e + 2u], x[e + 3u]) * 3u;
            } else {
                for (var i = e; i < n; i++) { y[i] = x[i] * 3u; }
            }
        }
    };
    input x[n];
    output y[n];
    node triple(x: x, y: y, y4: y) over n / 4;
}

#[test]
fn a_buffer_written_as_scalars_and_as_vectors_is_written_once() {
    let graph = StoreByQuads::new(&gpu()).expect("graph");
    for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 1001, 70_003] {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let y = graph.run(&x).expect("runs").y;
        assert_eq!(y.len(), n);
        for (i, (&got, &v)) in y.iter().zip(&x).enumerate() {
            assert_eq!(got, v.wrapping_mul(3), "y[{i}] at n = {n}");
        }
    }
}
