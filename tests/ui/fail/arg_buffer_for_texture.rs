// A resident buffer passed where a texture goes: one error naming the graph,
// the texture and what a run takes for it (texels or a GpuTextureHandle).
use vyre_graph::graph;

graph! {
    pub struct Invert;

    kernel invert = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x >= size.x || g.y >= size.y) { return; }
            let c = textureLoad(src, vec2<u32>(g.xy), 0);
            textureStore(dst, vec2<u32>(g.xy), vec4<f32>(1.0 - c.rgb, c.a));
        }
    ";

    input texture src[n, 8] rgba8unorm;
    output texture dst[n, 8] rgba8unorm;

    node invert(src: src, dst: dst) grid [n / 8, 1, 1];
}

fn _run(g: &Invert, pixels: &vyre_graph::GpuBufferHandle) -> Result<InvertOutputs, vyre_graph::BackendError> {
    g.run(pixels)
}

fn main() {}
