//! Finding the groups: maximal runs of consecutive candidate nodes that
//! obey the rules (see the folder's docs), each built by `build.rs`.

use std::collections::HashMap;

use super::binders::Binders;
use super::build::{Built, build};
use super::eligibility::KernelFacts;
use super::members::{
    MAX_STORAGE, MAX_UNIFORM, NodeFacts, distinct_slots, facts_of, member_bindings, must_stay,
    workgroup_size,
};
use crate::model::{BindingKind, FusedOut, GraphAnalysis};
use vyre_analysis::spec::DispatchSize;

/// The most nodes in one group: keeps each fused kernel (and its
/// compilation, here by naga and on the device) small; a longer chain
/// becomes several groups.
const MAX_GROUP: usize = 128;

/// Fuse `analysis`'s nodes (see the module docs). `facts[k]` belongs to
/// declared kernel `k`; `node_kernels[i]` is node `i`'s declared kernel
/// (before `transform/fold.rs` may have moved it to a wrapped copy).
pub fn fuse(
    analysis: &mut GraphAnalysis,
    facts: &[Option<KernelFacts>],
    node_kernels: &[usize],
    caps: naga::valid::Capabilities,
) {
    let count = analysis.nodes.len();
    let binders = Binders::new(
        analysis.buffers.len(),
        analysis
            .nodes
            .iter()
            .map(|n| n.bindings.iter().map(|&(_, _, b)| b)),
    );
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
        while group.len() >= 2
            && !memory_slots_distinct(analysis, &binders, facts, node_kernels, &group)
        {
            group.pop();
        }
        if group.len() >= 2 {
            let j = i + group.len();
            let built = build(
                analysis,
                &NodeFacts {
                    facts,
                    node_kernels,
                },
                &group,
                caps,
                &binders,
                &mut verdicts,
            );
            if let Some(built) = built {
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

fn candidate(a: &GraphAnalysis, facts: &[Option<KernelFacts>], nk: &[usize], i: usize) -> bool {
    let Some(node) = a.nodes.get(i) else {
        return false;
    };
    let elementwise = facts_of(facts, nk, i).is_some_and(|f| f.elementwise.is_ok());
    !node.unfused
        && matches!(node.size, DispatchSize::Invocations(_))
        && elementwise
        && matches!(workgroup_size(a, node), Some([x, 1, 1]) if x > 0)
}

/// Nodes `i` and `j` launch the same invocations in the same workgroups.
fn same_launch(a: &GraphAnalysis, i: usize, j: usize) -> bool {
    match (a.nodes.get(i), a.nodes.get(j)) {
        (Some(x), Some(y)) => {
            let same_size = match (x.size, y.size) {
                (DispatchSize::Invocations(p), DispatchSize::Invocations(q)) => p == q,
                _ => false,
            };
            same_size && workgroup_size(a, x) == workgroup_size(a, y)
        }
        _ => false,
    }
}

/// The buffers of `group` that its fused kernel will (as far as can be told
/// before composing it) bind in memory: every buffer no member writes, and
/// every written one that [`must_stay`] or has no same-length buffer in
/// memory whose length stands in for its own (see `build.rs`'s `private_stand_in`).
fn memory_buffers(
    a: &GraphAnalysis,
    binders: &Binders,
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
    let stays = |b: usize| !written(b) || must_stay(a, binders, group, b);
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

/// [`distinct_slots`] of the buffers `group` keeps in memory.
fn memory_slots_distinct(
    a: &GraphAnalysis,
    binders: &Binders,
    facts: &[Option<KernelFacts>],
    nk: &[usize],
    group: &[usize],
) -> bool {
    memory_buffers(a, binders, facts, nk, group).is_some_and(|buffers| distinct_slots(a, &buffers))
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
