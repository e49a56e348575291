// Two compute entry points over the same bindings.
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn first(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] + 1u; }
}

@compute @workgroup_size(64)
fn second(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * 2u; }
}
