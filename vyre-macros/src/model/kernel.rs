//! What stage 2 (`check/`) makes of each kernel: a [`ValidatedKernel`]
//! (naga accepted it) and then its [`KernelInterface`] (the entry point,
//! its workgroup size, every binding it uses, its `override` constants and
//! where they are in the user's source).

use naga::Module;
use naga::valid::ModuleInfo;
use proc_macro2::Span;
use syn::Ident;
use vyre_analysis::Access;

use super::rust_types::{RustTy, StructDef};
use super::source::LoadedKernel;

/// A kernel naga parsed and validated: proof for the reflection stage.
pub struct ValidatedKernel {
    /// The loaded kernel.
    pub loaded: LoadedKernel,
    /// The naga IR.
    pub module: naga::Module,
    /// The validator's analysis (global uses per entry point).
    pub info: ModuleInfo,
}

pub use vyre_analysis::spec::BindingKind;

/// The words before a binding's WGSL type in messages:
/// `var<storage, read>`, `var<storage, read_write>`, `var<uniform>`, and
/// `var` for a texture or sampler (whose type says the rest).
pub fn var_words(kind: BindingKind) -> &'static str {
    if kind.is_texture() {
        "var"
    } else {
        kind.wgsl()
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
            var_words(self.kind),
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
    pub fn name(self) -> &'static str {
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
    pub sites: KernelSites,
    /// Where each generated struct comes from in the WGSL (a header struct
    /// from the struct it heads), for errors about its name.
    pub struct_spans: Vec<(String, proc_macro2::Span)>,
    /// `(texture, sampler)` global names the entry point samples together.
    pub sampling: Vec<(String, String)>,
    /// The naga IR (for evaluating overrides per node, and the
    /// transformations' facts).
    pub module: Module,
    /// The validator's analysis.
    pub info: ModuleInfo,
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
}

/// A place in a kernel: a token range (token form) or the literal / path
/// with the `file:line:col` inside it.
#[derive(Clone)]
pub struct Site {
    /// The first token of the place (the literal or path when not exact).
    pub first: Span,
    /// The last token of the place.
    pub last: Span,
    /// `file:line:col`, when known.
    pub place: Option<String>,
    /// Whether `first..last` is the place itself (token form), rather than
    /// the literal or path that holds it.
    pub exact: bool,
}

/// The sites of one kernel.
#[derive(Clone, Default)]
pub struct KernelSites {
    /// The entry point's `@workgroup_size(...)`.
    pub workgroup_size: Option<Site>,
    /// Each named global with a binding.
    pub globals: Vec<(String, Site)>,
}

impl KernelSites {
    /// The site of global `name`.
    pub fn global(&self, name: &str) -> Option<&Site> {
        self.globals
            .iter()
            .find_map(|(n, s)| (n == name).then_some(s))
    }
}
