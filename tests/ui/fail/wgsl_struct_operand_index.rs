// A whole struct element where an index is computed: naga's validator
// reports the operation; the message names the struct as declared (not
// naga's `{unnamed struct}`) and the help points at a member.
use vyre_graph::graph;

graph! {
    pub struct Bins;

    kernel k = wgsl {
        struct Particle { mass: u32, charge: i32 }
        @group(0) @binding(0) var<storage, read> ps: array<Particle>;
        @group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&ps) { atomicAdd(&bins[(ps[g.x]) % 16u], 1u); }
        }
    };

    input ps[n];
    output bins[16];
    node k(ps: ps, bins: bins) over n;
}

fn main() {}
