//! The Rust types of the typed API ([`RustTy`]) and the generated
//! `#[repr(C)]` structs ([`StructDef`]) as plain data: stage 2
//! (`check/`) converts WGSL types into them, stage 6 (`emit/`) spells them
//! as tokens.
//!
//! | WGSL | Rust |
//! |---|---|
//! | `f32`, `u32`, `i32` | same |
//! | `u64`, `i64`, `f64` (`features [shader_int64]`, `[shader_f64]`) | same |
//! | `f16` (`features [shader_f16]`) | `vyre_graph::half::f16` |
//! | `atomic<T>` | `T` |
//! | `vecN<T>` | `[T; N]` (`vec3<T>` as an array element, stride 16: `[T; 4]`) |
//! | `matCxR<f32>` | `[[f32; R]; C]` (`R = 3` padded to 4) |
//! | `array<T, N>` | `[T; N]` |
//! | `struct S` | a generated `#[repr(C)]` struct `S` with explicit padding |
//!
//! Plain data only: the conversion runs on the naga thread for failed
//! kernels (`check/partial.rs`), where no span, ident or token may be made.

/// A Rust type the macro can emit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RustTy {
    /// `f32`, `u32` or `i32`.
    Prim(Prim),
    /// `[T; N]`.
    Array(Box<RustTy>, u32),
    /// A generated struct, by name (its definition is in the struct table).
    Struct(String, u32),
}

/// The scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    /// `f32`
    F32,
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `u64`
    U64,
    /// `i64`
    I64,
    /// `f64`
    F64,
    /// `f16` (`half::f16`)
    F16,
    /// `u8`: only a texel channel (`rgba8unorm`), never a WGSL type.
    U8,
    /// `i8`: only a texel channel (`rgba8snorm`, `rgba8sint`).
    I8,
    /// `u16`: only a texel channel (`rgba16uint`, `r16unorm`).
    U16,
    /// `i16`: only a texel channel (`rgba16sint`, `r16snorm`).
    I16,
}

impl Prim {
    /// Every scalar.
    pub const ALL: [Prim; 11] = [
        Prim::F32,
        Prim::U32,
        Prim::I32,
        Prim::U64,
        Prim::I64,
        Prim::F64,
        Prim::F16,
        Prim::U8,
        Prim::I8,
        Prim::U16,
        Prim::I16,
    ];

    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Prim::U8 | Prim::I8 => 1,
            Prim::F16 | Prim::U16 | Prim::I16 => 2,
            Prim::F32 | Prim::U32 | Prim::I32 => 4,
            Prim::U64 | Prim::I64 | Prim::F64 => 8,
        }
    }

    /// As Rust source text.
    pub fn name(self) -> &'static str {
        match self {
            Prim::F32 => "f32",
            Prim::U32 => "u32",
            Prim::I32 => "i32",
            Prim::U64 => "u64",
            Prim::I64 => "i64",
            Prim::F64 => "f64",
            Prim::F16 => "half::f16",
            Prim::U8 => "u8",
            Prim::I8 => "i8",
            Prim::U16 => "u16",
            Prim::I16 => "i16",
        }
    }
}

impl RustTy {
    /// Size in bytes (saturating; sizes come from naga's layouts, which fit).
    pub fn size(&self) -> u64 {
        match self {
            RustTy::Prim(p) => p.size(),
            RustTy::Array(t, n) => t.size().saturating_mul(u64::from(*n)),
            RustTy::Struct(_, size) => u64::from(*size),
        }
    }

    /// As Rust source text, for messages and docs.
    pub fn display(&self) -> String {
        match self {
            RustTy::Prim(p) => p.name().into(),
            RustTy::Array(t, n) => format!("[{}; {n}]", t.display()),
            RustTy::Struct(name, _) => name.clone(),
        }
    }
}

/// A generated `#[repr(C)]` struct mirroring a WGSL struct's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructDef {
    /// The WGSL (and Rust) name.
    pub name: String,
    /// `size_of` (naga's span).
    pub size: u32,
    /// Fields in offset order, padding included.
    pub fields: Vec<Field>,
}

/// One field of a [`StructDef`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Rust field name (`_padN` for padding).
    pub name: String,
    /// Its type (`[u8; k]` for padding is `Array(U8..)`: see `pad`).
    pub ty: RustTy,
    /// Byte offset.
    pub offset: u32,
    /// For padding: its size in bytes, and `ty` is unused.
    pub pad: Option<u32>,
    /// The WGSL type, for docs.
    pub wgsl: String,
}
