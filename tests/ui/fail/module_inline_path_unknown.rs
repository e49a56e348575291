// An inline path (no `import` line) to a module that does not exist: one
// error, at the path, with a did-you-mean.
use vyre_graph::graph;

graph! {
    pub struct InlineTypo;

    module rng = "fn hash(x: u32) -> u32 { return x * 3u; }";

    kernel k = wgsl {
        @group(0) @binding(0) var<storage, read> d: array<u32>;
        @group(0) @binding(1) var<storage, read_write> e: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&d) { e[g.x] = package::rgn::hash(d[g.x]); }
        }
    };

    input x[n];
    output y[n];
    node k(d: x, e: y) over n;
}

fn main() {}
