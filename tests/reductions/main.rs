//! Built-in reductions and scans: every operation and type against the CPU
//! (`reduce`, `scan`, `reduce_types`), fusion on read and on write
//! (`reduce_fuse`, `reduce_write`), limits (`reduce_limits`), seeded random
//! graphs (`reduce_random`) and subgroups (`reduce_subgroups`). Most tests
//! here run without the `serial()` lock, in parallel.
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod reduce;
mod reduce_fuse;
mod reduce_limits;
mod reduce_random;
mod reduce_subgroups;
mod reduce_types;
mod reduce_write;
mod scan;
