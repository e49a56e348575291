// A `file` kernel whose file does not exist.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = file "../kernels/no_such_kernel.wgsl";

    output y[n];

    node k(out: y) over n;
}

fn main() {}
