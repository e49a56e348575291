// An error in a directive that `@if` keeps (here an unknown extension):
// placed at the directive, the message naming its file, line and column.
use vyre_graph::graph;

graph! {
    pub struct Enabled;

    kernel k = "@if(true) enable foo;
        @group(0) @binding(0) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(1)
        fn main() { y[0] = 1u; }
    ";

    output y[n];
    node k(y: y) over n;
}

fn main() {}
