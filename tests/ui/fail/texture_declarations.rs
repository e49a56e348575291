// Texture and sampler declarations that do not parse: a misspelt format
// and an unknown filter (both reported).
use vyre_graph::graph;

graph! {
    pub struct Decls;

    kernel fill = "
        @group(0) @binding(0) var dst: texture_storage_2d<r32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, vec4<f32>(1.0));
        }
    ";

    output texture a[n, 4] rgba8unrom;
    output texture b[n, 4] r32float;
    sampler s = bilinear clamp;

    node fill(dst: b) grid [n / 8, 1, 1];
}

fn main() {}
