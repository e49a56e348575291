//! The browser test suite: graphs of the native tests and examples, run by
//! `graph!`'s async API through WebGPU in headless Chromium
//! (`wasm-bindgen-test`), each result compared element by element with a
//! CPU reference computed here. One test binary, one module per area
//! (`docs/web.md` says how to run it).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;
/// What this suite shares with the native tests (`tests/common/shared/`):
/// graphs, their CPU references, trace checks.
#[path = "../../../tests/common/shared"]
mod shared {
    pub mod batches;
    pub mod loops;
    pub mod pair;
    pub mod shapes;
    pub mod trace_json;
}

mod append;
mod batches;
mod device_lost;
mod errors;
mod in_flight;
mod loops;
mod plan_cache;
mod quickstart;
mod record;
mod reduce_scan;
mod textures;
mod trace;
mod untyped;
