// A statement without its `;`: the error marks the end of that line,
// where the `;` goes, not the next line's first token.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel double = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let y = src[id.x] * 2.0
            if id.x < arrayLength(&dst) { dst[id.x] = y; }
        }
    };

    input x[n];
    output y[n];

    node double(src: x, dst: y) over n;
}

fn main() {}
