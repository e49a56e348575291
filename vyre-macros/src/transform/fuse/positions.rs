//! The positions a fused kernel hands its members: each member's entry
//! point, now a plain function, is called with one argument per builtin it
//! took, holding what the fold wrapper (`transform/fold.rs`) would have
//! passed it on the same grid, so every index it computes has the value it
//! has unfused (see `index.rs` for the table):
//!
//! | builtin | plain entry point | grid-stride loop (element `i`) |
//! |---|---|---|
//! | `global_invocation_id` | `(lin * W + l.x, 0, 0)` | `(i, 0, 0)` |
//! | `workgroup_id` | `(lin, 0, 0)` | `(i / W, 0, 0)` |
//! | `num_workgroups` | `(nwg.x * nwg.y * nwg.z, 1, 1)` | `(total / W, 1, 1)` |
//! | `local_invocation_id` | `(l.x, 0, 0)` | `(i % W, 0, 0)` |
//! | `local_invocation_index` | `l.x` | `i % W` |
//!
//! (`lin` the linear workgroup index of the folded grid, `total` the plain
//! grid's invocation count, a multiple of `W`.) A fused group's workgroup
//! size is `[W, 1, 1]`, so `l.y` and `l.z` are always 0: spelled as
//! constants, they let the shader compiler drop what a member multiplies by
//! them (the `g.y * nwg.x * W` of the fold-safe index costs nothing).

use naga::BuiltIn;

/// The name of the value builtin `b` is passed as.
fn name(base: &str, b: BuiltIn) -> Option<String> {
    let suffix = match b {
        BuiltIn::GlobalInvocationId => "gid",
        BuiltIn::WorkGroupId => "wid",
        BuiltIn::NumWorkGroups => "ngrid",
        BuiltIn::LocalInvocationId => "lid",
        BuiltIn::LocalInvocationIndex => "lidx",
        _ => return None,
    };
    Some(format!("{base}{suffix}"))
}

/// A member's call: `{entry_fn}(<one argument per builtin>);`.
pub fn call(entry_fn: &str, base: &str, builtins: &[BuiltIn]) -> Option<String> {
    let args = builtins
        .iter()
        .map(|&b| name(base, b))
        .collect::<Option<Vec<_>>>()?;
    Some(format!("    {entry_fn}({});\n", args.join(", ")))
}

/// The `let`s of the plain entry point for the builtins in `used` besides
/// `global_invocation_id` (which it always defines).
pub fn plain_lets(base: &str, used: &[BuiltIn]) -> String {
    let b = base;
    let value = |x: BuiltIn| match x {
        BuiltIn::WorkGroupId => Some(format!("vec3<u32>({b}lin, 0u, 0u)")),
        BuiltIn::NumWorkGroups => {
            Some(format!("vec3<u32>({b}nwg.x * {b}nwg.y * {b}nwg.z, 1u, 1u)"))
        }
        BuiltIn::LocalInvocationId => Some(format!("vec3<u32>({b}l.x, 0u, 0u)")),
        BuiltIn::LocalInvocationIndex => Some(format!("{b}l.x")),
        _ => None,
    };
    lets(base, used, value, "    ")
}

/// The `let`s of the loop body, element `{base}i` of `{base}total`, for
/// the builtins in `used` besides `global_invocation_id`.
pub fn loop_lets(base: &str, wgx: u32, used: &[BuiltIn]) -> String {
    let b = base;
    let value = |x: BuiltIn| match x {
        BuiltIn::WorkGroupId => Some(format!("vec3<u32>({b}i / {wgx}u, 0u, 0u)")),
        BuiltIn::NumWorkGroups => Some(format!("vec3<u32>({b}total / {wgx}u, 1u, 1u)")),
        BuiltIn::LocalInvocationId => Some(format!("vec3<u32>({b}i % {wgx}u, 0u, 0u)")),
        BuiltIn::LocalInvocationIndex => Some(format!("{b}i % {wgx}u")),
        _ => None,
    };
    lets(base, used, value, "        ")
}

fn lets(
    base: &str,
    used: &[BuiltIn],
    value: impl Fn(BuiltIn) -> Option<String>,
    indent: &str,
) -> String {
    let mut seen: Vec<BuiltIn> = Vec::new();
    let mut out = String::new();
    for &b in used {
        if seen.contains(&b) {
            continue;
        }
        seen.push(b);
        if let (Some(n), Some(v)) = (name(base, b), value(b)) {
            out.push_str(&format!("{indent}let {n} = {v};\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_pass_one_value_per_builtin_in_order() {
        let call = call(
            "s0_main",
            "v_",
            &[BuiltIn::NumWorkGroups, BuiltIn::GlobalInvocationId],
        );
        assert_eq!(call.as_deref(), Some("    s0_main(v_ngrid, v_gid);\n"));
        assert!(super::call("f", "v_", &[BuiltIn::SubgroupId]).is_none());
        let used = [
            BuiltIn::GlobalInvocationId,
            BuiltIn::WorkGroupId,
            BuiltIn::WorkGroupId,
            BuiltIn::LocalInvocationId,
        ];
        assert_eq!(
            plain_lets("v_", &used),
            "    let v_wid = vec3<u32>(v_lin, 0u, 0u);\n    let v_lid = vec3<u32>(v_l.x, 0u, 0u);\n"
        );
        assert_eq!(
            loop_lets("v_", 64, &used),
            "        let v_wid = vec3<u32>(v_i / 64u, 0u, 0u);\n        \
             let v_lid = vec3<u32>(v_i % 64u, 0u, 0u);\n"
        );
    }
}
