//! The grid-stride entry point of a fused kernel: the same per-element
//! calls as the plain entry point, in a loop over the invocations the plain
//! grid would run, so that the runtime may launch a fixed number of
//! workgroups ("persistent" style) however large the problem is.
//!
//! A fused group is safe to loop: no barriers, atomics or workgroup memory,
//! and every invocation touches only its own element of what the group
//! writes (see [`super::eligibility`]), so running element `i` in any
//! invocation, in any order, gives the plain dispatch's result bit for bit.
//! What one invocation keeps between elements is reset: the group's
//! intermediates held in registers are set to zero (their value at the
//! start of a plain invocation) before each element. A member kernel that
//! declares private variables of its own gets no loop (they would carry
//! over from one element to the next).
//!
//! The loop's end is the plain grid's invocation count, which depends on
//! the problem size: the runtime writes it into a 16-byte uniform, `.x`, at
//! `@group(1) @binding(0)` (fused kernels bind group 0 only) once per launch
//! plan. An override would need a pipeline per size, and `arrayLength` of a
//! bound buffer is the extent only for some graphs.

/// The group and binding of the invocation count the loop runs to (as
/// `GRID_STRIDE_GROUP` in `vyre-graph/src/spec/node.rs` says at run time).
pub const GROUP: u32 = 1;

/// The loop entry point `{entry}_stride`, to append to the fused text
/// beside the plain entry point. `calls` are the members' calls on
/// `{base}gid` and the other positions of `builtins` (see `positions.rs`); `registers` the private intermediates (name, element type).
/// `None` when a member's own source declares something private.
pub fn entry(
    entry: &str,
    base: &str,
    wgx: u32,
    calls: &[String],
    builtins: &[naga::BuiltIn],
    registers: &[(String, String)],
    member_sources: &[&str],
) -> Option<(String, String)> {
    if member_sources.iter().any(|s| s.contains("private")) {
        return None;
    }
    let name = format!("{entry}_stride");
    let lets = super::positions::loop_lets(base, wgx, builtins);
    let resets: String = registers
        .iter()
        .map(|(r, ty)| format!("        {r} = {ty}();\n"))
        .collect();
    let text = format!(
        "\n// Added by graph!: the same calls as a grid-stride loop over the plain grid's\n\
         // invocations (`{base}extent.x`), for a launch of fewer workgroups.\n\
         @group({GROUP}) @binding(0) var<uniform> {base}extent: vec4<u32>;\n\
         @compute @workgroup_size({wgx})\n\
         fn {name}(@builtin(workgroup_id) {base}wg: vec3<u32>, @builtin(num_workgroups) {base}nwg: vec3<u32>, @builtin(local_invocation_id) {base}l: vec3<u32>) {{\n    \
         let {base}total = {base}extent.x;\n    \
         let {base}stride = {base}nwg.x * {base}nwg.y * {base}nwg.z * {wgx}u;\n    \
         var {base}i = ({base}wg.x + {base}nwg.x * ({base}wg.y + {base}nwg.y * {base}wg.z)) * {wgx}u + {base}l.x;\n    \
         loop {{\n        \
         if {base}i >= {base}total {{ break; }}\n\
         {resets}        \
         let {base}gid = vec3<u32>({base}i, 0u, 0u);\n\
         {lets}{}        \
         // No wrap past u32::MAX: stop when the next element is past the end.\n        \
         if {base}total - {base}i <= {base}stride {{ break; }}\n        \
         {base}i += {base}stride;\n    \
         }}\n\
         }}\n",
        calls.iter().map(|c| format!("    {c}")).collect::<String>()
    );
    Some((name, text))
}
