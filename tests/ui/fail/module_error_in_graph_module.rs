// A type error inside a module declared in the graph: reported at the
// module's own tokens, with the import chain as a note.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    module rng = wgsl {
        fn hash(x: u32) -> u32 {
            let k: f32 = 1.5;
            return x * k;
        }
    };

    kernel k = wgsl {
        import package::rng::hash;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = hash(src[g.x]); }
        }
    };

    input x[n];
    output y[n];
    node k(src: x, dst: y) over n;
}

fn main() {}
