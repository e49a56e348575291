// A bgra8unorm storage texture without `features [bgra8unorm_storage];`.
use vyre_graph::graph;

graph! {
    pub struct Swizzle;

    kernel swizzle = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<bgra8unorm, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0));
        }
    ";

    input texture src[n, n] rgba8unorm;
    output texture dst[n, n] bgra8unorm;

    node swizzle(src: src, dst: dst) grid [n / 8, n / 8, 1];
}

fn main() {}
