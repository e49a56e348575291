// `until zero(flag)` where `flag` holds `f32`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel step = wgsl {
        @group(0) @binding(0) var<storage, read_write> v: array<f32>;
        @group(0) @binding(1) var<storage, read_write> flag: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&v) {
                v[g.x] = v[g.x] * 0.5;
                if v[g.x] > 1.0 { flag[0] = 1.0; }
            }
        }
    };

    inout v[n];
    intermediate flag[1];

    repeat up to 8 as i until zero(flag) {
        node step(v: v, flag: flag) over n;
    }
}

fn main() {}
