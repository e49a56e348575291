//! `over` with size arithmetic and `grid`; with no input of length `K * n`
//! the problem size `n` is `run`'s first argument.

use vyre_graph::graph;

graph! {
    pub struct Sizes;

    kernel fill = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    };
    kernel halve = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[2u * g.x]; }
        }
    };

    intermediate t[2 * n + 64];
    output half[n + 32];

    node fill(out: t) over (2 * n) + 64;
    node halve(src: t, dst: half) grid [n / 64 + 1, 1, 1];
}

fn _typed(g: &Sizes) -> Result<(), vyre_graph::BackendError> {
    let out = g.run(1024)?;
    let _: Vec<u32> = out.half;
    Ok(())
}

fn main() {}
