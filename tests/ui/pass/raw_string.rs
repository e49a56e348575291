//! A kernel as a raw string literal (quotes inside need no escapes), with
//! an explicit `entry` among several functions.

use vyre_graph::graph;

graph! {
    pub struct Tally;

    kernel tally = r#"
        // "Quotes" and \backslashes\ are fine in a raw string.
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        fn helper(v: u32) -> u32 { return v + 1u; }
        @compute @workgroup_size(64)
        fn other(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = 0u; }
        }
        @compute @workgroup_size(64)
        fn count(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = helper(src[g.x]); }
        }
    "# entry "count";

    input x[n];
    output y[n];

    node tally(src: x, dst: y) over n;
}

fn main() {
    // The chosen entry point, wrapped for folded grids (`over` node): the
    // pipeline runs `vyre_linear_count`, which calls `count`.
    let kernel = &Tally::SPEC.kernels[0];
    assert_eq!(kernel.entry_point, "vyre_linear_count");
    assert!(kernel.source.contains("count(vec3<u32>(vyre_lin * u32((64))"));
}
