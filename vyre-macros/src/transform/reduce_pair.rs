//! Two whole-buffer reductions in one pass: when two `reduce`s of the same
//! operation and type read sources of the same length (the same buffer,
//! two buffers, or one of them through a producer fused on read,
//! `reduce.rs`), their first levels become one node whose kernel reads
//! element `i` of both sources once and combines *pairs*
//! (`vec2<T>`, component-wise: `lower/types.rs`), writing one
//! buffer of paired partial results. Each reduction's next level then
//! reads its component (`.x` or `.y`) of that buffer. The kernels are the
//! ordinary generated ones (`lower/wgsl.rs`), written for a pair
//! type and a [`Source`] that loads both, so each component is combined
//! in exactly the order of the unpaired reduction: the results are the
//! same bits.
//!
//! `describe()` and `to_dot()` show the paired node as
//! `<first level of a>__and_<first level of b>`.
//!
//! It applies when fusion is on (no `fuse off;`) and:
//! - both are whole-buffer `reduce`s (their first level is `__level1`)
//!   with the same operation, type and segment, over the same grid;
//! - their sources have the same length, and at most one of them is read
//!   through a fused producer;
//! - no node between the two first levels binds a buffer the later one
//!   reads (the pair runs where the earlier one ran);
//! - every composed kernel validates (otherwise nothing changes).

use std::collections::{HashMap, HashSet};

use naga::valid::Capabilities;
use syn::{Ident, LitStr};

use super::reduce_common::{binds, clone_ref, node_at, target};
use crate::check::{Checked, check_kernels};
use crate::diag::Diagnostics;
use crate::lower::Reader;
use crate::lower::reduce::normal;
use crate::lower::types::pair;
use crate::lower::wgsl::{Generated, Source};
use crate::model::{
    BindArg, BufferClass, BufferDecl, BufferRef, Extent, ExtentExpr, GraphInput, KernelDecl,
    KernelInterface, KernelSource, NodeDecl, NodeItem, SizeDecl,
};

/// The sources that fusion on read gave first levels (by node), with the
/// length of the source they stand for.
pub type FusedSources = HashMap<String, (Source, Extent)>;

/// Pairs whole reductions where the rules of the module docs allow.
pub fn pair_reductions(
    graph: &mut GraphInput,
    checked: &mut Checked,
    readers: &[Reader],
    fused: &FusedSources,
    caps: Capabilities,
) {
    if graph.fuse_off.is_some() {
        return;
    }
    let firsts: Vec<&Reader> = readers
        .iter()
        .filter(|r| {
            r.first && matches!(r.kernel, Generated::Reduce(..)) && r.node.ends_with("__level1")
        })
        .collect();
    let mut used: HashSet<&str> = HashSet::new();
    for (i, a) in firsts.iter().enumerate() {
        for b in firsts.iter().skip(i + 1) {
            if used.contains(a.node.as_str()) || used.contains(b.node.as_str()) {
                continue;
            }
            if pair_one(graph, checked, readers, fused, [a, b], caps).is_some() {
                used.insert(&a.node);
                used.insert(&b.node);
            }
        }
    }
}

fn node(graph: &GraphInput, item: usize) -> Option<&NodeDecl> {
    match graph.items.get(item)? {
        NodeItem::Node(n) => Some(n),
        NodeItem::Repeat(_) => None,
    }
}

/// One side of a pair: its source (as fusion left it) and whether it was
/// fused.
struct Side<'r> {
    reader: &'r Reader,
    source: Source,
    len: Extent,
    fused: bool,
    item: usize,
}

fn side<'r>(graph: &GraphInput, fused: &FusedSources, reader: &'r Reader) -> Option<Side<'r>> {
    let item = node_at(graph, &reader.node)?;
    if let Some((source, len)) = fused.get(&reader.node) {
        return Some(Side {
            reader,
            source: source.clone(),
            len: *len,
            fused: true,
            item,
        });
    }
    let len = graph
        .buffers
        .iter()
        .find(|b| b.name == reader.src)?
        .len
        .extent;
    Some(Side {
        reader,
        source: Source::buffer(reader.kernel.ty()).with_subgroups(reader.subgroups),
        len,
        fused: false,
        item,
    })
}

/// A kernel written again, checked, ready to replace kernel `k`.
struct Rewritten {
    k: usize,
    decl: KernelDecl,
    interface: KernelInterface,
}

fn rewrite(graph: &GraphInput, kernel: &str, wgsl: &str, caps: Capabilities) -> Option<Rewritten> {
    let k = graph.kernels.iter().position(|d| d.name == kernel)?;
    let name = graph.kernels.get(k)?.name.clone();
    let decl = KernelDecl {
        source: KernelSource::Literal(LitStr::new(wgsl, name.span())),
        name,
        entry: None,
    };
    let mut scratch = Diagnostics::new();
    let more = check_kernels(std::slice::from_ref(&decl), caps, &mut scratch);
    let interface = more.interfaces.into_iter().next()??;
    scratch
        .is_empty()
        .then_some(Rewritten { k, decl, interface })
}

/// The source that loads both sides as a pair (`a` in `.x`, `b` in `.y`),
/// with the node arguments it binds (besides `vyre_dst`).
fn pair_source(
    graph: &GraphInput,
    a: &Side,
    b: &Side,
    ty: &str,
    vec: &str,
) -> Option<(Source, Vec<(String, BufferRef)>)> {
    let plain_args =
        |s: &Side, global: &str| vec![(global.to_owned(), BufferRef::Name(s.reader.src.clone()))];
    if !a.fused && !b.fused && a.reader.src == b.reader.src {
        let mut source = a.source.clone();
        source.load = format!("let v = src[i];\n    return {vec}(v, v);");
        return Some((source, plain_args(a, "src")));
    }
    // The fused side (or `a`) keeps its declarations; the other is a plain
    // buffer bound after them.
    let (main, other, main_is_a) = if b.fused { (b, a, false) } else { (a, b, true) };
    let mut args: Vec<(String, BufferRef)> = node(graph, main.item)?
        .args
        .iter()
        .filter(|x| x.binding != "vyre_dst")
        .map(|x| (x.binding.to_string(), clone_ref(&x.target)))
        .collect();
    let m = &main.source;
    // A node binds a buffer once: when the main side already binds the
    // other's source (a producer reading it), read it through that global.
    let bound = args.iter().find_map(|(global, t)| {
        matches!(t, BufferRef::Name(n) if *n == other.reader.src).then(|| global.clone())
    });
    let (other_decl, other_global, next_binding) = match bound {
        Some(global) => (String::new(), global, m.next_binding),
        None => {
            args.extend(plain_args(other, "vyre_pair_src"));
            (
                format!(
                    "@group(0) @binding({}) var<storage, read> vyre_pair_src: array<{ty}>;\n",
                    m.next_binding
                ),
                "vyre_pair_src".to_owned(),
                m.next_binding + 1,
            )
        }
    };
    let decls = format!(
        "{}{other_decl}fn vyre_load_main(i: u32) -> {ty} {{\n    {}\n}}\nfn vyre_load_other(i: u32) -> {ty} {{\n    return {other_global}[i];\n}}\n",
        m.decls, m.load
    );
    let (x, y) = if main_is_a {
        ("vyre_load_main(i)", "vyre_load_other(i)")
    } else {
        ("vyre_load_other(i)", "vyre_load_main(i)")
    };
    let source = Source {
        decls,
        load: format!("return {vec}({x}, {y});"),
        len: m.len.clone(),
        next_binding,
        vector: false,
        store4: false,
        subgroups: m.subgroups,
    };
    Some((source, args))
}

fn pair_one(
    graph: &mut GraphInput,
    checked: &mut Checked,
    readers: &[Reader],
    fused: &FusedSources,
    [a, b]: [&Reader; 2],
    caps: Capabilities,
) -> Option<()> {
    let (Generated::Reduce(op, ty, seg), Generated::Reduce(op_b, ty_b, seg_b)) =
        (a.kernel, b.kernel)
    else {
        return None;
    };
    if op != op_b || ty != ty_b || format!("{seg:?}") != format!("{seg_b:?}") {
        return None;
    }
    let vec = pair(ty)?;
    let (a, b) = (side(graph, fused, a)?, side(graph, fused, b)?);
    if (a.fused && b.fused) || normal(a.len) != normal(b.len) {
        return None;
    }
    let (na, nb) = (node(graph, a.item)?, node(graph, b.item)?);
    let (SizeDecl::Over(oa), SizeDecl::Over(ob)) = (&na.size, &nb.size) else {
        return None;
    };
    if normal(oa.extent) != normal(ob.extent) {
        return None;
    }
    let (early, late) = if a.item < b.item { (&a, &b) } else { (&b, &a) };
    let late_node = node(graph, late.item)?;
    let reads: Vec<Ident> = late_node
        .args
        .iter()
        .filter(|x| x.binding != "vyre_dst")
        .filter_map(|x| match &x.target {
            BufferRef::Name(t) => Some(t.clone()),
            BufferRef::Alternate { .. } => None,
        })
        .collect();
    for item in graph.items.get(early.item + 1..late.item)? {
        let clash = |n: &NodeDecl| reads.iter().any(|r| binds(n, r));
        match item {
            NodeItem::Node(n) if clash(n) => return None,
            NodeItem::Repeat(r) if r.nodes.iter().any(clash) => return None,
            _ => {}
        }
    }
    let (pa, pb) = (target(na, "vyre_dst")?, target(nb, "vyre_dst")?);
    let p_len = graph.buffers.iter().find(|x| x.name == pa)?.len;
    let (source, mut args) = pair_source(graph, &a, &b, ty, vec)?;
    let kernel = Generated::Reduce(op, vec, seg);
    let early_kernel = node(graph, early.item)?.kernel.to_string();
    let paired = rewrite(graph, &early_kernel, &kernel.wgsl(&source), caps)?;
    // The next levels read their component of the pairs.
    let mut next = Vec::new();
    for (partials, component) in [(&pa, "x"), (&pb, "y")] {
        for r in readers.iter().filter(|r| !r.first && r.src == *partials) {
            let source = Source {
                decls: format!("@group(0) @binding(0) var<storage, read> src: array<{vec}>;\n"),
                load: format!("return src[i].{component};"),
                len: "arrayLength(&src)".to_owned(),
                next_binding: 1,
                vector: false,
                store4: false,
                subgroups: r.subgroups,
            };
            next.push(rewrite(graph, &r.node, &r.kernel.wgsl(&source), caps)?);
        }
    }
    // Apply: the pair buffer, the paired node, the next levels' sources.
    let span = paired.decl.name.span();
    let pairs = Ident::new(&format!("{}__pairs", a.reader.node), span);
    graph.buffers.push(BufferDecl {
        class: BufferClass::Intermediate,
        name: pairs.clone(),
        len: ExtentExpr {
            extent: p_len.extent,
            span: p_len.span,
        },
        texture: None,
        append: None,
    });
    let labels: Vec<String> = [&a, &b]
        .iter()
        .map(|s| {
            node(graph, s.item)
                .and_then(|n| n.label.as_ref())
                .map_or(s.reader.node.clone(), ToString::to_string)
        })
        .collect();
    args.push(("vyre_dst".to_owned(), BufferRef::Name(pairs.clone())));
    let late_item = late.item;
    if let Some(NodeItem::Node(n)) = graph.items.get_mut(early.item) {
        n.args = args
            .into_iter()
            .map(|(binding, target)| BindArg {
                binding: Ident::new(&binding, span),
                target,
            })
            .collect();
        n.label = Some(Ident::new(&labels.join("__and_"), span));
    }
    install(graph, checked, paired);
    for r in next {
        let kernel = r.decl.name.to_string();
        install(graph, checked, r);
        if let Some(n) = graph.items.iter_mut().find_map(|it| match it {
            NodeItem::Node(n) if n.kernel == kernel.as_str() => Some(n),
            _ => None,
        }) {
            for arg in n.args.iter_mut().filter(|x| x.binding == "src") {
                arg.target = BufferRef::Name(pairs.clone());
            }
        }
    }
    graph.items.remove(late_item);
    graph.buffers.retain(|x| x.name != pa && x.name != pb);
    Some(())
}

fn install(graph: &mut GraphInput, checked: &mut Checked, r: Rewritten) {
    if let Some(slot) = checked.interfaces.get_mut(r.k) {
        *slot = Some(r.interface);
    }
    if let Some(slot) = graph.kernels.get_mut(r.k) {
        *slot = r.decl;
    }
}
