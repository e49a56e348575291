//! What fusion on read (`reduce.rs`), fusion on write (`reduce_write.rs`)
//! and paired reductions (`reduce_pair.rs`) share: finding a generated
//! node and what it binds, copying a node's buffer references, and giving
//! a staged kernel's structs back their names.

use super::fuse::{ElementWise, kernel_facts};
use crate::check::Checked;
use crate::model::lex::{Kind, lex, text as wgsl_text};
use crate::model::{BufferRef, GraphInput, KernelInterface, NodeDecl, NodeItem};
use syn::Ident;

/// The producer's struct names without the prefix: they are the Rust types
/// of its bindings, which must stay the user's.
pub fn unprefix_structs(text: &str, prefix: &str, structs: &[&str]) -> Option<String> {
    let tokens = lex(text).complete()?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for t in &tokens {
        let word = wgsl_text(text, t);
        if t.kind == Kind::Word
            && let Some(name) = word.strip_prefix(prefix)
            && structs.contains(&name)
        {
            out.push_str(text.get(at..t.start)?);
            out.push_str(name);
            at = t.end;
        }
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// The index in `graph.items` of the node (outside `repeat`) that runs
/// `kernel`: a generated node runs the kernel of its own name.
pub fn node_at(graph: &GraphInput, kernel: &str) -> Option<usize> {
    graph
        .items
        .iter()
        .position(|it| matches!(it, NodeItem::Node(n) if n.kernel == kernel))
}

/// The buffer `node` binds through `binding`, when it names one buffer
/// (not a `ping`/`pong` pair).
pub fn target(node: &NodeDecl, binding: &str) -> Option<Ident> {
    node.args
        .iter()
        .find(|a| a.binding == binding)
        .and_then(|a| match &a.target {
            BufferRef::Name(t) => Some(t.clone()),
            BufferRef::Alternate { .. } => None,
        })
}

/// The buffers a reference may name (both of a `ping`/`pong` pair).
pub fn names(r: &BufferRef) -> Vec<&Ident> {
    match r {
        BufferRef::Name(n) => vec![n],
        BufferRef::Alternate { a, b, .. } => vec![a, b],
    }
}

/// Whether `n` binds `buffer` through any binding (either side of a
/// `ping`/`pong` pair included).
pub fn binds(n: &NodeDecl, buffer: &Ident) -> bool {
    n.args.iter().any(|a| names(&a.target).contains(&buffer))
}

/// A copy of a node's buffer reference.
pub fn clone_ref(r: &BufferRef) -> BufferRef {
    match r {
        BufferRef::Name(n) => BufferRef::Name(n.clone()),
        BufferRef::Alternate {
            keyword,
            pong,
            a,
            b,
        } => BufferRef::Alternate {
            keyword: keyword.clone(),
            pong: *pong,
            a: a.clone(),
            b: b.clone(),
        },
    }
}

/// The interface and element-wise facts of the kernel `kernel` when its
/// entry point takes `global_invocation_id` alone and is element-wise:
/// what folding it into a generated load or store needs.
pub fn gid_elementwise<'c>(
    graph: &GraphInput,
    checked: &'c Checked,
    kernel: &syn::Ident,
) -> Option<(&'c KernelInterface, ElementWise)> {
    let k = graph.kernels.iter().position(|k| k.name == *kernel)?;
    let interface = checked.interfaces.get(k)?.as_ref()?;
    let ep = interface
        .module
        .entry_points
        .iter()
        .find(|e| e.name == interface.entry_point)?;
    let [arg] = ep.function.arguments.as_slice() else {
        return None;
    };
    if arg.binding != Some(naga::Binding::BuiltIn(naga::BuiltIn::GlobalInvocationId)) {
        return None;
    }
    let facts = kernel_facts(&interface.module, &interface.source, &interface.entry_point);
    Some((interface, facts.elementwise.ok()?))
}
