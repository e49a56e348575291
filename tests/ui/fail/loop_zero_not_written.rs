// `until zero(flag)` where no node of the body writes `flag`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
        }
    };

    input x[n];
    intermediate flag[1];
    output y[n];

    node init = copy(src: x, dst: flag) over 1;
    repeat up to 4 as i until zero(flag) {
        node copy(src: x, dst: y) over n;
    }
}

fn main() {}
