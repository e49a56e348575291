// The add-back step of a multi-level scan: every item of block `b` (1,024
// items) gets the scanned total of the blocks before it, `offsets[b]`.

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read> offsets: array<u32>;

const WG: u32 = 256u;
const BLOCK: u32 = 1024u;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
    if i >= arrayLength(&data) {
        return;
    }
    data[i] += offsets[i / BLOCK];
}
