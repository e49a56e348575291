// A scan written with an operation it does not have.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output p[n];

    node prefix = scan inclusive mul<u32>(x) -> p;
}

fn main() {}
