// `append input`: an append buffer is an output, or `append intermediate`.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel keep = wgsl {
        struct Hits { count: atomic<u32>, items: array<u32> }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> hits: Hits;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                let slot = atomicAdd(&hits.count, 1u);
                if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
            }
        }
    };

    input x[n];
    append input hits[n];

    node keep(x: x, hits: hits) over n;
}

fn main() {}
