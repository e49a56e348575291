// A kernel that binds a depth texture, which no compute graph can produce.
use vyre_graph::graph;

graph! {
    pub struct Linearize;

    kernel linearize = "
        @group(0) @binding(0) var depth: texture_depth_2d;
        @group(0) @binding(1) var dst: texture_storage_2d<r32float, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let d = textureLoad(depth, g.xy, 0);
            textureStore(dst, g.xy, vec4<f32>(0.1 / (1.0 - d), 0.0, 0.0, 0.0));
        }
    ";

    input texture depth[n, n] r32float;
    output texture dst[n, n] r32float;

    node linearize(depth: depth, dst: dst) grid [n / 8, n / 8, 1];
}

fn main() {}
