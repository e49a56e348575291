@group(0) @binding(0) var<storage, read_write> v: array<u32>;

@compute @workgroup_size(32)
fn first(@builtin(global_invocation_id) g: vec3<u32>) {
    v[g.x] = v[g.x] + 1u;
}

@compute @workgroup_size(32)
fn second(@builtin(global_invocation_id) g: vec3<u32>) {
    v[g.x] = v[g.x] * 2u;
}

@vertex
fn vs() -> @builtin(position) vec4<f32> {
    return vec4<f32>(0.0);
}
