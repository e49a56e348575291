//! Several runs at once: batches (`batch`, `batch_lengths`), streams
//! (`stream`), problem size 0 in every way to run (`size_zero`) and the
//! async twins of batches and streams (`batch_async`), and typed graphs
//! running their batches on an engine of the test's own (`engine`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;
/// What this binary shares with the browser suite (`tests/common/shared/`).
#[path = "../common/shared"]
mod shared {
    pub mod batches;
}

mod batch;
mod batch_async;
mod batch_lengths;
mod engine;
mod size_zero;
mod stream;
