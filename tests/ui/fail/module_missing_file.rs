// An import of a module that is neither declared in the graph nor a file.
use vyre_graph::graph;

graph! {
    pub struct Missing;

    kernel k = wgsl {
        import package::shaders::noise::hash;
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
