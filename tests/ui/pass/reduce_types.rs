// Reductions and scans over the types that need a device feature, and a
// graph that declares `features [subgroups]`.
use vyre_graph::graph;

graph! {
    pub struct Wide;
    features [shader_f16, shader_int64, shader_f64, subgroups];

    input h[2 * n];
    input u[n];
    input i[n];
    input d[n];
    output hs[1];
    output um[1];
    output ip[n];
    output dm[n / 8];

    node a = reduce sum<f16>(h) -> hs;
    node b = reduce max<u64>(u) -> um;
    node c = scan exclusive sum<i64>(i) -> ip;
    node e = reduce min<f64>(d) over [n / 8, 8] -> dm;
}

fn main() {}
