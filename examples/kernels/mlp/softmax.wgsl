// Row-wise softmax of [batch][CLASSES] logits, one invocation per row,
// shifted by the row's maximum for stability.

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> probs: array<f32>;

override CLASSES: u32 = 10u;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let row = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
    if row >= arrayLength(&logits) / CLASSES {
        return;
    }
    let base = row * CLASSES;
    var top = logits[base];
    for (var c = 1u; c < CLASSES; c++) {
        top = max(top, logits[base + c]);
    }
    var total = 0.0;
    for (var c = 0u; c < CLASSES; c++) {
        total += exp(logits[base + c] - top);
    }
    for (var c = 0u; c < CLASSES; c++) {
        probs[base + c] = exp(logits[base + c] - top) / total;
    }
}
