//! Which nodes bind each buffer, for fusion's question "does a node outside
//! this group bind it?" ([`Binders`]).

/// Per buffer, the first and the last node that binds it. A group is a run
/// of consecutive nodes, so a buffer is bound outside it exactly when one
/// of those two lies outside the run: two comparisons instead of a walk
/// over every node for every buffer (which made fusing a long `repeat`
/// quadratic in its length).
pub struct Binders(Vec<Option<(usize, usize)>>);

impl Binders {
    /// The first and last binder of each of `buffers` buffers, from the
    /// buffers each node binds, in node order.
    pub fn new<B: IntoIterator<Item = usize>>(
        buffers: usize,
        nodes: impl IntoIterator<Item = B>,
    ) -> Self {
        let mut ranges = vec![None; buffers];
        for (i, bound) in nodes.into_iter().enumerate() {
            for buffer in bound {
                if let Some(range) = ranges.get_mut(buffer) {
                    let (first, _) = range.unwrap_or((i, i));
                    *range = Some((first, i));
                }
            }
        }
        Binders(ranges)
    }

    /// Whether a node outside `group` (consecutive node indices) binds
    /// `buffer`.
    pub fn outside(&self, group: &[usize], buffer: usize) -> bool {
        let bound = self.0.get(buffer).copied().flatten();
        match (group.first(), group.last(), bound) {
            (Some(&first), Some(&last), Some((lo, hi))) => lo < first || hi > last,
            (_, _, bound) => bound.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_outside_a_run_when_a_binder_is() {
        // Node 0 binds 0; nodes 1..=3 bind 1; node 2 binds 2; buffer 3 is
        // bound by nobody.
        let nodes = vec![vec![0], vec![1], vec![1, 2], vec![1]];
        let b = Binders::new(4, nodes);
        assert!(!b.outside(&[0, 1, 2, 3], 1));
        assert!(b.outside(&[1, 2], 1));
        assert!(b.outside(&[2, 3], 1));
        assert!(!b.outside(&[1, 2, 3], 1));
        assert!(!b.outside(&[2], 2));
        assert!(b.outside(&[1, 2], 0));
        assert!(!b.outside(&[0, 1], 3));
        assert!(!b.outside(&[0], 99));
    }
}
