// A file kernel (for tests/ui/fail/module_wrong_import.rs) whose import
// misspells the item it then uses.
import super::rng::pcgg;

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&src) { dst[g.x] = pcg(src[g.x]); }
}
