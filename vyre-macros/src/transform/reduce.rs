//! Fusion on read for built-in reductions and scans: the element-wise node
//! that produces a reduction's (or scan's) source is folded into the load
//! of every generated node that reads the source (`lower/reduce.rs` lists
//! them), so the source is never written to memory.
//!
//! Runs first in this stage ([`fuse_reductions`]), on the lowered graph's
//! declarations, which it then analyses again: when it applies, the
//! producer's node and the source buffer disappear,
//! and each reader's kernel is written again with `vyre_load(i)` calling
//! the producer's entry point (renamed and rebound by the fusion
//! codegen, `fuse::stage`) for element `i` and returning the value it
//! would have stored, kept in a private variable (`fuse::keep_in_register`).
//! The reader's label becomes `<label>__reads_<producer>`, which
//! `describe()` and `to_dot()` show.
//!
//! It applies when fusion is on (no `fuse off;`) and:
//! - the source is an `intermediate` that exactly one user node binds (the
//!   producer), outside any `repeat`, before the reduction;
//! - the producer runs `over` the source's length, without `with { .. }` or
//!   `unfused`; its entry point takes exactly `global_invocation_id`, and
//!   is element-wise with every access to the source at its own index
//!   (`fuse::kernel_facts`);
//! - another runtime-sized buffer the producer binds has the source's
//!   length (its `arrayLength` stands in for the source's);
//! - the composed kernel validates (otherwise the nodes stay as they were).

use std::collections::HashMap;

use naga::valid::Capabilities;
use syn::{Ident, LitStr};

use super::fuse::{keep_in_register, stage};
use super::reduce_common::{clone_ref, gid_elementwise, unprefix_structs};
use super::reduce_pair::{FusedSources, pair_reductions};
use crate::check::{Checked, check_kernels};
use crate::diag::Diagnostics;
use crate::lower::LoweredGraph;
use crate::lower::Reader;
use crate::lower::reduce::normal;
use crate::lower::wgsl::Source;
use crate::model::{
    BindArg, BufferClass, BufferRef, GraphAnalysis, GraphInput, KernelDecl, KernelInterface,
    KernelSource, NodeDecl, NodeItem, SizeDecl,
};

/// The producer of a source, as the readers will call it.
struct Producer {
    /// Index of its node in `graph.items`.
    item: usize,
    /// The module-scope text (producer renamed, the source private).
    decls: String,
    /// Its entry point, now a function of the invocation id.
    entry_fn: String,
    /// The private variable that holds the source's element.
    register: String,
    /// The stand-in global for the source's length.
    stand_in: String,
    /// Bindings of group 0 it uses.
    next_binding: u32,
    /// Its other bindings: (renamed global, buffer).
    args: Vec<(String, BufferRef)>,
    /// Its label, for the readers' labels.
    label: String,
}

/// Fuses the lowered graph's reductions and scans with their producers
/// (on read, here), with each other (`reduce_pair.rs`) and with their
/// consumers (on write, `reduce_write.rs`), then analyses the result
/// again: the analysis and interfaces the later rewrites work on. Without
/// generated readers, or with `fuse off;`, `analysis` stays as it is.
/// `None` (errors in `diag`) when the rewritten graph does not analyse,
/// which the fusion rules are there to prevent.
pub fn fuse_reductions(
    analysis: GraphAnalysis,
    lowered: LoweredGraph,
    caps: Capabilities,
    diag: &mut Diagnostics,
) -> Option<(GraphAnalysis, Vec<Option<KernelInterface>>)> {
    let LoweredGraph {
        mut graph,
        mut checked,
        identities,
        readers,
    } = lowered;
    if readers.is_empty() || graph.fuse_off.is_some() {
        return Some((analysis, checked.interfaces));
    }
    fuse_reads(&mut graph, &mut checked, &readers, caps);
    let fused = crate::analyse::analyse(graph, &checked.interfaces, &identities, diag)?;
    diag.is_empty().then_some((fused, checked.interfaces))
}

/// Folds producers into the readers of `readers` where the rules allow.
fn fuse_reads(
    graph: &mut GraphInput,
    checked: &mut Checked,
    readers: &[Reader],
    caps: Capabilities,
) {
    if graph.fuse_off.is_some() {
        return;
    }
    let mut fused = FusedSources::new();
    let firsts = || readers.iter().filter(|r| r.first);
    let mut sources: Vec<&Ident> = firsts().map(|r| &r.src).collect();
    sources.dedup();
    for src in sources {
        let mine: Vec<&Reader> = firsts().filter(|r| r.src == *src).collect();
        let Some(producer) = producer(graph, checked, src, &mine) else {
            continue;
        };
        let len = graph
            .buffers
            .iter()
            .find(|b| b.name == *src)
            .map(|b| b.len.extent);
        let mut all = true;
        for reader in &mine {
            let done = rewrite_reader(graph, checked, reader, &producer, caps);
            if let (true, Some(len)) = (done, len) {
                fused.insert(reader.node.clone(), (fused_source(&producer, reader), len));
            }
            all &= done;
        }
        if all {
            graph.items.remove(producer.item);
            graph.buffers.retain(|b| b.name != *src);
        }
    }
    pair_reductions(graph, checked, readers, &fused, caps);
    super::reduce_write::fuse_writes(graph, checked, readers, caps);
}

/// The producer of `src`, when the rules of the module docs hold.
fn producer(
    graph: &GraphInput,
    checked: &Checked,
    src: &Ident,
    readers: &[&Reader],
) -> Option<Producer> {
    let buffer = graph.buffers.iter().find(|b| b.name == *src)?;
    if buffer.class != BufferClass::Intermediate
        || buffer.texture.is_some()
        || buffer.append.is_some()
    {
        return None;
    }
    let (item, node) = find_producer(graph, src, readers)?;
    if !node.overrides.is_empty() || node.unfused {
        return None;
    }
    let SizeDecl::Over(over) = &node.size else {
        return None;
    };
    if normal(over.extent) != normal(buffer.len.extent) {
        return None;
    }
    let (interface, elementwise) = gid_elementwise(graph, checked, &node.kernel)?;
    let src_arg = node
        .args
        .iter()
        .find(|a| matches!(&a.target, BufferRef::Name(t) if t == src))?;
    let global = src_arg.binding.to_string();
    if !elementwise.storage.get(&global)?.own_index {
        return None;
    }
    let ty = interface.binding(&global)?.wgsl_type.clone();
    let elem = ty
        .trim()
        .strip_prefix("array<")?
        .strip_suffix('>')?
        .trim()
        .to_owned();
    if readers.iter().any(|r| r.kernel.ty() != elem) {
        return None;
    }
    let prefix = (0..100)
        .map(|i| format!("vyrep{i}_"))
        .find(|p| !interface.source.contains(p.as_str()))?;
    let register = format!("{prefix}reg");
    let shared = HashMap::from([(global.clone(), register.clone())]);
    let mut next_binding = 0;
    let staged = stage(
        &interface.source,
        &interface.entry_point,
        &prefix,
        &shared,
        &mut next_binding,
    )?;
    // The stand-in: another runtime-sized array of the source's length.
    let same_len = |t: &Ident| {
        graph.buffers.iter().any(|b| {
            b.name == *t && b.texture.is_none() && normal(b.len.extent) == normal(buffer.len.extent)
        })
    };
    let stand_in = node.args.iter().find_map(|a| match &a.target {
        BufferRef::Name(t) if t != src && same_len(t) => {
            let b = interface.binding(&a.binding.to_string())?;
            (b.min_elements.is_none() && b.header.is_none())
                .then(|| format!("{prefix}{}", a.binding))
        }
        _ => None,
    })?;
    let structs: Vec<&str> = interface.structs.iter().map(|d| d.name.as_str()).collect();
    let text = unprefix_structs(&staged.text, &prefix, &structs)?;
    let text = format!("{text}var<private> {register}: {elem};\n");
    let decls = keep_in_register(&text, &register, &stand_in)?;
    let register = register.clone();
    let args = node
        .args
        .iter()
        .filter(|a| a.binding != src_arg.binding)
        .map(|a| (format!("{prefix}{}", a.binding), clone_ref(&a.target)))
        .collect();
    Some(Producer {
        item,
        decls,
        entry_fn: staged.entry_fn,
        register,
        stand_in,
        next_binding,
        args,
        label: node.label.as_ref().unwrap_or(&node.kernel).to_string(),
    })
}

/// The one user node that binds `src` (outside `repeat`, before its first
/// reader), with its index in `graph.items`.
fn find_producer<'g>(
    graph: &'g GraphInput,
    src: &Ident,
    readers: &[&Reader],
) -> Option<(usize, &'g NodeDecl)> {
    let binds = |n: &NodeDecl| {
        n.args.iter().any(|a| match &a.target {
            BufferRef::Name(t) => t == src,
            BufferRef::Alternate { a, b, .. } => a == src || b == src,
        })
    };
    let is_reader = |n: &NodeDecl| {
        let label = n.label.as_ref().map(ToString::to_string);
        readers.iter().any(|r| Some(&r.node) == label.as_ref())
    };
    let mut found = None;
    for (i, item) in graph.items.iter().enumerate() {
        match item {
            NodeItem::Node(n) if binds(n) && !is_reader(n) => {
                if found.is_some() {
                    return None;
                }
                found = Some((i, n));
            }
            NodeItem::Repeat(r) if r.nodes.iter().any(binds) => return None,
            _ => {}
        }
    }
    let (item, node) = found?;
    let first_reader = graph
        .items
        .iter()
        .position(|it| matches!(it, NodeItem::Node(n) if is_reader(n)))?;
    (item <= first_reader).then_some((item, node))
}

/// The source that calls `producer` for element `i`.
fn fused_source(producer: &Producer, reader: &Reader) -> Source {
    Source {
        decls: producer.decls.clone(),
        load: format!(
            "{}(vec3<u32>(i, 0u, 0u));\n    return {};",
            producer.entry_fn, producer.register
        ),
        len: format!("arrayLength(&{})", producer.stand_in),
        next_binding: producer.next_binding,
        vector: false,
        store4: false,
        subgroups: reader.subgroups,
    }
}

/// Writes `reader`'s kernel again with `producer` in its load; `false` when
/// the composed kernel does not validate (nothing changed then).
fn rewrite_reader(
    graph: &mut GraphInput,
    checked: &mut Checked,
    reader: &Reader,
    producer: &Producer,
    caps: Capabilities,
) -> bool {
    let Some(k) = graph
        .kernels
        .iter()
        .position(|k| k.name == reader.node.as_str())
    else {
        return false;
    };
    let wgsl = reader.kernel.wgsl(&fused_source(producer, reader));
    let Some(old) = graph.kernels.get(k) else {
        return false;
    };
    let span = old.name.span();
    let decl = KernelDecl {
        name: old.name.clone(),
        source: KernelSource::Literal(LitStr::new(&wgsl, span)),
        entry: None,
    };
    let mut scratch = Diagnostics::new();
    let more = check_kernels(std::slice::from_ref(&decl), caps, &mut scratch);
    let Some(Some(interface)) = more.interfaces.into_iter().next() else {
        return false;
    };
    if !scratch.is_empty() {
        return false;
    }
    let Some(node) = graph.items.iter_mut().find_map(|it| match it {
        NodeItem::Node(n) if n.kernel == reader.node.as_str() => Some(n),
        _ => None,
    }) else {
        return false;
    };
    // The source and its vector view (a scan's) give way to the producer;
    // the scan stores element by element again.
    node.args.retain(|a| {
        !matches!(
            a.binding.to_string().as_str(),
            "src" | "vyre_src4" | "vyre_dst4"
        )
    });
    for (global, target) in &producer.args {
        node.args.push(BindArg {
            binding: Ident::new(global, span),
            target: clone_ref(target),
        });
    }
    node.label = Some(Ident::new(
        &format!("{}__reads_{}", reader.node, producer.label),
        span,
    ));
    if let Some(slot) = checked.interfaces.get_mut(k) {
        *slot = Some(interface);
    }
    if let Some(slot) = graph.kernels.get_mut(k) {
        *slot = decl;
    }
    true
}
