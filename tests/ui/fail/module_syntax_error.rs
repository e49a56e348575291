// A syntax error in a kernel that imports: reported at the token, in WGSL words.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    module rng = wgsl {
        fn hash(x: u32) -> u32 { return x * 2654435761u; }
    };

    kernel k = wgsl {
        import package::rng::hash;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = hash(src[g.x]) 2u; }
        }
    };

    input x[n];
    output y[n];
    node k(src: x, dst: y) over n;
}

fn main() {}
