@group(0) @binding(0) var<storage, read> data: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&data) {
        data[g.x] = 0u;
    }
}
