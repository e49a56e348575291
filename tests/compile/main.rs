//! `graph!` under the real compiler, the slow tests (feature `slow-tests`):
//! the UI cases' exact diagnostics through trybuild (`ui`) and about 200
//! invalid kernels that must give WGSL errors, never internal ones
//! (`compile_many`), and Cargo rebuilding what a kernel imports
//! (`modules_rebuild`). Each builds crates with Cargo, minutes cold.
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

mod compile_many;
mod modules_rebuild;
mod ui;
