// A kernel that binds a multisampled texture, which no compute graph can
// fill.
use vyre_graph::graph;

graph! {
    pub struct Resolve;

    kernel resolve = "
        @group(0) @binding(0) var src: texture_multisampled_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            var sum = vec4<f32>(0.0);
            for (var s = 0; s < 4; s++) { sum += textureLoad(src, g.xy, s); }
            textureStore(dst, g.xy, sum * 0.25);
        }
    ";

    input texture src[n, n] rgba8unorm;
    output texture dst[n, n] rgba8unorm;

    node resolve(src: src, dst: dst) grid [n / 8, n / 8, 1];
}

fn main() {}
