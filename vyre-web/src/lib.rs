//! vyre in a browser: the web example page's entry points (wasm32 only).
//!
//! `www/index.html` loads this crate's `cdylib` (built with `wasm-bindgen
//! --target web`), calls [`start`] once, then [`blur`] for every run, and
//! checks the result against a CPU blur in JavaScript. Natively this crate
//! is empty. `docs/web.md` says how to build and open the page and how to
//! run the browser tests (`tests/`).

#[cfg(all(target_arch = "wasm32", feature = "graph"))]
mod page;
#[cfg(all(target_arch = "wasm32", feature = "graph"))]
pub use page::{blur, start};
