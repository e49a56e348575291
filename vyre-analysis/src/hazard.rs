//! Dependency edges between nodes and the levels they imply.

use crate::model::{Edge, Hazard, Use};

/// Per-buffer state while walking the nodes in program order.
#[derive(Clone, Default)]
struct BufferState {
    /// The node that wrote the buffer last.
    last_writer: Option<usize>,
    /// Nodes that read the buffer since `last_writer` wrote it (each once, in order).
    readers: Vec<usize>,
}

/// Read/write hazard edges plus, per buffer, the nodes that touched it last.
pub(crate) struct Hazards {
    /// RAW, WAR and WAW edges (unsorted, possibly with duplicates).
    pub edges: Vec<Edge>,
    /// Per buffer: the nodes every later user of its memory must wait for
    /// (the readers since the last write, or else the last writer). Every
    /// other use of the buffer is ordered before one of these by the edges.
    pub frontier: Vec<Vec<usize>>,
}

/// Computes RAW, WAR and WAW edges from normalised uses (one use per buffer
/// per node; uses of buffers `>= buffer_count` are ignored).
pub(crate) fn hazards(buffer_count: usize, uses: &[Vec<Use>]) -> Hazards {
    let mut states = vec![BufferState::default(); buffer_count];
    let mut edges = Vec::new();
    for (node, node_uses) in uses.iter().enumerate() {
        for u in node_uses {
            let Some(state) = states.get_mut(u.buffer) else {
                continue;
            };
            let mut edge = |from: usize, hazard: Hazard| {
                if from != node {
                    edges.push(Edge {
                        from,
                        to: node,
                        buffer: u.buffer,
                        hazard,
                    });
                }
            };
            if u.access.reads() {
                if let Some(writer) = state.last_writer {
                    edge(writer, Hazard::ReadAfterWrite);
                }
                if state.readers.last() != Some(&node) {
                    state.readers.push(node);
                }
            }
            if u.access.writes() {
                for &reader in &state.readers {
                    edge(reader, Hazard::WriteAfterRead);
                }
                if let Some(writer) = state.last_writer {
                    edge(writer, Hazard::WriteAfterWrite);
                }
                state.last_writer = Some(node);
                state.readers.clear();
            }
        }
    }
    let frontier = states
        .into_iter()
        .map(|state| {
            if state.readers.is_empty() {
                state.last_writer.into_iter().collect()
            } else {
                state.readers
            }
        })
        .collect();
    Hazards { edges, frontier }
}

/// Reuse edges for buffers taking over device memory: for each
/// `(previous, next, next_first_use)`, an edge from every node of the
/// frontier of `previous` to `next_first_use`. The first use of `next`
/// precedes (through its own hazards) every write of `next`, so no write of
/// `next` can clobber `previous` while it is still in use.
pub(crate) fn reuse_edges(
    takeovers: &[(usize, usize, usize)],
    frontier: &[Vec<usize>],
) -> Vec<Edge> {
    let mut edges = Vec::new();
    for &(previous, next, to) in takeovers {
        for &from in frontier.get(previous).map_or(&[][..], Vec::as_slice) {
            if from < to {
                edges.push(Edge {
                    from,
                    to,
                    buffer: next,
                    hazard: Hazard::Reuse,
                });
            }
        }
    }
    edges
}

/// Sorts edges by `(to, from, buffer, hazard)` and removes duplicates.
pub(crate) fn sort_edges(edges: &mut Vec<Edge>) {
    edges.sort_unstable_by_key(Edge::key);
    edges.dedup();
}

/// Level of each node (0 without incoming edges, else one more than the
/// highest predecessor) and the number of levels. Edges must point forward
/// (`from < to`) and be sorted by `to`; others are ignored.
pub(crate) fn levels(node_count: usize, edges: &[Edge]) -> (Vec<u32>, u32) {
    let mut levels = vec![0_u32; node_count];
    for edge in edges {
        if edge.from >= edge.to {
            continue;
        }
        let Some(&from_level) = levels.get(edge.from) else {
            continue;
        };
        if let Some(to_level) = levels.get_mut(edge.to) {
            *to_level = (*to_level).max(from_level.saturating_add(1));
        }
    }
    let count = levels
        .iter()
        .max()
        .map_or(0, |&highest| highest.saturating_add(1));
    (levels, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_is_readers_since_last_write_or_the_writer() {
        let uses = vec![
            vec![Use::write(0), Use::write(1)],
            vec![Use::read(0)],
            vec![Use::read(0), Use::read(1)],
        ];
        let h = hazards(3, &uses);
        assert_eq!(h.frontier, vec![vec![1, 2], vec![2], vec![]]);
    }

    #[test]
    fn levels_ignore_backward_and_out_of_range_edges() {
        let edge = |from, to| Edge {
            from,
            to,
            buffer: 0,
            hazard: Hazard::ReadAfterWrite,
        };
        let (levels, count) = levels(3, &[edge(0, 1), edge(2, 1), edge(1, 9), edge(7, 2)]);
        assert_eq!(levels, vec![0, 1, 0]);
        assert_eq!(count, 2);
        assert_eq!(super::levels(0, &[]), (vec![], 0));
    }
}
