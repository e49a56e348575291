// An intermediate texture read by the node before the one that writes it.
use vyre_graph::graph;

graph! {
    pub struct Order;

    kernel copy = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0));
        }
    ";

    input texture a[n, n] rgba8unorm;
    intermediate texture t[n, n] rgba32float;
    output texture out[n, n] rgba32float;

    node second = copy(src: t, dst: out) grid [n / 8, n / 8, 1];
    node first = copy(src: a, dst: t) grid [n / 8, n / 8, 1];
}

fn main() {}
