// A WGSL syntax error in a `file` kernel: the path is underlined and the
// message names the file's line and column.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel double = file "../kernels/syntax_error.wgsl";

    input x[n];
    output y[n];

    node double(src: x, dst: y) over n;
}

fn main() {}
