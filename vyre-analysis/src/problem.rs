//! Input validation: what can be wrong with a graph, and the normalised uses
//! the rest of the analysis works on.

use crate::model::{BufferClass, Use};

/// Something wrong with the graph given to [`analyse`](crate::analyse).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// A node writes an [`Input`](BufferClass::Input) or
    /// [`Uniform`](BufferClass::Uniform) buffer.
    WritesReadOnly {
        /// The node.
        node: usize,
        /// The buffer.
        buffer: usize,
    },
    /// A node reads an [`Intermediate`](BufferClass::Intermediate) or
    /// [`Output`](BufferClass::Output) buffer that no earlier node wrote (a
    /// [`ReadWrite`](crate::Access::ReadWrite) use reads first, so it counts).
    ReadBeforeWrite {
        /// The node.
        node: usize,
        /// The buffer.
        buffer: usize,
    },
    /// An [`Output`](BufferClass::Output) buffer that no node writes.
    OutputNeverWritten {
        /// The buffer.
        buffer: usize,
    },
    /// An [`Intermediate`](BufferClass::Intermediate) that no node uses, or an
    /// [`Input`](BufferClass::Input) or [`Uniform`](BufferClass::Uniform) that
    /// no node reads.
    Unused {
        /// The buffer.
        buffer: usize,
    },
    /// A use names a buffer index that does not exist; the use is ignored
    /// (reported once per node and index).
    NoSuchBuffer {
        /// The node.
        node: usize,
        /// The index it names.
        buffer: usize,
    },
    /// One node lists the same buffer more than once (reported once per node
    /// and buffer); the analysis merges the uses into one whose access reads
    /// if any of them reads and writes if any of them writes.
    DuplicateUse {
        /// The node.
        node: usize,
        /// The buffer.
        buffer: usize,
    },
}

impl Problem {
    /// The node the problem is about, if it is about one.
    #[must_use]
    pub const fn node(&self) -> Option<usize> {
        match *self {
            Self::WritesReadOnly { node, .. }
            | Self::ReadBeforeWrite { node, .. }
            | Self::NoSuchBuffer { node, .. }
            | Self::DuplicateUse { node, .. } => Some(node),
            Self::OutputNeverWritten { .. } | Self::Unused { .. } => None,
        }
    }

    /// The buffer index the problem is about (for
    /// [`NoSuchBuffer`](Self::NoSuchBuffer), an index that does not exist).
    #[must_use]
    pub const fn buffer(&self) -> usize {
        match *self {
            Self::WritesReadOnly { buffer, .. }
            | Self::ReadBeforeWrite { buffer, .. }
            | Self::OutputNeverWritten { buffer }
            | Self::Unused { buffer }
            | Self::NoSuchBuffer { buffer, .. }
            | Self::DuplicateUse { buffer, .. } => buffer,
        }
    }
}

/// The uses of every node with bad ones removed, plus what was wrong.
pub(crate) struct Checked {
    /// Per node: valid uses, one per buffer, sorted by buffer index.
    pub uses: Vec<Vec<Use>>,
    /// Problems in node order, then buffer order; problems about no node last.
    pub problems: Vec<Problem>,
}

/// One node's uses sorted by buffer, duplicates merged and out-of-range
/// buffers dropped, with the problems found (in buffer order).
pub(crate) fn normalise_node(
    buffer_count: usize,
    node: usize,
    uses: &[Use],
    problems: &mut Vec<Problem>,
) -> Vec<Use> {
    let mut sorted = uses.to_vec();
    // Stable, so the first listing of a buffer stays first.
    sorted.sort_by_key(|u| u.buffer);
    let mut merged: Vec<Use> = Vec::with_capacity(sorted.len());
    let mut previous: Option<usize> = None;
    for u in sorted {
        if previous == Some(u.buffer) {
            if u.buffer >= buffer_count {
                // Already reported as `NoSuchBuffer`.
                continue;
            }
            let already = problems.last().is_some_and(|p| {
                *p == Problem::DuplicateUse {
                    node,
                    buffer: u.buffer,
                }
            });
            if !already {
                problems.push(Problem::DuplicateUse {
                    node,
                    buffer: u.buffer,
                });
            }
            if let Some(last) = merged.last_mut()
                && last.buffer == u.buffer
            {
                last.access = last.access.union(u.access);
            }
            continue;
        }
        previous = Some(u.buffer);
        if u.buffer >= buffer_count {
            problems.push(Problem::NoSuchBuffer {
                node,
                buffer: u.buffer,
            });
        } else {
            merged.push(u);
        }
    }
    merged
}

/// Validates every node and normalises its uses.
pub(crate) fn check<N: AsRef<[Use]>>(classes: &[BufferClass], nodes: &[N]) -> Checked {
    let buffer_count = classes.len();
    let mut problems = Vec::new();
    let mut written = vec![false; buffer_count];
    let mut read = vec![false; buffer_count];
    let mut used = vec![false; buffer_count];
    let mut all_uses = Vec::with_capacity(nodes.len());

    for (node, uses) in nodes.iter().enumerate() {
        // Problems of one node in buffer order: duplicates found while
        // normalising come before the class checks for the same buffer.
        let mut node_problems = Vec::new();
        let uses = normalise_node(buffer_count, node, uses.as_ref(), &mut node_problems);
        for u in &uses {
            let Some(&class) = classes.get(u.buffer) else {
                continue;
            };
            if u.access.writes() && class.is_read_only() {
                node_problems.push(Problem::WritesReadOnly {
                    node,
                    buffer: u.buffer,
                });
            }
            let needs_writer = matches!(class, BufferClass::Intermediate | BufferClass::Output);
            let written_before = written.get(u.buffer).copied().unwrap_or(false);
            if u.access.reads() && needs_writer && !written_before {
                node_problems.push(Problem::ReadBeforeWrite {
                    node,
                    buffer: u.buffer,
                });
            }
        }
        // Stable: keeps the order of problems about the same buffer.
        node_problems.sort_by_key(Problem::buffer);
        problems.append(&mut node_problems);
        for u in &uses {
            let flags = (
                used.get_mut(u.buffer),
                read.get_mut(u.buffer),
                written.get_mut(u.buffer),
            );
            if let (Some(used), Some(read), Some(written)) = flags {
                *used = true;
                *read |= u.access.reads();
                *written |= u.access.writes();
            }
        }
        all_uses.push(uses);
    }

    for (buffer, &class) in classes.iter().enumerate() {
        let used = used.get(buffer).copied().unwrap_or(false);
        let read = read.get(buffer).copied().unwrap_or(false);
        let written = written.get(buffer).copied().unwrap_or(false);
        match class {
            BufferClass::Output if !written => {
                problems.push(Problem::OutputNeverWritten { buffer });
            }
            BufferClass::Intermediate if !used => problems.push(Problem::Unused { buffer }),
            BufferClass::Input | BufferClass::Uniform if !read => {
                problems.push(Problem::Unused { buffer });
            }
            _ => {}
        }
    }

    Checked {
        uses: all_uses,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_merges_sorts_and_drops() {
        let mut problems = Vec::new();
        let uses = [
            Use::write(2),
            Use::read(7),
            Use::read(0),
            Use::read(2),
            Use::read(7),
            Use::write(2),
        ];
        let merged = normalise_node(3, 4, &uses, &mut problems);
        assert_eq!(merged, vec![Use::read(0), Use::read_write(2)]);
        assert_eq!(
            problems,
            vec![
                Problem::DuplicateUse { node: 4, buffer: 2 },
                Problem::NoSuchBuffer { node: 4, buffer: 7 },
            ]
        );
    }

    #[test]
    fn problem_accessors() {
        let p = Problem::NoSuchBuffer { node: 3, buffer: 9 };
        assert_eq!((p.node(), p.buffer()), (Some(3), 9));
        let p = Problem::Unused { buffer: 5 };
        assert_eq!((p.node(), p.buffer()), (None, 5));
    }
}
