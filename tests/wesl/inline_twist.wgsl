// A file kernel that reaches `tests/wesl/twist.wesl` by an inline path
// (`super::twist::twist`), with no `import` line.
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&src) {
        dst[g.x] = super::twist::twist(src[g.x]);
    }
}
