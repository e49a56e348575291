//! The checks of a graph description that need nothing but the
//! description: every node binds its kernel's bindings to existing buffers
//! of the right kind (textures and samplers of the right dimension, format
//! and sample type), fused groups and loops refer to what exists, and the
//! dependency analysis (`vyre-analysis`, the same code `graph!` runs at
//! compile time) finds no problem and agrees with the schedule `graph!`
//! emitted. [`validate`] is the first thing `Graph::new` does.

use vyre_analysis::{Access, Analysis, Problem, Use};

use crate::spec::error::{BackendError, Result};
use crate::spec::{
    BindingKind, BindingSpec, BufferClass, BufferSpec, DispatchSize, Filter, GraphSpec, NodeSpec,
    SampleType, TextureResource, Until,
};

/// The buffer uses of a node, from its kernel's reflected access.
pub(crate) fn node_uses(spec: &GraphSpec, node: &NodeSpec) -> Vec<Use> {
    let Some(kernel) = spec.kernels.get(node.kernel) else {
        return Vec::new();
    };
    // Each use with whether its binding is writable storage.
    let mut bound: Vec<(Use, bool)> = node
        .bindings
        .iter()
        .filter_map(|nb| {
            let b = kernel
                .bindings
                .iter()
                .find(|b| b.group == nb.group && b.binding == nb.binding)?;
            let access = match b.kind {
                BindingKind::Uniform
                | BindingKind::ReadOnlyStorage
                | BindingKind::SampledTexture { .. }
                | BindingKind::Sampler { .. } => Access::Read,
                BindingKind::ReadWriteStorage | BindingKind::StorageTexture { .. } => b.access,
            };
            let writable = b.kind == BindingKind::ReadWriteStorage;
            Some((
                Use {
                    buffer: nb.buffer,
                    access,
                },
                writable,
            ))
        })
        .collect();
    // `over count(b)` and `grid indirect(b)` read `b` (its count, its grid).
    if let Some(b) = node.size.device_source() {
        match bound.iter_mut().find(|(u, _)| u.buffer == b) {
            Some((u, _)) => u.access = u.access.union(Access::Read),
            None => bound.push((Use::read(b), false)),
        }
    }
    // One buffer bound twice the same way (a scalar binding and a vector
    // view of it, both read-only or both writable) is one use; bound once
    // read-only and once writable it stays twice, and the analysis refuses
    // it, as wgpu would.
    let mut uses: Vec<(Use, bool)> = Vec::with_capacity(bound.len());
    for (u, writable) in bound {
        match uses
            .iter_mut()
            .find(|(v, w)| v.buffer == u.buffer && *w == writable)
        {
            Some((v, _)) => v.access = v.access.union(u.access),
            None => uses.push((u, writable)),
        }
    }
    uses.into_iter().map(|(u, _)| u).collect()
}

fn describe_binding(b: &BindingSpec) -> String {
    let ty = if b.wgsl_type.is_empty() {
        format!("{}-byte elements", b.element_size)
    } else {
        b.wgsl_type.to_string()
    };
    format!(
        "{} (group {}, binding {}, {} {})",
        b.name,
        b.group,
        b.binding,
        b.kind.wgsl(),
        ty
    )
}

/// Check a spec for consistency and analyse it.
pub(crate) fn validate(spec: &GraphSpec) -> Result<Analysis> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    for (i, b) in spec.buffers.iter().enumerate() {
        if b.element_size == 0 && !b.is_sampler() {
            return Err(invalid(format!(
                "buffer `{}` has 0-byte elements; give it the size of its element type",
                b.name
            )));
        }
        if spec.buffers[..i].iter().any(|o| o.name == b.name) {
            return Err(invalid(format!(
                "two buffers are called `{}`; give each a unique name",
                b.name
            )));
        }
    }
    for node in spec.nodes.iter() {
        check_node(spec, node)?;
    }
    check_fused(spec)?;
    let classes: Vec<BufferClass> = spec.buffers.iter().map(|b| b.class).collect();
    let mut uses: Vec<Vec<Use>> = spec.nodes.iter().map(|n| node_uses(spec, n)).collect();
    check_loops(spec)?;
    add_gate_uses(spec, &mut uses);
    let analysis = vyre_analysis::analyse_keyed(&classes, &spec.alias_keys(), &uses);
    if let Some(schedule) = &spec.schedule
        && (*schedule.levels != *analysis.levels || *schedule.slots != *analysis.slots)
    {
        return Err(invalid(format!(
            "its schedule (levels {:?}, slots {:?}) disagrees with the runtime's analysis of its nodes (levels {:?}, slots {:?}); it was made by another version of vyre-macros: use matching versions of vyre-graph and vyre-macros, or set `schedule: None`",
            schedule.levels, schedule.slots, analysis.levels, analysis.slots
        )));
    }
    // Inside a fused dispatch the members' accesses interleave per element:
    // two of its buffers sharing device memory would overwrite each other.
    for group in spec.fused.iter() {
        let slots: Vec<(usize, usize)> = group
            .dispatch
            .bindings
            .iter()
            .map(|nb| {
                (
                    nb.buffer,
                    analysis.slots.get(nb.buffer).copied().unwrap_or(usize::MAX),
                )
            })
            .collect();
        if let Some((a, b)) = slots.iter().enumerate().find_map(|(i, &(a, sa))| {
            slots[..i]
                .iter()
                .find(|&&(b, sb)| b != a && sb == sa)
                .map(|&(b, _)| (a, b))
        }) {
            return Err(invalid(format!(
                "fused group `{}` binds buffers {b} and {a}, which share device memory; fuse only nodes whose buffers are all live at once",
                group.dispatch.label
            )));
        }
    }
    for problem in &analysis.problems {
        let buffer = |i: usize| spec.buffers.get(i).map_or("?", |b| &*b.name);
        let node = |i: usize| spec.nodes.get(i).map_or("?", |n| &*n.label);
        let reason = match *problem {
            Problem::Unused { .. } => continue,
            Problem::WritesReadOnly { node: n, buffer: b } => format!(
                "node `{}` writes `{}`, which is read-only ({}); declare it as an inout or intermediate buffer",
                node(n),
                buffer(b),
                classes
                    .get(b)
                    .map_or_else(|| "?".to_string(), |c| format!("{c:?}"))
            ),
            // A `zero` loop's gate sets its flag before the first node.
            Problem::ReadBeforeWrite { node: n, buffer: b } if written_by_gate(spec, n, b) => {
                continue;
            }
            // The first append reads a count the runtime set to 0.
            Problem::ReadBeforeWrite { node: n, buffer: b }
                if spec.buffers.get(b).is_some_and(|x| x.append.is_some())
                    && uses
                        .get(n)
                        .is_some_and(|u| u.iter().any(|u| u.buffer == b && u.access.writes())) =>
            {
                continue;
            }
            Problem::ReadBeforeWrite { node: n, buffer: b } => format!(
                "node `{}` reads `{}` before any node writes it; write it first or make it an input",
                node(n),
                buffer(b)
            ),
            Problem::OutputNeverWritten { buffer: b } => format!(
                "no node writes output `{}`; bind it to a kernel binding that writes it",
                buffer(b)
            ),
            Problem::NoSuchBuffer { node: n, buffer: b } => {
                format!("node `{}` uses buffer {b}, which does not exist", node(n))
            }
            Problem::DuplicateUse { node: n, buffer: b } => format!(
                "node `{}` binds `{}` twice; a buffer may appear once per node",
                node(n),
                buffer(b)
            ),
        };
        return Err(invalid(reason));
    }
    Ok(analysis)
}

/// Check one node's (or fused dispatch's) bindings against its kernel.
fn check_node(spec: &GraphSpec, node: &NodeSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    let Some(kernel) = spec.kernels.get(node.kernel) else {
        return Err(invalid(format!(
            "node `{}` uses kernel {} but the graph has {} kernels",
            node.label,
            node.kernel,
            spec.kernels.len()
        )));
    };
    let mismatch = |reason: String| BackendError::BindingMismatch {
        node: node.label.to_string(),
        kernel: kernel.label.to_string(),
        reason,
    };
    let declared = || {
        kernel
            .bindings
            .iter()
            .map(describe_binding)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, nb) in node.bindings.iter().enumerate() {
        let Some(b) = kernel
            .bindings
            .iter()
            .find(|b| b.group == nb.group && b.binding == nb.binding)
        else {
            return Err(mismatch(format!(
                "group {}, binding {} is not declared by the kernel, which declares: {}; bind only those",
                nb.group,
                nb.binding,
                declared()
            )));
        };
        if node.bindings[..i]
            .iter()
            .any(|o| o.group == nb.group && o.binding == nb.binding)
        {
            return Err(mismatch(format!(
                "`{}` is bound twice; bind each of the kernel's bindings once",
                b.name
            )));
        }
        let Some(buffer) = spec.buffers.get(nb.buffer) else {
            return Err(mismatch(format!(
                "`{}` is bound to buffer {} but the graph has {} buffers; use an index into `GraphSpec::buffers`",
                b.name,
                nb.buffer,
                spec.buffers.len()
            )));
        };
        if b.kind.is_texture() || buffer.texture.is_some() {
            match check_binding(b, buffer) {
                Some(reason) => return Err(mismatch(reason)),
                None => continue,
            }
        }
        let uniform_binding = b.kind == BindingKind::Uniform;
        let uniform_buffer = buffer.class == BufferClass::Uniform;
        if uniform_binding != uniform_buffer {
            return Err(mismatch(format!(
                "`{}` is {} but buffer `{}` is {}; bind uniform buffers to var<uniform> and the others to var<storage>",
                b.name,
                b.kind.wgsl(),
                buffer.name,
                if uniform_buffer {
                    "a uniform buffer"
                } else {
                    "a storage buffer"
                }
            )));
        }
        if b.element_size != buffer.element_size && !is_vector_view(b, buffer) {
            return Err(mismatch(format!(
                "`{}` has {}-byte elements but buffer `{}` has {}-byte elements; declare the buffer with the kernel's element type",
                b.name, b.element_size, buffer.name, buffer.element_size
            )));
        }
    }
    if let Some(missing) = kernel.bindings.iter().find(|b| {
        !node
            .bindings
            .iter()
            .any(|nb| nb.group == b.group && nb.binding == b.binding)
    }) {
        return Err(mismatch(format!(
            "`{}` is not bound; bind every binding the kernel declares: {}",
            missing.name,
            declared()
        )));
    }
    Ok(())
}

/// Check the fused groups: members exist, are consecutive and belong to
/// one group; each dispatch binds its kernel and only its members' buffers.
fn check_fused(spec: &GraphSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    let mut seen = vec![false; spec.nodes.len()];
    for group in spec.fused.iter() {
        let label = &group.dispatch.label;
        let consecutive = group.nodes.windows(2).all(|w| w[1] == w[0] + 1);
        if group.nodes.len() < 2 || !consecutive {
            return Err(invalid(format!(
                "fused group `{label}` has nodes {:?}; a group holds at least two consecutive nodes, in order",
                group.nodes
            )));
        }
        for &n in group.nodes.iter() {
            match seen.get_mut(n) {
                None => {
                    return Err(invalid(format!(
                        "fused group `{label}` names node {n} but the graph has {} nodes",
                        spec.nodes.len()
                    )));
                }
                Some(true) => {
                    return Err(invalid(format!(
                        "node {n} is in two fused groups; a node belongs to at most one"
                    )));
                }
                Some(s) => *s = true,
            }
        }
        check_node(spec, &group.dispatch)?;
        let foreign = group.dispatch.bindings.iter().find(|nb| {
            !group
                .nodes
                .iter()
                .any(|&n| spec.nodes[n].bindings.iter().any(|m| m.buffer == nb.buffer))
        });
        if let Some(nb) = foreign {
            return Err(invalid(format!(
                "fused group `{label}` binds buffer {}, which none of its nodes binds",
                nb.buffer
            )));
        }
    }
    Ok(())
}

/// Each loop iteration's gate reads its condition's buffer (and a `zero`
/// gate resets the flag): uses by the iteration's first node, so the hazard
/// analysis (here and in `graph!`) orders them.
fn add_gate_uses(spec: &GraphSpec, uses: &mut [Vec<vyre_analysis::Use>]) {
    for lp in spec.loops.iter() {
        for (i, it) in lp.iterations.iter().enumerate() {
            let access = match (lp.until, i) {
                (Until::Empty, _) => Access::Read,
                (Until::Zero, 0) => Access::Write,
                (Until::Zero, _) => Access::ReadWrite,
            };
            let Some(u) = uses.get_mut(it.first_node) else {
                continue;
            };
            match u.iter_mut().find(|u| u.buffer == it.buffer) {
                Some(u) => u.access = u.access.union(access),
                None => {
                    u.push(Use {
                        buffer: it.buffer,
                        access,
                    });
                    u.sort_by_key(|u| u.buffer);
                }
            }
        }
    }
}

/// Whether node `node` reading `buffer` first is a `zero` loop's first node
/// reading the flag its gate set to 0 just before.
fn written_by_gate(spec: &GraphSpec, node: usize, buffer: usize) -> bool {
    spec.loops.iter().any(|lp| {
        lp.until == Until::Zero
            && lp
                .iterations
                .first()
                .is_some_and(|it| it.first_node == node && it.buffer == buffer)
    })
}

/// Checks the spec's device-side sizes and loops refer to what exists.
fn check_loops(spec: &GraphSpec) -> Result<()> {
    let invalid = |reason: String| BackendError::InvalidProgram {
        graph: spec.name.to_string(),
        reason,
    };
    for node in spec.nodes.iter() {
        if let Some(b) = node.size.device_source()
            && b >= spec.buffers.len()
        {
            return Err(invalid(format!(
                "node `{}` is sized by buffer {b}, which does not exist ({} buffers)",
                node.label,
                spec.buffers.len()
            )));
        }
        if let DispatchSize::Count(b) = node.size
            && spec.buffers[b].header_bytes < 4
        {
            return Err(invalid(format!(
                "node `{}` runs over the count of `{}`, which has no header to hold one; make it an append buffer (`append: Some(..)`, a header starting with a `u32` count)",
                node.label, spec.buffers[b].name
            )));
        }
    }
    // A fused dispatch runs unconditionally on a host-planned grid.
    for group in spec.fused.iter() {
        let dynamic = group.nodes.iter().find(|&&n| {
            spec.nodes
                .get(n)
                .is_some_and(|node| node.size.device_source().is_some())
                || spec.loops.iter().any(|l| l.iteration_of(n).is_some())
        });
        if let Some(&n) = dynamic {
            return Err(invalid(format!(
                "fused group `{}` contains node `{}`, which is sized on the device or inside a loop that stops itself; never fuse such nodes",
                group.dispatch.label, spec.nodes[n].label
            )));
        }
        if group.dispatch.size.device_source().is_some() {
            return Err(invalid(format!(
                "fused group `{}` is sized on the device; a fused dispatch needs a host-planned size",
                group.dispatch.label
            )));
        }
    }
    for lp in spec.loops.iter() {
        if lp.iterations.is_empty() {
            return Err(invalid(format!(
                "loop `{}` has no iteration; give it at least one",
                lp.label
            )));
        }
        for it in lp.iterations.iter() {
            if it.nodes == 0
                || it.first_node.saturating_add(it.nodes) > spec.nodes.len()
                || it.buffer >= spec.buffers.len()
            {
                return Err(invalid(format!(
                    "loop `{}` has an iteration of nodes {}..{} over buffer {}, outside the graph's {} nodes and {} buffers",
                    lp.label,
                    it.first_node,
                    it.first_node.saturating_add(it.nodes),
                    it.buffer,
                    spec.nodes.len(),
                    spec.buffers.len()
                )));
            }
        }
    }
    Ok(())
}

/// Why kernel binding `b` cannot bind graph resource `buffer`, if it
/// cannot (a texture binding needs a texture or sampler of the right kind,
/// dimension and format; a buffer binding needs a buffer).
fn check_binding(b: &BindingSpec, buffer: &BufferSpec) -> Option<String> {
    let dimension_of = |kind: BindingKind| match kind {
        BindingKind::SampledTexture { dimension, .. }
        | BindingKind::StorageTexture { dimension, .. } => Some(dimension),
        _ => None,
    };
    if let (Some(want), Some(TextureResource::Texture(shape))) =
        (dimension_of(b.kind), &buffer.texture)
        && want != shape.dimension
    {
        return Some(format!(
            "`{}` is {} but texture `{}` is a {} {}; declare the texture as `{}` or bind one of that dimension",
            b.name,
            b.kind.wgsl(),
            buffer.name,
            shape.dimension.keyword(),
            shape.declared(),
            want.keyword()
        ));
    }
    match (b.kind, &buffer.texture) {
        (BindingKind::Sampler { filtering }, Some(TextureResource::Sampler(s))) => {
            (filtering != (s.filter == Filter::Linear)).then(|| {
                format!(
                    "`{}` is laid out as a {} sampler but sampler `{}` is {:?}; make the layout match the sampler",
                    b.name,
                    if filtering { "filtering" } else { "non-filtering" },
                    buffer.name,
                    s.filter
                )
            })
        }
        (BindingKind::SampledTexture { sample, .. }, Some(TextureResource::Texture(shape))) => {
            let fits = match (sample, shape.format.sample_type()) {
                // A 32-bit float format filters with `float32_filterable`,
                // which `check_formats` asks of the device.
                (SampleType::Float { filterable }, SampleType::Float { filterable: can }) => {
                    !filterable || can || shape.format.is_float32()
                }
                (a, f) => a == f,
            };
            (!fits).then(|| {
                format!(
                    "`{}` reads texels as {sample:?} but texture `{}` is {}; declare the texture with a format of that sample type",
                    b.name,
                    buffer.name,
                    shape.format.name()
                )
            })
        }
        (BindingKind::StorageTexture { format, .. }, Some(TextureResource::Texture(shape))) => {
            (format != shape.format).then(|| {
                format!(
                    "`{}` is {}<{}, ..> but texture `{}` is {}; declare the texture as {} or change the kernel's format",
                    b.name,
                    b.kind.wgsl(),
                    format.name(),
                    buffer.name,
                    shape.format.name(),
                    format.name()
                )
            })
        }
        (kind, Some(_)) if !kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is a texture or sampler; bind a buffer",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        (kind, None) if kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is a buffer; bind a graph texture or sampler",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        (kind, Some(_)) if kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is the other kind of texture resource; bind a texture to texture bindings and a sampler to sampler bindings",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        _ => None,
    }
}

/// A binding that views a buffer of scalars as vectors of them
/// (`array<vec2<f32>>` or `array<vec4<f32>>` of an `f32` buffer): the
/// macro checks that the scalar is the buffer's; here the strides must fit.
fn is_vector_view(b: &crate::spec::BindingSpec, buffer: &crate::spec::BufferSpec) -> bool {
    let lanes = b.element_size / buffer.element_size.max(1);
    buffer.header_bytes == 0
        && b.wgsl_type.starts_with("array<vec")
        && matches!(lanes, 2 | 4)
        && b.element_size == lanes * buffer.element_size
}
