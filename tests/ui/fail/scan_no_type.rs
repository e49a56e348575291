// A scan whose element type no kernel tells and the node does not write:
// one error, whose suggestion is the whole node as written with the type
// filled in (following it compiles); no cascade in the code that uses the
// graph.
use vyre_graph::graph;

graph! {
    pub struct Prefix;

    input u[n];
    output v[n];

    node pre = scan exclusive sum(u) -> v;
}

fn main() -> Result<(), vyre_graph::BackendError> {
    let gpu = vyre_graph::Gpu::new()?;
    let out = Prefix::new(&gpu)?.run(&[1.0f32, 2.0, 3.0][..])?;
    println!("{}", out.v[2]);
    Ok(())
}
