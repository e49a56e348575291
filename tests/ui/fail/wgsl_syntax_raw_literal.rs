// A WGSL error on the first line of a raw string: the column counts from
// the literal's own column, past `r#"`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = r#"@group(0) @binding(0) var<storage, read_write> out: array<u32>
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    "#;

    output y[n];

    node k(out: y) over n;
}

fn main() {}
