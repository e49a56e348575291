//! Loops that stop themselves (`repeat up to K .. until ..`) and the other
//! device-sized parts of a spec, as the runtime's analysis sees them: the
//! gates' uses, the checks of a hand-built spec, and what a run reports.

use crate::error::{BackendError, Result};
use crate::spec::{DispatchSize, GraphSpec, Until};

/// Each loop iteration's gate reads its condition's buffer (and a `zero`
/// gate resets the flag): uses by the iteration's first node, so the hazard
/// analysis (here and in `graph!`) orders them.
pub(crate) fn add_gate_uses(spec: &GraphSpec, uses: &mut [Vec<vyre_analysis::Use>]) {
    use vyre_analysis::{Access, Use};
    for lp in spec.loops.iter() {
        for (i, it) in lp.iterations.iter().enumerate() {
            let access = match (lp.until, i) {
                (Until::Empty, _) => Access::Read,
                (Until::Zero, 0) => Access::Write,
                (Until::Zero, _) => Access::ReadWrite,
            };
            let Some(u) = uses.get_mut(it.first_node) else {
                continue;
            };
            match u.iter_mut().find(|u| u.buffer == it.buffer) {
                Some(u) => u.access = u.access.union(access),
                None => {
                    u.push(Use {
                        buffer: it.buffer,
                        access,
                    });
                    u.sort_by_key(|u| u.buffer);
                }
            }
        }
    }
}

/// Whether node `node` reading `buffer` first is a `zero` loop's first node
/// reading the flag its gate set to 0 just before.
pub(crate) fn written_by_gate(spec: &GraphSpec, node: usize, buffer: usize) -> bool {
    spec.loops.iter().any(|lp| {
        lp.until == Until::Zero
            && lp
                .iterations
                .first()
                .is_some_and(|it| it.first_node == node && it.buffer == buffer)
    })
}

/// Checks the spec's device-side sizes and loops refer to what exists.
pub(crate) fn check_spec(spec: &GraphSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    for node in spec.nodes.iter() {
        if let Some(b) = node.size.device_source()
            && b >= spec.buffers.len()
        {
            return Err(invalid(format!(
                "node `{}` is sized by buffer {b}, which does not exist ({} buffers)",
                node.label,
                spec.buffers.len()
            )));
        }
        if let DispatchSize::Count(b) = node.size
            && spec.buffers[b].header_bytes < 4
        {
            return Err(invalid(format!(
                "node `{}` runs over the count of `{}`, which has no header to hold one; make it an append buffer (`append: Some(..)`, a header starting with a `u32` count)",
                node.label, spec.buffers[b].name
            )));
        }
    }
    // A fused dispatch runs unconditionally on a host-planned grid.
    for group in spec.fused.iter() {
        let dynamic = group.nodes.iter().find(|&&n| {
            spec.nodes
                .get(n)
                .is_some_and(|node| node.size.device_source().is_some())
                || spec.loops.iter().any(|l| l.iteration_of(n).is_some())
        });
        if let Some(&n) = dynamic {
            return Err(invalid(format!(
                "fused group `{}` contains node `{}`, which is sized on the device or inside a loop that stops itself; never fuse such nodes",
                group.dispatch.label, spec.nodes[n].label
            )));
        }
        if group.dispatch.size.device_source().is_some() {
            return Err(invalid(format!(
                "fused group `{}` is sized on the device; a fused dispatch needs a host-planned size",
                group.dispatch.label
            )));
        }
    }
    for lp in spec.loops.iter() {
        if lp.iterations.is_empty() {
            return Err(invalid(format!(
                "loop `{}` has no iteration; give it at least one",
                lp.label
            )));
        }
        for it in lp.iterations.iter() {
            if it.nodes == 0
                || it.first_node.saturating_add(it.nodes) > spec.nodes.len()
                || it.buffer >= spec.buffers.len()
            {
                return Err(invalid(format!(
                    "loop `{}` has an iteration of nodes {}..{} over buffer {}, outside the graph's {} nodes and {} buffers",
                    lp.label,
                    it.first_node,
                    it.first_node.saturating_add(it.nodes),
                    it.buffer,
                    spec.nodes.len(),
                    spec.buffers.len()
                )));
            }
        }
    }
    Ok(())
}

/// What one `repeat up to K .. until ..` loop did in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoopReport {
    /// Iterations that did work (at most `K`).
    pub iterations: u32,
    /// Whether the condition stopped it before `K` iterations ran out (a
    /// loop that never stops within `K` is reported here, not an error).
    pub stopped: bool,
}
