//! Breadth-first search on the GPU: the random graph, the CPU reference,
//! the search as a `graph!` whose loop stops itself ([`device`]) and the
//! same search driven from the host ([`host`]). Shared by the `bfs` example
//! and `graph_bench`:
//!
//! ```ignore
//! #[path = "../bfs/graph.rs"]
//! mod bfs;
//! ```

#[path = "device.rs"]
pub mod device;
#[path = "host.rs"]
pub mod host;

use std::collections::VecDeque;

/// The level of a vertex the search never reaches.
pub const UNVISITED: u32 = u32::MAX;

/// Directed edges per vertex: the device graph's `input edges[8 * n];`.
pub const EDGES_PER_VERTEX: u32 = 8;

/// A directed graph in compressed sparse row form: the neighbours of `u`
/// are `edges[offsets[u] as usize..offsets[u + 1] as usize]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    /// `vertices + 1` offsets into `edges`, from 0 to `edges.len()`.
    pub offsets: Vec<u32>,
    /// The head of every edge, grouped by tail.
    pub edges: Vec<u32>,
}

impl Csr {
    /// Number of vertices.
    pub fn vertices(&self) -> u32 {
        (self.offsets.len().saturating_sub(1)) as u32
    }

    /// The neighbours of `u`.
    pub fn neighbours(&self, u: u32) -> &[u32] {
        let u = u as usize;
        &self.edges[self.offsets[u] as usize..self.offsets[u + 1] as usize]
    }
}

/// SplitMix64: deterministic pseudo-random numbers, no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound` > 0), by 64-bit multiply-shift.
    fn below(&mut self, bound: u32) -> u32 {
        (((self.next() >> 32) * u64::from(bound)) >> 32) as u32
    }
}

/// An undirected random graph (Erdős–Rényi style, G(n, m)): `vertices`
/// vertices and `vertices * EDGES_PER_VERTEX / 2` pairs `{u, v}`, `u != v`,
/// endpoints uniform (repeated pairs allowed), each stored both ways: so
/// `vertices * EDGES_PER_VERTEX` directed edges, on average 8 per vertex.
/// Deterministic for a given `seed`.
pub fn random_graph(vertices: u32, seed: u64) -> Csr {
    let pairs = if vertices < 2 {
        0
    } else {
        vertices as usize * EDGES_PER_VERTEX as usize / 2
    };
    let mut rng = SplitMix64(seed);
    let mut ends = Vec::with_capacity(pairs);
    let mut degree = vec![0u32; vertices as usize + 1];
    for _ in 0..pairs {
        let u = rng.below(vertices);
        let mut v = rng.below(vertices);
        while v == u {
            v = rng.below(vertices);
        }
        degree[u as usize] += 1;
        degree[v as usize] += 1;
        ends.push((u, v));
    }
    // Counting sort by tail: offsets are the prefix sums of the degrees.
    let mut offsets = Vec::with_capacity(vertices as usize + 1);
    let mut sum = 0u32;
    for d in &degree[..vertices as usize] {
        offsets.push(sum);
        sum += d;
    }
    offsets.push(sum);
    let mut fill = offsets.clone();
    let mut edges = vec![0u32; sum as usize];
    for (u, v) in ends {
        edges[fill[u as usize] as usize] = v;
        fill[u as usize] += 1;
        edges[fill[v as usize] as usize] = u;
        fill[v as usize] += 1;
    }
    Csr { offsets, edges }
}

/// The CPU reference: the level of every vertex from `source` by a plain
/// queue-based breadth-first search ([`UNVISITED`] where it is unreachable).
pub fn cpu_bfs(csr: &Csr, source: u32) -> Vec<u32> {
    let mut levels = vec![UNVISITED; csr.vertices() as usize];
    if source >= csr.vertices() {
        return levels;
    }
    levels[source as usize] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        let next = levels[u as usize] + 1;
        for &v in csr.neighbours(u) {
            if levels[v as usize] == UNVISITED {
                levels[v as usize] = next;
                queue.push_back(v);
            }
        }
    }
    levels
}

/// How many frontiers a search expands that produce its `levels`: one per
/// level reached, the deepest included (its expansion finds nothing new).
pub fn expanded_levels(levels: &[u32]) -> u32 {
    levels
        .iter()
        .filter(|&&l| l != UNVISITED)
        .max()
        .map_or(0, |&deepest| deepest + 1)
}

/// The first vertex whose levels differ, with both levels.
pub fn first_mismatch(got: &[u32], want: &[u32]) -> Option<(usize, u32, u32)> {
    if got.len() != want.len() {
        return Some((got.len().min(want.len()), u32::MAX, u32::MAX));
    }
    got.iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .map(|i| (i, got[i], want[i]))
}
