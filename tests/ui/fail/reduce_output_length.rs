// A whole-buffer reduction writes one value; its output is declared with the input's length.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output s[n];

    node total = reduce sum<f32>(x) -> s;
}

fn main() {}
