// A storage texture whose format differs between the kernel and the graph.
use vyre_graph::graph;

graph! {
    pub struct Fill;

    kernel fill = "
        @group(0) @binding(0) var dst: texture_storage_2d<rgba16float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, vec4<f32>(1.0));
        }
    ";

    output texture img[n, n] rgba8unorm;

    node fill(dst: img) grid [n / 8, n / 8, 1];
}

fn main() {}
