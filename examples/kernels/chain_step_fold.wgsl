// chain_step.wgsl written with the fold-safe index users write by hand
// (`g.x + g.y * nwg.x * 256u`, the entry point taking num_workgroups):
// graph! sees that it is the invocation's own index and fuses it like the
// `gid.x` spelling.
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x * 256u;
    if i < arrayLength(&src) {
        dst[i] = src[i] * 1664525u + 1013904223u;
    }
}
