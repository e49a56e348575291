// The fixes that the errors of `tests/ui/fail/scan_no_type.rs`,
// `scan_wrong_type.rs` and `reduce_no_type.rs` suggest, written exactly as
// suggested, with the code that uses the graphs: they compile.
use vyre_graph::graph;

graph! {
    pub struct Prefix;

    input u[n];
    output v[n];

    node pre = scan exclusive sum<f32>(u) -> v;
}

graph! {
    pub struct Rows;

    input u[n];
    output v[n];

    node pre = scan inclusive max<f32>(u) over [n / 4, 4] -> v;
}

graph! {
    pub struct Total;

    input x[n];
    output s[1];

    node total = reduce sum<f32>(x) -> s;
}

fn main() -> Result<(), vyre_graph::BackendError> {
    let gpu = vyre_graph::Gpu::new()?;
    let out = Prefix::new(&gpu)?.run(&[1.0f32, 2.0, 3.0][..])?;
    println!("{}", out.v[2]);
    let out = Rows::new(&gpu)?.run(&[1.0f32, 2.0, 3.0, 4.0][..])?;
    println!("{}", out.v[2]);
    let out = Total::new(&gpu)?.run(&[1.0f32, 2.0][..])?;
    let total: f32 = out.s[0];
    println!("{total}");
    Ok(())
}
