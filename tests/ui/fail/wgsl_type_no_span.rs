// `f64` needs a device feature WebGPU's defaults leave out; naga gives the
// error no place, so it points at the global of that type.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read_write> dst: array<f64>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            if id.x < arrayLength(&dst) { dst[id.x] = 0.0; }
        }
    };

    output y[n];

    node k(dst: y) over n;
}

fn main() {}
