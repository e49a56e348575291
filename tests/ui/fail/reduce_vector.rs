// A reduction of a buffer of vectors: reduce each component in a kernel of your own, or reduce a buffer of scalars.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel fill = wgsl {
        @group(0) @binding(0) var<storage, read_write> v: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&v) { v[g.x] = vec4<f32>(1.0); }
        }
    };

    intermediate vs[n];
    output biggest[1];

    node fill(v: vs) over n;
    node top = reduce max(vs) -> biggest;
}

fn main() {}
