//! Stage 1: the `graph!` grammar. Takes the macro's tokens and produces a
//! [`GraphInput`](crate::model::GraphInput), reporting every syntax error
//! into the invocation's diagnostics.
//!
//! One file per declaration kind: the whole input and its items
//! (`graph.rs`), kernels, buffers (append buffers included), textures and
//! samplers, nodes and `repeat` blocks, what alternates or is read on the
//! device (`control.rs`: `ping`/`pong`, `count`, `indirect`, `until`),
//! sizes, override values and the graph's options (`limits`, `fuse`,
//! `features`); `tokens.rs` holds what they share (recovery, `;`).
//!
//! Every parsed piece keeps the user's tokens (identifiers, literals,
//! spans). Sizes are normalised here (they are syntax); override values
//! are kept as expressions because they depend on the `repeat` variable.
//!
//! Imports only `model/` and `diag/`: parsing knows nothing of kernels'
//! WGSL. This `mod.rs` only declares and re-exports.

mod buffers;
mod control;
mod graph;
mod kernels;
mod nodes;
mod options;
mod reduce;
mod sizes;
mod textures;
mod tokens;
mod values;

pub use graph::parse;
