// Two `@compute` functions and no `entry`: the macro cannot choose.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = file "../kernels/two_entries.wgsl";

    input x[n];
    output y[n];

    node k(src: x, dst: y) over n;
}

fn main() {}
