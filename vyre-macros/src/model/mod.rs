//! The types the stages hand on, as plain data: what stage 1 parses
//! ([`GraphInput`], `input.rs`), each kernel's source map (`source.rs`),
//! what stage 2 finds in each kernel ([`ValidatedKernel`],
//! [`KernelInterface`], `kernel.rs`), the Rust types of the typed API
//! (`rust_types.rs`), the features a graph may declare (`features.rs`),
//! what the macro adds to the shared texel formats (`texture.rs`), what
//! stage 4 hands to stages 5 and 6 ([`GraphAnalysis`], `analysis.rs`), and
//! the one WGSL lexer every stage that reads WGSL text uses (`lex.rs`).
//!
//! The plain types the runtime spells too (`Extent`, `BindingKind`,
//! `TexelFormat`, `TextureDimension`, `GridFold`, `DispatchSize`,
//! `Feature`, ...) are `vyre_analysis::spec`'s, used here as they are;
//! where the macro knows more at compile time (a span, a declaration's
//! sides), a type of its own here holds the shared one.
//!
//! Takes nothing from any stage: every other folder imports `model/`, and
//! `model/` imports none of them (only `vyre_analysis`, naga's IR and the
//! proc-macro types its spans need). Its methods are small queries over
//! the data; the work is in the stages. This `mod.rs` only declares and
//! re-exports.

pub mod analysis;
pub mod features;
pub mod input;
pub mod kernel;
pub mod lex;
pub mod link;
pub mod rust_types;
pub mod source;
pub mod texture;

pub use analysis::{
    BufferOut, FusedOut, GraphAnalysis, KernelOut, LoopOut, NodeOut, ProblemSize, StubTypes,
};
pub use input::{
    AppendDecl, BinOp, BindArg, BufferClass, BufferDecl, BufferRef, DeviceSize, Extent, ExtentExpr,
    GraphInput, Header, KernelDecl, KernelSource, ModuleDecl, NodeDecl, NodeItem, OverrideArg,
    ReduceDecl, ReduceKind, ReduceOp, RepeatDecl, SizeDecl, TextureDecl, UntilDecl, Value,
    ValueExpr, Written,
};
pub use kernel::{
    BindingKind, KernelInterface, OverrideDecl, OverrideTy, ReflectedBinding, Site,
    ValidatedKernel, var_words,
};
pub use rust_types::{Prim, RustTy, StructDef};
pub use source::{LiteralMap, LoadedKernel, Origin, TokenMap};
