//! WGSL types as Rust types for the typed API.
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
//! Everything else (`bool`, textures, ...) is an error naming the type.

use naga::common::wgsl::TypeContext;
use naga::proc::Layouter;
use naga::{ArraySize, Handle, Module, Scalar, ScalarKind, Type, TypeInner, VectorSize};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

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
}

impl Prim {
    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Prim::U8 => 1,
            Prim::F16 => 2,
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

    /// The type as tokens (structs by their plain name, at the call site).
    pub fn tokens(&self) -> TokenStream {
        match self {
            RustTy::Prim(Prim::F32) => quote!(f32),
            RustTy::Prim(Prim::U32) => quote!(u32),
            RustTy::Prim(Prim::I32) => quote!(i32),
            RustTy::Prim(Prim::U64) => quote!(u64),
            RustTy::Prim(Prim::I64) => quote!(i64),
            RustTy::Prim(Prim::F64) => quote!(f64),
            RustTy::Prim(Prim::F16) => quote!(::vyre_graph::__private::half::f16),
            RustTy::Prim(Prim::U8) => quote!(u8),
            RustTy::Array(t, n) => {
                let t = t.tokens();
                let n = *n as usize;
                quote!([#t; #n])
            }
            RustTy::Struct(name, _) => match rust_ident(name, Span::call_site()) {
                Some(ident) => quote!(#ident),
                None => quote!(()),
            },
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

/// Converts WGSL types of one module, collecting the structs they need (in
/// dependency order).
pub struct Converter<'a> {
    module: &'a Module,
    layouter: &'a Layouter,
    /// Structs reached so far.
    pub structs: Vec<StructDef>,
    depth: usize,
}

impl<'a> Converter<'a> {
    /// A converter over `module` with layouts from `layouter`.
    pub fn new(module: &'a Module, layouter: &'a Layouter) -> Self {
        Converter {
            module,
            layouter,
            structs: Vec::new(),
            depth: 0,
        }
    }

    /// The WGSL spelling of a type.
    pub fn wgsl(&self, ty: Handle<Type>) -> String {
        self.module.to_ctx().type_to_string(ty)
    }

    /// The Rust type of a value of WGSL type `ty`.
    pub fn convert(&mut self, ty: Handle<Type>) -> Result<RustTy, String> {
        let Ok(t) = self.module.types.get_handle(ty) else {
            return Err("invalid type handle".into());
        };
        self.depth += 1;
        if self.depth > 64 {
            self.depth -= 1;
            return Err(format!("type `{}` is nested too deeply", self.wgsl(ty)));
        }
        let result = match &t.inner {
            TypeInner::Scalar(s) | TypeInner::Atomic(s) => self.scalar(*s, ty).map(RustTy::Prim),
            TypeInner::Vector { size, scalar } => {
                let p = self.scalar(*scalar, ty)?;
                Ok(RustTy::Array(Box::new(RustTy::Prim(p)), vector_len(*size)))
            }
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => {
                let p = self.scalar(*scalar, ty)?;
                let rows = match vector_len(*rows) {
                    3 => 4,
                    r => r,
                };
                let column = RustTy::Array(Box::new(RustTy::Prim(p)), rows);
                Ok(RustTy::Array(Box::new(column), vector_len(*columns)))
            }
            TypeInner::Array { base, size, stride } => match size {
                ArraySize::Constant(n) => {
                    let elem = self.element(*base, *stride)?;
                    Ok(RustTy::Array(Box::new(elem), n.get()))
                }
                ArraySize::Dynamic => Err(format!(
                    "`{}`: a runtime-sized array is only supported as the whole binding (`var<storage> x: array<T>`), not nested in another type",
                    self.wgsl(ty)
                )),
                ArraySize::Pending(_) => Err(format!(
                    "`{}`: arrays sized by an `override` are not supported in buffers",
                    self.wgsl(ty)
                )),
            },
            TypeInner::Struct { members, span } => {
                self.structure(ty, t.name.as_deref(), members, *span)
            }
            _ => Err(format!(
                "`{}` has no Rust equivalent for graph buffers",
                self.wgsl(ty)
            )),
        };
        self.depth -= 1;
        result
    }

    /// The Rust type of an array element of type `base` laid out with
    /// `stride` (a `vec3` with stride 16 becomes a 4-element array).
    pub fn element(&mut self, base: Handle<Type>, stride: u32) -> Result<RustTy, String> {
        let elem = self.convert(base)?;
        if elem.size() == u64::from(stride) {
            return Ok(elem);
        }
        match &elem {
            RustTy::Array(t, 3) if t.size() * 4 == u64::from(stride) => {
                Ok(RustTy::Array(t.clone(), 4))
            }
            _ => Err(format!(
                "array element `{}` is {} bytes but its stride is {stride}; the Rust type would not match",
                self.wgsl(base),
                elem.size()
            )),
        }
    }

    fn scalar(&self, s: Scalar, ty: Handle<Type>) -> Result<Prim, String> {
        match (s.kind, s.width) {
            (ScalarKind::Float, 4) => Ok(Prim::F32),
            (ScalarKind::Uint, 4) => Ok(Prim::U32),
            (ScalarKind::Sint, 4) => Ok(Prim::I32),
            (ScalarKind::Uint, 8) => Ok(Prim::U64),
            (ScalarKind::Sint, 8) => Ok(Prim::I64),
            (ScalarKind::Float, 8) => Ok(Prim::F64),
            (ScalarKind::Float, 2) => Ok(Prim::F16),
            _ => Err(format!(
                "`{}` has no Rust equivalent for graph buffers (supported: f32, u32, i32, u64, i64, f64, f16, their vectors, matrices of floats, arrays, atomics and structs of these)",
                self.wgsl(ty)
            )),
        }
    }

    /// The generated header struct `name` of a struct that ends in a
    /// runtime-sized array: its `leading` members, padded to `size` (the
    /// array's offset).
    pub fn header(
        &mut self,
        ty: Handle<Type>,
        name: &str,
        leading: &[naga::StructMember],
        size: u32,
    ) -> Result<RustTy, String> {
        self.structure(ty, Some(name), leading, size)
    }

    fn structure(
        &mut self,
        ty: Handle<Type>,
        name: Option<&str>,
        members: &[naga::StructMember],
        span: u32,
    ) -> Result<RustTy, String> {
        let name = name
            .map(str::to_owned)
            .unwrap_or_else(|| format!("Struct{}", ty.index()));
        if let Some(existing) = self.structs.iter().find(|s| s.name == name) {
            return Ok(RustTy::Struct(existing.name.clone(), existing.size));
        }
        if rust_ident(&name, Span::call_site()).is_none() {
            return Err(format!(
                "struct name `{name}` is not usable as a Rust identifier"
            ));
        }
        let pad_prefix = if members
            .iter()
            .any(|m| m.name.as_deref().is_some_and(|n| n.starts_with("_pad")))
        {
            "_vyre_pad"
        } else {
            "_pad"
        };
        let mut fields = Vec::new();
        let mut at: u32 = 0;
        let mut pads = 0;
        let mut push_pad = |fields: &mut Vec<Field>, from: u32, to: u32| {
            if to > from {
                fields.push(Field {
                    name: format!("{pad_prefix}{pads}"),
                    ty: RustTy::Prim(Prim::U32),
                    offset: from,
                    pad: Some(to - from),
                    wgsl: String::new(),
                });
                pads += 1;
            }
        };
        for (i, m) in members.iter().enumerate() {
            let member_name = m.name.clone().unwrap_or_else(|| format!("field{i}"));
            if rust_ident(&member_name, Span::call_site()).is_none() {
                return Err(format!(
                    "member `{member_name}` of struct `{name}` is not usable as a Rust field name"
                ));
            }
            let rust = self
                .convert(m.ty)
                .map_err(|e| format!("member `{member_name}` of struct `{name}`: {e}"))?;
            if m.offset < at {
                return Err(format!(
                    "member `{member_name}` of struct `{name}` overlaps the previous one"
                ));
            }
            push_pad(&mut fields, at, m.offset);
            let size =
                u32::try_from(rust.size()).map_err(|_| format!("struct `{name}` is too large"))?;
            // The Rust type must fit before the next member (naga's own size may
            // be smaller than the Rust type only for vec3 padding, which never
            // happens outside arrays).
            let layout_size = self.layouter[m.ty].size;
            if size != layout_size {
                return Err(format!(
                    "member `{member_name}` of struct `{name}` is {layout_size} bytes in WGSL but {size} bytes as `{}`",
                    rust.display()
                ));
            }
            fields.push(Field {
                name: member_name,
                ty: rust,
                offset: m.offset,
                pad: None,
                wgsl: self.wgsl(m.ty),
            });
            at = m
                .offset
                .checked_add(size)
                .ok_or_else(|| format!("struct `{name}` is too large"))?;
        }
        if span < at {
            return Err(format!("struct `{name}` has members beyond its size"));
        }
        push_pad(&mut fields, at, span);
        self.structs.push(StructDef {
            name: name.clone(),
            size: span,
            fields,
        });
        Ok(RustTy::Struct(name, span))
    }
}

fn vector_len(size: VectorSize) -> u32 {
    match size {
        VectorSize::Bi => 2,
        VectorSize::Tri => 3,
        VectorSize::Quad => 4,
    }
}

/// A Rust identifier for `name`: raw (`r#type`) for keywords; `None` for
/// names Rust cannot spell (`self`, `crate`, ...). Never panics.
pub fn rust_ident(name: &str, span: Span) -> Option<Ident> {
    let mut ident = syn::parse_str::<Ident>(name)
        .ok()
        .or_else(|| syn::parse_str::<Ident>(&format!("r#{name}")).ok())?;
    if ident.to_string().trim_start_matches("r#") != name {
        return None;
    }
    ident.set_span(span);
    Some(ident)
}

/// The generated items for one struct: definition, `Pod`/`Zeroable`,
/// `Default` and compile-time layout assertions.
pub fn struct_tokens(def: &StructDef, vis: &syn::Visibility, origin: &str) -> TokenStream {
    let Some(name) = rust_ident(&def.name, Span::call_site()) else {
        return TokenStream::new();
    };
    let size = def.size as usize;
    let doc = format!(
        "The WGSL struct `{}` of {origin}, laid out exactly as in WGSL ({} bytes, explicit padding fields).",
        def.name, def.size
    );
    let mut fields = Vec::new();
    let mut asserts = Vec::new();
    for f in &def.fields {
        let Some(fname) = rust_ident(&f.name, Span::call_site()) else {
            continue;
        };
        let offset = f.offset as usize;
        match f.pad {
            Some(bytes) => {
                let bytes = bytes as usize;
                fields.push(quote! {
                    /// Padding to match the WGSL layout (keep it zero).
                    #vis #fname: [u8; #bytes]
                });
            }
            None => {
                let ty = f.ty.tokens();
                let fdoc = format!("`{}: {}` at byte offset {}.", f.name, f.wgsl, f.offset);
                fields.push(quote! {
                    #[doc = #fdoc]
                    #vis #fname: #ty
                });
            }
        }
        asserts.push(quote! {
            ::core::assert!(::core::mem::offset_of!(#name, #fname) == #offset);
        });
    }
    quote! {
        #[doc = #doc]
        #[repr(C)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::cmp::PartialEq)]
        #vis struct #name {
            #(#fields,)*
        }
        // SAFETY: every field is a plain-old-data array or scalar, padding is
        // explicit (`[u8; k]` fields), and the assertions below prove the Rust
        // layout has no implicit padding: the offsets are contiguous and the
        // size is their sum.
        unsafe impl ::vyre_graph::__private::bytemuck::Zeroable for #name {}
        // SAFETY: as above.
        unsafe impl ::vyre_graph::__private::bytemuck::Pod for #name {}
        impl ::core::default::Default for #name {
            fn default() -> Self {
                <Self as ::vyre_graph::__private::bytemuck::Zeroable>::zeroed()
            }
        }
        const _: () = {
            ::core::assert!(::core::mem::size_of::<#name>() == #size);
            #(#asserts)*
        };
    }
}
