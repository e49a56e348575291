//! The runtime without the macro's help and inside an application: `Graph`
//! and the seed's `GpuDispatchGraph` (`runtime_graph`), a graph inside a wgpu
//! application (`integration`), moving data in and out (`transfer`),
//! `describe()` against what a plan allocates (`describe_alloc`), traces
//! (`trace`), the backend `WGPU_BACKEND` asks for (`backend`) and the
//! async API the web needs, run natively (`web_api`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

#[path = "../common/mod.rs"]
mod common;
/// What this binary shares with the browser suite (`tests/common/shared/`).
#[path = "../common/shared"]
mod shared {
    pub mod shapes;
    pub mod trace_json;
}

mod backend;
mod describe_alloc;
mod integration;
mod runtime_graph;
mod trace;
mod transfer;
mod web_api;
