// An empty invocation.
use vyre_graph::graph;

graph! {}

fn main() {}
