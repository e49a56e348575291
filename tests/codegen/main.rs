//! What `graph!` does to the kernels it is given: fusion invisible in
//! results (`fusion`), WESL modules (`modules`), vector views
//! (`vector_views`), grid-stride launches (`persistent`) and `override`
//! workgroup sizes (`overrides`). Several of these tests run without the
//! `serial()` lock and none counts the device's work, so they stay out of the
//! binaries whose tests read `Gpu::counters`.
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod fusion;
mod modules;
mod overrides;
mod persistent;
mod vector_views;
