//! How kernels are described: their bindings ([`BindingSpec`], of a
//! [`BindingKind`]), the kernel itself ([`KernelSpec`]), how it finds its
//! position in a folded grid ([`GridFold`]) and the override values a node
//! sets ([`OverrideValue`]).

use std::borrow::Cow;

use vyre_analysis::Access;

pub use vyre_analysis::spec::{BindingKind, GridFold};

/// One resource binding a kernel declares, as reflected from its WGSL.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindingSpec {
    /// The WGSL global's name.
    pub name: Cow<'static, str>,
    /// `@group(..)`.
    pub group: u32,
    /// `@binding(..)`.
    pub binding: u32,
    /// Address space and access mode.
    pub kind: BindingKind,
    /// Bytes per element: the array stride for `array<T>`, else the size of
    /// the whole type (a struct, a scalar, a fixed-size array).
    pub element_size: u32,
    /// The smallest binding the kernel accepts, in bytes (`0` = no minimum).
    /// For a runtime-sized array this is the size of everything before the
    /// array plus one element.
    pub min_binding_size: u64,
    /// What the entry point actually does with it: a `read_write` buffer the
    /// kernel only reads is [`Access::Read`].
    pub access: Access,
    /// The WGSL type, for messages and `describe()` (e.g. `array<f32>`).
    pub wgsl_type: Cow<'static, str>,
}

/// A compute kernel: WGSL source, its entry point and its interface.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    /// A name for labels and messages.
    pub label: Cow<'static, str>,
    /// The WGSL module source.
    pub source: Cow<'static, str>,
    /// The `@compute` entry point to run.
    pub entry_point: Cow<'static, str>,
    /// `@workgroup_size` of the entry point. When the size comes from
    /// `override` constants, this is the size with the module's defaults,
    /// and nodes that set overrides carry their own in
    /// [`NodeSpec::workgroup_size`](crate::spec::NodeSpec::workgroup_size).
    pub workgroup_size: [u32; 3],
    /// Every resource the entry point's module declares.
    pub bindings: Cow<'static, [BindingSpec]>,
    /// Whether the kernel sees the right position when an `over` size is
    /// folded into a grid of several dimensions (past the device's
    /// `max_compute_workgroups_per_dimension`, 65,535 workgroups).
    pub fold: GridFold,
}

/// A pipeline-overridable constant set for one node.
#[derive(Clone, Debug, PartialEq)]
pub struct OverrideValue {
    /// The `override` declaration's name (or its `@id` as decimal text).
    pub name: Cow<'static, str>,
    /// The value (wgpu passes every override as `f64`).
    pub value: f64,
}

impl BindingSpec {
    /// A binding description for hand-built kernels: a buffer of
    /// `element_size`-byte elements and no minimum size. A read-only or
    /// uniform binding is read; a read-write binding is taken as **written**
    /// (an output): for a kernel that updates a buffer in place, call
    /// [`BindingSpec::with_access`] with [`Access::ReadWrite`](Access::ReadWrite).
    #[must_use]
    pub fn storage(
        name: &'static str,
        group: u32,
        binding: u32,
        kind: BindingKind,
        element_size: u32,
    ) -> Self {
        BindingSpec {
            name: Cow::Borrowed(name),
            group,
            binding,
            kind,
            element_size,
            min_binding_size: 0,
            access: match kind {
                BindingKind::ReadWriteStorage => Access::Write,
                _ => Access::Read,
            },
            wgsl_type: Cow::Borrowed(""),
        }
    }

    /// The same binding with what the kernel does with it set explicitly.
    #[must_use]
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }
}
