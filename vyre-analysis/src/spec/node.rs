//! [`DispatchSize`]: how many workgroups a node launches.

use super::extent::Extent;

/// How many workgroups a node launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DispatchSize {
    /// One invocation per item: workgroups are `ceil(invocations / workgroup
    /// size x)`, folded into y and z when x exceeds the device limit.
    Invocations(Extent),
    /// An explicit workgroup grid.
    Workgroups([Extent; 3]),
    /// `over count(b)`: one invocation per item of append buffer `b` (an index
    /// into the graph's buffers), `min(count, capacity)`, read on the device:
    /// a runtime-generated step writes the indirect arguments right before
    /// the dispatch (no host round trip; zero items launch no workgroup; past
    /// 65,535 workgroups folded into y and z, so the kernel must be
    /// [`GridFold::Linear`](super::GridFold::Linear)).
    Count(usize),
    /// `grid indirect(b)`: the grid is the first three `u32` of buffer `b`,
    /// written by an earlier node; a dimension over the device limit is
    /// reported after the run (the runtime's `BackendError::GridTooLarge`),
    /// never silently skipped.
    Indirect(usize),
}

impl DispatchSize {
    /// The buffer whose contents size this dispatch on the device, if any.
    #[must_use]
    pub fn device_source(&self) -> Option<usize> {
        match *self {
            DispatchSize::Count(b) | DispatchSize::Indirect(b) => Some(b),
            _ => None,
        }
    }
}
