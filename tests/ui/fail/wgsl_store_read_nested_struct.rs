// A store into a nested struct member of a read-only binding, in a string
// literal: the error draws the line of the literal that holds the store.
use vyre_graph::graph;

graph! {
    pub struct Nested;

    kernel k = "
        struct Inner { a: vec2<f32>, n: u32 }
        struct Outer { inner: Inner, items: array<Inner, 2> }
        @group(0) @binding(0) var<storage, read> o: Outer;
        @compute @workgroup_size(1)
        fn main() {
            o.items[1].n = 7u;
        }
    ";

    input o[1];

    node k(o: o) over 1;
}

fn main() {}
