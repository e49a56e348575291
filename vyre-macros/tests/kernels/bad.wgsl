@group(0) @binding(0) var<storage, read_write> v: array<f32>;
@compute @workgroup_size(1)
fn main() {
    v[0] = 1.0
}
