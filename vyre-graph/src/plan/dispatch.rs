//! What a run records, in order ([`Dispatch`]): each node, and each fused
//! group in place of its members.

use crate::spec::GraphSpec;

/// One dispatch of a run: a node, or a fused group in place of its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dispatch {
    /// `spec.nodes[i]`.
    Node(usize),
    /// `spec.fused[i].dispatch`, recorded where its first member would run.
    Fused(usize),
}

/// The dispatches of `spec` in program order (its groups already checked by
/// [`validate`]).
pub(crate) fn dispatches(spec: &GraphSpec) -> Vec<Dispatch> {
    let mut group_of = vec![None; spec.nodes.len()];
    for (g, group) in spec.fused.iter().enumerate() {
        for &n in group.nodes.iter() {
            if let Some(slot) = group_of.get_mut(n) {
                *slot = Some(g);
            }
        }
    }
    let mut out = Vec::with_capacity(spec.nodes.len());
    for (n, group) in group_of.iter().enumerate() {
        match group {
            None => out.push(Dispatch::Node(n)),
            Some(g) if spec.fused[*g].nodes.first() == Some(&n) => out.push(Dispatch::Fused(*g)),
            Some(_) => {}
        }
    }
    out
}
