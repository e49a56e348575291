// `entry` names a vertex shader.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @vertex
        fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
            return vec4<f32>(f32(i), 0.0, 0.0, 1.0);
        }
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = g.x; }
        }
    } entry "vs";

    output y[n];

    node k(out: y) over n;
}

fn main() {}
