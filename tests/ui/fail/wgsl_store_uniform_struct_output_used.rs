// A store into a uniform struct: the WGSL error, and nothing else. The
// stub keeps the output's struct type (`Sample`, worked out on naga's
// thread as plain data), so user code reading it gets no second error.
use vyre_graph::graph;

graph! {
    pub struct Sampler;

    kernel k = wgsl {
        struct Params { scale: f32, offset: vec4<f32> }
        struct Sample { value: f32, index: u32 }
        @group(0) @binding(0) var<uniform> params: Params;
        @group(0) @binding(1) var<storage, read_write> out: array<Sample>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            params.scale = 2.0;
            if g.x < arrayLength(&out) { out[g.x] = Sample(params.scale, g.x); }
        }
    };

    uniform params;
    output out[n];

    node k(params: params, out: out) over n;
}

fn first(o: SamplerOutputs) -> Option<Sample> {
    o.out.first().copied()
}

fn main() {
    let _ = first;
}
