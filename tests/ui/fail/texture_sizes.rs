// Texture sizes that cannot be: a height of 0 texels and a width over
// WebGPU's default maxTextureDimension2D (8192) without `limits native;`.
use vyre_graph::graph;

graph! {
    pub struct Sizes;

    kernel fill = "
        @group(0) @binding(0) var a: texture_storage_2d<r32float, write>;
        @group(0) @binding(1) var b: texture_storage_2d<r32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(a, g.xy, vec4<f32>(1.0));
            textureStore(b, g.xy, vec4<f32>(1.0));
        }
    ";

    output texture empty[n, 0] r32float;
    output texture wide[9000, 4] r32float;

    node fill(a: empty, b: wide) grid [n / 8, 1, 1];
}

fn main() {}
