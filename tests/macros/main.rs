//! Graphs written with `graph!` against the real runtime: the expansion
//! (`macro_basics`), graphs against CPU references (`macro_graphs`), kernels
//! on folded grids (`fold`) and kernels beyond plain buffers (`reach`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod fold;
mod macro_graphs;
mod reach;

// `pub`: its `#![deny(missing_docs)]` checks that generated items carry
// docs, and the lint only looks at items reachable from the crate root.
pub mod macro_basics;
