//! The repository itself: the house rules (`house`), the public API as
//! `docs/api.md` lists it (`api_list`), one error per UI case
//! (`ui_counts`) and the committed pictures of graphs (`pictures`).
//! `house` and `ui_counts` read files and need no GPU.
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;

mod api_list;
mod house;
mod pictures;
mod ui_counts;
