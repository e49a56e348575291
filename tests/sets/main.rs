//! Device sets (`Gpus`, `GraphSet`): batches and streams spread over
//! several devices of one lavapipe adapter (`spread`), a device lost in
//! the middle of a batch, all devices failing, `retry` (`failover`),
//! resident data on one device of the set (`resident`), the set's own
//! errors and one device against `Graph::run_batch` (`open`), and
//! lavapipe plus llvmpipe's OpenGL as two adapters (`adapters`, with the
//! `gl` feature: `cargo test --features gl --test sets`).
//!
//! One test binary of the workspace's `tests/`; `tests/README.md` says
//! which binary holds which area and where a new test goes.

mod cases;
mod failover;
mod open;
mod resident;
mod spread;

#[cfg(feature = "gl")]
mod adapters;
