//! A kernel written as Rust tokens: comments (`//`, `///`) are dropped,
//! WGSL literals with suffixes and nested generics survive.

use vyre_graph::graph;

graph! {
    pub struct Tokens;

    kernel mix = wgsl {
        /// The source values.
        @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
        // The destination.
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        const MASK: u32 = 0xffu;
        @compute @workgroup_size(8, 8, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.y * 64u + g.x;
            if i >= arrayLength(&dst) { return; }
            var acc = 0u;
            acc += u32(src[i].x * 1.5f) & MASK;
            acc <<= 1u;
            acc >>= 1u;
            if acc > 0u && acc != 3u { dst[i] = acc; } else { dst[i] = u32(1e-3 * 0x1p3f); }
        }
    } entry "main";

    input x[n];
    output y[n];

    node mix(src: x, dst: y) grid [n / 4096, 64, 1];
}

fn _typed(g: &Tokens) -> Result<(), vyre_graph::BackendError> {
    let out = g.run(&[[1.0f32, 2.0, 3.0, 4.0]][..])?;
    let _: Vec<u32> = out.y;
    Ok(())
}

fn main() {
    assert_eq!(Tokens::SPEC.kernels[0].workgroup_size, [8, 8, 1]);
}
