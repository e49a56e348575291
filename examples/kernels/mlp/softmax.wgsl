// The element-wise halves of a row-wise softmax of [batch][CLASSES] logits;
// the row maximum and the row sum are built-in reductions (`reduce max`,
// `reduce sum` over [n, CLASSES]) between them.

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> row: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

override CLASSES: u32 = 10u;

// out = exp(logits - max of the row): shifted for stability.
@compute @workgroup_size(64)
fn exp_shift(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&out) {
        out[i] = exp(logits[i] - row[i / CLASSES]);
    }
}

// out = exps / the row's sum (`logits` holds the exponentials here).
@compute @workgroup_size(64)
fn normalise(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&out) {
        out[i] = logits[i] / row[i / CLASSES];
    }
}
