//! Fusion on write for built-in scans: the element-wise node that consumes
//! a scan's output is folded into the scan's final store, so the consumer
//! runs as part of the scan and (when the output is an `intermediate` read
//! only by it) the output is never written to memory.
//!
//! Runs right after fusion on read (`reduce.rs`), on the graph's
//! declarations. The scan node's kernel stores through statements
//! `vyre_dst[<index>] = <value>;` (both generators in
//! `lower/wgsl.rs` do); each becomes
//!
//! ```text
//! { let vyre_wi = <index>; let vyre_wv = <value>;
//!   vyre_dst[vyre_wi] = vyre_wv;            // kept unless the output disappears
//!   <register> = vyre_wv; <consumer>(vec3<u32>(vyre_wi, 0u, 0u)); }
//! ```
//!
//! where `<consumer>` is the consumer's entry point (renamed and rebound by
//! the fusion codegen, `fuse::stage`) reading the scan's value from a
//! private register (`fuse::keep_in_register`). The scan's label becomes
//! `<label>__writes_<consumer>`, which `describe()` and `to_dot()` show.
//!
//! It applies when fusion is on (no `fuse off;`) and:
//! - the scan stores every element of its output: a whole-buffer scan, or
//!   a segmented one with a constant number of columns;
//! - its output `y` is an `intermediate` (then no longer written) or an
//!   `output`/`inout` (still written), bound by exactly one other node
//!   (the consumer), outside any `repeat`, after the scan;
//! - the consumer runs `over` `y`'s length, without `with { .. }` or
//!   `unfused`; its entry point takes exactly `global_invocation_id`; it is
//!   element-wise, reads `y` at its own index and never writes it;
//! - no node between the scan and the consumer binds a buffer the
//!   consumer binds, and the scan itself binds none of them but `y`;
//! - for an `intermediate` `y`, another runtime-sized buffer of the
//!   consumer has `y`'s length (its `arrayLength` stands in for `y`'s);
//! - the composed kernel validates (otherwise the nodes stay as they were).

use std::collections::HashMap;

use naga::valid::Capabilities;
use syn::{Ident, LitStr};

use super::fuse::{keep_in_register, stage};
use super::reduce_common::{
    binds, clone_ref, gid_elementwise, names, node_at, target, unprefix_structs,
};
use crate::check::{Checked, check_kernels};
use crate::diag::Diagnostics;
use crate::lower::Reader;
use crate::lower::reduce::normal;
use crate::lower::wgsl::{Generated, Segment, Source};
use crate::model::lex::{is_punct, is_word, lex, matching_close};
use vyre_analysis::Access;

use crate::model::{
    BindArg, BufferClass, BufferRef, GraphInput, KernelDecl, KernelSource, NodeDecl, NodeItem,
    SizeDecl,
};

/// The consumer of a scan's output, staged to be called from its store.
struct Consumer {
    item: usize,
    decls: String,
    entry_fn: String,
    register: String,
    args: Vec<(String, BufferRef)>,
    label: String,
}

/// Folds element-wise consumers into the stores of the scans of `readers`
/// where the rules of the module docs allow.
pub fn fuse_writes(
    graph: &mut GraphInput,
    checked: &mut Checked,
    readers: &[Reader],
    caps: Capabilities,
) {
    if graph.fuse_off.is_some() {
        return;
    }
    for reader in readers.iter().filter(|r| r.first) {
        let Generated::Scan(_, ty, _, segment, offsets) = reader.kernel else {
            continue;
        };
        if offsets || matches!(segment, Segment::Fixed(_)) {
            fuse_one(graph, checked, reader, ty, caps);
        }
    }
}

/// Whether `n` binds anything through its kernel's binding `binding`.
fn binds_as(n: &NodeDecl, binding: &str) -> bool {
    n.args.iter().any(|a| a.binding == binding)
}

fn fuse_one(
    graph: &mut GraphInput,
    checked: &mut Checked,
    reader: &Reader,
    ty: &str,
    caps: Capabilities,
) -> Option<()> {
    let scan_item = node_at(graph, &reader.node)?;
    let NodeItem::Node(scan) = graph.items.get(scan_item)? else {
        return None;
    };
    let y = target(scan, "vyre_dst")?;
    let k = graph
        .kernels
        .iter()
        .position(|k| k.name == reader.node.as_str())?;
    let old = match &graph.kernels.get(k)?.source {
        // A scan storing whole `vec4`s stores element by element again, so
        // that every store passes through the consumer.
        KernelSource::Literal(_) if binds_as(scan, "vyre_dst4") => reader
            .kernel
            .wgsl(&Source::vector_buffer(ty).with_subgroups(reader.subgroups)),
        KernelSource::Literal(lit) => lit.value(),
        _ => return None,
    };
    let buffer = graph.buffers.iter().find(|b| b.name == y)?;
    let keep = match buffer.class {
        BufferClass::Intermediate => false,
        BufferClass::Output | BufferClass::InOut => true,
        _ => return None,
    };
    if buffer.texture.is_some() || buffer.append.is_some() {
        return None;
    }
    let interface = checked.interfaces.get(k)?.as_ref()?;
    let first_binding = interface
        .bindings
        .iter()
        .map(|b| b.binding + 1)
        .max()
        .unwrap_or(0);
    let consumer = consumer(graph, checked, scan_item, &y, ty, keep, first_binding, &old)?;
    let wgsl = compose(&old, &consumer, keep)?;
    let span = graph.kernels.get(k)?.name.span();
    let decl = KernelDecl {
        name: graph.kernels.get(k)?.name.clone(),
        source: KernelSource::Literal(LitStr::new(&wgsl, span)),
        entry: None,
    };
    let mut scratch = Diagnostics::new();
    let more = check_kernels(std::slice::from_ref(&decl), caps, &mut scratch);
    let interface = more.interfaces.into_iter().next()??;
    if !scratch.is_empty() {
        return None;
    }
    let NodeItem::Node(scan) = graph.items.get_mut(scan_item)? else {
        return None;
    };
    scan.args.retain(|a| a.binding != "vyre_dst4");
    if !keep {
        scan.args.retain(|a| a.binding != "vyre_dst");
    }
    for (global, t) in &consumer.args {
        scan.args.push(BindArg {
            binding: Ident::new(global, span),
            target: clone_ref(t),
        });
    }
    let label = scan
        .label
        .as_ref()
        .map_or(reader.node.clone(), ToString::to_string);
    scan.label = Some(Ident::new(
        &format!("{label}__writes_{}", consumer.label),
        span,
    ));
    graph.items.remove(consumer.item);
    if !keep {
        graph.buffers.retain(|b| b.name != y);
    }
    *checked.interfaces.get_mut(k)? = Some(interface);
    *graph.kernels.get_mut(k)? = decl;
    Some(())
}

/// The one node besides the scan at `scan_item` that binds `y`, after
/// it, running `over` `y`'s length, whose buffers neither the scan (but
/// `y`) nor a node between binds.
fn find_consumer<'g>(
    graph: &'g GraphInput,
    scan_item: usize,
    y: &Ident,
) -> Option<(usize, &'g NodeDecl)> {
    let mut found = None;
    for (i, item) in graph.items.iter().enumerate() {
        match item {
            NodeItem::Node(n) if i != scan_item && binds(n, y) => {
                if found.is_some() || i < scan_item {
                    return None;
                }
                found = Some((i, n));
            }
            NodeItem::Repeat(r) if r.nodes.iter().any(|n| binds(n, y)) => return None,
            _ => {}
        }
    }
    let (item, node) = found?;
    if !node.overrides.is_empty() || node.unfused {
        return None;
    }
    let SizeDecl::Over(over) = &node.size else {
        return None;
    };
    let y_len = graph.buffers.iter().find(|b| b.name == *y)?.len.extent;
    if normal(over.extent) != normal(y_len) {
        return None;
    }
    // Its buffers: none bound by the scan (but `y`) or by a node between.
    let NodeItem::Node(scan) = graph.items.get(scan_item)? else {
        return None;
    };
    let theirs: Vec<&Ident> = node.args.iter().flat_map(|a| names(&a.target)).collect();
    let clash = |n: &NodeDecl| theirs.iter().any(|b| *b != y && binds(n, b));
    if clash(scan) {
        return None;
    }
    for between in graph.items.get(scan_item + 1..item)? {
        match between {
            NodeItem::Node(n) if clash(n) => return None,
            NodeItem::Repeat(r) if r.nodes.iter().any(clash) => return None,
            _ => {}
        }
    }
    Some((item, node))
}

/// The consumer of `y` after the scan at `scan_item`, staged, when the
/// rules of the module docs hold.
#[allow(clippy::too_many_arguments)]
fn consumer(
    graph: &GraphInput,
    checked: &Checked,
    scan_item: usize,
    y: &Ident,
    ty: &str,
    keep: bool,
    first_binding: u32,
    scan_text: &str,
) -> Option<Consumer> {
    let (item, node) = find_consumer(graph, scan_item, y)?;
    let y_len = graph.buffers.iter().find(|b| b.name == *y)?.len.extent;
    let (interface, elementwise) = gid_elementwise(graph, checked, &node.kernel)?;
    let y_arg = node
        .args
        .iter()
        .find(|a| matches!(&a.target, BufferRef::Name(t) if t == y))?;
    let global = y_arg.binding.to_string();
    let binding = interface.binding(&global)?;
    if !elementwise.storage.get(&global)?.own_index || binding.access != Access::Read {
        return None;
    }
    let elem = binding
        .wgsl_type
        .trim()
        .strip_prefix("array<")?
        .strip_suffix('>')?
        .trim()
        .to_owned();
    if elem != ty {
        return None;
    }
    let prefix = (0..100)
        .map(|i| format!("vyrew{i}_"))
        .find(|p| !interface.source.contains(p.as_str()) && !scan_text.contains(p.as_str()))?;
    let register = format!("{prefix}reg");
    let shared = HashMap::from([(global.clone(), register.clone())]);
    let mut next_binding = first_binding;
    let staged = stage(
        &interface.source,
        &interface.entry_point,
        &prefix,
        &shared,
        &mut next_binding,
    )?;
    let stand_in = if keep {
        Some("vyre_dst".to_owned())
    } else {
        node.args.iter().find_map(|a| match &a.target {
            BufferRef::Name(t) if t != y => {
                let same = graph.buffers.iter().any(|b| {
                    b.name == *t && b.texture.is_none() && normal(b.len.extent) == normal(y_len)
                });
                let b = interface.binding(&a.binding.to_string())?;
                (same && b.min_elements.is_none() && b.header.is_none())
                    .then(|| format!("{prefix}{}", a.binding))
            }
            _ => None,
        })
    }?;
    let structs: Vec<&str> = interface.structs.iter().map(|d| d.name.as_str()).collect();
    let text = unprefix_structs(&staged.text, &prefix, &structs)?;
    let text = format!("{text}var<private> {register}: {elem};\n");
    let decls = keep_in_register(&text, &register, &stand_in)?;
    let args = node
        .args
        .iter()
        .filter(|a| a.binding != y_arg.binding)
        .map(|a| (format!("{prefix}{}", a.binding), clone_ref(&a.target)))
        .collect();
    Some(Consumer {
        item,
        decls,
        entry_fn: staged.entry_fn,
        register,
        args,
        label: node.label.as_ref().unwrap_or(&node.kernel).to_string(),
    })
}

/// The scan's text with every `vyre_dst[i] = v;` calling the consumer,
/// and the consumer's declarations after it; without `keep`, the stores
/// and the `vyre_dst` global are gone (`None` if `vyre_dst` is used any
/// other way, or never stored to).
fn compose(scan: &str, consumer: &Consumer, keep: bool) -> Option<String> {
    let tokens = lex(scan).complete()?;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        if !is_word(scan, Some(t), "vyre_dst") || is_punct(tokens.get(i.wrapping_sub(1)), b'.') {
            i += 1;
            continue;
        }
        // The declaration `var<storage, read_write> vyre_dst: ...;`.
        if is_punct(tokens.get(i + 1), b':') {
            let semi = (i..tokens.len()).find(|&j| is_punct(tokens.get(j), b';'))?;
            if !keep {
                // Generated declarations take a line each: `@group(0) @binding(b) var<..> vyre_dst: ..;`.
                let line = scan.get(..t.start)?.rfind('\n').map_or(0, |l| l + 1);
                if !scan.get(line..t.start)?.trim_start().starts_with("@group(") {
                    return None;
                }
                edits.push((line, tokens.get(semi)?.end, String::new()));
            }
            i = semi + 1;
            continue;
        }
        // A store `vyre_dst[index] = value;`.
        if !is_punct(tokens.get(i + 1), b'[') {
            return None;
        }
        let close = matching_close(&tokens, i + 1)?;
        if !is_punct(tokens.get(close + 1), b'=') || is_punct(tokens.get(close + 2), b'=') {
            return None;
        }
        let semi = (close + 2..tokens.len()).find(|&j| is_punct(tokens.get(j), b';'))?;
        let index = scan.get(tokens.get(i + 2)?.start..tokens.get(close - 1)?.end)?;
        let value = scan.get(tokens.get(close + 2)?.start..tokens.get(semi - 1)?.end)?;
        let store = if keep {
            "vyre_dst[vyre_wi] = vyre_wv; "
        } else {
            ""
        };
        edits.push((
            t.start,
            tokens.get(semi)?.end,
            format!(
                "{{ let vyre_wi = {index}; let vyre_wv = {value}; {store}{} = vyre_wv; {}(vec3<u32>(vyre_wi, 0u, 0u)); }}",
                consumer.register, consumer.entry_fn
            ),
        ));
        i = semi + 1;
    }
    let stores = edits.iter().filter(|e| !e.2.is_empty()).count();
    if stores == 0 {
        return None;
    }
    let mut out = String::with_capacity(scan.len() + consumer.decls.len());
    let mut at = 0;
    for (start, end, with) in edits {
        out.push_str(scan.get(at..start)?);
        out.push_str(&with);
        at = end;
    }
    out.push_str(scan.get(at..)?);
    out.push_str(&consumer.decls);
    Some(out)
}
