// Arithmetic on a whole struct element instead of one of its members: the
// message names the struct as declared and the help points at a member
// (there is no conversion to suggest). Found by vyre-diff's generator.
use vyre_graph::graph;

graph! {
    pub struct Bins;

    kernel k = wgsl {
        struct Particle { mass: u32, charge: i32 }
        @group(0) @binding(0) var<storage, read> ps: array<Particle>;
        @group(0) @binding(1) var<storage, read_write> bins: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&bins) { bins[g.x] = ps[g.x] % 16u; }
        }
    };

    input ps[n];
    output bins[n];
    node k(ps: ps, bins: bins) over n;
}

fn main() {}
