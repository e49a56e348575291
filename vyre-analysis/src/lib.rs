//! Dependency, level, live-range and buffer-aliasing analysis for vyre
//! compute graphs.
//!
//! A graph is a list of compute nodes in program order; each node lists the
//! graph buffers it uses and how ([`Use`], [`Access`]). Every buffer has a
//! [`BufferClass`]. [`analyse`] computes:
//!
//! * the dependency [`Edge`]s between nodes (read-after-write,
//!   write-after-read, write-after-write, and reuse of device memory),
//! * the level of every node (nodes of one level are independent of each
//!   other and may run together),
//! * the [`LiveRange`] of every buffer and a device slot for it, where
//!   intermediates whose live ranges do not overlap share one slot,
//! * every [`Problem`] with the input; the analysis always completes and
//!   never panics, whatever the input.
//!
//! The crate has no dependencies and no `unsafe`; the `graph!` macro uses it
//! at compile time and the runtime uses it when it builds a launch plan.
//! Its [`spec`] module holds the plain types of a graph's description that
//! both spell (sizes, texel formats, binding kinds, ...), defined once.
//!
//! # Example
//!
//! A chain `x -> t0 -> t1 -> t2 -> y` of four nodes:
//!
//! ```
//! use vyre_analysis::{analyse, BufferClass::*, Edge, Hazard, PeakBytes, Use};
//!
//! let classes = [Input, Intermediate, Intermediate, Intermediate, Output];
//! let (x, t0, t1, t2, y) = (0, 1, 2, 3, 4);
//! let nodes = [
//!     vec![Use::read(x), Use::write(t0)],
//!     vec![Use::read(t0), Use::write(t1)],
//!     vec![Use::read(t1), Use::write(t2)],
//!     vec![Use::read(t2), Use::write(y)],
//! ];
//! let a = analyse(&classes, &nodes);
//! assert!(a.problems.is_empty());
//! assert_eq!(a.levels, [0, 1, 2, 3]);
//! assert_eq!(a.level_count, 4);
//!
//! // t2 reuses the memory of t0, which node 1 read last.
//! assert_eq!(a.slots, [0, 1, 2, 1, 3]);
//! assert_eq!(a.slot_count, 4);
//! let reuse = Edge { from: 1, to: 2, buffer: t2, hazard: Hazard::Reuse };
//! assert!(a.edges.contains(&reuse));
//! assert_eq!(a.dependencies(3), [2]);
//!
//! let bytes = [16, 64, 64, 64, 32];
//! assert_eq!(
//!     a.peak_bytes(&bytes),
//!     PeakBytes { aliased: 176, unaliased: 240, largest_live_set: 128 }
//! );
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

mod dot;
mod hazard;
mod live;
mod model;
mod problem;
pub mod spec;

#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;

pub use live::PeakBytes;
pub use model::{Access, BufferClass, Edge, Hazard, LiveRange, Use, hazard_name};
pub use problem::Problem;

/// The result of [`analyse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// Dependency edges, deduplicated on (from, to, buffer, hazard), sorted
    /// by (to, from, buffer, hazard).
    pub edges: Vec<Edge>,
    /// Level of each node: 0 for nodes with no incoming edge, else 1 + max
    /// level of its predecessors (over all edges incl. [`Hazard::Reuse`]).
    pub levels: Vec<u32>,
    /// Number of distinct levels (0 for an empty graph).
    pub level_count: u32,
    /// Per buffer: `None` if no node uses it. `Input`, `InOut` and `Uniform`
    /// buffers are live from node 0 (they hold host data from the start) to
    /// their last use; `InOut` and `Output` buffers are live until the last
    /// node (they are read back at the end), `Output` from its first use;
    /// `Intermediate` from first use to last use.
    pub live_ranges: Vec<Option<LiveRange>>,
    /// Device slot of each buffer. Every non-`Intermediate` buffer and every
    /// unused buffer gets a slot of its own. Intermediates share a slot when
    /// their live ranges are disjoint (greedy first fit in order of first
    /// use, ties by buffer index; a slot is reusable by a buffer whose first
    /// use is strictly after the slot's current last use).
    ///
    /// Slots are numbered in order of the lowest buffer index they hold, so
    /// without sharing `slots[i] == i`.
    pub slots: Vec<usize>,
    /// Number of slots.
    pub slot_count: usize,
    /// Everything wrong with the input, in node order then buffer order;
    /// problems about no node (`OutputNeverWritten`, `Unused`) come last, in
    /// buffer order. The analysis still completes.
    pub problems: Vec<Problem>,
}

/// Analyses a graph: `classes[i]` is the class of buffer `i` and `nodes[n]`
/// the uses of node `n`, in program order.
///
/// `nodes` may be anything that views as a slice of uses per node:
/// `&[Vec<Use>]`, `&[&[Use]]`, arrays of arrays, …
///
/// Uses that name a buffer index `>= classes.len()` are reported as
/// [`Problem::NoSuchBuffer`] and otherwise ignored. A buffer listed more than
/// once by one node is reported as [`Problem::DuplicateUse`] and its uses are
/// merged (reading if any reads, writing if any writes). Other problems do
/// not change the analysis: a write to an `Input` still orders the nodes
/// around it.
///
/// Hazards, walking the nodes in order and keeping per buffer the last
/// writer and the readers since that write: a read gets a read-after-write
/// edge from the last writer; a write gets write-after-read edges from the
/// readers since the last write and a write-after-write edge from the last
/// writer; `ReadWrite` reads, then writes. When an intermediate `B` takes
/// over the slot of an intermediate `A`, [`Hazard::Reuse`] edges (with
/// `buffer` = `B`) go from the nodes that touched `A` last (the readers after
/// its last write, or else its last writer) to the first node using `B`.
///
/// ```
/// use vyre_analysis::{analyse, BufferClass, Problem, Use};
///
/// let a = analyse(&[BufferClass::Output], &[[Use::write(0), Use::read(99)]]);
/// assert_eq!(a.problems, [Problem::NoSuchBuffer { node: 0, buffer: 99 }]);
/// assert_eq!(a.levels, [0]);
/// ```
#[must_use]
pub fn analyse<N: AsRef<[Use]>>(classes: &[BufferClass], nodes: &[N]) -> Analysis {
    analyse_keyed(classes, &[], nodes)
}

/// What a graph resource may share a device slot with, for [`alias_keys`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharing<K> {
    /// A buffer: may share with any other buffer.
    Buffer,
    /// Shares with nothing (an append buffer, whose count lives from the
    /// start of the run to the read-back after it).
    Alone,
    /// Shares only with resources of the same shape `K` (a texture's
    /// format, width and height), never with a buffer.
    Shape(K),
}

/// The `alias_keys` of [`analyse_keyed`] for resources that may share as
/// `sharing` says: 0 for a buffer, `u64::MAX - i` for resource `i` that
/// shares with nothing, and for a shape one more than the index of the
/// first resource of that shape. `graph!` and the runtime both call it, so
/// the slots the macro emits are the ones the runtime checks them against.
///
/// ```
/// use vyre_analysis::{Sharing, alias_keys};
///
/// let keys = alias_keys(&[
///     Sharing::Buffer,
///     Sharing::Shape("rgba8 64x64"),
///     Sharing::Alone,
///     Sharing::Shape("rgba8 64x64"),
///     Sharing::Buffer,
/// ]);
/// assert_eq!(keys, [0, 2, u64::MAX - 2, 2, 0]);
/// ```
#[must_use]
pub fn alias_keys<K: PartialEq>(sharing: &[Sharing<K>]) -> Vec<u64> {
    sharing
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Sharing::Buffer => 0,
            Sharing::Alone => u64::MAX - i as u64,
            Sharing::Shape(_) => {
                let first = sharing.iter().position(|o| o == s).unwrap_or(i);
                first as u64 + 1
            }
        })
        .collect()
}

/// As [`analyse`], where intermediates share a slot only when their
/// `alias_keys` are equal (a missing key counts as 0): a graph gives each
/// kind of device resource that can stand in for another its own key (all
/// buffers 0; textures one key per format and size), so a texture never
/// takes a buffer's slot.
///
/// ```
/// use vyre_analysis::{analyse_keyed, BufferClass::*, Use};
///
/// let nodes = [
///     vec![Use::write(0)],
///     vec![Use::read(0), Use::write(2)],
///     vec![Use::write(1)],
///     vec![Use::read(1), Use::read(2), Use::write(3)],
/// ];
/// let classes = [Intermediate, Intermediate, Intermediate, Output];
/// // Same key: 0 and 1 share; different keys: they do not.
/// assert_eq!(analyse_keyed(&classes, &[5, 5, 0, 0], &nodes).slots, [0, 0, 1, 2]);
/// assert_eq!(analyse_keyed(&classes, &[5, 6, 0, 0], &nodes).slots, [0, 1, 2, 3]);
/// ```
#[must_use]
pub fn analyse_keyed<N: AsRef<[Use]>>(
    classes: &[BufferClass],
    alias_keys: &[u64],
    nodes: &[N],
) -> Analysis {
    let checked = problem::check(classes, nodes);
    let live_ranges = live::live_ranges(classes, &checked.uses);
    let slots = live::assign_slots(classes, alias_keys, &live_ranges);
    let hazards = hazard::hazards(classes.len(), &checked.uses);
    let mut edges = hazards.edges;
    edges.extend(hazard::reuse_edges(&slots.takeovers, &hazards.frontier));
    hazard::sort_edges(&mut edges);
    let (levels, level_count) = hazard::levels(nodes.len(), &edges);
    Analysis {
        edges,
        levels,
        level_count,
        live_ranges,
        slots: slots.slots,
        slot_count: slots.count,
        problems: checked.problems,
    }
}

impl Analysis {
    /// Memory totals when `bytes[i]` is the size of buffer `i` (missing
    /// sizes count as 0; arithmetic saturates). Unused buffers count nowhere.
    ///
    /// Always `largest_live_set <= aliased <= unaliased`.
    #[must_use]
    pub fn peak_bytes(&self, bytes: &[u64]) -> PeakBytes {
        live::peak_bytes(
            &self.slots,
            self.slot_count,
            &self.live_ranges,
            self.levels.len(),
            bytes,
        )
    }

    /// Slot sizes: for each slot, the largest `bytes` of its buffers (0 if
    /// its buffers are unused; missing sizes count as 0).
    ///
    /// ```
    /// use vyre_analysis::{analyse, BufferClass::*, Use};
    ///
    /// let nodes = [
    ///     vec![Use::write(0)],
    ///     vec![Use::read(0), Use::write(2)],
    ///     vec![Use::write(1)],
    ///     vec![Use::read(1), Use::read(2), Use::write(3)],
    /// ];
    /// let a = analyse(&[Intermediate, Intermediate, Intermediate, Output, Input], &nodes);
    /// // Buffers 0 and 1 share slot 0; the unused input gets an empty slot.
    /// assert_eq!(a.slots, [0, 0, 1, 2, 3]);
    /// assert_eq!(a.slot_bytes(&[8, 40, 4, 2, 1000]), [40, 4, 2, 0]);
    /// ```
    #[must_use]
    pub fn slot_bytes(&self, bytes: &[u64]) -> Vec<u64> {
        live::slot_bytes(&self.slots, self.slot_count, &self.live_ranges, bytes)
    }

    /// Predecessors of a node (deduplicated, sorted); empty for a node that
    /// does not exist.
    #[must_use]
    pub fn dependencies(&self, node: usize) -> Vec<usize> {
        let start = self.edges.partition_point(|e| e.to < node);
        let mut preds: Vec<usize> = self
            .edges
            .iter()
            .skip(start)
            .take_while(|e| e.to == node)
            .map(|e| e.from)
            .collect();
        // Sorted by `from` already (edges are sorted by `(to, from, ..)`).
        preds.dedup();
        preds
    }

    /// Nodes grouped by level: element `l` lists the nodes of level `l` in
    /// program order; `level_count` elements.
    #[must_use]
    pub fn nodes_by_level(&self) -> Vec<Vec<usize>> {
        let count = usize::try_from(self.level_count).unwrap_or(usize::MAX);
        let mut groups = vec![Vec::new(); count.min(self.levels.len())];
        for (node, &level) in self.levels.iter().enumerate() {
            let group = usize::try_from(level)
                .ok()
                .and_then(|level| groups.get_mut(level));
            if let Some(group) = group {
                group.push(node);
            }
        }
        groups
    }

    /// Graphviz DOT text of the graph: one box per node (its label and
    /// level), one ellipse per used buffer, solid edges buffer → node for
    /// reads and node → buffer for writes, and dashed node → node edges for
    /// the dependency edges, labelled with the buffer name and `RAW`, `WAR`,
    /// `WAW` or `reuse`.
    ///
    /// `nodes` should be the uses given to [`analyse`]. Missing labels and
    /// names become `node N` and `buffer N`; quotes and backslashes are
    /// escaped. The output is deterministic.
    ///
    /// ```
    /// use vyre_analysis::{analyse, BufferClass::*, Use};
    ///
    /// let nodes = [vec![Use::read(0), Use::write(1)], vec![Use::read(1), Use::write(2)]];
    /// let a = analyse(&[Input, Intermediate, Output], &nodes);
    /// let dot = a.to_dot("g", &["scale", "sum"], &["x", "t", "y"], &nodes);
    /// assert!(dot.starts_with("digraph \"g\" {\n"));
    /// assert!(dot.contains("    n1 [shape=box, label=\"sum\\nlevel 1\"];\n"));
    /// assert!(dot.contains("    n0 -> n1 [style=dashed, label=\"t RAW\"];\n"));
    /// ```
    #[must_use]
    pub fn to_dot<N: AsRef<[Use]>>(
        &self,
        graph_name: &str,
        node_labels: &[&str],
        buffer_names: &[&str],
        nodes: &[N],
    ) -> String {
        dot::to_dot(self, graph_name, node_labels, buffer_names, nodes)
    }
}
