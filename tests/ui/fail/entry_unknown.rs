// `entry` names a function the module does not have.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = file "../kernels/two_entries.wgsl" entry "third";

    input x[n];
    output y[n];

    node k(src: x, dst: y) over n;
}

fn main() {}
