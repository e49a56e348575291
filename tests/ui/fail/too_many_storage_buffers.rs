// Nine storage buffers in one kernel; WebGPU's default limit is eight.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel sum = wgsl {
        @group(0) @binding(0) var<storage, read> a0: array<u32>;
        @group(0) @binding(1) var<storage, read> a1: array<u32>;
        @group(0) @binding(2) var<storage, read> a2: array<u32>;
        @group(0) @binding(3) var<storage, read> a3: array<u32>;
        @group(0) @binding(4) var<storage, read> a4: array<u32>;
        @group(0) @binding(5) var<storage, read> a5: array<u32>;
        @group(0) @binding(6) var<storage, read> a6: array<u32>;
        @group(0) @binding(7) var<storage, read> a7: array<u32>;
        @group(0) @binding(8) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) {
                out[g.x] = a0[g.x] + a1[g.x] + a2[g.x] + a3[g.x] + a4[g.x] + a5[g.x] + a6[g.x] + a7[g.x];
            }
        }
    };

    input a[n];
    output y[n];

    node sum(a0: a, a1: a, a2: a, a3: a, a4: a, a5: a, a6: a, a7: a, out: y) over n;
}

fn main() {}
