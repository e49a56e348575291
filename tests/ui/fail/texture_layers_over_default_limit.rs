// A 2D array of 300 layers, over WebGPU's default maxTextureArrayLayers
// (256) without `limits native;`.
use vyre_graph::graph;

graph! {
    pub struct Stack;

    kernel fill = "
        @group(0) @binding(0) var dst: texture_storage_2d_array<r32float, write>;
        @compute @workgroup_size(8, 8, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, g.z, vec4<f32>(1.0));
        }
    ";

    output texture_2d_array layers[n, n, 300] r32float;

    node fill(dst: layers) grid [n / 8, n / 8, 300];
}

fn main() {}
