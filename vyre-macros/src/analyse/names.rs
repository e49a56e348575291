//! Names and declarations: duplicate kernels and buffers, reserved buffer
//! names, empty buffers, texture declarations, node labels and how many
//! nodes the graph unrolls to, and each node's names (its kernel, its
//! bindings, the buffers it names, its overrides) before any iteration is
//! unrolled.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::Ident;

use super::context::Ctx;
use super::limits::{MAX_NODES, check_node_size};
use super::textures::{Declared, check_decl};
use crate::diag::Diagnostics;
use crate::diag::suggest::{did_you_mean, unknown};
use crate::model::{
    BufferDecl, BufferRef, Extent, KernelInterface, NodeDecl, NodeItem, ReflectedBinding,
};

/// Index declared names by their first declaration, reporting each repeat
/// (`what` is `kernel` or `buffer`) with a note at the first.
pub fn index_names<'a>(
    names: impl Iterator<Item = &'a Ident>,
    what: &str,
    diag: &mut Diagnostics,
) -> HashMap<String, usize> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut spans: Vec<Span> = Vec::new();
    for (i, ident) in names.enumerate() {
        spans.push(ident.span());
        let name = ident.to_string();
        if let Some(first) = index.get(&name).and_then(|&first| spans.get(first)) {
            diag.error_with_note(
                ident.span(),
                format!("{what} `{name}` is declared twice"),
                *first,
                "first declared here",
            );
        } else {
            index.insert(name, i);
        }
    }
    index
}

/// Buffers named like the generated `run` functions' own parameters.
pub fn check_reserved(buffer_decls: &[BufferDecl], diag: &mut Diagnostics) {
    for b in buffer_decls {
        let name = b.name.to_string();
        if name == "n" || name == "config" || name.starts_with("__vyre") {
            diag.error(
                b.name.span(),
                format!("`{name}` cannot name a buffer: it is reserved for the generated `run` functions (`n` is the problem size)"),
            );
        }
    }
}

/// Each declaration on its own: a texture's sides, limits and format
/// feature (`textures.rs`), and a buffer that is always empty.
pub fn check_declarations(
    buffer_decls: &[BufferDecl],
    native: bool,
    declared: &Declared,
    diag: &mut Diagnostics,
) {
    for b in buffer_decls {
        for e in check_decl(b, native, declared) {
            diag.push(e);
        }
        if b.texture.is_none() && b.len.extent == Extent::constant(0) {
            diag.error(
                b.len.span,
                format!(
                    "buffer `{}` would always be empty: its length is always 0 elements; give it at least one (`{}[n]`, `{}[1]`) or remove it",
                    b.name, b.name, b.name
                ),
            );
        }
    }
}

/// Node labels used twice and node sizes that never run or always fail;
/// `None` (reported) when the graph unrolls to more than [`MAX_NODES`].
pub fn check_labels(items: &[NodeItem], native: bool, diag: &mut Diagnostics) -> Option<()> {
    let mut labels: HashMap<String, Span> = HashMap::new();
    let mut total_nodes: u64 = 0;
    for item in items {
        let (decls, count): (Vec<&NodeDecl>, u64) = match item {
            NodeItem::Node(n) => (vec![n], 1),
            NodeItem::Repeat(r) => (r.nodes.iter().collect(), r.count),
        };
        for n in &decls {
            check_node_size(n, native, diag);
            let label = n.label.as_ref().unwrap_or(&n.kernel);
            let span = label.span();
            if let Some(first) = labels.insert(label.to_string(), span) {
                diag.error_with_note(
                    span,
                    format!(
                        "node label `{label}` is used twice; name this node: `node {label}2 = {}(...)`",
                        n.kernel
                    ),
                    first,
                    "first used here",
                );
            }
        }
        total_nodes = total_nodes.saturating_add(count.saturating_mul(decls.len() as u64));
    }
    if total_nodes > MAX_NODES {
        let span = items
            .iter()
            .find_map(|i| match i {
                NodeItem::Repeat(r) => Some(r.count_span),
                NodeItem::Node(_) => None,
            })
            .unwrap_or_else(Span::call_site);
        diag.error(
            span,
            format!("the graph unrolls to {total_nodes} nodes; at most {MAX_NODES} are supported"),
        );
        return None;
    }
    Some(())
}

/// Whether `ident` was already named in `seen` (then reported: "`what`
/// `ident` is `twice`", with the note `first_here` at the first); records
/// it otherwise.
fn given_twice(
    seen: &mut HashMap<String, Span>,
    ident: &Ident,
    (what, (twice, first_here)): (&str, (&str, &str)),
    diag: &mut Diagnostics,
) -> bool {
    let Some(first) = seen.insert(ident.to_string(), ident.span()) else {
        return false;
    };
    diag.error_with_note(
        ident.span(),
        format!("{what} `{ident}` is {twice}"),
        first,
        first_here,
    );
    true
}

/// A node's names, which do not depend on the iteration: its kernel, its
/// bindings (each once, every one bound), the buffers it names and its
/// overrides. The kernel's index when the node can be instantiated.
pub fn check_node_names(ctx: &Ctx, decl: &NodeDecl, diag: &mut Diagnostics) -> Option<usize> {
    let kname = decl.kernel.to_string();
    let Some(&ki) = ctx.kernel_index.get(&kname) else {
        let names: Vec<String> = ctx
            .kernel_decls
            .iter()
            .map(|k| k.name.to_string())
            .collect();
        diag.error(decl.kernel.span(), unknown("kernel", &kname, &names));
        return None;
    };
    let kernel = ctx.kernel(ki)?;
    let before = diag.len();
    check_args(ctx, kernel, decl, diag);
    check_override_names(kernel, decl, diag);
    (diag.len() == before).then_some(ki)
}

/// Each binding of a node's arguments: named once, one of the kernel's,
/// naming known buffers; and every binding of the kernel bound.
fn check_args(ctx: &Ctx, kernel: &KernelInterface, decl: &NodeDecl, diag: &mut Diagnostics) {
    let kname = &decl.kernel;
    let mut bound: HashMap<String, Span> = HashMap::new();
    let mut unknown_binding = false;
    for arg in &decl.args {
        let bname = arg.binding.to_string();
        if given_twice(
            &mut bound,
            &arg.binding,
            ("binding", ("bound twice in this node", "first bound here")),
            diag,
        ) {
            continue;
        }
        if kernel.binding(&bname).is_none() {
            unknown_binding = true;
            let unused = if kernel.unused_bindings.contains(&bname) {
                format!(
                    " (`{bname}` is declared, but entry point `{}` does not use it, so it is not part of the kernel's interface: remove it here)",
                    kernel.entry_point
                )
            } else {
                String::new()
            };
            diag.error(
                arg.binding.span(),
                format!(
                    "kernel `{kname}` has no binding `{bname}`{}{unused}\nnote: its bindings are {}",
                    did_you_mean(&bname, kernel.bindings.iter().map(|b| b.name.as_str())),
                    describe_bindings(kernel)
                ),
            );
        }
        check_buffer_ref(ctx, &arg.target, diag);
    }
    let missing: Vec<String> = kernel
        .bindings
        .iter()
        .filter(|b| !bound.contains_key(&b.name))
        .map(ReflectedBinding::describe)
        .collect();
    // After a misspelt binding, the unbound one is most likely the same
    // mistake: the first message already lists the kernel's bindings.
    if !missing.is_empty() && !unknown_binding {
        diag.error(
            decl.args_span,
            format!(
                "node `{}` leaves {} of kernel `{kname}` unbound: {}; bind every binding: `{kname}({})`",
                decl.label.as_ref().unwrap_or(&decl.kernel),
                if missing.len() == 1 { "a binding" } else { "bindings" },
                missing.join(", "),
                kernel.bindings.iter().map(|b| format!("{}: buffer", b.name)).collect::<Vec<_>>().join(", ")
            ),
        );
    }
}

/// Each override a node sets: set once, one of the kernel's; and every
/// override without a default set.
fn check_override_names(kernel: &KernelInterface, decl: &NodeDecl, diag: &mut Diagnostics) {
    let kname = &decl.kernel;
    let mut set: HashMap<String, Span> = HashMap::new();
    for o in &decl.overrides {
        let oname = o.name.to_string();
        if given_twice(
            &mut set,
            &o.name,
            ("override", ("set twice", "first set here")),
            diag,
        ) {
            continue;
        }
        if kernel.override_named(&oname).is_none() {
            let known = if kernel.overrides.is_empty() {
                "it declares no `override` constants".to_owned()
            } else {
                format!(
                    "its overrides are {}",
                    kernel
                        .overrides
                        .iter()
                        .map(|o| o.describe())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            diag.error(
                o.name.span(),
                format!(
                    "kernel `{kname}` has no override `{oname}`{}\nnote: {known}",
                    did_you_mean(&oname, kernel.overrides.iter().map(|o| o.name.as_str()))
                ),
            );
        }
    }
    for o in &kernel.overrides {
        if !o.has_init && !set.contains_key(&o.name) {
            diag.error(
                decl.keyword.span(),
                format!(
                    "node `{}` must set override `{}` of kernel `{kname}`, which has no default: `with {{ {} = ... }}`",
                    decl.label.as_ref().unwrap_or(&decl.kernel),
                    o.name,
                    o.name
                ),
            );
        }
    }
}

/// Every buffer `target` names must be declared.
fn check_buffer_ref(ctx: &Ctx, target: &BufferRef, diag: &mut Diagnostics) {
    let names: Vec<&Ident> = match target {
        BufferRef::Name(n) => vec![n],
        BufferRef::Alternate { a, b, .. } => vec![a, b],
    };
    for n in names {
        if !ctx.buffer_index.contains_key(&n.to_string()) {
            let known: Vec<String> = ctx
                .buffer_decls
                .iter()
                .map(|b| b.name.to_string())
                .collect();
            diag.error(n.span(), unknown("buffer", &n.to_string(), &known));
        }
    }
}

pub fn describe_bindings(kernel: &KernelInterface) -> String {
    if kernel.bindings.is_empty() {
        return "none".to_owned();
    }
    kernel
        .bindings
        .iter()
        .map(ReflectedBinding::describe)
        .collect::<Vec<_>>()
        .join(", ")
}
