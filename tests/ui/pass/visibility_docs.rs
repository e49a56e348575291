//! `pub(crate)` visibility and doc comments; the expansion is documented
//! enough for `deny(missing_docs)`.
#![deny(missing_docs)]

mod inner {
    use vyre_graph::graph;

    graph! {
        /// Copies `x` into `y`.
        ///
        /// Several lines of docs are kept.
        #[must_use]
        pub(crate) struct Copier;

        /// Doc comments on items are accepted and ignored.
        kernel copy = wgsl {
            @group(0) @binding(0) var<storage, read> src: array<i32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<i32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&dst) { dst[g.x] = src[g.x]; }
            }
        };

        /// The input.
        input x[n];
        /// The output.
        output y[n];

        /// The only node.
        node copy(src: x, dst: y) over n;
    }
}

fn _typed(g: &inner::Copier) -> Result<Vec<i32>, vyre_graph::BackendError> {
    Ok(g.run(&[1i32, 2][..])?.y)
}

fn main() {
    assert_eq!(inner::Copier::SPEC.name, "Copier");
}
