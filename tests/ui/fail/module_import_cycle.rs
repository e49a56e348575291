// Two modules that import each other: an import cycle, named in the error.
use vyre_graph::graph;

graph! {
    pub struct Cycle;

    module a = wgsl {
        import package::b::g;
        fn f(x: u32) -> u32 { return g(x) + 1u; }
        fn h(x: u32) -> u32 { return x * 2u; }
    };
    module b = wgsl {
        import package::a::h;
        fn g(x: u32) -> u32 { return h(x); }
    };

    kernel k = wgsl {
        import package::a::f;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = f(src[g.x]); }
        }
    };

    input x[n];
    output y[n];
    node k(src: x, dst: y) over n;
}

fn main() {}
