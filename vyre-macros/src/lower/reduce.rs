//! Lowers built-in reductions and scans (`ReduceDecl`, `model/input.rs`)
//! into generated kernels (`wgsl.rs`), intermediate buffers and ordinary
//! nodes, before the graph is analysed, so that everything after this step
//! (analysis, hazards, aliasing, folding, the runtime) sees plain nodes.
//! The generated kernels go through the same load, validate and reflect
//! path as the user's.
//!
//! | written | lowered to |
//! |---|---|
//! | `reduce op(x) -> s` | `x` → partials of 32,768 elements → `s[0]` (two nodes) |
//! | `reduce op(x) over [R, C] -> m` | one node, one workgroup per row |
//! | `scan kind op(x) -> y` | segment totals of `x` (32,768 each), an exclusive scan of those, then `x` scanned from each segment's offset (three nodes) |
//! | `scan kind op(x) over [R, C] -> y` | one node, one workgroup per row |

use naga::valid::Capabilities;
use proc_macro2::Span;
use syn::{Ident, LitStr};

use super::types::{
    TYPE_LIST, TYPES, bad_type_message, feature, identity_bytes, missing_kind_message,
    untyped_message,
};
use super::wgsl::{Generated, REDUCE_SEGMENT, Segment, Source, WORKGROUP, scalar};
use super::{LoweredGraph, Reader};
use crate::check::{Checked, check_kernels};
use crate::diag::Diagnostics;
use crate::model::{
    BindArg, BufferClass, BufferDecl, BufferRef, Extent, ExtentExpr, GraphInput, KernelDecl,
    KernelSource, NodeDecl, NodeItem, RustTy, SizeDecl,
};
use crate::model::{ReduceDecl, ReduceKind};

/// What one reduction becomes.
struct Lowered {
    at: usize,
    kernels: Vec<KernelDecl>,
    buffers: Vec<BufferDecl>,
    nodes: Vec<NodeDecl>,
    readers: Vec<Reader>,
    /// The graph declares `features [subgroups]`.
    subgroups: bool,
    /// The element type.
    ty: &'static str,
}

/// The graph with every reduction and scan replaced by generated kernels
/// (checked as the user's are, one interface per kernel), buffers and
/// nodes in its place; errors go to `diag`.
pub fn lower_reductions(
    mut graph: GraphInput,
    mut checked: Checked,
    caps: Capabilities,
    diag: &mut Diagnostics,
) -> LoweredGraph {
    let decls = std::mem::take(&mut graph.reductions);
    let mut lowered = Vec::new();
    let mut readers = Vec::new();
    let mut identities = Vec::new();
    let mut failed = Vec::new();
    for decl in decls {
        match lower_one(&graph, &checked, &decl, caps) {
            Ok(l) => {
                // An empty source at n = 0 reduces to the identity.
                let empty = buffer(&graph, &decl.src).is_ok_and(|b| b.len.extent.eval(0) == 0);
                if decl.kind == ReduceKind::Reduce && empty {
                    identities.push((decl.dst.clone(), identity_bytes(decl.op, l.ty)));
                }
                lowered.push(l);
            }
            Err(e) => {
                diag.push(e);
                failed.push(decl);
            }
        }
    }
    // What failed stays: the error stub types its outputs from it.
    graph.reductions = failed;
    for l in lowered.into_iter().rev() {
        let more = check_kernels(&l.kernels, caps, diag);
        checked.interfaces.extend(more.interfaces);
        checked.partial.extend(more.partial);
        graph.kernels.extend(l.kernels);
        readers.extend(l.readers);
        graph.buffers.extend(l.buffers);
        let at = l.at.min(graph.items.len());
        graph
            .items
            .splice(at..at, l.nodes.into_iter().map(NodeItem::Node));
    }
    LoweredGraph {
        graph,
        checked,
        identities,
        readers,
    }
}

fn lower_one(
    graph: &GraphInput,
    checked: &Checked,
    d: &ReduceDecl,
    caps: Capabilities,
) -> syn::Result<Lowered> {
    let src = buffer(graph, &d.src)?;
    let dst = buffer(graph, &d.dst)?;
    let ty = element_type(graph, checked, d)?;
    if let Some(span) = d.kind_missing {
        return Err(syn::Error::new(span, missing_kind_message(d, ty)));
    }
    check_feature(d, ty, caps)?;
    check_even_f16(d, src, ty)?;
    let mut out = Lowered {
        subgroups: caps.contains(Capabilities::SUBGROUP),
        ty,
        at: d.at,
        kernels: Vec::new(),
        buffers: Vec::new(),
        nodes: Vec::new(),
        readers: Vec::new(),
    };
    let what = if d.kind == ReduceKind::Reduce {
        "reduce"
    } else {
        "scan"
    };
    if let Some([rows, cols]) = d.rows {
        for (dim, what) in [(&rows, "rows"), (&cols, "columns")] {
            if dim.extent.mul == 0 && dim.extent.add == 0 {
                return Err(syn::Error::new(
                    dim.span,
                    format!(
                        "this extent has 0 {what}, so the segmented `{what_op}` would have nothing to work on: give it a non-zero constant or a size in n (e.g. `over [4, n / 4]` or `over [n / 1024, 1024]`); without `over` it works on the whole buffer",
                        what_op = what_kind(d)
                    ),
                ));
            }
        }
        let (segment, groups) = match (rows.extent.mul, cols.extent.mul) {
            (_, 0) if cols.extent.add > 0 => (Segment::Fixed(cols.extent.add), rows.extent),
            (0, _) if rows.extent.add > 0 => (
                Segment::PerRow(rows.extent.add),
                Extent::constant(rows.extent.add),
            ),
            _ => {
                return Err(syn::Error::new(
                    rows.span,
                    format!(
                        "a segmented `{what}` needs a constant, non-zero number of rows or of columns (sizes are linear in n): e.g. `over [n / 1024, 1024]` or `over [4, n / 4]`"
                    ),
                ));
            }
        };
        let want = if d.kind == ReduceKind::Reduce {
            groups
        } else {
            src.len.extent
        };
        check_len(
            dst,
            want,
            &d.dst,
            if d.kind == ReduceKind::Reduce {
                "one value per row of `over [rows, cols]`"
            } else {
                "one value per element it scans"
            },
        )?;
        let over = scaled(groups, 1, WORKGROUP)?;
        let kernel = if d.kind == ReduceKind::Reduce {
            Generated::Reduce(d.op, ty, segment)
        } else {
            Generated::Scan(d.op, ty, d.kind, segment, false)
        };
        out.node(
            d,
            "rows",
            kernel,
            &[("src", &d.src), ("vyre_dst", &d.dst)],
            over,
        );
        return Ok(out);
    }
    if d.kind == ReduceKind::Reduce {
        whole_reduce(&mut out, d, src, dst, ty)?;
    } else {
        whole_scan(&mut out, d, src, dst, ty)?;
    }
    Ok(out)
}

/// A `reduce` over `f16` needs a source of even length at every problem
/// size: WGSL's `arrayLength` of an odd number of `f16`s counts the padding
/// half-word of its last 4-byte word too, which would enter the result (a
/// scan is unaffected: the padding comes after every real element).
fn check_even_f16(d: &ReduceDecl, src: &BufferDecl, ty: &str) -> syn::Result<()> {
    let e = src.len.extent;
    let even = e.div == 1 && e.mul.is_multiple_of(2) && e.add.is_multiple_of(2);
    if ty != "f16" || d.kind != ReduceKind::Reduce || even {
        return Ok(());
    }
    Err(syn::Error::new(
        d.src.span(),
        format!(
            "`reduce` over `f16` needs `{}` to have an even length at every problem size: a storage binding is whole 4-byte words, so WGSL counts an odd number of `f16`s as one more (the padding half-word), which would enter the result; declare it with an even length such as `{}[2 * n]` and pass an even number of elements",
            d.src, d.src
        ),
    ))
}

fn what_kind(d: &ReduceDecl) -> &'static str {
    if d.kind == ReduceKind::Reduce {
        "reduce"
    } else {
        "scan"
    }
}

/// `reduce op(x) -> s`: two levels, a workgroup per segment of
/// [`REDUCE_SEGMENT`] elements to partials, then one workgroup over them
/// (at most 2^17 partials for the largest buffer a binding can hold).
fn whole_reduce(
    out: &mut Lowered,
    d: &ReduceDecl,
    src: &BufferDecl,
    dst: &BufferDecl,
    ty: &'static str,
) -> syn::Result<()> {
    let n = src.len.extent;
    check_len(dst, Extent::constant(1), &d.dst, "one value")?;
    let k = REDUCE_SEGMENT;
    let p1 = out.buffer(d, "partials", scaled(n, k, 1)?);
    let fixed = Generated::Reduce(d.op, ty, Segment::Fixed(k));
    out.node(
        d,
        "level1",
        fixed,
        &[("src", &d.src), ("vyre_dst", &p1)],
        scaled(n, k, WORKGROUP)?,
    );
    let last = Generated::Reduce(d.op, ty, Segment::Whole);
    out.node(
        d,
        "level2",
        last,
        &[("src", &p1), ("vyre_dst", &d.dst)],
        Extent::constant(WORKGROUP),
    );
    Ok(())
}

/// `scan kind op(x) -> y`: reduce, then scan. Each segment of
/// [`REDUCE_SEGMENT`] elements is reduced to its total, one workgroup scans
/// the totals (exclusive) into each segment's offset, then each segment is
/// scanned from its offset: `x` is read twice and `y` written once.
fn whole_scan(
    out: &mut Lowered,
    d: &ReduceDecl,
    src: &BufferDecl,
    dst: &BufferDecl,
    ty: &'static str,
) -> syn::Result<()> {
    let n = src.len.extent;
    check_len(dst, n, &d.dst, "one value per element it scans")?;
    let k = REDUCE_SEGMENT;
    let totals = out.buffer(d, "totals", scaled(n, k, 1)?);
    let offsets = out.buffer(d, "offsets", scaled(n, k, 1)?);
    let per_segment = scaled(n, k, WORKGROUP)?;
    let fixed = Generated::Reduce(d.op, ty, Segment::Fixed(k));
    out.node(
        d,
        "totals",
        fixed,
        &[("src", &d.src), ("vyre_dst", &totals)],
        per_segment,
    );
    let top = Generated::Scan(d.op, ty, ReduceKind::Exclusive, Segment::Whole, false);
    out.node(
        d,
        "offsets",
        top,
        &[("src", &totals), ("vyre_dst", &offsets)],
        Extent::constant(WORKGROUP),
    );
    let last = Generated::Scan(d.op, ty, d.kind, Segment::Fixed(k), true);
    out.node(
        d,
        "scan",
        last,
        &[
            ("src", &d.src),
            ("vyre_offs", &offsets),
            ("vyre_dst", &d.dst),
            // Loads through a vector view of the source; stores one
            // element at a time. A vector view of the destination beside
            // `vyre_dst` would be two writable bindings of one buffer,
            // which WebGPU refuses ("writable storage buffer binding
            // aliasing"; wgpu does not check it natively), and a kernel
            // must run on every backend.
            ("vyre_src4", &d.src),
        ],
        per_segment,
    );
    Ok(())
}

impl Lowered {
    /// An intermediate buffer `label__part` of `len` elements.
    fn buffer(&mut self, d: &ReduceDecl, part: &str, len: Extent) -> Ident {
        let name = Ident::new(&format!("{}__{part}", d.label), d.label.span());
        self.buffers.push(BufferDecl {
            class: BufferClass::Intermediate,
            name: name.clone(),
            len: ExtentExpr {
                extent: len,
                span: d.label.span(),
            },
            texture: None,
            append: None,
        });
        name
    }

    /// A node `label__part` (or `label` for the last one) running a
    /// generated kernel of that name over `over` invocations.
    fn node(
        &mut self,
        d: &ReduceDecl,
        part: &str,
        kernel: Generated,
        args: &[(&str, &Ident)],
        over: Extent,
    ) {
        let span = d.label.span();
        let name = Ident::new(&format!("{}__{part}", d.label), span);
        if let Some((_, src)) = args.iter().find(|(b, _)| *b == "src") {
            self.readers.push(Reader {
                src: (*src).clone(),
                node: name.to_string(),
                kernel,
                subgroups: self.subgroups,
                first: **src == d.src,
            });
        }
        self.kernels.push(KernelDecl {
            name: name.clone(),
            source: KernelSource::Literal(LitStr::new(
                &kernel.wgsl(
                    &if args.iter().any(|(b, _)| *b == "vyre_dst4") {
                        Source::vector_buffers(kernel.ty())
                    } else if args.iter().any(|(b, _)| *b == "vyre_src4") {
                        Source::vector_buffer(kernel.ty())
                    } else {
                        Source::buffer(kernel.ty())
                    }
                    .with_subgroups(self.subgroups),
                ),
                span,
            )),
            entry: None,
        });
        self.nodes.push(NodeDecl {
            keyword: Ident::new("node", d.keyword.span()),
            label: Some(name.clone()),
            kernel: name,
            args_span: span,
            args: args
                .iter()
                .map(|(binding, target)| BindArg {
                    binding: Ident::new(binding, span),
                    target: BufferRef::Name((*target).clone()),
                })
                .collect(),
            size: SizeDecl::Over(ExtentExpr {
                extent: half_word_pad(kernel, over),
                span,
            }),
            overrides: Vec::new(),
            unfused: false,
        });
    }
}

/// A reduction level of `f16` runs one more workgroup than it has
/// segments: its segment is empty, so it writes the identity into the
/// buffer's padding half-word (a storage binding is whole 4-byte words,
/// and the next level's `arrayLength` counts that half-word as an
/// element; left at 0, it would take part in a `max` or `min`).
fn half_word_pad(kernel: Generated, over: Extent) -> Extent {
    match kernel {
        Generated::Reduce(_, "f16", _) => Extent {
            add: over.add.saturating_add(WORKGROUP),
            ..over
        },
        _ => over,
    }
}

/// `ceil(e / per) * times`, as an extent (exact for `add == 0`; an upper
/// bound otherwise, whose extra workgroups write the identity).
fn scaled(e: Extent, per: u64, times: u64) -> syn::Result<Extent> {
    let overflow = || syn::Error::new(Span::call_site(), "a reduction's size overflows");
    let mul = e.mul.checked_mul(times).ok_or_else(overflow)?;
    let div = e.div.checked_mul(per).ok_or_else(overflow)?;
    let add = e
        .add
        .div_ceil(per)
        .checked_mul(times)
        .ok_or_else(overflow)?;
    Ok(normal(Extent { mul, div, add }))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `e` with `mul / div` in lowest terms (a constant as `0 / 1`).
pub fn normal(e: Extent) -> Extent {
    if e.mul == 0 {
        return Extent::constant(e.add);
    }
    let g = gcd(e.mul, e.div).max(1);
    Extent {
        mul: e.mul / g,
        div: e.div / g,
        add: e.add,
    }
}

fn check_len(dst: &BufferDecl, want: Extent, name: &Ident, what: &str) -> syn::Result<()> {
    if normal(dst.len.extent) == normal(want) {
        return Ok(());
    }
    Err(syn::Error::new(
        dst.len.span,
        format!(
            "`{name}` has length {}, but this node writes {what}: declare it with length {want} (`{} {name}[{want}];`)",
            crate::model::Written(dst.len.extent),
            match dst.class {
                BufferClass::Output => "output",
                BufferClass::InOut => "inout",
                _ => "intermediate",
            },
            want = crate::model::Written(normal(want)),
        ),
    ))
}

fn buffer<'g>(graph: &'g GraphInput, name: &Ident) -> syn::Result<&'g BufferDecl> {
    let b = graph.buffers.iter().find(|b| b.name == *name).ok_or_else(|| {
        syn::Error::new(name.span(), format!("unknown buffer `{name}`: declare it (`input {name}[n];`, `output {name}[1];`, ...)"))
    })?;
    if b.texture.is_some() || b.append.is_some() || b.class == BufferClass::Uniform {
        return Err(syn::Error::new(
            name.span(),
            format!(
                "`{name}` is not a plain storage buffer: reductions and scans work on `input`, `inout`, `intermediate` and `output` buffers of {TYPE_LIST}"
            ),
        ));
    }
    Ok(b)
}

/// The element type: `<T>` as written, else the type a user kernel binds the
/// source or destination with.
fn element_type(
    graph: &GraphInput,
    checked: &Checked,
    d: &ReduceDecl,
) -> syn::Result<&'static str> {
    let what = format!("{} {}", d.keyword, d.op.name());
    if let Some(ty) = &d.ty {
        let found = TYPES.into_iter().filter_map(scalar).find(|s| ty == s);
        return found.ok_or_else(|| {
            // The fix offers the type a kernel binds the buffers with.
            let bound = bindings_of(graph, checked, &[&d.src, &d.dst])
                .into_iter()
                .find_map(|(_, _, b)| match (&b.element, b.header.is_none()) {
                    (RustTy::Prim(p), true) => scalar(*p),
                    _ => None,
                });
            syn::Error::new(ty.span(), bad_type_message(d, ty, bound.unwrap_or("f32")))
        });
    }
    if let Some((buffer, kernel, binding)) = bindings_of(graph, checked, &[&d.src, &d.dst])
        .into_iter()
        .next()
    {
        return match (&binding.element, binding.header.is_none()) {
            (RustTy::Prim(p), true) if let Some(ty) = scalar(*p) => Ok(ty),
            _ => Err(syn::Error::new(
                buffer.span(),
                format!(
                    "`{what}` combines numbers ({TYPE_LIST}), but `{buffer}` holds `{}` (kernel `{kernel}` binds it as `{}`)",
                    binding
                        .wgsl_type
                        .strip_prefix("array<")
                        .and_then(|t| t.strip_suffix('>'))
                        .unwrap_or(&binding.wgsl_type),
                    binding.wgsl_type
                ),
            )),
        };
    }
    Err(syn::Error::new(d.src.span(), untyped_message(d)))
}

/// The device feature the element type needs must be declared: the
/// generated kernels are validated with the graph's features.
fn check_feature(d: &ReduceDecl, ty: &str, caps: Capabilities) -> syn::Result<()> {
    let Some(f) = feature(ty) else {
        return Ok(());
    };
    let row = crate::model::features::by_name(f.name());
    if row.is_none_or(|r| caps.contains(r.capabilities)) {
        return Ok(());
    }
    let at = d.ty.as_ref().map_or(d.src.span(), Ident::span);
    Err(syn::Error::new(
        at,
        format!(
            "`{} {}` on {ty} needs the device feature `{}`: declare it in the graph (`features [{}];`)",
            d.keyword,
            d.op.name(),
            f.name(),
            f.name()
        ),
    ))
}

/// Every (buffer, kernel, binding) of a user node binding one of `names`.
fn bindings_of<'g>(
    graph: &'g GraphInput,
    checked: &'g Checked,
    names: &[&'g Ident],
) -> Vec<(&'g Ident, &'g Ident, &'g crate::model::ReflectedBinding)> {
    let mut found = Vec::new();
    let nodes = graph.items.iter().flat_map(|item| match item {
        NodeItem::Node(n) => std::slice::from_ref(n).iter(),
        NodeItem::Repeat(r) => r.nodes.iter(),
    });
    for node in nodes {
        let Some(k) = graph.kernels.iter().position(|k| k.name == node.kernel) else {
            continue;
        };
        let Some(Some(interface)) = checked.interfaces.get(k) else {
            continue;
        };
        for arg in &node.args {
            let target = match &arg.target {
                BufferRef::Name(t) => t,
                BufferRef::Alternate { a, .. } => a,
            };
            if let Some(name) = names.iter().find(|n| **n == target)
                && let Some(b) = interface.binding(&arg.binding.to_string())
            {
                found.push((*name, &node.kernel, b));
            }
        }
    }
    found
}
