// Joins two buffers: a wrapping sum.
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

// `gid.x` alone: graph! keeps it linear on a folded grid (past 65,535
// workgroups), which makes the kernel fusable; the hand baselines stay
// below the fold.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&out) {
        out[i] = a[i] + b[i];
    }
}
