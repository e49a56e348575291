//! Kernels from `.wgsl` files, with and without `entry`.

use vyre_graph::graph;

graph! {
    pub struct Files;

    kernel add = file "../kernels/add.wgsl";
    kernel twice = file "../kernels/two_entries.wgsl" entry "second";

    input a[n];
    input b[n];
    output c[n];
    input keys[n];
    output d[n];

    node add(a: a, b: b, c: c) over n;
    node twice(src: keys, dst: d) over n;
}

fn _typed(g: &Files) -> Result<(), vyre_graph::BackendError> {
    let out = g.run(&[1.0f32][..], &[2.0f32][..], &[3u32][..])?;
    let _: (Vec<f32>, Vec<u32>) = (out.c, out.d);
    Ok(())
}

fn main() {
    // The chosen entry point, wrapped for folded grids (`over` node): the
    // pipeline runs `vyre_linear_second`, which calls `second`.
    let kernel = &Files::SPEC.kernels[1];
    assert_eq!(kernel.entry_point, "vyre_linear_second");
    assert!(kernel.source.contains("second(vec3<u32>(vyre_lin * u32((64))"));
}
