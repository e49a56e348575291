//! Stage 4: a validated kernel's interface ([`KernelInterface`]): the entry
//! point, its workgroup size, every buffer binding it uses (kind, element
//! type and size, what the entry point actually does with it) and its
//! `override` constants.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use naga::back::pipeline_constants::PipelineConstantError;
use naga::proc::Layouter;
use naga::valid::{GlobalUse, ModuleInfo};
use naga::{
    AddressSpace, ArraySize, Expression, Literal, Module, ScalarKind, ShaderStage, StorageAccess,
    TypeInner,
};
use syn::Ident;
use vyre_analysis::Access;

use crate::diag::{list, list_raw};
use crate::rust_types::{Converter, RustTy, StructDef};
use crate::validate::ValidatedKernel;

/// How a kernel binds a buffer (mirrors `vyre_graph::spec::BindingKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `var<storage, read>`
    ReadOnlyStorage,
    /// `var<storage, read_write>`
    ReadWriteStorage,
    /// `var<uniform>`
    Uniform,
    /// `texture_2d<T>`; `filterable` is decided by the graph texture it is
    /// bound to (`textures.rs`).
    SampledTexture {
        /// What texels read as.
        sample: crate::textures::Sample,
        /// Whether the bound format may be filtered.
        filterable: bool,
    },
    /// `texture_storage_2d<format, access>`.
    StorageTexture {
        /// The declared format.
        format: crate::textures::Format,
        /// The declared access.
        access: crate::textures::TexAccess,
    },
    /// `sampler`; `filtering` is decided by the graph sampler bound to it.
    Sampler {
        /// Whether the bound sampler is `linear`.
        filtering: bool,
    },
}

impl BindingKind {
    /// The WGSL spelling.
    pub fn wgsl(self) -> &'static str {
        match self {
            BindingKind::ReadOnlyStorage => "var<storage, read>",
            BindingKind::ReadWriteStorage => "var<storage, read_write>",
            BindingKind::Uniform => "var<uniform>",
            BindingKind::SampledTexture { .. }
            | BindingKind::StorageTexture { .. }
            | BindingKind::Sampler { .. } => "var",
        }
    }

    /// Whether it binds a texture or a sampler.
    pub fn is_texture(self) -> bool {
        matches!(
            self,
            BindingKind::SampledTexture { .. }
                | BindingKind::StorageTexture { .. }
                | BindingKind::Sampler { .. }
        )
    }

    /// Whether it binds a storage buffer.
    pub fn is_storage_buffer(self) -> bool {
        matches!(
            self,
            BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage
        )
    }
}

/// One buffer binding of a kernel's entry point.
#[derive(Clone, Debug)]
pub struct ReflectedBinding {
    /// The WGSL global's name.
    pub name: String,
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// Address space and access mode.
    pub kind: BindingKind,
    /// Bytes per element (the array stride for arrays).
    pub element_size: u32,
    /// The smallest binding accepted, in bytes.
    pub min_binding_size: u64,
    /// What the entry point does with it.
    pub access: Access,
    /// The binding's WGSL type (`array<f32>`).
    pub wgsl_type: String,
    /// The element's Rust type.
    pub element: RustTy,
    /// Elements a fixed-size binding requires (`None`: runtime-sized).
    pub min_elements: Option<u64>,
    /// For a struct ending in a runtime-sized array after other fields: the
    /// generated header struct (the fields before the array, padded to the
    /// array's offset).
    pub header: Option<RustTy>,
    /// Bytes before the first element: the array member's offset (0 for a
    /// plain array).
    pub header_bytes: u32,
    /// A headed binding's first member: its name and WGSL type (an append
    /// buffer's `count: atomic<u32>` or `count: u32`).
    pub first_member: Option<(String, String)>,
}

impl ReflectedBinding {
    /// `src (group 0, binding 0, var<storage, read> array<f32>)`.
    pub fn describe(&self) -> String {
        format!(
            "`{}` (group {}, binding {}, {} {})",
            self.name,
            self.group,
            self.binding,
            self.kind.wgsl(),
            self.wgsl_type
        )
    }
}

/// An `override` declaration.
#[derive(Clone, Debug)]
pub struct OverrideDecl {
    /// The WGSL name.
    pub name: String,
    /// What wgpu's pipeline constants are keyed by: the `@id` as decimal
    /// text when there is one, else the name.
    pub key: String,
    /// The override's scalar type.
    pub ty: OverrideTy,
    /// Its default as naga evaluates it, when that needs no value from a
    /// node (for messages).
    pub default: Option<f64>,
    /// Whether it has an initializer at all.
    pub has_init: bool,
}

/// The scalar type of an override.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverrideTy {
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `f32`, `f16`, `f64`
    Float,
    /// `bool`
    Bool,
}

impl OverrideTy {
    fn name(self) -> &'static str {
        match self {
            OverrideTy::U32 => "u32",
            OverrideTy::I32 => "i32",
            OverrideTy::Float => "float",
            OverrideTy::Bool => "bool",
        }
    }
}

impl OverrideDecl {
    /// `WG (u32, default 64)`.
    pub fn describe(&self) -> String {
        match (self.default, self.has_init) {
            (Some(d), _) => format!("`{}` ({}, default {d})", self.name, self.ty.name()),
            (None, true) => format!("`{}` ({}, with a default)", self.name, self.ty.name()),
            (None, false) => format!("`{}` ({}, no default)", self.name, self.ty.name()),
        }
    }
}

/// What the graph needs to know about a kernel.
pub struct KernelInterface {
    /// The kernel's name in the graph.
    pub name: Ident,
    /// The WGSL source.
    pub source: String,
    /// The chosen entry point.
    pub entry_point: String,
    /// The workgroup size with the module's override defaults, as naga
    /// evaluates it; `Err` says why it cannot be known without values from
    /// a node (never a placeholder).
    pub workgroup_size: Result<[u32; 3], String>,
    /// Whether the workgroup size depends on overrides.
    pub size_from_overrides: bool,
    /// Buffer bindings the entry point uses, sorted by (group, binding).
    pub bindings: Vec<ReflectedBinding>,
    /// Globals with a binding the entry point does not use (for messages).
    pub unused_bindings: Vec<String>,
    /// The module's overrides.
    pub overrides: Vec<OverrideDecl>,
    /// Structs the bindings' Rust types need, in dependency order.
    pub structs: Vec<StructDef>,
    /// Where the workgroup size and the globals are, for messages.
    pub sites: crate::sites::KernelSites,
    /// Where each generated struct comes from in the WGSL (a header struct
    /// from the struct it heads), for errors about its name.
    pub struct_spans: Vec<(String, proc_macro2::Span)>,
    /// `(texture, sampler)` global names the entry point samples together.
    pub sampling: Vec<(String, String)>,
    module: Module,
    info: ModuleInfo,
}

/// Reflects a validated kernel, reporting every problem with it.
pub fn reflect(kernel: ValidatedKernel) -> Result<KernelInterface, Vec<syn::Error>> {
    let ValidatedKernel {
        loaded,
        module,
        info,
    } = kernel;
    let name = loaded.name.clone();
    let mut errors = Vec::new();

    // The entry point.
    let describe_ep = |ep: &naga::EntryPoint| format!("`{}` ({})", ep.name, stage_name(ep.stage));
    let entry_index = match &loaded.entry {
        Some(lit) => {
            let wanted = lit.value();
            match module.entry_points.iter().position(|ep| ep.name == wanted) {
                Some(i) => {
                    if let Some(ep) = module.entry_points.get(i)
                        && ep.stage != ShaderStage::Compute
                    {
                        errors.push(syn::Error::new(
                            lit.span(),
                            format!(
                                "entry point `{wanted}` of kernel `{name}` is a {} shader; graph nodes run `@compute` entry points",
                                stage_name(ep.stage)
                            ),
                        ));
                    }
                    Some(i)
                }
                None => {
                    errors.push(syn::Error::new(
                        lit.span(),
                        format!(
                            "kernel `{name}` has no entry point `{wanted}`{}\nnote: its entry points are {}",
                            crate::suggest::did_you_mean(
                                &wanted,
                                module.entry_points.iter().map(|ep| ep.name.as_str())
                            ),
                            list_raw(module.entry_points.iter().map(describe_ep))
                        ),
                    ));
                    None
                }
            }
        }
        None => {
            let compute: Vec<usize> = module
                .entry_points
                .iter()
                .enumerate()
                .filter(|(_, ep)| ep.stage == ShaderStage::Compute)
                .map(|(i, _)| i)
                .collect();
            match compute.as_slice() {
                [one] => Some(*one),
                [] => {
                    let others = if module.entry_points.is_empty() {
                        "it has no entry points at all".to_owned()
                    } else {
                        format!(
                            "its entry points are {}",
                            list_raw(module.entry_points.iter().map(describe_ep))
                        )
                    };
                    errors.push(syn::Error::new(
                        name.span(),
                        format!("kernel `{name}` has no `@compute` entry point; {others}"),
                    ));
                    None
                }
                many => {
                    let names = many
                        .iter()
                        .filter_map(|&i| module.entry_points.get(i))
                        .map(|ep| ep.name.clone());
                    let first = many
                        .first()
                        .and_then(|&i| module.entry_points.get(i))
                        .map(|ep| ep.name.clone())
                        .unwrap_or_default();
                    errors.push(syn::Error::new(
                        name.span(),
                        format!(
                            "kernel `{name}` has several `@compute` entry points ({}): choose one with `kernel {name} = ... entry \"{first}\";`",
                            list(names)
                        ),
                    ));
                    None
                }
            }
        }
    };
    let Some(entry_index) = entry_index else {
        return Err(errors);
    };
    let Some(ep) = module.entry_points.get(entry_index) else {
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let ep_info = info.get_entry_point(entry_index);

    // Layouts.
    let mut layouter = Layouter::default();
    if let Err(e) = layouter.update(module.to_ctx()) {
        errors.push(syn::Error::new(
            name.span(),
            format!("kernel `{name}`: {e}"),
        ));
        return Err(errors);
    }
    let mut converter = Converter::new(&module, &layouter);

    // Bindings.
    let mut bindings = Vec::new();
    let mut unused_bindings = Vec::new();
    let mut seen: HashMap<(u32, u32), String> = HashMap::new();
    for (handle, global) in module.global_variables.iter() {
        let Some(rb) = &global.binding else { continue };
        let gname = global
            .name
            .clone()
            .unwrap_or_else(|| format!("global{}", handle.index()));
        let usage = ep_info[handle];
        if usage.is_empty() {
            unused_bindings.push(gname);
            continue;
        }
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
                let wgsl = converter.wgsl(global.ty);
                let inner = module.types.get_handle(global.ty).map(|t| &t.inner);
                let kind = inner
                    .map_err(|e| e.to_string())
                    .and_then(|inner| crate::textures::reflect_kind(inner, &wgsl));
                match kind {
                    Ok(kind) => {
                        let (element, element_size) = crate::textures::binding_element(kind);
                        let access = match kind {
                            BindingKind::StorageTexture { access, .. } => match access {
                                crate::textures::TexAccess::Read => Access::Read,
                                crate::textures::TexAccess::Write => Access::Write,
                                crate::textures::TexAccess::ReadWrite => {
                                    match (
                                        usage.contains(GlobalUse::READ),
                                        usage.contains(GlobalUse::WRITE),
                                    ) {
                                        (true, true) => Access::ReadWrite,
                                        (false, true) => Access::Write,
                                        _ => Access::Read,
                                    }
                                }
                            },
                            _ => Access::Read,
                        };
                        if let Some(error) = claim_slot(&mut seen, rb, &gname, &name) {
                            errors.push(error);
                            continue;
                        }
                        bindings.push(ReflectedBinding {
                            name: gname,
                            group: rb.group,
                            binding: rb.binding,
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
                        });
                    }
                    Err(message) => errors.push(syn::Error::new(
                        name.span(),
                        format!(
                            "kernel `{name}` binds `{gname}` (group {}, binding {}): {message}",
                            rb.group, rb.binding
                        ),
                    )),
                }
                continue;
            }
            _ => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!(
                        "kernel `{name}` binds `{gname}: {}` (group {}, binding {}); graph! kernels bind only storage and uniform buffers, textures and samplers",
                        converter.wgsl(global.ty),
                        rb.group,
                        rb.binding
                    ),
                ));
                continue;
            }
        };
        if let Some(error) = claim_slot(&mut seen, rb, &gname, &name) {
            errors.push(error);
            continue;
        }
        let wgsl_type = converter.wgsl(global.ty);
        let Ok(ty) = module.types.get_handle(global.ty) else {
            continue;
        };
        // Storage arrays bind elements; everything else binds one value.
        let mut header: Option<(String, Vec<naga::StructMember>, u32)> = None;
        let shape = match (&ty.inner, kind) {
            (
                TypeInner::Array { base, size, stride },
                BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage,
            ) => match size {
                ArraySize::Dynamic => Ok((*base, *stride, u64::from(*stride), None)),
                ArraySize::Constant(n) => {
                    let bytes = u64::from(*stride) * u64::from(n.get());
                    Ok((*base, *stride, bytes, Some(u64::from(n.get()))))
                }
                ArraySize::Pending(_) => Err(format!(
                    "`{gname}: {wgsl_type}`: arrays sized by an `override` are not supported"
                )),
            },
            // `struct S { header fields..., items: array<T> }`: elements of
            // `T` after a header of the leading fields.
            (
                TypeInner::Struct { members, .. },
                BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage,
            ) if members.last().is_some_and(|m| {
                matches!(
                    module.types.get_handle(m.ty).map(|t| &t.inner),
                    Ok(TypeInner::Array {
                        size: ArraySize::Dynamic,
                        ..
                    })
                )
            }) =>
            {
                match (
                    members.split_last(),
                    members
                        .last()
                        .and_then(|m| module.types.get_handle(m.ty).ok()),
                ) {
                    (
                        Some((last, leading)),
                        Some(naga::Type {
                            inner: TypeInner::Array { base, stride, .. },
                            ..
                        }),
                    ) => {
                        let sname = ty
                            .name
                            .clone()
                            .unwrap_or_else(|| format!("Struct{}", global.ty.index()));
                        let hname = format!("{sname}Header");
                        if leading.is_empty() {
                            Ok((*base, *stride, u64::from(*stride), None))
                        } else if module
                            .types
                            .iter()
                            .any(|(_, t)| t.name.as_deref() == Some(hname.as_str()))
                        {
                            Err(format!(
                                "`{gname}: {wgsl_type}` has fields before its runtime-sized array, which become the generated struct `{hname}`, but the kernel declares a struct `{hname}` too: rename it"
                            ))
                        } else {
                            header = Some((hname, leading.to_vec(), last.offset));
                            Ok((
                                *base,
                                *stride,
                                u64::from(last.offset) + u64::from(*stride),
                                None,
                            ))
                        }
                    }
                    _ => Err(format!(
                        "`{gname}: {wgsl_type}`: malformed runtime-sized struct"
                    )),
                }
            }
            _ => {
                let size = layouter[global.ty].size;
                Ok((global.ty, size, u64::from(size), Some(1)))
            }
        };
        let (elem, element_size, min_binding_size, min_elements) = match shape {
            Ok(s) => s,
            Err(message) => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("kernel `{name}`: {message}"),
                ));
                continue;
            }
        };
        let element = match (&ty.inner, kind) {
            (
                TypeInner::Array { .. } | TypeInner::Struct { .. },
                BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage,
            ) if elem != global.ty => converter.element(elem, element_size),
            _ => converter.convert(elem),
        };
        let header_bytes = header.as_ref().map_or(0, |(_, _, offset)| *offset);
        let first_member = header.as_ref().and_then(|(_, members, _)| {
            let m = members.first()?;
            Some((m.name.clone().unwrap_or_default(), converter.wgsl(m.ty)))
        });
        let header = match header {
            Some((hname, members, offset)) => {
                match converter.header(global.ty, &hname, &members, offset) {
                    Ok(h) => Some(h),
                    Err(message) => {
                        errors.push(syn::Error::new(
                            name.span(),
                            format!("kernel `{name}`, binding `{gname}: {wgsl_type}`: {message}"),
                        ));
                        continue;
                    }
                }
            }
            None => None,
        };
        let element = match element {
            Ok(e) => e,
            Err(message) => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("kernel `{name}`, binding `{gname}: {wgsl_type}`: {message}"),
                ));
                continue;
            }
        };
        // `arrayLength(&out)` is a QUERY, not a read of the data: a bounds
        // check must not turn a write-only output into read-write. A binding
        // only queried (or named in a phony assignment) counts as read.
        let writes = kind == BindingKind::ReadWriteStorage
            && usage.intersects(GlobalUse::WRITE | GlobalUse::ATOMIC);
        let reads = usage.contains(GlobalUse::READ) || !writes;
        let access = match (reads, writes) {
            (true, true) => Access::ReadWrite,
            (false, true) => Access::Write,
            _ => Access::Read,
        };
        bindings.push(ReflectedBinding {
            name: gname,
            group: rb.group,
            binding: rb.binding,
            kind,
            element_size,
            min_binding_size,
            access,
            wgsl_type,
            element,
            min_elements,
            header,
            header_bytes,
            first_member,
        });
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    let structs = std::mem::take(&mut converter.structs);
    let struct_spans = struct_spans(&module, &loaded, &structs);

    // Overrides, and the workgroup size with their defaults, both as naga
    // evaluates them when wgpu creates the pipeline.
    let mut overrides = Vec::new();
    for (_, o) in module.overrides.iter() {
        let ty = match module.types.get_handle(o.ty).map(|t| &t.inner) {
            Ok(TypeInner::Scalar(s)) => match s.kind {
                ScalarKind::Uint => OverrideTy::U32,
                ScalarKind::Sint => OverrideTy::I32,
                ScalarKind::Bool => OverrideTy::Bool,
                _ => OverrideTy::Float,
            },
            _ => OverrideTy::Float,
        };
        let oname = o
            .name
            .clone()
            .unwrap_or_else(|| o.id.map(|id| id.to_string()).unwrap_or_default());
        let key = o.id.map_or_else(|| oname.clone(), |id| id.to_string());
        // A literal default is known even where the evaluation below cannot
        // run (another override has no default).
        let default = o
            .init
            .and_then(|init| module.global_expressions.try_get(init).ok())
            .and_then(literal_value);
        overrides.push(OverrideDecl {
            name: oname,
            key,
            ty,
            default,
            has_init: o.init.is_some(),
        });
    }
    let size_from_overrides = ep.workgroup_size_overrides.is_some();
    let workgroup_size = if module.overrides.is_empty() {
        Ok(ep.workgroup_size)
    } else {
        match process(&module, &info, &ep.name, &overrides, &[]) {
            Ok(p) => {
                for o in &mut overrides {
                    if let Some(v) = p.values.get(&o.key) {
                        o.default = Some(*v);
                    }
                }
                Ok(p.workgroup_size)
            }
            Err(e) if size_from_overrides => Err(e),
            // The size is literal: naga's reflection already holds it.
            Err(_) => Ok(ep.workgroup_size),
        }
    };
    let entry_point = ep.name.clone();

    if !errors.is_empty() {
        return Err(errors);
    }
    let sites = crate::sites::kernel_sites(&loaded, &module, &ep.name);
    let global_name = |h: naga::Handle<naga::GlobalVariable>| {
        module
            .global_variables
            .try_get(h)
            .ok()
            .and_then(|g| g.name.clone())
            .unwrap_or_default()
    };
    let mut sampling: Vec<(String, String)> = ep_info
        .sampling_set
        .iter()
        .map(|k| (global_name(k.image), global_name(k.sampler)))
        .collect();
    sampling.sort();
    Ok(KernelInterface {
        sampling,
        name,
        source: loaded.source,
        entry_point,
        workgroup_size,
        size_from_overrides,
        bindings,
        unused_bindings,
        overrides,
        structs,
        sites,
        struct_spans,
        module,
        info,
    })
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

/// The WGSL declaration of each generated struct (`XHeader` maps to `X`).
fn struct_spans(
    module: &Module,
    loaded: &crate::load::LoadedKernel,
    structs: &[StructDef],
) -> Vec<(String, proc_macro2::Span)> {
    structs
        .iter()
        .map(|def| {
            let wgsl = |n: &str| {
                module.types.iter().find_map(|(h, t)| {
                    (t.name.as_deref() == Some(n) && matches!(t.inner, TypeInner::Struct { .. }))
                        .then(|| module.types.get_span(h).to_range())
                        .flatten()
                })
            };
            let range = wgsl(&def.name).or_else(|| def.name.strip_suffix("Header").and_then(wgsl));
            let span = range.map_or_else(|| loaded.name.span(), |r| loaded.locate(r.start).span);
            (def.name.clone(), span)
        })
        .collect()
}

fn stage_name(stage: ShaderStage) -> &'static str {
    match stage {
        ShaderStage::Compute => "compute",
        ShaderStage::Vertex => "vertex",
        ShaderStage::Fragment => "fragment",
        _ => "non-compute",
    }
}

impl KernelInterface {
    /// The binding called `name`.
    pub fn binding(&self, name: &str) -> Option<&ReflectedBinding> {
        self.bindings.iter().find(|b| b.name == name)
    }

    /// The override called `name`.
    pub fn override_named(&self, name: &str) -> Option<&OverrideDecl> {
        self.overrides.iter().find(|o| o.name == name)
    }

    /// The workgroup size with some overrides set, keyed as pipeline
    /// constants ([`OverrideDecl::key`] → value), evaluated by naga exactly
    /// as pipeline creation evaluates it. `Err` says why it cannot be known.
    pub fn workgroup_size_with(&self, constants: &[(String, f64)]) -> Result<[u32; 3], String> {
        process(
            &self.module,
            &self.info,
            &self.entry_point,
            &self.overrides,
            constants,
        )
        .map(|p| p.workgroup_size)
    }
}

/// What naga's override processing gave.
struct Processed {
    /// The entry point's workgroup size.
    workgroup_size: [u32; 3],
    /// Each remaining override's value, by pipeline constant key.
    values: HashMap<String, f64>,
}

/// Replaces every override of the module with its value (`constants`, else
/// its initializer) with naga's own `process_overrides`, the code wgpu runs
/// when it creates the pipeline, and reads the entry point's workgroup
/// size. A panic in naga becomes an `Err`.
fn process(
    module: &Module,
    info: &ModuleInfo,
    entry: &str,
    overrides: &[OverrideDecl],
    constants: &[(String, f64)],
) -> Result<Processed, String> {
    let table: naga::back::PipelineConstants = constants.iter().cloned().collect();
    let name_of = |key: &str| {
        overrides
            .iter()
            .find(|o| o.key == key)
            .map_or_else(|| key.to_owned(), |o| o.name.clone())
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        naga::back::pipeline_constants::process_overrides(
            module,
            info,
            Some((ShaderStage::Compute, entry)),
            &table,
        )
        .map(|(m, _)| {
            let ep = m.entry_points.iter().find(|ep| ep.name == entry);
            let size = ep.map(|ep| (ep.workgroup_size, ep.workgroup_size_overrides.is_some()));
            let mut values = HashMap::new();
            for (_, o) in m.overrides.iter() {
                let key = o.id.map(|id| id.to_string()).or_else(|| o.name.clone());
                let value = o
                    .init
                    .and_then(|init| m.global_expressions.try_get(init).ok())
                    .and_then(literal_value);
                if let (Some(key), Some(value)) = (key, value) {
                    values.insert(key, value);
                }
            }
            (size, values)
        })
        .map_err(|e| describe_error(e, &name_of))
    }));
    match outcome {
        Err(_) => Err(
            "naga panicked while evaluating its `override`s (an internal error; please report it)"
                .to_owned(),
        ),
        Ok(Err(message)) => Err(message),
        Ok(Ok((Some((size, false)), values))) => Ok(Processed {
            workgroup_size: size,
            values,
        }),
        Ok(Ok(_)) => Err(
            "naga left its workgroup size unevaluated (an internal error; please report it)"
                .to_owned(),
        ),
    }
}

/// What a failed `process_overrides` means, in WGSL terms.
fn describe_error(e: PipelineConstantError, name_of: &dyn Fn(&str) -> String) -> String {
    match e {
        PipelineConstantError::MissingValue(key) => {
            let name = name_of(&key);
            format!("override `{name}` has no value: it has no default and is not set")
        }
        PipelineConstantError::NegativeWorkgroupSize => {
            "its workgroup size evaluates to zero or to a value that is not a `u32`; every dimension must be at least 1".to_owned()
        }
        PipelineConstantError::ConstantEvaluatorError(e) => {
            format!("naga cannot evaluate its `override`s: {e}")
        }
        PipelineConstantError::ValidationError(e) => {
            format!("with these `override` values it is not valid WGSL: {}", e.as_inner())
        }
        other => format!("naga cannot apply these `override` values: {other}"),
    }
}

/// A constant literal as the `f64` wgpu passes overrides as.
fn literal_value(e: &Expression) -> Option<f64> {
    match *e {
        Expression::Literal(lit) => Some(match lit {
            Literal::U32(v) => v.into(),
            Literal::I32(v) => v.into(),
            Literal::F32(v) => v.into(),
            Literal::F64(v) | Literal::AbstractFloat(v) => v,
            Literal::F16(v) => f64::from(f32::from(v)),
            Literal::U16(v) => v.into(),
            Literal::I16(v) => v.into(),
            Literal::Bool(b) => u8::from(b).into(),
            Literal::U64(v) => v as f64,
            Literal::I64(v) | Literal::AbstractInt(v) => v as f64,
        }),
        _ => None,
    }
}

/// Checks a node's value for an override of type `ty`; `Err` says why not.
pub fn check_override_value(o: &OverrideDecl, value: crate::input::Value) -> Result<f64, String> {
    use crate::input::Value;
    let bad = |what: &str| Err(format!("override `{}` is {}; {what}", o.name, o.ty.name()));
    match (o.ty, value) {
        (OverrideTy::U32, Value::Int(v)) if (0..=i128::from(u32::MAX)).contains(&v) => Ok(v as f64),
        (OverrideTy::U32, Value::Int(v)) => bad(&format!("{v} is out of range")),
        (OverrideTy::I32, Value::Int(v))
            if (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v) =>
        {
            Ok(v as f64)
        }
        (OverrideTy::I32, Value::Int(v)) => bad(&format!("{v} is out of range")),
        (OverrideTy::U32 | OverrideTy::I32, Value::Float(_) | Value::Bool(_)) => {
            bad("give an integer")
        }
        (OverrideTy::Bool, Value::Bool(b)) => Ok(u8::from(b).into()),
        (OverrideTy::Bool, Value::Int(v @ (0 | 1))) => Ok(v as f64),
        (OverrideTy::Bool, _) => bad("give `true` or `false` (or 1 or 0)"),
        (OverrideTy::Float, Value::Bool(_)) => bad("give a number"),
        (OverrideTy::Float, v) => {
            let f = v.as_f64();
            if f.is_finite() && f.abs() <= f64::from(f32::MAX) {
                Ok(f)
            } else {
                bad("the value is out of range")
            }
        }
    }
}
