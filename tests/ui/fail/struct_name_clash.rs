//! A WGSL struct named like the graph's own type.

use vyre_graph::graph;

graph! {
    pub struct Particle;

    kernel k = wgsl {
        struct Particle { pos: vec2<f32> }
        @group(0) @binding(0) var<storage, read_write> ps: array<Particle>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&ps) { ps[g.x].pos += vec2<f32>(1.0); }
        }
    };

    inout p[n];

    node k(ps: p) over n;
}

fn main() {}
