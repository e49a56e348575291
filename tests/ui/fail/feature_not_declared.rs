//! An `i64` kernel without `features [shader_int64];`.

use vyre_graph::graph;

graph! {
    pub struct Sums;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<i64>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = i64(g.x) - 5li; }
        }
    };

    output y[n];

    node k(out: y) over n;
}

fn main() {}
