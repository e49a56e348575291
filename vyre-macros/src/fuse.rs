//! Stage 7 (after `fold.rs`, consumed by `expand.rs`): vertical and
//! horizontal fusion of element-wise nodes.
//!
//! Each dependent dispatch costs a barrier and its recording (about 4 µs on
//! an H200, 20 to 50 µs on lavapipe). A run of consecutive element-wise
//! nodes can run as one dispatch whose kernel runs each node's code in turn
//! for one element, with the same result bit for bit.
//!
//! # The rules
//!
//! A node is a candidate when it is not marked `unfused`, runs `over E`, its
//! kernel is element-wise (see [`eligibility`]: only
//! `global_invocation_id`, no barriers, atomics, workgroup memory, ...) and
//! its workgroup size is `[x, 1, 1]`. A group is a maximal run of
//! consecutive candidates (program order is the order a run records) with:
//!
//! * the same `over` size and the same workgroup size;
//! * every buffer that a member binds `read_write` ("written in the group")
//!   accessed only at the invocation's own index by every member that
//!   binds it, declared by all of them as the same `array<T>` (`T` a 32-bit
//!   scalar or vector): invocation `i` then touches only element `i` of it,
//!   so running member after member per invocation reads exactly what the
//!   separate dispatches would. Buffers nobody in the group writes may be
//!   read at any index (they do not change during the group);
//! * no two of the buffers its kernel binds in memory sharing device memory
//!   (`vyre_analysis` slots); an intermediate kept in registers (see
//!   [`registers`]) is never allocated, so it may share a slot with
//!   anything. The slots stay those of the unfused nodes (the runtime checks
//!   the schedule against its own analysis of them, and runs the members'
//!   order exactly): a group whose in-memory buffers share one is cut short
//!   from its end until they do not;
//! * at most 8 storage and 12 uniform bindings (WebGPU's default limits).
//!
//! Written buffers are bound once (two bindings of one buffer with one of
//! them writable is a usage conflict within a dispatch); buffers only read
//! keep one binding per member. Overrides stay overrides, renamed per member
//! (the dispatch carries each member's values), so each member sees its own.
//!
//! The composed kernel is validated by naga again; a group whose kernel
//! fails (or whose text is not understood) stays unfused. Fusion never
//! causes an error. Each fused kernel also gets a grid-stride entry point
//! (see [`stride`]) when it validates with one.

pub mod codegen;
pub mod eligibility;
pub mod registers;
pub mod stride;

use std::collections::HashMap;

use vyre_analysis::Access;

use crate::analyse::{GraphAnalysis, KernelOut, NodeOut, SizeOut};
use crate::fold::Fold;
use crate::reflect::{BindingKind, ReflectedBinding};
use crate::validate;

pub use eligibility::KernelFacts;

/// WebGPU's default `max_storage_buffers_per_shader_stage`.
const MAX_STORAGE: usize = 8;
/// WebGPU's default `max_uniform_buffers_per_shader_stage`.
const MAX_UNIFORM: usize = 12;
/// The most nodes in one group: keeps each fused kernel (and its
/// compilation, here by naga and on the device) small; a longer chain
/// becomes several groups.
const MAX_GROUP: usize = 128;

/// A fused group, as the spec needs it.
pub struct FusedOut {
    /// Member nodes (consecutive indices into `GraphAnalysis::nodes`).
    pub nodes: Vec<usize>,
    /// The dispatch that replaces them (its kernel is the fused one).
    pub dispatch: NodeOut,
    /// The fused kernel's grid-stride entry point (see [`stride`]), if any.
    pub grid_stride_entry: Option<String>,
}

/// The facts of a validated module's entry point: the one named by `entry`,
/// else the only `@compute` one (`None` when there is no such one; reflect
/// reports that).
pub fn kernel_facts(
    module: &naga::Module,
    source: &str,
    entry: Option<String>,
) -> Option<KernelFacts> {
    let entry = match entry {
        Some(e) => e,
        None => {
            let mut compute = module
                .entry_points
                .iter()
                .filter(|ep| ep.stage == naga::ShaderStage::Compute);
            let only = compute.next()?;
            if compute.next().is_some() {
                return None;
            }
            only.name.clone()
        }
    };
    Some(eligibility::kernel_facts(module, source, &entry))
}

/// One member binding: the node's `(group, binding, buffer)` and the
/// kernel's binding.
struct MemberBinding<'a> {
    buffer: usize,
    binding: &'a ReflectedBinding,
    own_index: bool,
    array_type: Option<&'a str>,
}

/// Fuse `analysis`'s nodes (see the module docs). `facts[k]` belongs to
/// declared kernel `k`; `node_kernels[i]` is node `i`'s declared kernel
/// (before `fold.rs` may have moved it to a wrapped copy).
pub fn fuse(
    analysis: &mut GraphAnalysis,
    facts: &[Option<KernelFacts>],
    node_kernels: &[usize],
    caps: naga::valid::Capabilities,
) {
    let count = analysis.nodes.len();
    let mut groups: Vec<(Vec<usize>, Built)> = Vec::new();
    // naga's verdict per composed text: the groups of a long `repeat` are
    // often the same text.
    let mut verdicts: HashMap<String, bool> = seeded_verdicts();
    let mut i = 0;
    while i < count {
        if !candidate(analysis, facts, node_kernels, i) {
            i += 1;
            continue;
        }
        let mut group = vec![i];
        let mut state = GroupState::default();
        let first_ok = state.add(analysis, facts, node_kernels, i);
        let mut j = i + 1;
        while first_ok
            && j < count
            && group.len() < MAX_GROUP
            && candidate(analysis, facts, node_kernels, j)
            && same_launch(analysis, i, j)
        {
            let mut next = state.clone();
            if !next.add(analysis, facts, node_kernels, j) {
                break;
            }
            state = next;
            group.push(j);
            j += 1;
        }
        // Buffers that stay in memory must not share device memory; the
        // last members go until they do (a shorter group keeps more of its
        // buffers in memory, so this is checked from the longest down).
        while group.len() >= 2 && !memory_slots_distinct(analysis, facts, node_kernels, &group) {
            group.pop();
        }
        if group.len() >= 2 {
            let j = i + group.len();
            if let Some(built) = build(analysis, facts, node_kernels, &group, caps, &mut verdicts) {
                groups.push((group, built));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    for (nodes, built) in groups {
        let Built {
            kernel,
            mut dispatch,
            grid_stride_entry,
        } = built;
        dispatch.kernel = analysis.kernels.len();
        analysis.kernels.push(kernel);
        analysis.fused.push(FusedOut {
            nodes,
            dispatch,
            grid_stride_entry,
        });
    }
}

#[cfg(not(test))]
fn seeded_verdicts() -> HashMap<String, bool> {
    HashMap::new()
}

#[cfg(test)]
thread_local! {
    static SEEDED: std::cell::RefCell<HashMap<String, bool>> = std::cell::RefCell::default();
}

#[cfg(test)]
fn seeded_verdicts() -> HashMap<String, bool> {
    SEEDED.with(|s| s.borrow().clone())
}

/// Runs `f` with naga's verdicts on the given fused texts forced (tests of
/// the fallback).
#[cfg(test)]
pub fn with_verdicts<T>(verdicts: HashMap<String, bool>, f: impl FnOnce() -> T) -> T {
    SEEDED.with(|s| *s.borrow_mut() = verdicts);
    let out = f();
    SEEDED.with(|s| s.borrow_mut().clear());
    out
}

fn facts_of<'a>(
    facts: &'a [Option<KernelFacts>],
    node_kernels: &[usize],
    node: usize,
) -> Option<&'a KernelFacts> {
    facts.get(*node_kernels.get(node)?)?.as_ref()
}

fn workgroup_size(a: &GraphAnalysis, node: &NodeOut) -> Option<[u32; 3]> {
    node.workgroup_size
        .or_else(|| a.kernels.get(node.kernel).map(|k| k.workgroup_size))
}

fn candidate(a: &GraphAnalysis, facts: &[Option<KernelFacts>], nk: &[usize], i: usize) -> bool {
    let Some(node) = a.nodes.get(i) else {
        return false;
    };
    let elementwise = facts_of(facts, nk, i).is_some_and(|f| f.elementwise.is_ok());
    !node.unfused
        && matches!(node.size, SizeOut::Invocations(_))
        && elementwise
        && matches!(workgroup_size(a, node), Some([x, 1, 1]) if x > 0)
}

/// Nodes `i` and `j` launch the same invocations in the same workgroups.
fn same_launch(a: &GraphAnalysis, i: usize, j: usize) -> bool {
    match (a.nodes.get(i), a.nodes.get(j)) {
        (Some(x), Some(y)) => {
            let same_size = match (x.size, y.size) {
                (SizeOut::Invocations(p), SizeOut::Invocations(q)) => p == q,
                _ => false,
            };
            same_size && workgroup_size(a, x) == workgroup_size(a, y)
        }
        _ => false,
    }
}

/// The bindings of node `i` with their facts.
fn member_bindings<'a>(
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

/// The buffers written in the group (bound `read_write` by a member), when
/// the group obeys the rules of the module docs.
fn shared_buffers(
    a: &GraphAnalysis,
    facts: &[Option<KernelFacts>],
    nk: &[usize],
    group: &[usize],
) -> Option<Vec<(usize, String)>> {
    let first = a.nodes.get(*group.first()?)?;
    let members = group
        .iter()
        .map(|&i| member_bindings(a, facts, nk, i))
        .collect::<Option<Vec<_>>>()?;
    for &i in group {
        let node = a.nodes.get(i)?;
        let same_size = match (node.size, first.size) {
            (SizeOut::Invocations(x), SizeOut::Invocations(y)) => x == y,
            _ => false,
        };
        if !same_size || workgroup_size(a, node) != workgroup_size(a, first) {
            return None;
        }
    }
    let all = || members.iter().flatten();
    let mut written: Vec<usize> = all()
        .filter(|m| m.binding.kind == BindingKind::ReadWriteStorage)
        .map(|m| m.buffer)
        .collect();
    written.sort_unstable();
    written.dedup();
    let mut shared = Vec::new();
    for &buffer in &written {
        let mut ty: Option<&str> = None;
        for m in all().filter(|m| m.buffer == buffer) {
            let t = m.array_type?;
            if !m.own_index || ty.is_some_and(|u| u != t) {
                return None;
            }
            ty = Some(t);
        }
        shared.push((buffer, ty?.to_owned()));
    }
    // Binding limits of the fused kernel.
    let unshared = |kind: BindingKind| {
        all()
            .filter(|m| m.binding.kind == kind && !written.contains(&m.buffer))
            .count()
    };
    let storage = shared.len() + unshared(BindingKind::ReadOnlyStorage);
    if storage > MAX_STORAGE || unshared(BindingKind::Uniform) > MAX_UNIFORM {
        return None;
    }
    Some(shared)
}

/// Whether node `i`, outside `group`, binds `buffer`.
fn bound_outside(a: &GraphAnalysis, group: &[usize], buffer: usize) -> bool {
    a.nodes
        .iter()
        .enumerate()
        .any(|(i, n)| !group.contains(&i) && n.bindings.iter().any(|&(_, _, used)| used == buffer))
}

/// Whether written `buffer` must stay in memory whatever the group's kernel
/// looks like: it is not a plain intermediate, or a node outside `group`
/// binds it.
fn must_stay(a: &GraphAnalysis, group: &[usize], buffer: usize) -> bool {
    a.buffers
        .get(buffer)
        .is_none_or(|b| b.class != vyre_analysis::BufferClass::Intermediate || b.header.is_some())
        || bound_outside(a, group, buffer)
}

/// The buffers of `group` that its fused kernel will (as far as can be told
/// before composing it) bind in memory: every buffer no member writes, and
/// every written one that [`must_stay`] or has no same-length buffer in
/// memory whose length stands in for its own (see [`private_stand_in`]).
fn memory_buffers(
    a: &GraphAnalysis,
    facts: &[Option<KernelFacts>],
    nk: &[usize],
    group: &[usize],
) -> Option<Vec<usize>> {
    let members = group
        .iter()
        .map(|&i| member_bindings(a, facts, nk, i))
        .collect::<Option<Vec<_>>>()?;
    let all = || members.iter().flatten();
    let written =
        |b: usize| all().any(|m| m.buffer == b && m.binding.kind == BindingKind::ReadWriteStorage);
    let mut buffers: Vec<usize> = all().map(|m| m.buffer).collect();
    buffers.sort_unstable();
    buffers.dedup();
    let len = |b: usize| a.buffers.get(b).map(|x| &x.len);
    let stays = |b: usize| !written(b) || must_stay(a, group, b);
    let stand_in = |b: usize| {
        buffers.iter().any(|&o| {
            o != b
                && len(o) == len(b)
                && stays(o)
                && all().any(|m| m.buffer == o && m.binding.kind != BindingKind::Uniform)
        })
    };
    Some(
        buffers
            .iter()
            .copied()
            .filter(|&b| stays(b) || !stand_in(b))
            .collect(),
    )
}

/// Whether `buffers` live in distinct device slots: inside a fused dispatch
/// the members' accesses interleave per element, so two of its buffers in
/// one slot would overwrite each other. A buffer kept in registers is never
/// allocated and so conflicts with nothing.
fn distinct_slots(a: &GraphAnalysis, buffers: &[usize]) -> bool {
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

/// [`distinct_slots`] of the buffers `group` keeps in memory.
fn memory_slots_distinct(
    a: &GraphAnalysis,
    facts: &[Option<KernelFacts>],
    nk: &[usize],
    group: &[usize],
) -> bool {
    memory_buffers(a, facts, nk, group).is_some_and(|buffers| distinct_slots(a, &buffers))
}

/// What a growing group knows of each of its buffers, so that adding a
/// node costs only that node's bindings (a `repeat` may unroll thousands).
#[derive(Clone, Default)]
struct GroupState<'a> {
    /// By buffer: bound `read_write` by a member; every binding own-index
    /// with this one array type (`None`: not so); read-only storage and
    /// uniform bindings.
    buffers: HashMap<usize, BufferState<'a>>,
}

#[derive(Clone)]
struct BufferState<'a> {
    written: bool,
    shareable: Option<&'a str>,
    read_only: usize,
    uniform: usize,
}

impl<'a> GroupState<'a> {
    /// Add node `i`; `false` when the group would break a rule.
    fn add(
        &mut self,
        a: &'a GraphAnalysis,
        facts: &'a [Option<KernelFacts>],
        nk: &[usize],
        i: usize,
    ) -> bool {
        let Some(members) = member_bindings(a, facts, nk, i) else {
            return false;
        };
        for m in members {
            let fresh = BufferState {
                written: false,
                shareable: m.array_type,
                read_only: 0,
                uniform: 0,
            };
            let b = self.buffers.entry(m.buffer).or_insert(fresh);
            b.written |= m.binding.kind == BindingKind::ReadWriteStorage;
            if !m.own_index || m.array_type != b.shareable {
                b.shareable = None;
            }
            match m.binding.kind {
                BindingKind::ReadOnlyStorage => b.read_only += 1,
                BindingKind::Uniform => b.uniform += 1,
                _ => {}
            }
        }
        self.valid(a)
    }

    fn valid(&self, a: &GraphAnalysis) -> bool {
        let mut storage = 0;
        let mut uniform = 0;
        for (&buffer, b) in &self.buffers {
            if b.written {
                if b.shareable.is_none() {
                    return false;
                }
                storage += 1;
            } else {
                storage += b.read_only;
            }
            uniform += b.uniform;
            if a.slots.get(buffer).is_none() {
                return false;
            }
        }
        storage <= MAX_STORAGE && uniform <= MAX_UNIFORM
    }
}

fn combine(x: Access, y: Access) -> Access {
    match (x.reads() || y.reads(), x.writes() || y.writes()) {
        (true, true) => Access::ReadWrite,
        (false, true) => Access::Write,
        _ => Access::Read,
    }
}

/// A group's fused kernel, its dispatch and its loop entry point.
struct Built {
    kernel: KernelOut,
    dispatch: NodeOut,
    grid_stride_entry: Option<String>,
}

/// The fused kernel and its dispatch, when the text composes and naga
/// validates it.
fn build(
    a: &GraphAnalysis,
    facts: &[Option<KernelFacts>],
    nk: &[usize],
    group: &[usize],
    caps: naga::valid::Capabilities,
    verdicts: &mut HashMap<String, bool>,
) -> Option<Built> {
    let shared = shared_buffers(a, facts, nk, group)?;
    let first = a.nodes.get(*group.first()?)?;
    let last = a.nodes.get(*group.last()?)?;
    let [wgx, _, _] = workgroup_size(a, first)?;
    let all_sources: String = group
        .iter()
        .filter_map(|&i| facts_of(facts, nk, i).map(|f| f.source.as_str()))
        .collect();
    let base = crate::fold::fresh_prefix(&all_sources)?;
    let shared_name = |buffer: usize| format!("{base}b{buffer}");

    let mut text = format!(
        "// Fused by graph!: nodes `{}` to `{}` run as one dispatch. Each node's kernel\n\
         // follows, its names prefixed; buffers the group writes are bound once.\n",
        first.label, last.label
    );
    let mut bindings: Vec<(u32, u32, usize)> = Vec::new();
    let mut reflected: Vec<ReflectedBinding> = Vec::new();
    for (k, (buffer, ty)) in shared.iter().enumerate() {
        let k = u32::try_from(k).ok()?;
        text.push_str(&format!(
            "@group(0) @binding({k}) var<storage, read_write> {}: {ty};\n",
            shared_name(*buffer)
        ));
        bindings.push((0, k, *buffer));
        let mut access: Option<Access> = None;
        let mut template: Option<&ReflectedBinding> = None;
        for &i in group {
            for m in member_bindings(a, facts, nk, i)?
                .into_iter()
                .filter(|m| m.buffer == *buffer)
            {
                access = Some(access.map_or(m.binding.access, |x| combine(x, m.binding.access)));
                if m.binding.kind == BindingKind::ReadWriteStorage {
                    template.get_or_insert(m.binding);
                }
            }
        }
        reflected.push(ReflectedBinding {
            name: shared_name(*buffer),
            group: 0,
            binding: k,
            kind: BindingKind::ReadWriteStorage,
            access: access?,
            ..template?.clone()
        });
    }
    let mut next_binding = u32::try_from(shared.len()).ok()?;
    let mut calls = Vec::new();
    let mut overrides = Vec::new();
    // Read-only storage arrays of the members, by name in the fused text:
    // their lengths can stand in for a buffer kept in registers.
    let mut stand_ins: Vec<(usize, String)> = Vec::new();
    for (k, &i) in group.iter().enumerate() {
        let node = a.nodes.get(i)?;
        let f = facts_of(facts, nk, i)?;
        let prefix = format!("{base}s{k}_");
        let members = member_bindings(a, facts, nk, i)?;
        let shared_names: HashMap<String, String> = members
            .iter()
            .filter(|m| shared.iter().any(|(b, _)| *b == m.buffer))
            .map(|m| (m.binding.name.clone(), shared_name(m.buffer)))
            .collect();
        let stage = codegen::stage(
            &f.source,
            &f.entry,
            &prefix,
            &shared_names,
            &mut next_binding,
        )?;
        text.push_str(&format!(
            "\n// --- node `{}` (kernel `{}`) ---\n{}\n",
            node.label,
            a.kernels.get(node.kernel)?.label,
            stage.text
        ));
        for m in members
            .iter()
            .filter(|m| !shared.iter().any(|(b, _)| *b == m.buffer))
        {
            if m.binding.kind == BindingKind::ReadOnlyStorage
                && m.binding.wgsl_type.trim_start().starts_with("array<")
            {
                stand_ins.push((m.buffer, format!("{prefix}{}", m.binding.name)));
            }
            let old = (m.binding.group, m.binding.binding);
            let &(_, new) = stage.rebound.iter().find(|(o, _)| *o == old)?;
            bindings.push((0, new, m.buffer));
            reflected.push(ReflectedBinding {
                name: format!("{prefix}{}", m.binding.name),
                group: 0,
                binding: new,
                ..m.binding.clone()
            });
        }
        overrides.extend(
            node.overrides
                .iter()
                .map(|(key, value)| (format!("{prefix}{key}"), *value)),
        );
        calls.push(format!("    {}({base}gid);\n", stage.entry_fn));
    }
    let entry_point = format!("{base}fused");
    // Intermediates that no node outside the group binds live in registers
    // (see `registers`): their declarations become private values and their
    // bindings go; when the result does not validate, they stay in memory.
    let in_memory = (text.clone(), bindings.clone(), reflected.clone());
    let mut registers: Vec<(String, String)> = Vec::new();
    for (k, (buffer, ty)) in shared.iter().enumerate() {
        let shared_names: Vec<(usize, String)> =
            shared.iter().map(|(b, _)| (*b, shared_name(*b))).collect();
        let Some(stand_in) = private_stand_in(a, group, &shared_names, *buffer, &stand_ins) else {
            continue;
        };
        let Some(elem) = registers::element_type(ty) else {
            continue;
        };
        let name = shared_name(*buffer);
        let declaration =
            format!("@group(0) @binding({k}) var<storage, read_write> {name}: {ty};\n");
        let private = format!("var<private> {name}: {elem};\n");
        let Some(rewritten) =
            registers::rewrite(&text.replacen(&declaration, &private, 1), &name, &stand_in)
        else {
            continue;
        };
        text = rewritten;
        registers.push((name, elem.to_owned()));
        let k = u32::try_from(k).ok()?;
        bindings.retain(|&(g, b, _)| (g, b) != (0, k));
        reflected.retain(|r| (r.group, r.binding) != (0, k));
    }
    let member_sources: Vec<&str> = group
        .iter()
        .filter_map(|&i| facts_of(facts, nk, i).map(|f| f.source.as_str()))
        .collect();
    // Each of: with the intermediates in registers, then in memory; with
    // the loop entry point, then without.
    let mut attempts = Vec::new();
    for (text, bindings, reflected, registers) in [
        (text, bindings, reflected, registers),
        (in_memory.0, in_memory.1, in_memory.2, Vec::new()),
    ] {
        let looped = stride::entry(
            &entry_point,
            &base,
            wgx,
            &calls,
            &registers,
            &member_sources,
        );
        if let Some((name, loop_text)) = looped {
            attempts.push((
                format!("{text}{loop_text}"),
                bindings.clone(),
                reflected.clone(),
                Some(name),
            ));
        }
        attempts.push((text, bindings, reflected, None));
    }
    let (text, bindings, reflected, grid_stride_entry) =
        attempts
            .into_iter()
            .find_map(|(text, bindings, reflected, looped)| {
                let text =
                    compose_and_check(a, &text, &entry_point, &calls, wgx, &base, caps, verdicts)?;
                Some((text, bindings, reflected, looped))
            })?;
    // What stays bound must be in distinct memory (the prediction above
    // may keep more in memory than it thought).
    let bound: Vec<usize> = bindings.iter().map(|&(_, _, b)| b).collect();
    if !distinct_slots(a, &bound) {
        return None;
    }
    let mut bindings = bindings;
    let mut reflected = reflected;
    bindings.sort_unstable();
    reflected.sort_by_key(|b| (b.group, b.binding));
    let label = format!("fused({}..{})", first.label, last.label);
    let kernel = KernelOut {
        label: label.clone(),
        source: text,
        entry_point,
        workgroup_size: [wgx, 1, 1],
        bindings: reflected,
        fold: Fold::Linear,
    };
    let dispatch = NodeOut {
        label,
        kernel: usize::MAX,
        bindings,
        overrides,
        workgroup_size: None,
        size: first.size,
        unfused: false,
    };
    Some(Built {
        kernel,
        dispatch,
        grid_stride_entry,
    })
}

/// The composed module: `text` and the entry point that calls each member
/// in turn; `None` when naga does not validate it.
#[allow(clippy::too_many_arguments)]
fn compose_and_check(
    _a: &GraphAnalysis,
    text: &str,
    entry_point: &str,
    calls: &[String],
    wgx: u32,
    base: &str,
    caps: naga::valid::Capabilities,
    verdicts: &mut HashMap<String, bool>,
) -> Option<String> {
    let mut text = text.to_owned();
    text.push_str(&format!(
        "\n@compute @workgroup_size({wgx})\n\
         fn {entry_point}(@builtin(workgroup_id) {base}wg: vec3<u32>, @builtin(num_workgroups) {base}nwg: vec3<u32>, @builtin(local_invocation_id) {base}l: vec3<u32>) {{\n    \
         let {base}lin = {base}wg.x + {base}nwg.x * ({base}wg.y + {base}nwg.y * {base}wg.z);\n    \
         let {base}gid = vec3<u32>({base}lin * {wgx}u + {base}l.x, {base}l.y, {base}l.z);\n{}}}\n",
        calls.concat()
    ));
    let valid = match verdicts.get(&text) {
        Some(&v) => v,
        None => {
            let v = validate::revalidate(&text, caps).is_some_and(|module| {
                module
                    .entry_points
                    .iter()
                    .any(|ep| ep.name == entry_point && ep.workgroup_size == [wgx, 1, 1])
            });
            verdicts.insert(text.clone(), v);
            v
        }
    };
    valid.then_some(text)
}

/// A buffer whose length stands in for intermediate `buffer`'s in
/// `arrayLength` once `buffer` lives in registers, when `buffer` may: an
/// intermediate that no node outside `group` binds, with a storage array of
/// the same length in the group that stays in memory.
fn private_stand_in(
    a: &GraphAnalysis,
    group: &[usize],
    shared_names: &[(usize, String)],
    buffer: usize,
    stand_ins: &[(usize, String)],
) -> Option<String> {
    let b = a.buffers.get(buffer)?;
    if must_stay(a, group, buffer) {
        return None;
    }
    // Shared buffers that are not candidates stay in memory; read-only
    // member arrays always do.
    let stays = |other: usize| must_stay(a, group, other);
    let same_len = |other: usize| a.buffers.get(other).is_some_and(|o| o.len == b.len);
    stand_ins
        .iter()
        .find(|(other, _)| same_len(*other))
        .map(|(_, name)| name.clone())
        .or_else(|| {
            shared_names
                .iter()
                .find(|(other, _)| *other != buffer && stays(*other) && same_len(*other))
                .map(|(_, name)| name.clone())
        })
}
