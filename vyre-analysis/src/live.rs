//! Live ranges, device-slot assignment (buffer aliasing) and memory totals.

use crate::model::{BufferClass, LiveRange, Use};

/// Device memory for a given set of buffer sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PeakBytes {
    /// Bytes allocated with aliasing: sum over slots of the largest buffer in each slot.
    pub aliased: u64,
    /// Bytes allocated without aliasing: sum of all used buffers.
    pub unaliased: u64,
    /// The largest total of bytes of buffers live at the same node (a lower bound for any allocation).
    pub largest_live_set: u64,
}

/// Live range of every buffer from normalised uses (uses of buffers
/// `>= classes.len()` are ignored).
pub(crate) fn live_ranges(classes: &[BufferClass], uses: &[Vec<Use>]) -> Vec<Option<LiveRange>> {
    let mut ranges: Vec<Option<LiveRange>> = vec![None; classes.len()];
    for (node, node_uses) in uses.iter().enumerate() {
        for u in node_uses {
            if let Some(range) = ranges.get_mut(u.buffer) {
                let grown = match *range {
                    None => LiveRange {
                        first: node,
                        last: node,
                    },
                    Some(r) => LiveRange {
                        first: r.first.min(node),
                        last: r.last.max(node),
                    },
                };
                *range = Some(grown);
            }
        }
    }
    let last_node = uses.len().saturating_sub(1);
    for (range, &class) in ranges.iter_mut().zip(classes) {
        if let Some(r) = range {
            if class.is_uploaded() {
                r.first = 0;
            }
            if class.is_read_back() {
                r.last = last_node;
            }
        }
    }
    ranges
}

/// Result of slot assignment.
pub(crate) struct Slots {
    /// Slot of each buffer.
    pub slots: Vec<usize>,
    /// Number of slots.
    pub count: usize,
    /// `(previous, next, first use of next)` for each intermediate that took
    /// over a slot from another.
    pub takeovers: Vec<(usize, usize, usize)>,
}

/// Assigns device slots: used intermediates share slots by greedy first fit
/// in order of first use (ties by buffer index); every other buffer gets its
/// own slot. Slots are numbered in order of their lowest buffer index, so a
/// graph without sharing has `slots[i] == i`.
pub(crate) fn assign_slots(
    classes: &[BufferClass],
    keys: &[u64],
    ranges: &[Option<LiveRange>],
) -> Slots {
    let key = |buffer: usize| keys.get(buffer).copied().unwrap_or(0);
    let mut shareable: Vec<(usize, LiveRange)> = classes
        .iter()
        .zip(ranges)
        .enumerate()
        .filter_map(|(buffer, (&class, range))| match (class, range) {
            (BufferClass::Intermediate, Some(r)) => Some((buffer, *r)),
            _ => None,
        })
        .collect();
    shareable.sort_unstable_by_key(|&(buffer, r)| (r.first, buffer));

    // Greedy first fit among slots of the same key. `open[g]` is (last use
    // of the slot, buffer in it).
    let mut group: Vec<Option<usize>> = vec![None; classes.len()];
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut takeovers = Vec::new();
    for (buffer, range) in shareable {
        let fit = open
            .iter()
            .position(|&(last, b)| last < range.first && key(b) == key(buffer));
        let g = match fit.and_then(|g| open.get_mut(g).map(|slot| (g, slot))) {
            Some((g, slot)) => {
                takeovers.push((slot.1, buffer, range.first));
                *slot = (range.last, buffer);
                g
            }
            None => {
                open.push((range.last, buffer));
                open.len() - 1
            }
        };
        if let Some(entry) = group.get_mut(buffer) {
            *entry = Some(g);
        }
    }

    // Number slots in order of their lowest buffer index.
    let mut number: Vec<Option<usize>> = vec![None; open.len()];
    let mut slots = Vec::with_capacity(classes.len());
    let mut count = 0_usize;
    for g in group {
        let shared = g.and_then(|g| number.get_mut(g));
        let slot = match shared {
            Some(Some(existing)) => *existing,
            Some(entry) => {
                *entry = Some(count);
                count += 1;
                count - 1
            }
            None => {
                count += 1;
                count - 1
            }
        };
        slots.push(slot);
    }
    Slots {
        slots,
        count,
        takeovers,
    }
}

/// Size of each slot: the largest `bytes` of the used buffers in it
/// (missing sizes count as 0).
pub(crate) fn slot_bytes(
    slots: &[usize],
    slot_count: usize,
    ranges: &[Option<LiveRange>],
    bytes: &[u64],
) -> Vec<u64> {
    let mut sizes = vec![0_u64; slot_count];
    for (buffer, (&slot, range)) in slots.iter().zip(ranges).enumerate() {
        if range.is_none() {
            continue;
        }
        let size = bytes.get(buffer).copied().unwrap_or(0);
        if let Some(slot_size) = sizes.get_mut(slot) {
            *slot_size = (*slot_size).max(size);
        }
    }
    sizes
}

/// Memory totals; see [`PeakBytes`].
pub(crate) fn peak_bytes(
    slots: &[usize],
    slot_count: usize,
    ranges: &[Option<LiveRange>],
    node_count: usize,
    bytes: &[u64],
) -> PeakBytes {
    let aliased = slot_bytes(slots, slot_count, ranges, bytes)
        .into_iter()
        .fold(0_u64, u64::saturating_add);

    let mut unaliased = 0_u64;
    // Difference array over nodes; i128 sums of u64 sizes cannot overflow for
    // fewer than 2^63 buffers (saturating anyway).
    let mut delta = vec![0_i128; node_count.saturating_add(1)];
    for (buffer, range) in ranges.iter().enumerate() {
        let Some(range) = range else { continue };
        let size = bytes.get(buffer).copied().unwrap_or(0);
        unaliased = unaliased.saturating_add(size);
        if range.first > range.last || range.last >= node_count {
            continue;
        }
        if let Some(d) = delta.get_mut(range.first) {
            *d = d.saturating_add(i128::from(size));
        }
        if let Some(d) = delta.get_mut(range.last.saturating_add(1)) {
            *d = d.saturating_sub(i128::from(size));
        }
    }
    let mut live = 0_i128;
    let mut largest = 0_i128;
    for d in delta {
        live = live.saturating_add(d);
        largest = largest.max(live);
    }
    let largest_live_set = u64::try_from(largest).unwrap_or(u64::MAX);

    PeakBytes {
        aliased,
        unaliased,
        largest_live_set,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BufferClass::{InOut, Input, Intermediate, Output, Uniform};

    fn r(first: usize, last: usize) -> Option<LiveRange> {
        Some(LiveRange { first, last })
    }

    #[test]
    fn live_ranges_follow_class_rules() {
        let classes = [Input, InOut, Output, Intermediate, Uniform, Intermediate];
        let uses = vec![
            vec![],
            vec![Use::read(0), Use::write(3)],
            vec![Use::read(3), Use::read_write(1), Use::read(4)],
            vec![Use::write(2)],
            vec![],
        ];
        let ranges = live_ranges(&classes, &uses);
        assert_eq!(
            ranges,
            vec![r(0, 1), r(0, 4), r(3, 4), r(1, 2), r(0, 2), None]
        );
    }

    #[test]
    fn slots_first_fit_and_numbering() {
        let classes = [Intermediate, Output, Intermediate, Intermediate, Input];
        let ranges = [r(2, 3), r(0, 4), r(0, 1), r(1, 2), None];
        let s = assign_slots(&classes, &[], &ranges);
        // Greedy: buffer 2 -> g0, buffer 3 -> g1, buffer 0 (first 2) -> g0 (2 > 1).
        // Numbering by lowest buffer: g0 {0, 2} -> 0, output -> 1, g1 {3} -> 2, input -> 3.
        assert_eq!(s.slots, vec![0, 1, 0, 2, 3]);
        assert_eq!(s.count, 4);
        assert_eq!(s.takeovers, vec![(2, 0, 2)]);
    }

    #[test]
    fn slots_are_shared_only_within_one_key() {
        // Three intermediates one after another: a buffer (key 0), a texture
        // (key 1), then a buffer and a texture of the same shape.
        let classes = [Intermediate, Intermediate, Intermediate, Intermediate];
        let ranges = [r(0, 0), r(1, 1), r(2, 2), r(3, 3)];
        let s = assign_slots(&classes, &[0, 1, 0, 1], &ranges);
        // The texture never takes the buffer's slot and vice versa.
        assert_eq!(s.slots, vec![0, 1, 0, 1]);
        let s = assign_slots(&classes, &[0, 1, 2, 3], &ranges);
        assert_eq!(s.slots, vec![0, 1, 2, 3]);
        let s = assign_slots(&classes, &[], &ranges);
        assert_eq!(s.slots, vec![0, 0, 0, 0]);
    }

    #[test]
    fn peak_bytes_saturates_and_ignores_unused() {
        let ranges = [r(0, 0), r(0, 0), None];
        let p = peak_bytes(&[0, 1, 2], 3, &ranges, 1, &[u64::MAX, 5, 100]);
        assert_eq!(p.aliased, u64::MAX);
        assert_eq!(p.unaliased, u64::MAX);
        assert_eq!(p.largest_live_set, u64::MAX);
        // Missing sizes count as zero.
        assert_eq!(peak_bytes(&[0, 1, 2], 3, &ranges, 1, &[7]).aliased, 7);
    }
}
