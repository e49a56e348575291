// A reduction of a buffer of structs: only numbers can be summed.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel fill = wgsl {
        struct Particle { pos: vec2<f32>, mass: f32 }
        @group(0) @binding(0) var<storage, read_write> ps: array<Particle>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&ps) { ps[g.x].mass = 1.0; }
        }
    };

    intermediate particles[n];
    output total[1];

    node fill(ps: particles) over n;
    node mass = reduce sum(particles) -> total;
}

fn main() {}
