// A store into a `var<storage, read>` buffer in a `file` kernel: one frame,
// at the `.wgsl` file's own line and column.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = file "../kernels/store_read_only.wgsl";

    inout v[n];

    node k(data: v) over n;
}

fn main() {}
