//! Stage 4: the graph as a whole. Takes the lowered graph of stage 3 (the
//! [`GraphInput`] with every built-in node lowered, and the
//! [`KernelInterface`] of each kernel, stage 2's and the generated
//! ones), and produces the
//! checked [`GraphAnalysis`] (or reports why not):
//!
//! * names and declarations (`names.rs`): duplicates, reserved names,
//!   empty buffers, node labels, each node's kernel, bindings, buffers and
//!   overrides;
//! * nodes, unrolled (`nodes.rs`): every binding against the buffer it
//!   binds, one element type per buffer, override values and workgroup
//!   sizes (`overrides.rs`), append buffers and sizes read on the device
//!   (`appends.rs`), loops that stop themselves (`loops.rs`), textures and
//!   samplers (`textures.rs`);
//! * WebGPU's default limits (`limits.rs`);
//! * hazards, from `vyre_analysis` (`hazards.rs`), and the generated
//!   structs (`structs.rs`);
//! * when anything failed, what the error stub can still say
//!   (`stub.rs`).
//!
//! Every problem is reported; nothing stops at the first. `graph.rs` runs
//! the steps in order; `context.rs` holds what they share. Imports only
//! `check/` (override evaluation), `model/` and `diag/` (stage 3's output
//! comes as plain parts). This `mod.rs`
//! only declares and re-exports.
//!
//! [`GraphInput`]: crate::model::GraphInput
//! [`KernelInterface`]: crate::model::KernelInterface
//! [`GraphAnalysis`]: crate::model::GraphAnalysis

mod appends;
mod context;
mod graph;
mod hazards;
pub mod limits;
mod loops;
mod names;
mod nodes;
pub mod overrides;
mod structs;
mod stub;
pub mod textures;

pub use graph::analyse;
pub use stub::stub_types;
