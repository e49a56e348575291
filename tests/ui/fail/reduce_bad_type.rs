// A reduction written with an element type it does not support.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output s[1];

    node total = reduce sum<bool>(x) -> s;
}

fn main() {}
