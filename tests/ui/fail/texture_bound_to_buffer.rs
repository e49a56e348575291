// A graph texture bound to a storage buffer binding, and a buffer bound to a
// texture binding: one error each.
use vyre_graph::graph;

graph! {
    pub struct Mixed;

    kernel copy = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = textureLoad(src, vec2<u32>(g.x, 0u), 0); }
        }
    ";

    input x[n];
    output texture img[n, 1] rgba32float;

    node copy(src: x, out: img) over n;
}

fn main() {}
