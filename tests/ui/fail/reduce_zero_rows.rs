// A segmented reduction whose extent has no rows: `over [0, n]` would reduce nothing.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output m[1];

    node rowsum = reduce sum<u32>(x) over [0, n] -> m;
}

fn main() {}
