// A graph texture declared 3D, bound by a kernel as a 2D array.
use vyre_graph::graph;

graph! {
    pub struct Slices;

    kernel fill = "
        @group(0) @binding(0) var dst: texture_storage_2d_array<r32float, write>;
        @compute @workgroup_size(8, 8, 1)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, g.z, vec4<f32>(1.0));
        }
    ";

    output texture_3d vol[n, n, 4] r32float;

    node fill(dst: vol) grid [n / 8, n / 8, 4];
}

fn main() {}
