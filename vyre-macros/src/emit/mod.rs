//! Stage 6: tokens. Takes the [`GraphAnalysis`] of stages 4 and 5 and
//! produces the expansion (`api.rs`: the typed API, `spec.rs`: the static
//! `GraphSpec`, `args.rs`: one argument trait per input, `batch.rs` and
//! `engine.rs`: what every engine runs, `docs.rs`: the generated docs, `textures.rs`, `rust_types.rs`: Rust types and the
//! generated structs); or, when anything failed, the stub beside the
//! errors (`stub.rs`, from stage 4's [`StubTypes`]). Both spell the
//! methods' signatures from one table (`methods.rs`).
//!
//! Only `quote!`: every decision was made by the earlier stages. Generated
//! code reaches the runtime only through `::vyre_graph::__private` and uses
//! fully qualified paths, so user code that shadows `Result`, `Vec` or
//! `Option` still works. Imports only `model/` and `diag/`. This `mod.rs`
//! only declares and re-exports.
//!
//! [`GraphAnalysis`]: crate::model::GraphAnalysis
//! [`StubTypes`]: crate::model::StubTypes

mod api;
mod args;
mod batch;
mod docs;
mod engine;
mod methods;
pub mod rust_types;
mod spec;
mod stub;
mod textures;
mod tokens;

pub use api::expand;
pub use stub::stub;
