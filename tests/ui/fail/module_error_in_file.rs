// A type error inside an imported file: the message names the file's
// line and column and shows the line; the error sits on the import.
use vyre_graph::graph;

graph! {
    pub struct Broken;

    kernel k = wgsl {
        import package::wesl::broken::brighten;
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = brighten(src[g.x]); }
        }
    };

    input x[n];
    output y[n];
    node k(src: x, dst: y) over n;
}

fn main() {}
