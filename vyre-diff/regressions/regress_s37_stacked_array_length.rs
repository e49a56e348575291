#![allow(clippy::all, unused_parens, unused_variables, unused_mut)]
//! Case `s37/l0/v0.0/v0.0/p0/l1/v1.0/d0/v0.0/v0.0/v0.0/p0` of vyre-diff,
//! as its build script wrote it: seed 37 reduced by shrink.py. It returned
//! a wrong Ok before 1f9b1cd: `graph!` marked the graph stackable though its
//! kernel stores `arrayLength` as a value, so `run_batch` of three
//! instances of 65 stacked them and every element read 195 (3 x 65).
pub const NAME: &str = "s37/l0/v0.0/v0.0/p0/l1/v1.0/d0/v0.0/v0.0/v0.0/p0";
pub const SOURCE: &str = "pub struct Fused;\nkernel k0 = \"\n@group(0) @binding(0) var<storage, read> s0: array<u32>;\n@group(0) @binding(1) var<storage, read_write> d: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    let i = g.x;\n    if i < arrayLength(&d) {\n    d[i] = f32(arrayLength(&s0) & 255u);\n    }\n}\n\";\ninput x0[n];\noutput t1[n];\nnode k0(s0: x0, d: t1) over n;\n";
pub const LARGE: bool = false;
pub mod fused { vyre_graph::graph! {
pub struct Fused;
kernel k0 = "
@group(0) @binding(0) var<storage, read> s0: array<u32>;
@group(0) @binding(1) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&d) {
    d[i] = f32(arrayLength(&s0) & 255u);
    }
}
";
input x0[n];
output t1[n];
node k0(s0: x0, d: t1) over n;
} }
pub mod unfused { vyre_graph::graph! {
pub struct Unfused;
fuse off;
kernel k0 = "
@group(0) @binding(0) var<storage, read> s0: array<u32>;
@group(0) @binding(1) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&d) {
    d[i] = f32(arrayLength(&s0) & 255u);
    }
}
";
input x0[n];
output t1[n];
node k0(s0: x0, d: t1) over n;
} }
pub const INPUTS: &[crate::In] = &[crate::In::U32];
pub fn oracle(n: usize, inputs: &[Vec<u8>]) -> Vec<crate::Expected> {
    let mut x0: Vec<u32> = crate::vec_of(&inputs[0]);
    // node k0
    let t1: Vec<f32> = {
        let s0 = &x0;
        (0..n).map(|i| {
            (((s0.len() as u32) & 255) as f32)
        }).collect()
    };
    vec![crate::Expected::exact(&t1)]
}
pub fn typed(g: &fused::Fused, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, vyre_graph::BackendError> {
    let x0: Vec<u32> = crate::vec_of(&inputs[0]);
    let out = g.run(&x0[..])?;
    Ok(vec![crate::bytes_of(&out.t1)])
}
pub fn check(ctx: &mut crate::Ctx) {
    let case = crate::Case { name: NAME, source: SOURCE, inputs: INPUTS, large: LARGE, signed_rem: false, refuses_zero: false };
    let fused = match fused::Fused::new(ctx.gpu()) { Ok(g) => g, Err(e) => return ctx.failed_new(&case, "fused", &e) };
    let unfused = match unfused::Unfused::new(ctx.gpu()) { Ok(g) => g, Err(e) => return ctx.failed_new(&case, "unfused", &e) };
    ctx.check(&case, fused.graph(), unfused.graph(), &|i| typed(&fused, i), &oracle);
}
