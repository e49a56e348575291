//! vyre in a browser: the web example page's entry points (wasm32 only).
//!
//! `www/index.html` loads this crate's `cdylib` (built with `wasm-bindgen
//! --target web`), calls `start()` once, then `blur()` for every run, and
//! checks the result against a CPU blur in JavaScript. Natively this crate
//! is empty. `docs/web.md` says how to build and open the page and how to
//! run the browser tests (`tests/`).

#[cfg(target_arch = "wasm32")]
mod page;
#[cfg(target_arch = "wasm32")]
pub use page::{blur, start};
