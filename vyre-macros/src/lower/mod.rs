//! Stage 3: the built-in nodes lowered. Takes the parsed graph and every
//! kernel's interface from stage 2 and hands on a new value, the
//! [`LoweredGraph`], in which every reduction and scan (`reduce ...`,
//! `scan ...`) is ordinary generated kernels, intermediate buffers and
//! nodes, so that the analysis, the transforms and the runtime see plain
//! nodes only:
//!
//! ```text
//! GraphInput + Checked -> LoweredGraph   reduce.rs  checks, sizes, kernels, nodes
//!                                        wgsl.rs    the generated kernels' WGSL
//!                                        types.rs   element types, identities, messages
//! ```
//!
//! The generated kernels go through stage 2's load, validate and reflect
//! path (`check::check_kernels`) like the user's. Fusion of reductions with
//! their producers and consumers is a rewrite of stage 5 (`transform/`),
//! which writes the kernels again through [`wgsl`] from the [`Reader`]s
//! listed here.
//!
//! Imports only `check/` (the checking of generated kernels), `model/` and
//! `diag/`. The lowered graph lives here rather than in `model/` because
//! it carries stage 2's [`Checked`].

use naga::valid::Capabilities;
use syn::Ident;

use crate::check::Checked;
use crate::diag::Diagnostics;
use crate::model::GraphInput;
use wgsl::Generated;

pub mod reduce;
pub mod types;
pub mod wgsl;

/// What stage 3 hands on: the graph as the later stages see it.
pub struct LoweredGraph {
    /// The declarations: the user's, with the generated kernels, buffers
    /// and nodes in place of each reduction and scan; `reductions` keeps
    /// only those that failed to lower (the error stub types their
    /// outputs).
    pub graph: GraphInput,
    /// Every kernel's interface (the generated ones after the user's), what
    /// failed kernels say about their types, and the tracked kernel files.
    pub checked: Checked,
    /// For each `reduce` whose source is empty at problem size 0, its
    /// destination and the identity's bytes: what that buffer holds at
    /// n = 0.
    pub identities: Vec<(Ident, Vec<u8>)>,
    /// Every generated node that reads a buffer, for fusion on read and
    /// write (`transform/reduce.rs`).
    pub readers: Vec<Reader>,
}

/// A generated node and the buffer it reads through its `src` global: the
/// reduction's or scan's own source (`first`: what fusion on read may
/// rewrite) or a buffer of partial results of an earlier level.
pub struct Reader {
    /// The buffer it reads through `src`.
    pub src: Ident,
    /// The node's label (also its kernel's name).
    pub node: String,
    /// Its kernel, to be written again for another source.
    pub kernel: Generated,
    /// The graph declares `features [subgroups]` ([`wgsl::Source::subgroups`]).
    pub subgroups: bool,
    /// It reads the reduction's or scan's own source.
    pub first: bool,
}

/// Lowers every reduction and scan of `graph` (see [`reduce`]); errors go
/// to `diag`, and a reduction that fails stays in `graph.reductions`.
pub fn lower(
    graph: GraphInput,
    checked: Checked,
    caps: Capabilities,
    diag: &mut Diagnostics,
) -> LoweredGraph {
    reduce::lower_reductions(graph, checked, caps, diag)
}
