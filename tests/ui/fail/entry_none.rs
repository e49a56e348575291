// A module without any `@compute` function.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @vertex
        fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
            return vec4<f32>(f32(i), 0.0, 0.0, 1.0);
        }
    };

    output y[n];

    node k(out: y) over n;
}

fn main() {}
