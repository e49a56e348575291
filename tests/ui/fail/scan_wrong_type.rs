// A scan written with an element type it does not support: one error,
// whose suggestion is the whole node as written with a supported type;
// no cascade in the code that uses the graph.
use vyre_graph::graph;

graph! {
    pub struct Prefix;

    input u[n];
    output v[n];

    node pre = scan inclusive max<bool>(u) over [n / 4, 4] -> v;
}

fn main() -> Result<(), vyre_graph::BackendError> {
    let gpu = vyre_graph::Gpu::new()?;
    let out = Prefix::new(&gpu)?.run(&[1.0f32, 2.0, 3.0, 4.0][..])?;
    println!("{}", out.v[2]);
    Ok(())
}
