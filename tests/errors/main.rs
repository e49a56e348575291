//! Errors and faults: one test per kind of bad input (`runtime_errors`),
//! faults and load (`faults`) and panics inside wgpu or naga
//! (`backend_panics`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod backend_panics;
mod faults;
mod runtime_errors;
