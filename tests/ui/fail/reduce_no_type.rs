// A reduction whose element type no kernel tells and the node does not
// write: one error, whose suggestion is the whole node with the type
// filled in; no cascade in the code that uses the graph.
use vyre_graph::graph;

graph! {
    pub struct Total;

    input x[n];
    output s[1];

    node total = reduce sum(x) -> s;
}

fn main() -> Result<(), vyre_graph::BackendError> {
    let gpu = vyre_graph::Gpu::new()?;
    let out = Total::new(&gpu)?.run(&[1.0f32, 2.0][..])?;
    let total: f32 = out.s[0];
    println!("{total}");
    Ok(())
}
