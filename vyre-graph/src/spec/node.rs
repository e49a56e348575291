//! Nodes: one dispatch of a kernel ([`NodeSpec`]), how many workgroups it
//! launches ([`DispatchSize`]), what it binds ([`NodeBinding`]); the
//! schedule `graph!` worked out ([`ScheduleSpec`]); and consecutive nodes
//! fused into one dispatch ([`FusedGroup`]).

use std::borrow::Cow;

use super::kernel::OverrideValue;

pub use vyre_analysis::spec::DispatchSize;

/// A node binds one of its kernel's bindings to a graph buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeBinding {
    /// `@group(..)` of the kernel's binding.
    pub group: u32,
    /// `@binding(..)` of the kernel's binding.
    pub binding: u32,
    /// Index into [`GraphSpec::buffers`](super::GraphSpec::buffers).
    pub buffer: usize,
}

/// One dispatch of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// A name for labels, messages and `describe()`.
    pub label: Cow<'static, str>,
    /// Index into [`GraphSpec::kernels`](super::GraphSpec::kernels).
    pub kernel: usize,
    /// Every binding of the kernel, bound to a graph buffer.
    pub bindings: Cow<'static, [NodeBinding]>,
    /// Pipeline-overridable constants for this node.
    pub overrides: Cow<'static, [OverrideValue]>,
    /// The node's workgroup size when its overrides change it; `None` means
    /// the kernel's [`KernelSpec::workgroup_size`](crate::spec::KernelSpec::workgroup_size).
    pub workgroup_size: Option<[u32; 3]>,
    /// How many workgroups it launches.
    pub size: DispatchSize,
}

/// The schedule worked out from a graph's nodes in program order: `graph!`
/// computes it at compile time (with `vyre-analysis`, the same code the
/// runtime uses) and emits it as static data, so it can be inspected without
/// a GPU (`Name::SPEC.schedule`). [`crate::Graph::new`] checks it against
/// its own analysis of the spec and refuses a schedule that disagrees (a
/// spec from another version of the macro, or edited by hand).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScheduleSpec {
    /// Dependency level of each node: nodes of one level are independent.
    pub levels: Cow<'static, [u32]>,
    /// Device slot of each buffer: buffers with the same slot share memory.
    pub slots: Cow<'static, [usize]>,
    /// Whether independent instances of the graph may run stacked, as one
    /// run over their concatenated buffers ([`crate::Graph::run_batch`]):
    /// `graph!` sets it when every node is element-wise over `n` (each
    /// invocation touches only its own element of every buffer and uses its
    /// index for nothing else), every buffer holds exactly `n` elements and
    /// nothing is appended, looped, textured or uniform. The runtime checks
    /// it again (see [`crate::Graph::run_batch`]); `false` (the default)
    /// runs a batch's instances as recorded copies.
    pub stackable: bool,
}

/// Consecutive nodes that run as one dispatch of one fused kernel.
///
/// `graph!` fuses chains of element-wise nodes (every access of a buffer that
/// the chain writes is at the invocation's own index, all over the same size
/// and workgroup size) into one kernel that runs each node's code in turn for
/// one element: the results are those of the nodes run one after another,
/// without a barrier and a dispatch between them. The nodes stay in
/// [`GraphSpec::nodes`](super::GraphSpec::nodes) (the analysis, the schedule
/// and messages name them); the runtime records [`FusedGroup::dispatch`] where
/// the first member would run and skips the others.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedGroup {
    /// Indices into [`GraphSpec::nodes`](super::GraphSpec::nodes): at least
    /// two, consecutive, ascending.
    pub nodes: Cow<'static, [usize]>,
    /// The one dispatch that replaces them: its `kernel` is the fused
    /// kernel, its bindings bind every buffer of the members (a buffer once
    /// when any member writes it), its overrides are the members' own,
    /// renamed.
    pub dispatch: NodeSpec,
    /// An entry point of the fused kernel that runs the same per-element
    /// code as a grid-stride loop (`graph!` adds one when the group may
    /// loop), so the runtime may launch fewer workgroups than the plain
    /// grid has: see [`crate::GridStride`]. It loops over the plain grid's
    /// invocations, whose count it reads from `.x` of a 16-byte uniform at
    /// binding 0 of group 1 (`GRID_STRIDE_GROUP`), which the runtime binds.
    /// `None`: the group always runs on its plain grid.
    pub grid_stride_entry: Option<Cow<'static, str>>,
}

/// The bind group of the invocation count a fused kernel's grid-stride
/// entry point ([`FusedGroup::grid_stride_entry`]) reads; fused kernels
/// bind group 0 only.
pub const GRID_STRIDE_GROUP: u32 = 1;
