// One step of a salted chain: an LCG update plus a per-chain constant.
override SALT: u32 = 0u;

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

// `gid.x` alone: graph! keeps it linear on a folded grid (past 65,535
// workgroups), which makes the kernel fusable; the hand baselines stay
// below the fold.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&src) {
        dst[i] = src[i] * 1664525u + 1013904223u + SALT;
    }
}
