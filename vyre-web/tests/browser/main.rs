//! The browser test suite: graphs of the native tests and examples, run by
//! `graph!`'s async API through WebGPU in headless Chromium
//! (`wasm-bindgen-test`), each result compared element by element with a
//! CPU reference computed here. One test binary, one module per area
//! (`docs/web.md` says how to run it).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;

mod append;
mod batches;
mod errors;
mod in_flight;
mod loops;
mod plan_cache;
mod quickstart;
mod record;
mod reduce_scan;
mod textures;
mod untyped;
