//! What grouping and building ask of a member node: its bindings with
//! their element-wise facts, its workgroup size, and which of the group's
//! buffers must stay in device memory.

use vyre_analysis::Access;

use super::binders::Binders;
use super::eligibility::KernelFacts;
use crate::model::{GraphAnalysis, NodeOut, ReflectedBinding};

/// WebGPU's default `max_storage_buffers_per_shader_stage`.
pub const MAX_STORAGE: usize = 8;

/// WebGPU's default `max_uniform_buffers_per_shader_stage`.
pub const MAX_UNIFORM: usize = 12;

/// One member binding: the node's `(group, binding, buffer)` and the
/// kernel's binding.
pub struct MemberBinding<'a> {
    /// The graph buffer it binds.
    pub buffer: usize,
    /// The kernel's binding.
    pub binding: &'a ReflectedBinding,
    /// Whether every access is at the invocation's own index.
    pub own_index: bool,
    /// Its `array<T>` type, when it is one.
    pub array_type: Option<&'a str>,
}

/// The facts of the declared kernels and each node's declared kernel:
/// what `build` reads a group's members from.
pub struct NodeFacts<'a> {
    pub facts: &'a [Option<KernelFacts>],
    pub node_kernels: &'a [usize],
}

pub fn facts_of<'a>(
    facts: &'a [Option<KernelFacts>],
    node_kernels: &[usize],
    node: usize,
) -> Option<&'a KernelFacts> {
    facts.get(*node_kernels.get(node)?)?.as_ref()
}

pub fn workgroup_size(a: &GraphAnalysis, node: &NodeOut) -> Option<[u32; 3]> {
    node.workgroup_size
        .or_else(|| a.kernels.get(node.kernel).map(|k| k.workgroup_size))
}

/// The bindings of node `i` with their facts.
pub fn member_bindings<'a>(
    a: &'a GraphAnalysis,
    facts: &'a [Option<KernelFacts>],
    nk: &[usize],
    i: usize,
) -> Option<Vec<MemberBinding<'a>>> {
    let node = a.nodes.get(i)?;
    let kernel = a.kernels.get(node.kernel)?;
    let ew = facts_of(facts, nk, i)?.elementwise.as_ref().ok()?;
    node.bindings
        .iter()
        .map(|&(group, binding, buffer)| {
            let b = kernel
                .bindings
                .iter()
                .find(|b| b.group == group && b.binding == binding)?;
            let storage = ew.storage.get(&b.name);
            Some(MemberBinding {
                buffer,
                binding: b,
                own_index: storage.is_some_and(|s| s.own_index),
                array_type: storage.and_then(|s| s.array_type.as_deref()),
            })
        })
        .collect()
}

/// Whether node `i`, outside `group`, binds `buffer`.
/// Whether written `buffer` must stay in memory whatever the group's kernel
/// looks like: it is not a plain intermediate, or a node outside `group`
/// binds it.
pub fn must_stay(a: &GraphAnalysis, binders: &Binders, group: &[usize], buffer: usize) -> bool {
    a.buffers
        .get(buffer)
        .is_none_or(|b| b.class != vyre_analysis::BufferClass::Intermediate || b.header.is_some())
        || binders.outside(group, buffer)
}

/// Whether `buffers` live in distinct device slots: inside a fused dispatch
/// the members' accesses interleave per element, so two of its buffers in
/// one slot would overwrite each other. A buffer kept in registers is never
/// allocated and so conflicts with nothing.
pub fn distinct_slots(a: &GraphAnalysis, buffers: &[usize]) -> bool {
    let mut buffers = buffers.to_vec();
    buffers.sort_unstable();
    buffers.dedup();
    let mut slots: Vec<usize> = buffers
        .iter()
        .filter_map(|&b| a.slots.get(b).copied())
        .collect();
    let count = buffers.len();
    slots.sort_unstable();
    slots.dedup();
    slots.len() == count
}

pub fn combine(x: Access, y: Access) -> Access {
    match (x.reads() || y.reads(), x.writes() || y.writes()) {
        (true, true) => Access::ReadWrite,
        (false, true) => Access::Write,
        _ => Access::Read,
    }
}
