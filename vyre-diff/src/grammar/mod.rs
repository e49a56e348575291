//! The generator: a random valid graph from a seed ([`random::generate`]),
//! smaller variants of it for shrinking ([`edit`]), and its text: the
//! `graph!` source ([`render`]) and a Rust module with the oracle
//! ([`oracle`]). Shared by the build script, which writes the cases, and
//! the library, whose oracle helpers use the same shapes and operations.
#![allow(dead_code)]

pub mod calls;
pub mod edit;
pub mod ir;
pub mod oracle;
pub mod oracle_flow;
pub mod random;
pub mod random_flow;
pub mod render;
pub mod render_flow;
pub mod rng;
