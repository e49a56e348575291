//! Every resource binding a kernel's entry point uses, reflected from
//! naga's IR ([`reflect_bindings`]): its kind, its element's Rust type and
//! size, the smallest binding it accepts, a header struct before a
//! runtime-sized array, and what the entry point actually does with it.

use std::collections::HashMap;

use naga::proc::Layouter;
use naga::valid::{FunctionInfo, GlobalUse};
use naga::{AddressSpace, ArraySize, GlobalVariable, Handle, Module, StorageAccess, TypeInner};
use syn::Ident;
use vyre_analysis::Access;

use super::convert::Converter;
use super::textures::{binding_element, reflect_kind};
use crate::model::{BindingKind, ReflectedBinding, RustTy};
use vyre_analysis::spec::TextureAccess;

/// One kernel's reflection in progress: its module, its layouts, the
/// converter of its types (which collects the structs they need) and every
/// error so far, at the kernel's name.
pub struct Reflecting<'a, 'm> {
    /// The naga IR.
    pub module: &'m Module,
    /// Sizes and alignments of its types.
    pub layouter: &'m Layouter,
    /// WGSL types to Rust types.
    pub converter: &'a mut Converter<'m>,
    /// The kernel's name in the graph.
    pub name: &'a Ident,
    /// Every problem found.
    pub errors: &'a mut Vec<syn::Error>,
}

/// One bound global of the entry point.
struct Global<'g> {
    global: &'g GlobalVariable,
    slot: &'g naga::ResourceBinding,
    name: String,
    usage: GlobalUse,
}

/// The bindings the entry point (whose analysis is `ep_info`) uses, sorted
/// by (group, binding), and the names of the bound globals it does not use.
pub fn reflect_bindings(
    r: &mut Reflecting,
    ep_info: &FunctionInfo,
) -> (Vec<ReflectedBinding>, Vec<String>) {
    let mut bindings = Vec::new();
    let mut unused_bindings = Vec::new();
    let mut seen: HashMap<(u32, u32), String> = HashMap::new();
    for (handle, global) in r.module.global_variables.iter() {
        let Some(slot) = &global.binding else {
            continue;
        };
        let name = global
            .name
            .clone()
            .unwrap_or_else(|| format!("global{}", handle.index()));
        let usage = ep_info[handle];
        if usage.is_empty() {
            unused_bindings.push(name);
            continue;
        }
        let g = Global {
            global,
            slot,
            name,
            usage,
        };
        let kind = match global.space {
            AddressSpace::Storage { access } => {
                if access.contains(StorageAccess::STORE) {
                    BindingKind::ReadWriteStorage
                } else {
                    BindingKind::ReadOnlyStorage
                }
            }
            AddressSpace::Uniform => BindingKind::Uniform,
            AddressSpace::Handle => {
                bindings.extend(texture_binding(r, g, &mut seen));
                continue;
            }
            _ => {
                r.errors.push(syn::Error::new(
                    r.name.span(),
                    format!(
                        "kernel `{}` binds `{}: {}` (group {}, binding {}); graph! kernels bind only storage and uniform buffers, textures and samplers",
                        r.name,
                        g.name,
                        r.converter.wgsl(global.ty),
                        slot.group,
                        slot.binding
                    ),
                ));
                continue;
            }
        };
        if let Some(error) = claim_slot(&mut seen, slot, &g.name, r.name) {
            r.errors.push(error);
            continue;
        }
        bindings.extend(buffer_binding(r, g, kind));
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    (bindings, unused_bindings)
}

/// A texture or sampler binding.
fn texture_binding(
    r: &mut Reflecting,
    g: Global,
    seen: &mut HashMap<(u32, u32), String>,
) -> Option<ReflectedBinding> {
    let wgsl = r.converter.wgsl(g.global.ty);
    let inner = r.module.types.get_handle(g.global.ty).map(|t| &t.inner);
    let kind = inner
        .map_err(|e| e.to_string())
        .and_then(|inner| reflect_kind(inner, &wgsl));
    let kind = match kind {
        Ok(kind) => kind,
        Err(message) => {
            r.errors.push(syn::Error::new(
                r.name.span(),
                format!(
                    "kernel `{}` binds `{}` (group {}, binding {}): {message}",
                    r.name, g.name, g.slot.group, g.slot.binding
                ),
            ));
            return None;
        }
    };
    let (element, element_size) = binding_element(kind);
    let access = match kind {
        BindingKind::StorageTexture { access, .. } => match access {
            TextureAccess::Read => Access::Read,
            TextureAccess::Write => Access::Write,
            TextureAccess::ReadWrite => match (
                g.usage.contains(GlobalUse::READ),
                g.usage.contains(GlobalUse::WRITE),
            ) {
                (true, true) => Access::ReadWrite,
                (false, true) => Access::Write,
                _ => Access::Read,
            },
        },
        _ => Access::Read,
    };
    if let Some(error) = claim_slot(seen, g.slot, &g.name, r.name) {
        r.errors.push(error);
        return None;
    }
    Some(ReflectedBinding {
        name: g.name,
        group: g.slot.group,
        binding: g.slot.binding,
        kind,
        element_size,
        min_binding_size: 0,
        access,
        wgsl_type: wgsl,
        element,
        min_elements: None,
        header: None,
        header_bytes: 0,
        first_member: None,
    })
}

/// How a buffer binding's bytes are laid out: the element type, its size
/// (the array stride for arrays), the smallest binding in bytes and the
/// elements a fixed-size binding holds, plus the leading members of a
/// struct that ends in a runtime-sized array (the header: its generated
/// name, the members, the array's offset).
struct Shape {
    element: Handle<naga::Type>,
    element_size: u32,
    min_binding_size: u64,
    min_elements: Option<u64>,
    header: Option<(String, Vec<naga::StructMember>, u32)>,
}

/// A storage or uniform buffer binding of `kind`.
fn buffer_binding(r: &mut Reflecting, g: Global, kind: BindingKind) -> Option<ReflectedBinding> {
    let wgsl_type = r.converter.wgsl(g.global.ty);
    let ty = r.module.types.get_handle(g.global.ty).ok()?;
    let shape = match buffer_shape(r.module, r.layouter, &g, ty, kind, &wgsl_type) {
        Ok(s) => s,
        Err(message) => {
            r.errors.push(syn::Error::new(
                r.name.span(),
                format!("kernel `{}`: {message}", r.name),
            ));
            return None;
        }
    };
    // The element first, then the header (the converter collects structs
    // in the order it meets them).
    let element = match (&ty.inner, kind) {
        (
            TypeInner::Array { .. } | TypeInner::Struct { .. },
            BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage,
        ) if shape.element != g.global.ty => r.converter.element(shape.element, shape.element_size),
        _ => r.converter.convert(shape.element),
    };
    let header_bytes = shape.header.as_ref().map_or(0, |(_, _, offset)| *offset);
    let first_member = shape.header.as_ref().and_then(|(_, members, _)| {
        let m = members.first()?;
        Some((m.name.clone().unwrap_or_default(), r.converter.wgsl(m.ty)))
    });
    let in_binding = |message: String| {
        syn::Error::new(
            r.name.span(),
            format!(
                "kernel `{}`, binding `{}: {wgsl_type}`: {message}",
                r.name, g.name
            ),
        )
    };
    let header: Option<RustTy> = match shape.header {
        Some((hname, members, offset)) => {
            match r.converter.header(g.global.ty, &hname, &members, offset) {
                Ok(h) => Some(h),
                Err(message) => {
                    r.errors.push(in_binding(message));
                    return None;
                }
            }
        }
        None => None,
    };
    let element = match element {
        Ok(e) => e,
        Err(message) => {
            r.errors.push(in_binding(message));
            return None;
        }
    };
    // `arrayLength(&out)` is a QUERY, not a read of the data: a bounds
    // check must not turn a write-only output into read-write. A binding
    // only queried (or named in a phony assignment) counts as read.
    let writes = kind == BindingKind::ReadWriteStorage
        && g.usage.intersects(GlobalUse::WRITE | GlobalUse::ATOMIC);
    let reads = g.usage.contains(GlobalUse::READ) || !writes;
    let access = match (reads, writes) {
        (true, true) => Access::ReadWrite,
        (false, true) => Access::Write,
        _ => Access::Read,
    };
    Some(ReflectedBinding {
        name: g.name,
        group: g.slot.group,
        binding: g.slot.binding,
        kind,
        element_size: shape.element_size,
        min_binding_size: shape.min_binding_size,
        access,
        wgsl_type,
        element,
        min_elements: shape.min_elements,
        header,
        header_bytes,
        first_member,
    })
}

/// Storage arrays bind elements; everything else binds one value.
fn buffer_shape(
    module: &Module,
    layouter: &Layouter,
    g: &Global,
    ty: &naga::Type,
    kind: BindingKind,
    wgsl_type: &str,
) -> Result<Shape, String> {
    let plain = |element, element_size, min_binding_size, min_elements| Shape {
        element,
        element_size,
        min_binding_size,
        min_elements,
        header: None,
    };
    let gname = &g.name;
    let storage = kind.is_storage_buffer();
    match &ty.inner {
        TypeInner::Array { base, size, stride } if storage => match size {
            ArraySize::Dynamic => Ok(plain(*base, *stride, u64::from(*stride), None)),
            ArraySize::Constant(n) => {
                let bytes = u64::from(*stride) * u64::from(n.get());
                Ok(plain(*base, *stride, bytes, Some(u64::from(n.get()))))
            }
            ArraySize::Pending(_) => Err(format!(
                "`{gname}: {wgsl_type}`: arrays sized by an `override` are not supported"
            )),
        },
        // `struct S { header fields..., items: array<T> }`: elements of
        // `T` after a header of the leading fields.
        TypeInner::Struct { members, .. }
            if storage
                && members.last().is_some_and(|m| {
                    matches!(
                        module.types.get_handle(m.ty).map(|t| &t.inner),
                        Ok(TypeInner::Array {
                            size: ArraySize::Dynamic,
                            ..
                        })
                    )
                }) =>
        {
            let last_type = members
                .last()
                .and_then(|m| module.types.get_handle(m.ty).ok());
            let (
                Some((last, leading)),
                Some(naga::Type {
                    inner: TypeInner::Array { base, stride, .. },
                    ..
                }),
            ) = (members.split_last(), last_type)
            else {
                return Err(format!(
                    "`{gname}: {wgsl_type}`: malformed runtime-sized struct"
                ));
            };
            let sname = ty
                .name
                .clone()
                .unwrap_or_else(|| format!("Struct{}", g.global.ty.index()));
            let hname = format!("{sname}Header");
            if leading.is_empty() {
                Ok(plain(*base, *stride, u64::from(*stride), None))
            } else if module
                .types
                .iter()
                .any(|(_, t)| t.name.as_deref() == Some(hname.as_str()))
            {
                Err(format!(
                    "`{gname}: {wgsl_type}` has fields before its runtime-sized array, which become the generated struct `{hname}`, but the kernel declares a struct `{hname}` too: rename it"
                ))
            } else {
                let min_binding_size = u64::from(last.offset) + u64::from(*stride);
                Ok(Shape {
                    header: Some((hname, leading.to_vec(), last.offset)),
                    ..plain(*base, *stride, min_binding_size, None)
                })
            }
        }
        _ => {
            let size = layouter[g.global.ty].size;
            Ok(plain(g.global.ty, size, u64::from(size), Some(1)))
        }
    }
}

/// Record that `gname` uses `rb`'s group and binding, or the error when
/// another global of kernel `name` already does.
fn claim_slot(
    seen: &mut HashMap<(u32, u32), String>,
    rb: &naga::ResourceBinding,
    gname: &str,
    name: &syn::Ident,
) -> Option<syn::Error> {
    let other = seen.insert((rb.group, rb.binding), gname.to_owned())?;
    Some(syn::Error::new(
        name.span(),
        format!(
            "kernel `{name}`: `{other}` and `{gname}` both use group {}, binding {}",
            rb.group, rb.binding
        ),
    ))
}
