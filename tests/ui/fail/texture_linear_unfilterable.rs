// A linear sampler on an rgba32float texture, which WebGPU does not filter.
use vyre_graph::graph;

graph! {
    pub struct Soft;

    kernel soft = "
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        @group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = textureSampleLevel(src, s, vec2<f32>(0.5), 0.0); }
        }
    ";

    input texture img[16, 16] rgba32float;
    sampler lin = linear clamp;
    output out[n];

    node soft(src: img, s: lin, out: out) over n;
}

fn main() {}
