// A reduction over f64 in a graph that does not declare `features [shader_f64]`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output s[1];

    node total = reduce sum<f64>(x) -> s;
}

fn main() {}
