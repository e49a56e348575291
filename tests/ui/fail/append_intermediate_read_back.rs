// A device-only append buffer (`append intermediate`) is not among the
// outputs: reading it back does not compile.
use vyre_graph::graph;

graph! {
    pub struct Filter;

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
    kernel double = wgsl {
        struct HitsIn { count: u32, items: array<u32> }
        @group(0) @binding(0) var<storage, read> hits: HitsIn;
        @group(0) @binding(1) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < min(hits.count, arrayLength(&hits.items)) { out[g.x] = hits.items[g.x] * 2u; }
        }
    };

    input x[n];
    append intermediate hits[n];
    output doubled[n];

    node keep(x: x, hits: hits) over n;
    node double(hits: hits, out: doubled) over count(hits);
}

fn read(filter: &Filter, x: &[u32]) -> Vec<u32> {
    filter.run(x).unwrap().hits
}

fn main() {}
