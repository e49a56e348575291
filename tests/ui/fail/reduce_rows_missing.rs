// A segmented reduction over an extent without rows: `over [rows, cols]` takes two sizes.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    input x[n];
    output m[n / 64];

    node rowmax = reduce max<f32>(x) over [n] -> m;
}

fn main() {}
