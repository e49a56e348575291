//! Property-style checks over many random graphs, with a deterministic
//! xorshift generator instead of an extra crate.

// Node and buffer indices are the natural loop variables here.
#![allow(clippy::needless_range_loop)]

use crate::{Access, Analysis, BufferClass, Hazard, Problem, Use, analyse};

/// xorshift64 (Marsaglia); deterministic, never zero.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform-ish integer in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const CLASSES: [BufferClass; 5] = [
    BufferClass::Input,
    BufferClass::InOut,
    BufferClass::Output,
    BufferClass::Intermediate,
    BufferClass::Uniform,
];
const ACCESSES: [Access; 3] = [Access::Read, Access::Write, Access::ReadWrite];

struct Graph {
    classes: Vec<BufferClass>,
    nodes: Vec<Vec<Use>>,
    bytes: Vec<u64>,
}

fn random_graph(rng: &mut XorShift) -> Graph {
    let buffer_count = rng.below(13);
    let node_count = rng.below(21);
    // Mostly intermediates, so that slots get shared.
    let classes = (0..buffer_count)
        .map(|_| {
            if rng.below(2) == 0 {
                BufferClass::Intermediate
            } else {
                CLASSES[rng.below(CLASSES.len())]
            }
        })
        .collect();
    let nodes = (0..node_count)
        .map(|_| {
            (0..rng.below(5))
                .map(|_| {
                    let buffer = match rng.below(30) {
                        0 => 99,
                        1 => usize::MAX,
                        _ if buffer_count == 0 => rng.below(3),
                        _ => rng.below(buffer_count),
                    };
                    Use {
                        buffer,
                        access: ACCESSES[rng.below(ACCESSES.len())],
                    }
                })
                .collect()
        })
        .collect();
    let bytes = (0..buffer_count)
        .map(|_| match rng.below(20) {
            0 => u64::MAX,
            1 => u64::MAX / 3,
            _ => rng.next() % 4096,
        })
        .collect();
    Graph {
        classes,
        nodes,
        bytes,
    }
}

/// Merged access of `node` to `buffer`, if it uses it validly.
fn access(g: &Graph, node: usize, buffer: usize) -> Option<Access> {
    if buffer >= g.classes.len() {
        return None;
    }
    g.nodes[node]
        .iter()
        .filter(|u| u.buffer == buffer)
        .map(|u| u.access)
        .reduce(Access::union)
}

/// `reach[i]`: bit `j` set when node `j` transitively depends on node `i`.
fn reachability(a: &Analysis) -> Vec<u32> {
    let n = a.levels.len();
    let mut reach = vec![0_u32; n];
    for i in (0..n).rev() {
        for e in a.edges.iter().filter(|e| e.from == i) {
            reach[i] |= (1 << e.to) | reach[e.to];
        }
    }
    reach
}

fn check(g: &Graph) {
    let a = analyse(&g.classes, &g.nodes);
    let (nb, nn) = (g.classes.len(), g.nodes.len());

    // Deterministic, and the same for slices of slices.
    let slices: Vec<&[Use]> = g.nodes.iter().map(Vec::as_slice).collect();
    assert_eq!(a, analyse(&g.classes, &slices));

    // Edges: forward, in range, sorted strictly (so deduplicated), justified.
    for pair in a.edges.windows(2) {
        assert!(pair[0].key() < pair[1].key(), "{pair:?}");
    }
    for e in &a.edges {
        assert!(e.from < e.to && e.to < nn && e.buffer < nb, "{e:?}");
        assert!(a.levels[e.to] > a.levels[e.from], "{e:?}");
        let (from, to) = (access(g, e.from, e.buffer), access(g, e.to, e.buffer));
        match e.hazard {
            Hazard::ReadAfterWrite => {
                assert!(from.is_some_and(Access::writes) && to.is_some_and(Access::reads));
            }
            Hazard::WriteAfterRead => {
                assert!(from.is_some_and(Access::reads) && to.is_some_and(Access::writes));
            }
            Hazard::WriteAfterWrite => {
                assert!(from.is_some_and(Access::writes) && to.is_some_and(Access::writes));
            }
            Hazard::Reuse => {
                assert_eq!(g.classes[e.buffer], BufferClass::Intermediate);
                assert_eq!(a.live_ranges[e.buffer].map(|r| r.first), Some(e.to));
                let shares = (0..nb).any(|other| {
                    other != e.buffer
                        && a.slots[other] == a.slots[e.buffer]
                        && access(g, e.from, other).is_some()
                });
                assert!(shares, "{e:?}");
            }
        }
    }

    // Levels.
    assert_eq!(a.levels.len(), nn);
    for node in 0..nn {
        let expected = a
            .dependencies(node)
            .iter()
            .map(|&p| a.levels[p] + 1)
            .max()
            .unwrap_or(0);
        assert_eq!(a.levels[node], expected);
    }
    let highest = a.levels.iter().max().map_or(0, |&l| l + 1);
    assert_eq!(a.level_count, highest);
    let by_level = a.nodes_by_level();
    assert_eq!(by_level.len(), a.level_count as usize);
    let mut all: Vec<usize> = by_level.concat();
    all.sort_unstable();
    assert_eq!(all, (0..nn).collect::<Vec<_>>());
    for (level, group) in by_level.iter().enumerate() {
        assert!(!group.is_empty());
        assert!(group.iter().all(|&n| a.levels[n] as usize == level));
    }

    // Every two conflicting uses of a buffer are ordered, and so is every
    // use of a buffer before every write of a later buffer in its slot.
    let reach = reachability(&a);
    for b in 0..nb {
        for i in 0..nn {
            for j in i + 1..nn {
                if let (Some(x), Some(y)) = (access(g, i, b), access(g, j, b))
                    && (x.writes() || y.writes())
                {
                    assert!(reach[i] & (1 << j) != 0, "buffer {b}: {i} -> {j}");
                }
            }
        }
    }

    // Live ranges.
    assert_eq!(a.live_ranges.len(), nb);
    for (b, range) in a.live_ranges.iter().enumerate() {
        let users: Vec<usize> = (0..nn).filter(|&n| access(g, n, b).is_some()).collect();
        match range {
            None => assert!(users.is_empty()),
            Some(r) => {
                assert!(r.first <= r.last && r.last < nn);
                assert!(users.iter().all(|&n| r.contains(n)));
            }
        }
    }

    // Slots.
    assert_eq!(a.slots.len(), nb);
    let mut seen = vec![false; a.slot_count];
    for &s in &a.slots {
        seen[s] = true;
    }
    assert!(seen.iter().all(|&s| s), "every slot is used");
    for x in 0..nb {
        for y in x + 1..nb {
            if a.slots[x] != a.slots[y] {
                continue;
            }
            assert_eq!(g.classes[x], BufferClass::Intermediate);
            assert_eq!(g.classes[y], BufferClass::Intermediate);
            let (rx, ry) = (a.live_ranges[x].unwrap(), a.live_ranges[y].unwrap());
            assert!(!rx.overlaps(&ry), "{x} {y}");
            let (early, late) = if rx.last < ry.first { (x, y) } else { (y, x) };
            for i in (0..nn).filter(|&n| access(g, n, early).is_some()) {
                for j in (0..nn).filter(|&n| access(g, n, late).is_some_and(Access::writes)) {
                    assert!(
                        reach[i] & (1 << j) != 0,
                        "slot reuse {early}@{i} -> {late}@{j}"
                    );
                }
            }
        }
    }

    // Memory.
    let p = a.peak_bytes(&g.bytes);
    assert!(p.largest_live_set <= p.aliased, "{p:?}");
    assert!(p.aliased <= p.unaliased, "{p:?}");
    assert_eq!(a.slot_bytes(&g.bytes).len(), a.slot_count);

    // Problems: about nodes first, ordered by node then buffer, then the rest by buffer.
    let key = |p: &Problem| (p.node().is_none(), p.node(), p.buffer());
    for pair in a.problems.windows(2) {
        assert!(key(&pair[0]) <= key(&pair[1]), "{pair:?}");
    }
    for p in &a.problems {
        assert!(p.node().is_none_or(|n| n < nn));
        match p {
            Problem::NoSuchBuffer { buffer, .. } => assert!(*buffer >= nb),
            _ => assert!(p.buffer() < nb),
        }
    }
    let bad = |node: usize| {
        let mut bad: Vec<usize> = g.nodes[node]
            .iter()
            .map(|u| u.buffer)
            .filter(|&b| b >= nb)
            .collect();
        bad.sort_unstable();
        bad.dedup();
        bad.len()
    };
    let no_such = a
        .problems
        .iter()
        .filter(|p| matches!(p, Problem::NoSuchBuffer { .. }))
        .count();
    assert_eq!(no_such, (0..nn).map(bad).sum::<usize>());

    // DOT output is deterministic and balanced.
    let dot = a.to_dot("random", &[], &[], &g.nodes);
    assert_eq!(dot, a.to_dot("random", &[], &[], &g.nodes));
    assert!(dot.starts_with("digraph \"random\" {\n") && dot.ends_with("}\n"));
}

#[test]
fn thousand_random_graphs_keep_invariants() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut shared = 0;
    let mut reuse_edges = 0;
    for _ in 0..1000 {
        let g = random_graph(&mut rng);
        check(&g);
        let a = analyse(&g.classes, &g.nodes);
        if a.slot_count < a.slots.len() {
            shared += 1;
        }
        reuse_edges += a.edges.iter().filter(|e| e.hazard == Hazard::Reuse).count();
    }
    // The generator must exercise aliasing, or the slot checks prove nothing.
    assert!(shared > 100, "only {shared} graphs share a slot");
    assert!(reuse_edges > 100, "only {reuse_edges} reuse edges");
}
