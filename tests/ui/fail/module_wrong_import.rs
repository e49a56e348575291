// An import that names nothing (`pcgg`) while the body calls the right
// name (`pcg`): one error, at the import, with its did-you-mean; none
// for the call.
use vyre_graph::graph;

graph! {
    pub struct WrongImport;

    module rng = wgsl {
        fn pcg(x: u32) -> u32 { return x * 747796405u + 2891336453u; }
    };

    kernel k = file "wesl/wrong_import.wgsl";

    input x[n];
    output y[n];
    node k(src: x, dst: y) over n;
}

fn main() {}
