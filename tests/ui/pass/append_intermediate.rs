// Device-only append buffers: `append intermediate name[CAP];` (with or
// without `grow`), in a loop that stops itself; a buffer may still be
// called `intermediate` (`append intermediate[n];` is read back).
use vyre_graph::graph;

graph! {
    pub struct Halve;

    kernel seed = wgsl {
        struct Items { count: atomic<u32>, items: array<u32> }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> next: Items;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) && x[g.x] > 1u {
                let slot = atomicAdd(&next.count, 1u);
                if slot < arrayLength(&next.items) { next.items[slot] = x[g.x]; }
            }
        }
    };
    kernel halve = wgsl {
        struct ItemsIn { count: u32, items: array<u32> }
        struct Items { count: atomic<u32>, items: array<u32> }
        @group(0) @binding(0) var<storage, read> cur: ItemsIn;
        @group(0) @binding(1) var<storage, read_write> next: Items;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < min(cur.count, arrayLength(&cur.items)) {
                let v = cur.items[g.x] / 2u;
                if v > 1u {
                    let slot = atomicAdd(&next.count, 1u);
                    if slot < arrayLength(&next.items) { next.items[slot] = v; }
                }
            }
        }
    };

    input x[n];
    append intermediate a[n];
    append intermediate b[n] grow;
    append intermediate[n];

    node seed(x: x, next: a) over n;
    repeat up to 32 as i until empty(ping(a, b)) {
        node halve(cur: ping(a, b), next: pong(a, b)) over count(ping(a, b));
    }
    node last = seed(x: x, next: intermediate) over n;
}

fn main() {
    let _ = |h: &Halve, x: &[u32]| -> Vec<u32> { h.run(x).unwrap().intermediate };
}
