//! Fusion of element-wise nodes: vertical and horizontal.
//!
//! Each dependent dispatch costs a barrier and its recording (about 4 µs on
//! an H200, 20 to 50 µs on lavapipe). A run of consecutive element-wise
//! nodes can run as one dispatch whose kernel runs each node's code in turn
//! for one element, with the same result bit for bit.
//!
//! # The rules
//!
//! A node is a candidate when it is not marked `unfused`, runs `over E`, its
//! kernel is element-wise (see [`eligibility`]: only position builtins, no
//! barriers, atomics, workgroup memory, ...) and
//! its workgroup size is `[x, 1, 1]`. A group is a maximal run of
//! consecutive candidates (program order is the order a run records) with:
//!
//! * the same `over` size and the same workgroup size;
//! * every buffer that a member binds `read_write` ("written in the group")
//!   accessed only at the invocation's own index (what the index *is*, not
//!   how it is spelled: see [`index`]) by every member that
//!   binds it, declared by all of them as the same `array<T>` (`T` a 32-bit
//!   scalar or vector): invocation `i` then touches only element `i` of it,
//!   so running member after member per invocation reads exactly what the
//!   separate dispatches would. Buffers nobody in the group writes may be
//!   read at any index (they do not change during the group);
//! * no two of the buffers its kernel binds in memory sharing device memory
//!   (`vyre_analysis` slots); an intermediate kept in registers (see
//!   [`registers`]) is never allocated, so it may share a slot with
//!   anything. The slots stay those of the unfused nodes (the runtime checks
//!   the schedule against its own analysis of them, and runs the members'
//!   order exactly): a group whose in-memory buffers share one is cut short
//!   from its end until they do not;
//! * at most 8 storage and 12 uniform bindings (WebGPU's default limits).
//!
//! Written buffers are bound once (two bindings of one buffer with one of
//! them writable is a usage conflict within a dispatch); buffers only read
//! keep one binding per member. Overrides stay overrides, renamed per member
//! (the dispatch carries each member's values), so each member sees its own.
//!
//! The composed kernel is validated by naga again; a group whose kernel
//! fails (or whose text is not understood) stays unfused. Fusion never
//! causes an error. Each fused kernel also gets a grid-stride entry point
//! (see [`stride`]) when it validates with one.
//!
//! `group.rs` finds the groups, `build.rs` composes each group's kernel
//! (the text from `codegen.rs`, registers from `registers.rs`, the
//! grid-stride entry from `stride.rs`, the positions each member is called
//! with from `positions.rs`), `members.rs` holds what both ask of a member
//! node. `eligibility.rs` reads a kernel's facts, with `index.rs` and
//! `symbolic.rs` deciding what each index is. This `mod.rs` only declares and re-exports.

mod binders;
mod build;
mod codegen;
mod eligibility;
mod group;
mod index;
mod locals;
mod members;
mod positions;
mod registers;
mod stride;
mod symbolic;

pub use codegen::stage;
pub use eligibility::{ElementWise, KernelFacts, kernel_facts};
pub use group::fuse;
#[cfg(test)]
pub use group::with_verdicts;
pub use registers::rewrite as keep_in_register;
