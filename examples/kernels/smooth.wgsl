// y[i] = src[i] + src[i + 1] (the last element has no right neighbour).
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let n = arrayLength(&src);
    if g.x < n {
        var right = 0.0;
        if g.x + 1u < n {
            right = src[g.x + 1u];
        }
        dst[g.x] = src[g.x] + right;
    }
}
