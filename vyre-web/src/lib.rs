//! vyre in a browser: the web example page's entry points (wasm32 only).
//!
//! Natively this crate is empty; `docs/web.md` says how to build the page
//! and run the browser tests.
