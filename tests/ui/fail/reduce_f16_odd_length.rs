// A reduction over f16 whose source may have an odd length: WGSL would count
// the padding half-word of its last 4-byte word as one more element.
use vyre_graph::graph;

graph! {
    pub struct Broken;
    features [shader_f16];

    input x[n];
    output m[1];

    node top = reduce max<f16>(x) -> m;
}

fn main() {}
