// A `texture_2d<u32>` bound to an rgba8unorm texture, which reads as f32.
use vyre_graph::graph;

graph! {
    pub struct Copy;

    kernel copy = "
        @group(0) @binding(0) var src: texture_2d<u32>;
        @group(0) @binding(1) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = textureLoad(src, vec2<u32>(g.x, 0u), 0).x; }
        }
    ";

    input texture src[n, 1] rgba8unorm;
    output out[n];

    node copy(src: src, out: out) over n;
}

fn main() {}
