//! Data-dependent work: append buffers and `over count(..)` (`append`),
//! self-stopping loops (`loops`), their idle iterations (`idle`), learned
//! loop bounds (`loop_bounds`) and what a loop costs (`loop_cost`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;
/// What this binary shares with the browser suite (`tests/common/shared/`).
#[path = "../common/shared"]
mod shared {
    pub mod loops;
}

mod append;
mod idle;
mod loop_bounds;
mod loop_cost;
mod loops;
