//! [`Description`]: a readable account of a graph's schedule (nodes, edges,
//! levels, buffers, aliasing); its Graphviz picture is `dot.rs`'s.
//!
//! Beside `graph.rs`, above `run/`: it reads a compiled [`Program`] (and
//! the GPU times a graph kept) and imports only `plan/` and `spec/`;
//! `Graph::describe`, `to_dot` and `node_times` call it.

use std::fmt;

use vyre_analysis::{Edge, hazard_name};

use crate::plan::dispatch::Dispatch;
use crate::plan::launch::MIN_SLOT_BYTES;
use crate::plan::program::Program;
use crate::spec::{BufferClass, DispatchSize, Extent};

/// One node of a [`Description`].
#[derive(Clone, Debug, PartialEq)]
pub struct NodeDescription {
    /// The node's label.
    pub label: String,
    /// Its kernel's label.
    pub kernel: String,
    /// Its dependency level (nodes of one level are independent).
    pub level: u32,
    /// Nodes it depends on.
    pub depends_on: Vec<usize>,
    /// How many workgroups it launches.
    pub size: DispatchSize,
    /// Its dispatch's GPU nanoseconds in the graph's latest profiled run
    /// (`DispatchConfig::with_profile` on a device with timestamps inside
    /// passes).
    pub gpu_ns: Option<u64>,
}

/// One buffer of a [`Description`].
#[derive(Clone, Debug, PartialEq)]
pub struct BufferDescription {
    /// The buffer's name.
    pub name: String,
    /// What it is for.
    pub class: BufferClass,
    /// Bytes per element.
    pub element_size: u32,
    /// Elements as a function of `n`.
    pub len: Extent,
    /// The device slot it lives in (buffers sharing a slot alias). For a
    /// buffer [`in_registers`](BufferDescription::in_registers), the slot
    /// the analysis gave it, which no dispatch binds it to.
    pub slot: usize,
    /// Whether it lives only in registers: an intermediate a fused group
    /// writes and reads inside its one dispatch, so no dispatch binds it
    /// and no plan allocates memory for it (it adds nothing to its slot's
    /// size).
    pub in_registers: bool,
    /// First and last node that need its contents, if used.
    pub live: Option<(usize, usize)>,
    /// Set for an append buffer (`len` is then its capacity).
    pub append: Option<crate::spec::AppendSpec>,
    /// Set for a texture (its format, dimension and extent) or a sampler.
    pub texture: Option<crate::spec::TextureResource>,
}

/// The schedule of a graph, from [`Graph::describe`](crate::Graph::describe) (or a `graph!` type's
/// `describe()`); `Display` prints it as a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// The graph's name.
    pub name: String,
    /// Nodes in program order.
    pub nodes: Vec<NodeDescription>,
    /// Buffers in declaration order.
    pub buffers: Vec<BufferDescription>,
    /// Dependency edges (read-after-write, write-after-read,
    /// write-after-write, reuse of aliased memory).
    pub edges: Vec<Edge>,
    /// Number of levels.
    pub level_count: u32,
    /// Number of device slots after aliasing: a plan creates one device
    /// buffer per slot, [`placeholder_slots`](Description::placeholder_slots)
    /// included.
    pub slot_count: usize,
    /// Slots that hold only buffers kept [in
    /// registers](BufferDescription::in_registers): a plan creates each as
    /// a placeholder of [`Description::PLACEHOLDER_BYTES`] bytes that no
    /// dispatch binds.
    pub placeholder_slots: usize,
    /// Fused groups: each group's dispatch label and member nodes (indices
    /// into `nodes`), run as one dispatch.
    pub fused: Vec<(String, Vec<usize>)>,
    /// Loops that stop themselves: each loop's label and the nodes of
    /// each iteration (`first..first + count`).
    pub loops: Vec<(String, Vec<std::ops::Range<usize>>)>,
    /// For each fused group, the workgroups its grid-stride loop runs on
    /// under [`crate::spec::config::GridStride::Auto`] (when its plain grid has more);
    /// `None` when it always runs its plain grid.
    pub grid_stride: Vec<Option<u32>>,
    /// Control dispatches a run records besides its nodes: one
    /// single-invocation dispatch per loop iteration and wherever append
    /// counts or indirect arguments are worked out on the device (see
    /// [`RunReport::dispatches`](crate::RunReport::dispatches)).
    pub control_dispatches: usize,
}

impl Description {
    /// The size of a placeholder slot (see
    /// [`Description::placeholder_slots`]).
    pub const PLACEHOLDER_BYTES: u64 = MIN_SLOT_BYTES;

    /// The first line of the table: what a plan allocates for the graph's
    /// buffers, and how many of them stay in registers.
    fn fmt_header(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let registers = self.buffers.iter().filter(|b| b.in_registers).count();
        write!(
            f,
            "graph {}: {} nodes, {} levels, ",
            self.name,
            self.nodes.len(),
            self.level_count,
        )?;
        if registers == 0 {
            return writeln!(
                f,
                "{} buffers in {} device slots",
                self.buffers.len(),
                self.slot_count
            );
        }
        let placeholders = match self.placeholder_slots {
            0 => String::new(),
            1 => format!(
                "; 1 unbound placeholder slot of {} bytes stands in their place",
                Self::PLACEHOLDER_BYTES
            ),
            p => format!(
                "; {p} unbound placeholder slots of {} bytes stand in their place",
                Self::PLACEHOLDER_BYTES
            ),
        };
        writeln!(
            f,
            "{} buffers in {} device slots, {registers} more kept in registers by fused dispatches (not allocated{placeholders})",
            self.buffers.len() - registers,
            self.slot_count - self.placeholder_slots,
        )
    }
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_header(f)?;
        for (i, n) in self.nodes.iter().enumerate() {
            let size = match n.size {
                DispatchSize::Invocations(e) => format!("over {e}"),
                DispatchSize::Workgroups([x, y, z]) => format!("grid [{x}, {y}, {z}]"),
                DispatchSize::Count(b) => format!(
                    "over count({})",
                    self.buffers.get(b).map_or("?", |x| x.name.as_str())
                ),
                DispatchSize::Indirect(b) => format!(
                    "grid indirect({})",
                    self.buffers.get(b).map_or("?", |x| x.name.as_str())
                ),
            };
            write!(
                f,
                "  node {i} `{}` ({}) level {} {size}",
                n.label, n.kernel, n.level
            )?;
            if !n.depends_on.is_empty() {
                write!(f, " after {:?}", n.depends_on)?;
            }
            if let Some(ns) = n.gpu_ns {
                write!(f, ", {:.1} µs", ns as f64 / 1e3)?;
            }
            writeln!(f)?;
        }
        for b in &self.buffers {
            b.fmt_line(f)?;
        }
        for (g, (label, members)) in self.fused.iter().enumerate() {
            let names: Vec<&str> = members
                .iter()
                .map(|&m| self.nodes.get(m).map_or("?", |n| n.label.as_str()))
                .collect();
            write!(
                f,
                "  fused {label}: {} nodes in one dispatch ({})",
                members.len(),
                names.join(", ")
            )?;
            match self.grid_stride.get(g).copied().flatten() {
                Some(w) => writeln!(
                    f,
                    "; can run as a grid-stride loop (GridStride::Auto: on {w} workgroups when its grid has more)"
                )?,
                None => writeln!(f)?,
            }
        }
        for (label, iterations) in &self.loops {
            let nodes = |r: &std::ops::Range<usize>| {
                format!("nodes {}..={}", r.start, r.end.saturating_sub(1))
            };
            writeln!(
                f,
                "  loop `{label}`: up to {} iterations, each {} (first {}), stopped by a gate on the device",
                iterations.len(),
                iterations.first().map_or(0, std::ops::Range::len),
                iterations.first().map(nodes).unwrap_or_default()
            )?;
        }
        if self.control_dispatches > 0 {
            writeln!(
                f,
                "  control dispatches: {} per run (loop gates, count resets and indirect arguments, worked out on the device)",
                self.control_dispatches
            )?;
        }
        for e in &self.edges {
            writeln!(
                f,
                "  edge {} -> {} on `{}` ({})",
                e.from,
                e.to,
                self.buffers.get(e.buffer).map_or("?", |b| &b.name),
                hazard_name(e.hazard)
            )?;
        }
        Ok(())
    }
}

/// The schedule of `program` (see `Graph::describe`), with each node's
/// GPU time from `times` (empty: none).
pub(crate) fn describe(program: &Program, times: &[u64]) -> Description {
    let a = &program.analysis;
    let slot_of = |i: usize| a.slots.get(i).copied().unwrap_or(i);
    // A buffer no dispatch binds is kept in registers when a node binds it
    // (a fused group's member); otherwise it is unused.
    let in_registers = |i: usize| {
        !program.bound.get(i).copied().unwrap_or(true)
            && program
                .spec
                .nodes
                .iter()
                .any(|n| n.bindings.iter().any(|b| b.buffer == i))
    };
    let mut slot_bound = vec![false; a.slot_count];
    for (i, &bound) in program.bound.iter().enumerate() {
        if let Some(s) = slot_bound.get_mut(slot_of(i)) {
            *s |= bound;
        }
    }
    Description {
        name: program.spec.name.to_string(),
        nodes: program
            .spec
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeDescription {
                label: n.label.to_string(),
                kernel: program
                    .spec
                    .kernels
                    .get(n.kernel)
                    .map_or_else(String::new, |k| k.label.to_string()),
                level: a.levels.get(i).copied().unwrap_or(0),
                depends_on: a.dependencies(i),
                size: n.size,
                gpu_ns: times.get(i).copied(),
            })
            .collect(),
        buffers: program
            .spec
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| BufferDescription {
                name: b.name.to_string(),
                class: b.class,
                element_size: b.element_size,
                len: b.len,
                slot: slot_of(i),
                in_registers: in_registers(i),
                live: a
                    .live_ranges
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|r| (r.first, r.last)),
                append: b.append,
                texture: b.texture,
            })
            .collect(),
        edges: a.edges.clone(),
        level_count: a.level_count,
        slot_count: a.slot_count,
        placeholder_slots: slot_bound.iter().filter(|&&b| !b).count(),
        fused: program
            .spec
            .fused
            .iter()
            .map(|g| (g.dispatch.label.to_string(), g.nodes.to_vec()))
            .collect(),
        loops: program
            .spec
            .loops
            .iter()
            .map(|l| {
                let iterations = l
                    .iterations
                    .iter()
                    .map(|it| it.first_node..it.first_node + it.nodes)
                    .collect();
                (l.label.to_string(), iterations)
            })
            .collect(),
        control_dispatches: program.steps.groups.len(),
        grid_stride: (0..program.spec.fused.len())
            .map(|g| {
                program
                    .stride
                    .by_group
                    .get(g)
                    .copied()
                    .flatten()
                    .map(|(_, w)| w)
            })
            .collect(),
    }
}

/// Each node's GPU nanoseconds from each dispatch's (`dispatches`, in
/// recording order; see `Graph::node_times`): the members of a fused
/// group show the group's.
pub(crate) fn node_times(program: &Program, dispatches: &[u64]) -> Vec<u64> {
    if dispatches.is_empty() {
        return Vec::new();
    }
    let spec = &program.spec;
    let mut times = vec![0; spec.nodes.len()];
    for (d, &ns) in program.dispatches.iter().zip(dispatches) {
        match *d {
            Dispatch::Node(n) => {
                if let Some(t) = times.get_mut(n) {
                    *t = ns;
                }
            }
            Dispatch::Fused(g) => {
                for &n in spec.fused.get(g).map_or(&[][..], |g| &g.nodes) {
                    if let Some(t) = times.get_mut(n) {
                        *t = ns;
                    }
                }
            }
        }
    }
    times
}

impl BufferDescription {
    /// One line of [`Description`]'s table: a buffer, texture or sampler,
    /// its slot and live range.
    fn fmt_line(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self;
        match (&b.texture, b.append) {
            (Some(crate::spec::TextureResource::Texture(shape)), _) => write!(
                f,
                "  texture `{}` {:?} {} ({}, {}), slot {}",
                b.name,
                b.class,
                texture_sides(shape),
                shape.dimension.keyword(),
                shape.format.name(),
                b.slot
            )?,
            (Some(crate::spec::TextureResource::Sampler(s)), _) => write!(
                f,
                "  sampler `{}` {:?} {:?}, slot {}",
                b.name, s.filter, s.address, b.slot
            )?,
            (None, Some(a)) => write!(
                f,
                "  buffer `{}` append{} capacity [{}] x {} bytes, slot {}",
                b.name,
                if a.grow { " grow" } else { "" },
                b.len,
                b.element_size,
                b.slot
            )?,
            (None, None) if b.in_registers => write!(
                f,
                "  buffer `{}` {:?} [{}] x {} bytes, in registers (never allocated)",
                b.name, b.class, b.len, b.element_size
            )?,
            (None, None) => write!(
                f,
                "  buffer `{}` {:?} [{}] x {} bytes, slot {}",
                b.name, b.class, b.len, b.element_size, b.slot
            )?,
        }
        match b.live {
            Some((first, last)) => writeln!(f, ", live nodes {first}..={last}"),
            None => writeln!(f, ", unused"),
        }
    }
}

/// A texture's declared extent: `n x 3 texels`, `4 x 2 texels x n layers`.
fn texture_sides(shape: &crate::spec::TextureShape) -> String {
    use crate::spec::TextureDimension;
    let (w, h, d) = (shape.width, shape.height, shape.depth_or_array_layers);
    match shape.dimension {
        TextureDimension::D1 => format!("{w} texels"),
        TextureDimension::D2 => format!("{w} x {h} texels"),
        TextureDimension::D2Array => format!("{w} x {h} texels x {d} layers"),
        TextureDimension::D3 => format!("{w} x {h} x {d} texels"),
    }
}
