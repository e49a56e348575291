//! Building one group's fused kernel: the buffers the group writes bound
//! once, each member's text renamed and rebound (`codegen.rs`),
//! intermediates kept in registers when they may be (`registers.rs`), a
//! grid-stride entry point when it validates (`stride.rs`), and naga's
//! verdict on the result.

use std::collections::HashMap;

use vyre_analysis::Access;

use super::binders::Binders;
use super::codegen;
use super::eligibility::KernelFacts;
use super::members::{
    MAX_STORAGE, MAX_UNIFORM, NodeFacts, combine, distinct_slots, facts_of, member_bindings,
    must_stay, workgroup_size,
};
use super::positions;
use super::registers;
use super::stride;
use crate::check::revalidate;
use crate::model::{BindingKind, GraphAnalysis, KernelOut, NodeOut, ReflectedBinding};
use crate::transform::wgsl::fresh_prefix;
use vyre_analysis::spec::{DispatchSize, GridFold};

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
            (DispatchSize::Invocations(x), DispatchSize::Invocations(y)) => x == y,
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

/// A group's fused kernel, its dispatch and its loop entry point.
pub struct Built {
    /// The fused kernel.
    pub kernel: KernelOut,
    /// The dispatch that replaces the members.
    pub dispatch: NodeOut,
    /// The fused kernel's grid-stride entry point, if any.
    pub grid_stride_entry: Option<String>,
}

/// A fused kernel being composed: its text so far and its bindings, as the
/// dispatch binds them (`(group, binding, buffer)`) and as the kernel
/// declares them.
#[derive(Clone, Default)]
struct Draft {
    text: String,
    bindings: Vec<(u32, u32, usize)>,
    reflected: Vec<ReflectedBinding>,
}

/// What a group is built from: the analysis, the facts of the declared
/// kernels and each node's declared kernel, the group's nodes and the
/// prefix of every name the composition adds.
struct Group<'a> {
    a: &'a GraphAnalysis,
    facts: &'a [Option<KernelFacts>],
    nk: &'a [usize],
    nodes: &'a [usize],
    base: String,
}

impl Group<'_> {
    /// The name of shared buffer `buffer` in the fused text.
    fn shared_name(&self, buffer: usize) -> String {
        format!("{}b{buffer}", self.base)
    }
}

/// The fused kernel and its dispatch, when the text composes and naga
/// validates it.
pub fn build(
    a: &GraphAnalysis,
    node_facts: &NodeFacts,
    group: &[usize],
    caps: naga::valid::Capabilities,
    binders: &Binders,
    verdicts: &mut HashMap<String, bool>,
) -> Option<Built> {
    let NodeFacts {
        facts,
        node_kernels: nk,
    } = *node_facts;
    let shared = shared_buffers(a, facts, nk, group)?;
    let first = a.nodes.get(*group.first()?)?;
    let last = a.nodes.get(*group.last()?)?;
    let [wgx, _, _] = workgroup_size(a, first)?;
    let all_sources: String = group
        .iter()
        .filter_map(|&i| facts_of(facts, nk, i).map(|f| f.source.as_str()))
        .collect();
    let g = Group {
        a,
        facts,
        nk,
        nodes: group,
        base: fresh_prefix(&all_sources)?,
    };
    let mut draft = Draft {
        text: format!(
            "// Fused by graph!: nodes `{}` to `{}` run as one dispatch. Each node's kernel\n\
             // follows, its names prefixed; buffers the group writes are bound once.\n",
            first.label, last.label
        ),
        ..Draft::default()
    };
    bind_shared(&g, &shared, &mut draft)?;
    let members = add_members(&g, &shared, &mut draft)?;
    let entry_point = format!("{}fused", g.base);
    // Intermediates that no node outside the group binds live in registers
    // (see `registers`): their declarations become private values and their
    // bindings go; when the result does not validate, they stay in memory.
    let in_memory = draft.clone();
    let registers = keep_in_registers(&g, binders, &shared, &members.stand_ins, &mut draft)?;
    let member_sources: Vec<&str> = group
        .iter()
        .filter_map(|&i| facts_of(facts, nk, i).map(|f| f.source.as_str()))
        .collect();
    // Each of: with the intermediates in registers, then in memory; with
    // the loop entry point, then without.
    let mut attempts = Vec::new();
    for (draft, registers) in [(draft, registers), (in_memory, Vec::new())] {
        let looped = stride::entry(
            &entry_point,
            &g.base,
            wgx,
            &members.calls,
            &members.builtins,
            &registers,
            &member_sources,
        );
        if let Some((name, loop_text)) = looped {
            let with_loop = Draft {
                text: format!("{}{loop_text}", draft.text),
                ..draft.clone()
            };
            attempts.push((with_loop, Some(name)));
        }
        attempts.push((draft, None));
    }
    let (mut draft, grid_stride_entry) = attempts.into_iter().find_map(|(draft, looped)| {
        let text = compose_and_check(
            &draft.text,
            &entry_point,
            &members,
            wgx,
            &g.base,
            caps,
            verdicts,
        )?;
        Some((Draft { text, ..draft }, looped))
    })?;
    // What stays bound must be in distinct memory (the prediction above
    // may keep more in memory than it thought).
    let bound: Vec<usize> = draft.bindings.iter().map(|&(_, _, b)| b).collect();
    if !distinct_slots(a, &bound) {
        return None;
    }
    draft.bindings.sort_unstable();
    draft.reflected.sort_by_key(|b| (b.group, b.binding));
    let label = format!("fused({}..{})", first.label, last.label);
    let kernel = KernelOut {
        label: label.clone(),
        source: draft.text,
        entry_point,
        workgroup_size: [wgx, 1, 1],
        bindings: draft.reflected,
        fold: GridFold::Linear,
    };
    let dispatch = NodeOut {
        label,
        kernel: usize::MAX,
        bindings: draft.bindings,
        overrides: members.overrides,
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

/// Each buffer the group writes, declared and bound once (binding `k` of
/// group 0 for the `k`-th), its access the union of the members'.
fn bind_shared(g: &Group, shared: &[(usize, String)], draft: &mut Draft) -> Option<()> {
    for (k, (buffer, ty)) in shared.iter().enumerate() {
        let k = u32::try_from(k).ok()?;
        draft.text.push_str(&format!(
            "@group(0) @binding({k}) var<storage, read_write> {}: {ty};\n",
            g.shared_name(*buffer)
        ));
        draft.bindings.push((0, k, *buffer));
        let mut access: Option<Access> = None;
        let mut template: Option<&ReflectedBinding> = None;
        for &i in g.nodes {
            for m in member_bindings(g.a, g.facts, g.nk, i)?
                .into_iter()
                .filter(|m| m.buffer == *buffer)
            {
                access = Some(access.map_or(m.binding.access, |x| combine(x, m.binding.access)));
                if m.binding.kind == BindingKind::ReadWriteStorage {
                    template.get_or_insert(m.binding);
                }
            }
        }
        draft.reflected.push(ReflectedBinding {
            name: g.shared_name(*buffer),
            group: 0,
            binding: k,
            kind: BindingKind::ReadWriteStorage,
            access: access?,
            ..template?.clone()
        });
    }
    Some(())
}

/// What the members add besides their text.
struct Members {
    /// Each member's call in the fused entry point.
    calls: Vec<String>,
    /// Each member's overrides, renamed.
    overrides: Vec<(String, f64)>,
    /// Read-only storage arrays of the members, by name in the fused text:
    /// their lengths can stand in for a buffer kept in registers.
    stand_ins: Vec<(usize, String)>,
    /// The builtins the members take (see `positions.rs`).
    builtins: Vec<naga::BuiltIn>,
}

/// Each member's text, renamed and rebound (`codegen.rs`), and its
/// unshared bindings moved to group 0.
fn add_members(g: &Group, shared: &[(usize, String)], draft: &mut Draft) -> Option<Members> {
    let mut next_binding = u32::try_from(shared.len()).ok()?;
    let mut out = Members {
        calls: Vec::new(),
        overrides: Vec::new(),
        stand_ins: Vec::new(),
        builtins: Vec::new(),
    };
    let is_shared = |buffer: usize| shared.iter().any(|(b, _)| *b == buffer);
    for (k, &i) in g.nodes.iter().enumerate() {
        let node = g.a.nodes.get(i)?;
        let f = facts_of(g.facts, g.nk, i)?;
        let prefix = format!("{}s{k}_", g.base);
        let members = member_bindings(g.a, g.facts, g.nk, i)?;
        let shared_names: HashMap<String, String> = members
            .iter()
            .filter(|m| is_shared(m.buffer))
            .map(|m| (m.binding.name.clone(), g.shared_name(m.buffer)))
            .collect();
        let stage = codegen::stage(
            &f.source,
            &f.entry,
            &prefix,
            &shared_names,
            &mut next_binding,
        )?;
        draft.text.push_str(&format!(
            "\n// --- node `{}` (kernel `{}`) ---\n{}\n",
            node.label,
            g.a.kernels.get(node.kernel)?.label,
            stage.text
        ));
        for m in members.iter().filter(|m| !is_shared(m.buffer)) {
            if m.binding.kind == BindingKind::ReadOnlyStorage
                && m.binding.wgsl_type.trim_start().starts_with("array<")
            {
                out.stand_ins
                    .push((m.buffer, format!("{prefix}{}", m.binding.name)));
            }
            let old = (m.binding.group, m.binding.binding);
            let &(_, new) = stage.rebound.iter().find(|(o, _)| *o == old)?;
            draft.bindings.push((0, new, m.buffer));
            draft.reflected.push(ReflectedBinding {
                name: format!("{prefix}{}", m.binding.name),
                group: 0,
                binding: new,
                ..m.binding.clone()
            });
        }
        out.overrides.extend(
            node.overrides
                .iter()
                .map(|(key, value)| (format!("{prefix}{key}"), *value)),
        );
        let builtins = &f.elementwise.as_ref().ok()?.builtins;
        out.calls
            .push(positions::call(&stage.entry_fn, &g.base, builtins)?);
        out.builtins.extend(builtins.iter().copied());
    }
    Some(out)
}

/// Moves every shared buffer that may live in registers out of memory (its
/// declaration becomes a private value, its binding goes): the
/// `(name, element type)` of each.
fn keep_in_registers(
    g: &Group,
    binders: &Binders,
    shared: &[(usize, String)],
    stand_ins: &[(usize, String)],
    draft: &mut Draft,
) -> Option<Vec<(String, String)>> {
    let mut registers: Vec<(String, String)> = Vec::new();
    let shared_names: Vec<(usize, String)> = shared
        .iter()
        .map(|(b, _)| (*b, g.shared_name(*b)))
        .collect();
    for (k, (buffer, ty)) in shared.iter().enumerate() {
        let Some(stand_in) =
            private_stand_in(g.a, binders, g.nodes, &shared_names, stand_ins, *buffer)
        else {
            continue;
        };
        let Some(elem) = registers::element_type(ty) else {
            continue;
        };
        let name = g.shared_name(*buffer);
        let declaration =
            format!("@group(0) @binding({k}) var<storage, read_write> {name}: {ty};\n");
        let private = format!("var<private> {name}: {elem};\n");
        let Some(rewritten) = registers::rewrite(
            &draft.text.replacen(&declaration, &private, 1),
            &name,
            &stand_in,
        ) else {
            continue;
        };
        draft.text = rewritten;
        registers.push((name, elem.to_owned()));
        let k = u32::try_from(k).ok()?;
        draft.bindings.retain(|&(g, b, _)| (g, b) != (0, k));
        draft.reflected.retain(|r| (r.group, r.binding) != (0, k));
    }
    Some(registers)
}

/// The composed module: `text` and the entry point that calls each member
/// in turn; `None` when naga does not validate it.
fn compose_and_check(
    text: &str,
    entry_point: &str,
    members: &Members,
    wgx: u32,
    base: &str,
    caps: naga::valid::Capabilities,
    verdicts: &mut HashMap<String, bool>,
) -> Option<String> {
    let mut text = text.to_owned();
    let lets = positions::plain_lets(base, &members.builtins);
    text.push_str(&format!(
        "\n@compute @workgroup_size({wgx})\n\
         fn {entry_point}(@builtin(workgroup_id) {base}wg: vec3<u32>, @builtin(num_workgroups) {base}nwg: vec3<u32>, @builtin(local_invocation_id) {base}l: vec3<u32>) {{\n    \
         let {base}lin = {base}wg.x + {base}nwg.x * ({base}wg.y + {base}nwg.y * {base}wg.z);\n    \
         let {base}gid = vec3<u32>({base}lin * {wgx}u + {base}l.x, 0u, 0u);\n{lets}{}}}\n",
        members.calls.concat()
    ));
    let valid = match verdicts.get(&text) {
        Some(&v) => v,
        None => {
            let v = revalidate(&text, caps).is_some_and(|module| {
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

/// A buffer and its name in the fused text.
type Named = (usize, String);

/// A buffer whose length stands in for intermediate `buffer`'s in
/// `arrayLength` once `buffer` lives in registers, when `buffer` may: an
/// intermediate that no node outside `group` binds, with a storage array of
/// the same length in the group that stays in memory.
fn private_stand_in(
    a: &GraphAnalysis,
    binders: &Binders,
    group: &[usize],
    shared_names: &[Named],
    stand_ins: &[Named],
    buffer: usize,
) -> Option<String> {
    let b = a.buffers.get(buffer)?;
    if must_stay(a, binders, group, buffer) {
        return None;
    }
    // Shared buffers that are not candidates stay in memory; read-only
    // member arrays always do.
    let stays = |other: usize| must_stay(a, binders, group, other);
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
