//! WGSL types converted to the Rust types of the typed API ([`Converter`],
//! the table in `model/rust_types.rs`), with the `#[repr(C)]` structs they
//! need; everything else (`bool`, textures, ...) is an error naming the
//! type.
//!
//! Plain data only: this runs on the naga thread for failed kernels
//! (`partial.rs`), where no span, ident or token may be made. The types
//! become tokens in `emit/rust_types.rs`, on the macro's thread.

use naga::common::wgsl::TypeContext;
use naga::proc::Layouter;
use naga::{ArraySize, Handle, Module, Scalar, ScalarKind, Type, TypeInner, VectorSize};

use crate::model::rust_types::{Field, Prim, RustTy, StructDef};

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
        if !is_rust_ident(&name) {
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
            if !is_rust_ident(&member_name) {
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

/// Whether `name` can be spelled as a Rust identifier (raw, `r#type`, for
/// keywords): Unicode `XID_Start` or `_`, then `XID_Continue`, and not one
/// of the names no raw identifier can take (`self`, `Self`, `super`,
/// `crate`, `_`). Plain string work: it runs on the naga thread, where no
/// span or `Ident` may be made (see `worker.rs`).
pub fn is_rust_ident(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || unicode_ident::is_xid_start(first))
        && chars.all(unicode_ident::is_xid_continue)
        && !matches!(name, "self" | "Self" | "super" | "crate" | "_")
}
