// A reduction written with an element type it does not support, and an unknown operation.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output s[1];
    output p[n];

    node total = reduce sum<bool>(x) -> s;
    node prefix = scan inclusive mul<u32>(x) -> p;
}

fn main() {}
