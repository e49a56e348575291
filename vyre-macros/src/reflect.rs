//! Stage 4: a validated kernel's interface ([`KernelInterface`]): the entry
//! point, its workgroup size, every buffer binding it uses (kind, element
//! type and size, what the entry point actually does with it) and its
//! `override` constants.

use std::collections::HashMap;

use naga::proc::Layouter;
use naga::valid::GlobalUse;
use naga::{
    AddressSpace, ArraySize, Expression, Handle, Literal, Module, ScalarKind, ShaderStage,
    StorageAccess, TypeInner,
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
}

impl BindingKind {
    /// The WGSL spelling.
    pub fn wgsl(self) -> &'static str {
        match self {
            BindingKind::ReadOnlyStorage => "var<storage, read>",
            BindingKind::ReadWriteStorage => "var<storage, read_write>",
            BindingKind::Uniform => "var<uniform>",
        }
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
    /// Its default, when it has one that evaluates to a number.
    pub default: Option<f64>,
    /// Whether it has an initializer at all.
    pub has_init: bool,
    handle: Handle<naga::Override>,
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
        match self.default {
            Some(d) => format!("`{}` ({}, default {d})", self.name, self.ty.name()),
            None => format!("`{}` ({}, no default)", self.name, self.ty.name()),
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
    /// The workgroup size with the module's override defaults.
    pub workgroup_size: [u32; 3],
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
    module: Module,
    entry_index: usize,
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
            _ => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!(
                        "kernel `{name}` binds `{gname}: {}` (group {}, binding {}); graph! kernels bind only storage and uniform buffers",
                        converter.wgsl(global.ty),
                        rb.group,
                        rb.binding
                    ),
                ));
                continue;
            }
        };
        if let Some(other) = seen.insert((rb.group, rb.binding), gname.clone()) {
            errors.push(syn::Error::new(
                name.span(),
                format!(
                    "kernel `{name}`: `{other}` and `{gname}` both use group {}, binding {}",
                    rb.group, rb.binding
                ),
            ));
            continue;
        }
        let wgsl_type = converter.wgsl(global.ty);
        let Ok(ty) = module.types.get_handle(global.ty) else {
            continue;
        };
        // Storage arrays bind elements; everything else binds one value.
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
            (TypeInner::Struct { members, .. }, _)
                if members.last().is_some_and(|m| {
                    matches!(
                        module.types.get_handle(m.ty).map(|t| &t.inner),
                        Ok(TypeInner::Array {
                            size: ArraySize::Dynamic,
                            ..
                        })
                    )
                }) =>
            {
                Err(format!(
                    "`{gname}: {wgsl_type}` ends in a runtime-sized array; graph buffers are arrays of one element type: bind `array<T>` directly and pass the other fields in a uniform"
                ))
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
                TypeInner::Array { .. },
                BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage,
            ) => converter.element(elem, element_size),
            _ => converter.convert(elem),
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
        });
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    let structs = std::mem::take(&mut converter.structs);

    // Overrides.
    let mut overrides = Vec::new();
    for (handle, o) in module.overrides.iter() {
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
        let default = o
            .init
            .and_then(|init| eval(&module, init, &HashMap::new(), 0))
            .map(Num::as_f64);
        overrides.push(OverrideDecl {
            name: oname,
            key,
            ty,
            default,
            has_init: o.init.is_some(),
            handle,
        });
    }

    // Workgroup size with defaults.
    let size_from_overrides = ep.workgroup_size_overrides.is_some();
    let workgroup_size =
        resolve_workgroup_size(&module, ep, &HashMap::new()).unwrap_or(ep.workgroup_size);

    if !errors.is_empty() {
        return Err(errors);
    }
    let sites = crate::sites::kernel_sites(&loaded, &module, &ep.name);
    Ok(KernelInterface {
        name,
        source: loaded.source,
        entry_point: ep.name.clone(),
        workgroup_size,
        size_from_overrides,
        bindings,
        unused_bindings,
        overrides,
        structs,
        sites,
        entry_index,
        module,
    })
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

    /// The workgroup size with some overrides set (by name → value); `None`
    /// when it cannot be evaluated (an override without a value).
    pub fn workgroup_size_with(&self, values: &[(String, f64)]) -> Option<[u32; 3]> {
        let ep = self.module.entry_points.get(self.entry_index)?;
        let mut set = HashMap::new();
        for (name, value) in values {
            if let Some(o) = self.override_named(name) {
                set.insert(o.handle, *value);
            }
        }
        resolve_workgroup_size(&self.module, ep, &set)
    }
}

fn resolve_workgroup_size(
    module: &Module,
    ep: &naga::EntryPoint,
    set: &HashMap<Handle<naga::Override>, f64>,
) -> Option<[u32; 3]> {
    let Some(exprs) = ep.workgroup_size_overrides else {
        return Some(ep.workgroup_size);
    };
    let mut size = ep.workgroup_size;
    for (slot, expr) in size.iter_mut().zip(exprs) {
        if let Some(expr) = expr {
            let v = eval(module, expr, set, 0)?.as_f64();
            if !(v >= 0.0 && v <= f64::from(u32::MAX) && v.fract() == 0.0) {
                return None;
            }
            *slot = v as u32;
        }
    }
    Some(size)
}

/// A number during override evaluation.
#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::Float(v) => v,
        }
    }
}

/// Evaluates a global (override) expression: literals, constants,
/// overrides (set values, else their defaults), zero values, arithmetic,
/// negation, `min`/`max` and conversions. `None` for anything else.
fn eval(
    module: &Module,
    expr: Handle<Expression>,
    set: &HashMap<Handle<naga::Override>, f64>,
    depth: usize,
) -> Option<Num> {
    if depth > 64 {
        return None;
    }
    let e = module.global_expressions.try_get(expr).ok()?;
    let go = |h: Handle<Expression>| eval(module, h, set, depth + 1);
    Some(match e {
        Expression::Literal(lit) => match *lit {
            Literal::U32(v) => Num::Int(v.into()),
            Literal::I32(v) => Num::Int(v.into()),
            Literal::U64(v) => Num::Int(v.into()),
            Literal::I64(v) => Num::Int(v.into()),
            Literal::AbstractInt(v) => Num::Int(v.into()),
            Literal::F32(v) => Num::Float(v.into()),
            Literal::F64(v) | Literal::AbstractFloat(v) => Num::Float(v),
            Literal::Bool(b) => Num::Int(b.into()),
            _ => return None,
        },
        Expression::Constant(c) => go(module.constants.try_get(*c).ok()?.init)?,
        Expression::Override(o) => match set.get(o) {
            Some(v) => {
                if v.fract() == 0.0 && v.abs() < 1e18 {
                    Num::Int(*v as i128)
                } else {
                    Num::Float(*v)
                }
            }
            None => go(module.overrides.try_get(*o).ok()?.init?)?,
        },
        Expression::ZeroValue(_) => Num::Int(0),
        Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        } => match go(*expr)? {
            Num::Int(v) => Num::Int(v.checked_neg()?),
            Num::Float(v) => Num::Float(-v),
        },
        Expression::As { expr, kind, .. } => match (go(*expr)?, kind) {
            (Num::Float(v), ScalarKind::Uint | ScalarKind::Sint) if v.is_finite() => {
                Num::Int(v.trunc() as i128)
            }
            (Num::Int(v), ScalarKind::Float) => Num::Float(v as f64),
            (n, _) => n,
        },
        Expression::Math { fun, arg, arg1, .. } => {
            let a = go(*arg)?;
            let b = go((*arg1)?)?;
            match (fun, a, b) {
                (naga::MathFunction::Max, Num::Int(a), Num::Int(b)) => Num::Int(a.max(b)),
                (naga::MathFunction::Min, Num::Int(a), Num::Int(b)) => Num::Int(a.min(b)),
                (naga::MathFunction::Max, a, b) => Num::Float(a.as_f64().max(b.as_f64())),
                (naga::MathFunction::Min, a, b) => Num::Float(a.as_f64().min(b.as_f64())),
                _ => return None,
            }
        }
        Expression::Binary { op, left, right } => {
            use naga::BinaryOperator as B;
            match (go(*left)?, go(*right)?) {
                (Num::Int(a), Num::Int(b)) => Num::Int(match op {
                    B::Add => a.checked_add(b)?,
                    B::Subtract => a.checked_sub(b)?,
                    B::Multiply => a.checked_mul(b)?,
                    B::Divide => a.checked_div(b)?,
                    B::Modulo => a.checked_rem(b)?,
                    B::And => a & b,
                    B::InclusiveOr => a | b,
                    B::ExclusiveOr => a ^ b,
                    B::ShiftLeft => a.checked_shl(u32::try_from(b).ok()?)?,
                    B::ShiftRight => a.checked_shr(u32::try_from(b).ok()?)?,
                    _ => return None,
                }),
                (a, b) => {
                    let (a, b) = (a.as_f64(), b.as_f64());
                    Num::Float(match op {
                        B::Add => a + b,
                        B::Subtract => a - b,
                        B::Multiply => a * b,
                        B::Divide => a / b,
                        _ => return None,
                    })
                }
            }
        }
        _ => return None,
    })
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
        (OverrideTy::U32 | OverrideTy::I32, Value::Float(_)) => bad("give an integer"),
        (OverrideTy::Bool, Value::Int(v @ (0 | 1))) => Ok(v as f64),
        (OverrideTy::Bool, _) => bad("give 0 (false) or 1 (true)"),
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
