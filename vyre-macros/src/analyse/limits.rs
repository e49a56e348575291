//! WebGPU's default limits (unless `limits native;`): node sizes and grid
//! dimensions, workgroup sizes, buffers and bindings per kernel; and the
//! workgroup size of every kernel, for the spec.

use crate::diag::Diagnostics;
use crate::model::{BindingKind, Extent, KernelDecl, KernelInterface, NodeDecl, NodeOut, SizeDecl};

/// WebGPU's default `maxComputeWorkgroupSizeX/Y/Z`.
const MAX_WORKGROUP_SIZE: [u32; 3] = [256, 256, 64];

/// WebGPU's default `maxComputeInvocationsPerWorkgroup`.
const MAX_INVOCATIONS: u64 = 256;

/// WebGPU's default `maxStorageBuffersPerShaderStage`.
const MAX_STORAGE_BUFFERS: usize = 8;

/// WebGPU's default `maxUniformBuffersPerShaderStage`.
const MAX_UNIFORM_BUFFERS: usize = 12;

/// WebGPU's default `maxBindGroups`.
const MAX_BIND_GROUPS: u32 = 4;

/// WebGPU's default `maxBindingsPerBindGroup`.
const MAX_BINDINGS_PER_GROUP: u32 = 1000;

/// Most nodes a graph may unroll to.
pub const MAX_NODES: u64 = 4096;

/// How to skip the WebGPU default limit checks, for messages.
pub const NATIVE_HINT: &str =
    "write `limits native;` in graph! to check against the device's own limits at run time instead";

/// WebGPU's default `maxComputeWorkgroupsPerDimension`.
const MAX_WORKGROUPS_PER_DIMENSION: u64 = 65_535;

/// A node size that is constant zero never runs, and a grid dimension that
/// is always over what a dispatch can count (or, without `limits native;`,
/// over the WebGPU default limit) always fails: both are compile errors.
pub fn check_node_size(decl: &NodeDecl, native: bool, diag: &mut Diagnostics) {
    let label = decl.label.as_ref().unwrap_or(&decl.kernel);
    match &decl.size {
        SizeDecl::Device(_) => {}
        SizeDecl::Over(e) => {
            if e.extent == Extent::constant(0) {
                diag.error(
                    e.span,
                    format!(
                        "node `{label}` would never run: this size is always 0 invocations; give it at least one (`over n`, `over 1`) or remove the node"
                    ),
                );
            }
        }
        SizeDecl::Grid(dims) => {
            for (e, axis) in dims.iter().zip(["x", "y", "z"]) {
                let extent = e.extent;
                // The smallest value over every `n` (sizes never shrink as
                // `n` grows).
                let least = extent.add;
                let (is, at_least) = if extent.depends_on_n() {
                    ("is at least", format!("{least} workgroups for every `n`"))
                } else {
                    ("is", format!("{least} workgroups"))
                };
                if extent == Extent::constant(0) {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}` would never run: grid dimension {axis} is always 0 workgroups; every dimension needs at least 1 (write `1` for a dimension the kernel does not use) or remove the node"
                        ),
                    );
                } else if least > u64::from(u32::MAX) {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}`: grid dimension {axis} {is} {at_least}, more than a dispatch can hold ({} per dimension, on any device); spread the work over the other dimensions",
                            u32::MAX
                        ),
                    );
                } else if !native && least > MAX_WORKGROUPS_PER_DIMENSION {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}`: grid dimension {axis} {is} {at_least}, over the WebGPU default limit maxComputeWorkgroupsPerDimension = {MAX_WORKGROUPS_PER_DIMENSION}; spread the work over the other dimensions, or {NATIVE_HINT}"
                        ),
                    );
                }
            }
        }
    }
}

/// Why a workgroup size is over WebGPU's default limits, if it is.
pub fn workgroup_limit_problem(size: [u32; 3]) -> Option<String> {
    let names = ["X", "Y", "Z"];
    for ((v, max), axis) in size.iter().zip(MAX_WORKGROUP_SIZE).zip(names) {
        if *v > max {
            return Some(format!(
                "exceeds WebGPU's default maxComputeWorkgroupSize{axis} = {max}"
            ));
        }
    }
    let total = size.iter().map(|&v| u64::from(v)).product::<u64>();
    if total > MAX_INVOCATIONS {
        return Some(format!(
            "has {total} invocations, over WebGPU's default maxComputeInvocationsPerWorkgroup = {MAX_INVOCATIONS}"
        ));
    }
    None
}

/// WebGPU's default limits of every kernel some node runs: storage and
/// uniform buffers per stage, bind groups and bindings, and (for kernels
/// some node runs with its default size) the workgroup size.
pub fn check_kernel_limits(
    kernels: &[Option<KernelInterface>],
    kernel_decls: &[KernelDecl],
    nodes: &[NodeOut],
    default_size_users: &[bool],
    diag: &mut Diagnostics,
) {
    for (i, k) in kernels.iter().enumerate() {
        let (Some(k), Some(decl)) = (k, kernel_decls.get(i)) else {
            continue;
        };
        let used = nodes.iter().any(|n| n.kernel == i);
        if !used {
            continue;
        }
        let storage = k
            .bindings
            .iter()
            .filter(|b| b.kind.is_storage_buffer())
            .count();
        let uniform = k
            .bindings
            .iter()
            .filter(|b| b.kind == BindingKind::Uniform)
            .count();
        // The first binding over the limit, where the kernel has it.
        let over = |uniforms: bool, max: usize| {
            k.bindings
                .iter()
                .filter(|b| {
                    if uniforms {
                        b.kind == BindingKind::Uniform
                    } else {
                        b.kind.is_storage_buffer()
                    }
                })
                .nth(max)
                .and_then(|b| k.sites.global(&b.name))
        };
        let at = |site: Option<&crate::model::Site>, message: String| match site {
            Some(site) => crate::diag::sites::error(site, &message),
            None => syn::Error::new(decl.name.span(), message),
        };
        if storage > MAX_STORAGE_BUFFERS {
            diag.push(at(
                over(false, MAX_STORAGE_BUFFERS),
                format!(
                    "kernel `{}` binds {storage} storage buffers, over WebGPU's default maxStorageBuffersPerShaderStage = {MAX_STORAGE_BUFFERS}\nhelp: use at most {MAX_STORAGE_BUFFERS} (merge buffers into one array), or {NATIVE_HINT}",
                    decl.name
                ),
            ));
        }
        if uniform > MAX_UNIFORM_BUFFERS {
            diag.push(at(
                over(true, MAX_UNIFORM_BUFFERS),
                format!(
                    "kernel `{}` binds {uniform} uniform buffers, over WebGPU's default maxUniformBuffersPerShaderStage = {MAX_UNIFORM_BUFFERS}\nhelp: use at most {MAX_UNIFORM_BUFFERS} (merge them into one struct), or {NATIVE_HINT}",
                    decl.name
                ),
            ));
        }
        if let Some(b) = k
            .bindings
            .iter()
            .find(|b| b.group >= MAX_BIND_GROUPS || b.binding >= MAX_BINDINGS_PER_GROUP)
        {
            diag.push(at(
                k.sites.global(&b.name),
                format!(
                    "kernel `{}` binds {} beyond WebGPU's default maxBindGroups = {MAX_BIND_GROUPS} and maxBindingsPerBindGroup = {MAX_BINDINGS_PER_GROUP}\nhelp: {NATIVE_HINT}",
                    decl.name,
                    b.describe()
                ),
            ));
        }
        if default_size_users.get(i).copied().unwrap_or(false)
            && let Ok(size) = k.workgroup_size
            && let Some(message) = workgroup_limit_problem(size)
        {
            diag.push(at(
                k.sites.workgroup_size.as_ref(),
                format!(
                    "kernel `{}`: workgroup size {size:?} {message}\nhelp: {NATIVE_HINT}",
                    decl.name
                ),
            ));
        }
    }
}

/// The workgroup size of every kernel that reflected, for the spec. Where
/// the defaults cannot give it, every node that runs the kernel carries its
/// own size and the kernel takes its first node's; a kernel no node runs
/// has nothing to take it from (an error, unless the graph is `incomplete`
/// already).
pub fn kernel_sizes(
    kernels: &[Option<KernelInterface>],
    kernel_decls: &[KernelDecl],
    nodes: &[NodeOut],
    incomplete: bool,
    diag: &mut Diagnostics,
) -> Vec<[u32; 3]> {
    let mut kernel_sizes: Vec<[u32; 3]> = Vec::new();
    for (i, (k, decl)) in kernels.iter().zip(kernel_decls).enumerate() {
        let Some(k) = k else { continue };
        let size = match &k.workgroup_size {
            Ok(size) => Some(*size),
            Err(message) => {
                let first = nodes
                    .iter()
                    .find(|n| n.kernel == i)
                    .and_then(|n| n.workgroup_size);
                if first.is_none() && !incomplete {
                    let why = match k.overrides.iter().find(|o| !o.has_init) {
                        Some(o) => format!(
                            "override `{}` has no default; give it one (`override {} = ...;`) or remove the kernel",
                            o.name, o.name
                        ),
                        None => {
                            format!("{message}; fix its overrides' defaults or remove the kernel")
                        }
                    };
                    diag.error(
                        decl.name.span(),
                        format!(
                            "kernel `{}`: no node runs it, so its workgroup size cannot be known at compile time: {why}",
                            decl.name
                        ),
                    );
                }
                first
            }
        };
        kernel_sizes.push(size.unwrap_or_default());
    }
    kernel_sizes
}
