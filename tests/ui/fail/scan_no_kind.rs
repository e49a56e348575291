// A scan written without `inclusive` or `exclusive`: one error at the
// operation, offering both whole nodes (either compiles); the output is
// still typed, so the code that uses the graph does not cascade.
use vyre_graph::graph;

graph! {
    pub struct Prefix;

    input u[n];
    output v[n];

    node pre = scan sum<f32>(u) over [n / 4, 4] -> v;
}

fn main() -> Result<(), vyre_graph::BackendError> {
    let gpu = vyre_graph::Gpu::new()?;
    let out = Prefix::new(&gpu)?.run(&[1.0f32, 2.0, 3.0][..])?;
    println!("{}", out.v[2]);
    Ok(())
}
