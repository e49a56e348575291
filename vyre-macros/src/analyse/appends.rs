//! What append buffers and device-side sizes mean for a graph, and their
//! compile errors (self-stopping loops are `loops.rs`).
//!
//! * An append buffer is bound as a struct whose first member is
//!   `count: atomic<u32>` (writers) or `count: u32` (readers) and whose last
//!   member is the runtime-sized array of items.
//! * Appending (an atomic `count`) to an `input` is an error.
//! * `over count(x)` and `until empty(x)` read `x`'s count: `x` must be an
//!   append buffer, or an `input` bound as `{ count: u32, items: array<T> }`
//!   (another graph's resident append output); the read is a use of `x` by
//!   that node (or by the first node of each iteration, for the loop's
//!   gate), so the hazard analysis orders it and reports a read before any
//!   write.
//! * `until zero(f)`: `f` is a `u32` buffer some node of the body writes;
//!   the gate resets it before each iteration (a write by the iteration's
//!   first node, a read too from the second iteration on).
//! * Nodes of a loop are never fused (each is dispatched indirectly).

use std::collections::HashMap;

use proc_macro2::Span;
use syn::Ident;
use vyre_analysis::spec::DispatchSize;
use vyre_analysis::{Access, BufferClass};

use super::context::{alternate, class_article};
use crate::diag::Diagnostics;
use crate::model::{BindingKind, BufferDecl, BufferRef, DeviceSize, LoopOut, ReflectedBinding};

/// The `count` member's WGSL types an append buffer may have.
pub fn is_count(first: Option<&(String, String)>) -> bool {
    first.is_some_and(|(name, ty)| name == "count" && (ty == "u32" || ty == "atomic<u32>"))
}

fn is_atomic_count(first: Option<&(String, String)>) -> bool {
    first.is_some_and(|(name, ty)| name == "count" && ty == "atomic<u32>")
}

/// The struct an append buffer's kernels should declare, for messages.
fn contract(buffer: &Ident, binding: &ReflectedBinding) -> String {
    let items = if binding.wgsl_type.starts_with("array<") {
        binding.wgsl_type.clone()
    } else {
        "array<T>".to_owned()
    };
    format!(
        "write `struct Hits {{ count: atomic<u32>, items: {items} }}` and `var<storage, read_write> {buffer}: Hits;` to append, or `struct HitsIn {{ count: u32, items: {items} }}` and `var<storage, read> {buffer}: HitsIn;` to read"
    )
}

/// Checks one binding of buffer `bdecl` by a node; returns the access the
/// hazard analysis sees (appending to an input is reported here, once, and
/// then counts as a read).
pub fn check_binding(
    bdecl: &BufferDecl,
    binding: &ReflectedBinding,
    span: Span,
    in_iteration: &str,
    diag: &mut Diagnostics,
) -> Access {
    let first = binding.first_member.as_ref();
    if bdecl.append.is_some() && (binding.header_bytes == 0 || !is_count(first)) {
        let found = match first {
            Some((name, ty)) => format!("its first member is `{name}: {ty}`"),
            None => format!("it binds it as `{}`", binding.wgsl_type),
        };
        diag.error(
            span,
            format!(
                "`{}` is an append buffer, bound as a struct whose first member is its `count` (a `u32` or `atomic<u32>`) and whose last member is the array of items, but {found}{in_iteration}; {}",
                bdecl.name,
                contract(&bdecl.name, binding)
            ),
        );
        return binding.access;
    }
    if bdecl.class == BufferClass::Input && is_atomic_count(first) && binding.access.writes() {
        diag.error(
            span,
            format!(
                "`{}` is an `input`, but the kernel appends to it (`atomicAdd` on its `count`){in_iteration}; the host provides inputs and nodes only read them: append to a buffer declared `append {}[CAP];`",
                bdecl.name, bdecl.name
            ),
        );
        return Access::Read;
    }
    binding.access
}

/// Whether a read before any write is a node appending to an append
/// buffer (whose count the runtime sets to 0 first): not a problem.
pub fn appends_first(bdecl: Option<&BufferDecl>, kind: Option<BindingKind>) -> bool {
    bdecl.is_some_and(|b| b.append.is_some()) && kind == Some(BindingKind::ReadWriteStorage)
}

/// Whether `problem` is a loop's first node reading its `zero` flag, which
/// the loop's gate set to 0 just before: not a problem.
pub fn written_by_gate(loops: &[LoopOut], problem: &vyre_analysis::Problem) -> bool {
    let vyre_analysis::Problem::ReadBeforeWrite { node, buffer } = *problem else {
        return false;
    };
    loops.iter().filter(|l| l.zero).any(|l| {
        l.iterations
            .first()
            .is_some_and(|&(first, _, flag)| first == node && flag == buffer)
    })
}

/// The buffer `target` names in iteration `var` (or outside a loop),
/// reporting an unknown name or a `ping`/`pong` outside a `repeat`.
pub fn resolve(
    target: &BufferRef,
    var: Option<(&Ident, u64)>,
    buffer_index: &HashMap<String, usize>,
    buffer_decls: &[BufferDecl],
    diag: &mut Diagnostics,
) -> Option<(usize, Span)> {
    let (ident, span) = match alternate(target, var) {
        Ok(found) => found,
        Err(e) => {
            diag.push(e);
            return None;
        }
    };
    match buffer_index.get(&ident.to_string()) {
        Some(&b) => Some((b, span)),
        None => {
            let names: Vec<String> = buffer_decls.iter().map(|b| b.name.to_string()).collect();
            diag.error(
                ident.span(),
                crate::diag::suggest::unknown("buffer", &ident.to_string(), &names),
            );
            None
        }
    }
}

pub fn ref_text(target: &BufferRef) -> String {
    match target {
        BufferRef::Name(n) => n.to_string(),
        BufferRef::Alternate { keyword, a, b, .. } => format!("{keyword}({a}, {b})"),
    }
}

/// `count(hits)` or `indirect(args)`, as written.
pub fn size_text(d: &DeviceSize) -> String {
    match d {
        DeviceSize::Count(t) => format!("count({})", ref_text(t)),
        DeviceSize::Indirect(t) => format!("indirect({})", ref_text(t)),
    }
}

/// Whether `over count(b)` / `until empty(b)` may read `b`'s count.
pub fn has_count(bdecl: &BufferDecl) -> bool {
    bdecl.append.is_some() || bdecl.class == BufferClass::Input
}

/// Resolves `over count(b)` / `grid indirect(b)` of node `label`.
pub fn device_size(
    d: &DeviceSize,
    var: Option<(&Ident, u64)>,
    buffer_index: &HashMap<String, usize>,
    buffer_decls: &[BufferDecl],
    label: &str,
    diag: &mut Diagnostics,
) -> Option<(DispatchSize, usize, Span)> {
    match d {
        DeviceSize::Count(t) => {
            let (b, span) = resolve(t, var, buffer_index, buffer_decls, diag)?;
            let bdecl = buffer_decls.get(b)?;
            if !has_count(bdecl) {
                diag.error(
                    span,
                    format!(
                        "node `{label}` runs `over count({})`, but `{}` is {} buffer, which has no count; a count comes from an append buffer (`append {}[CAP];`), or from an `input` bound as `struct {{ count: u32, items: array<T> }}` (another graph's resident append output)",
                        ref_text(t),
                        bdecl.name,
                        class_article(bdecl.class),
                        bdecl.name
                    ),
                );
                return None;
            }
            Some((DispatchSize::Count(b), b, span))
        }
        DeviceSize::Indirect(t) => {
            let (b, span) = resolve(t, var, buffer_index, buffer_decls, diag)?;
            let bdecl = buffer_decls.get(b)?;
            if bdecl.class == BufferClass::Uniform || bdecl.append.is_some() {
                diag.error(
                    span,
                    format!(
                        "node `{label}` runs `grid indirect({})`, but `{}` is {}; an indirect grid is three `u32` workgroup counts in a storage buffer (`intermediate {}[3];`) written by an earlier node",
                        ref_text(t),
                        bdecl.name,
                        if bdecl.append.is_some() { "an append buffer" } else { "a `uniform`" },
                        bdecl.name
                    ),
                );
                return None;
            }
            Some((DispatchSize::Indirect(b), b, span))
        }
    }
}
