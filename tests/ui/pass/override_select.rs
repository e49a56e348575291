//! Workgroup sizes from `select` and arithmetic on other overrides, which
//! naga evaluates per node at compile time exactly as pipeline creation will.

use vyre_graph::graph;

graph! {
    pub struct Selected;

    kernel probe = wgsl {
        override BIG: bool = false;
        override A: u32 = 16u;
        override WG: u32 = select(A * 4u, A * 16u, BIG);
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(WG, A / 8u)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&out) { out[g.x] = WG; }
        }
    };

    output small[n];
    output big[n];

    node default_size = probe(out: small) over n;
    node big_size = probe(out: big) over n with { BIG = true, A = 8 };
}

fn main() {
    assert_eq!(Selected::SPEC.kernels[0].workgroup_size, [64, 2, 1]);
    assert_eq!(Selected::SPEC.nodes[0].workgroup_size, None);
    assert_eq!(Selected::SPEC.nodes[1].workgroup_size, Some([128, 1, 1]));
}
