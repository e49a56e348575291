//! Errors and faults: one test per kind of bad input (`runtime_errors`),
//! faults and load (`faults`), panics inside wgpu or naga
//! (`backend_panics`) and a device lost mid-life (`device_lost`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;
/// What this binary shares with the browser suite (`tests/common/shared/`).
#[path = "../common/shared"]
mod shared {
    pub mod pair;
}

mod backend_panics;
mod device_lost;
mod faults;
mod runtime_errors;
