// A kernel writes an `input` texture.
use vyre_graph::graph;

graph! {
    pub struct Paint;

    kernel paint = "
        @group(0) @binding(0) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, vec4<f32>(1.0));
        }
    ";

    input texture img[n, n] rgba8unorm;

    node paint(dst: img) grid [n / 8, n / 8, 1];
}

fn main() {}
