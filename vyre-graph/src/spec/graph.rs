//! [`GraphSpec`]: a whole graph (kernels, buffers, nodes, fused groups and
//! loops), and its loops that stop themselves ([`LoopSpec`]).

use std::borrow::Cow;

use super::buffer::BufferSpec;
use super::kernel::KernelSpec;
use super::node::{FusedGroup, NodeSpec, ScheduleSpec};
use vyre_analysis::BufferClass;
use vyre_analysis::spec::Feature;
use vyre_analysis::spec::TextureResource;

/// A whole graph: what `graph!` emits and what [`crate::Graph::new`] takes.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphSpec {
    /// The graph's name.
    pub name: Cow<'static, str>,
    /// Kernels, each compiled once.
    pub kernels: Cow<'static, [KernelSpec]>,
    /// Buffers, in declaration order.
    pub buffers: Cow<'static, [BufferSpec]>,
    /// Nodes, in program order.
    pub nodes: Cow<'static, [NodeSpec]>,
    /// Device features the kernels need (`features [...]` in `graph!`):
    /// [`crate::Graph::new`] refuses a device without one of them.
    pub features: Cow<'static, [Feature]>,
    /// The schedule `graph!` computed, if any; hand-built specs leave it
    /// `None` and the runtime works it out.
    pub schedule: Option<ScheduleSpec>,
    /// Groups of nodes that run as one fused dispatch each (empty: every
    /// node is its own dispatch).
    pub fused: Cow<'static, [FusedGroup]>,
    /// Loops that stop themselves on the device (`repeat up to K as i
    /// until ..` in `graph!`; empty: none).
    pub loops: Cow<'static, [LoopSpec]>,
}

/// When a [`LoopSpec`] stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Until {
    /// `until empty(b)`: before each iteration (the first included), stop
    /// when append buffer `b`'s count is 0.
    Empty,
    /// `until zero(f)`: do-while on a `u32` flag: the runtime sets `f` to 0
    /// before each iteration that runs, the body writes non-zero to go on,
    /// and the loop stops after an iteration that left it 0.
    Zero,
}

/// One unrolled iteration of a [`LoopSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopIteration {
    /// Its first node (an index into [`GraphSpec::nodes`]).
    pub first_node: usize,
    /// How many nodes it has (consecutive, at least one).
    pub nodes: usize,
    /// The buffer its condition reads (the `empty` buffer or the `zero`
    /// flag of this iteration, after `ping`/`pong`).
    pub buffer: usize,
}

/// `repeat up to K as i until ..`: up to `K` unrolled iterations whose
/// dispatches become empty (indirect dispatches of zero workgroups) once the
/// condition says so, decided on the device by one small "gate" dispatch at
/// the start of each iteration. The run reports how many iterations did
/// work ([`RunReport::loops`](crate::RunReport::loops)).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopSpec {
    /// A name for messages and `describe()`.
    pub label: Cow<'static, str>,
    /// The stopping condition.
    pub until: Until,
    /// The iterations, in order (`K` of them).
    pub iterations: Cow<'static, [LoopIteration]>,
}

impl LoopSpec {
    /// The loop containing node `node`, and the iteration, if any.
    #[must_use]
    pub(crate) fn iteration_of(&self, node: usize) -> Option<usize> {
        self.iterations
            .iter()
            .position(|it| (it.first_node..it.first_node + it.nodes).contains(&node))
    }
}

impl GraphSpec {
    /// The effective workgroup size of node `node` (out of range: `[1, 1, 1]`).
    #[must_use]
    pub fn node_workgroup_size(&self, node: usize) -> [u32; 3] {
        let Some(n) = self.nodes.get(node) else {
            return [1, 1, 1];
        };
        n.workgroup_size
            .or_else(|| self.kernels.get(n.kernel).map(|k| k.workgroup_size))
            .unwrap_or([1, 1, 1])
    }

    /// The key that decides which intermediates may share a device slot
    /// ([`vyre_analysis::analyse_keyed`]): 0 for every buffer; for a
    /// texture, one more than the index of the first texture of the same
    /// format, width and height (a texture never shares with a buffer);
    /// `u64::MAX - i` for append buffer `i`, which never shares (the runtime
    /// clears its count when the run starts and reads it after the pass, so
    /// its memory must hold nothing else in the meantime).
    #[must_use]
    pub(crate) fn alias_keys(&self) -> Vec<u64> {
        let sharing: Vec<vyre_analysis::Sharing<&TextureResource>> = self
            .buffers
            .iter()
            .map(|b| match &b.texture {
                Some(t) => vyre_analysis::Sharing::Shape(t),
                None if b.append.is_some() => vyre_analysis::Sharing::Alone,
                None => vyre_analysis::Sharing::Buffer,
            })
            .collect();
        vyre_analysis::alias_keys(&sharing)
    }

    /// Index of the buffer called `name`.
    #[must_use]
    pub fn buffer_index(&self, name: &str) -> Option<usize> {
        self.buffers.iter().position(|b| b.name == name)
    }

    /// Buffers the host provides before a run ([`BufferClass::Input`],
    /// [`BufferClass::InOut`] and [`BufferClass::Uniform`]), in declaration
    /// order: the order of a run's inputs.
    pub fn host_inputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers.iter().enumerate().filter_map(|(i, b)| {
            (matches!(
                b.class,
                BufferClass::Input | BufferClass::InOut | BufferClass::Uniform
            ) && !b.is_sampler())
            .then_some(i)
        })
    }

    /// Buffers a run can read back ([`BufferClass::Output`] and
    /// [`BufferClass::InOut`]), in declaration order: the order of a run's
    /// outputs.
    pub fn host_outputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers.iter().enumerate().filter_map(|(i, b)| {
            matches!(b.class, BufferClass::Output | BufferClass::InOut).then_some(i)
        })
    }
}
