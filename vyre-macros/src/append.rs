//! Part of stage 5 (`analyse.rs`): what append buffers, device-side sizes
//! and self-stopping loops mean for a graph, and their compile errors.
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
use vyre_analysis::{Access, BufferClass, Use};

use crate::analyse::{NodeOut, SizeOut};
use crate::diag::Diagnostics;
use crate::dynamic::{DeviceSize, UntilDecl};
use crate::input::{BufferDecl, BufferRef, RepeatDecl};
use crate::reflect::{BindingKind, ReflectedBinding};

/// A loop that stops itself, unrolled.
pub struct LoopOut {
    /// `repeat up to K as i until empty(b)`, for messages and `describe()`.
    pub label: String,
    /// `until zero(f)` (else `until empty(b)`).
    pub zero: bool,
    /// Each iteration: first node, node count, the condition's buffer.
    pub iterations: Vec<(usize, usize, usize)>,
}

/// The `count` member's WGSL types an append buffer may have.
fn is_count(first: Option<&(String, String)>) -> bool {
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

/// The buffer `target` names in iteration `var` (or outside a loop).
fn resolve(
    target: &BufferRef,
    var: Option<(&Ident, u64)>,
    buffer_index: &HashMap<String, usize>,
    buffer_decls: &[BufferDecl],
    diag: &mut Diagnostics,
) -> Option<(usize, Span)> {
    let (ident, span) = match target {
        BufferRef::Name(n) => (n, n.span()),
        BufferRef::Alternate {
            keyword,
            pong,
            a,
            b,
            ..
        } => match var {
            Some((_, i)) => (if (i % 2 == 0) != *pong { a } else { b }, keyword.span()),
            None => {
                diag.error(
                    keyword.span(),
                    format!(
                        "`{keyword}(a, b)` alternates between iterations of a `repeat`; outside one, name the buffer directly"
                    ),
                );
                return None;
            }
        },
    };
    match buffer_index.get(&ident.to_string()) {
        Some(&b) => Some((b, span)),
        None => {
            let names: Vec<String> = buffer_decls.iter().map(|b| b.name.to_string()).collect();
            diag.error(
                ident.span(),
                crate::suggest::unknown("buffer", &ident.to_string(), &names),
            );
            None
        }
    }
}

fn ref_text(target: &BufferRef) -> String {
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

/// What a buffer is, for messages.
fn what(bdecl: &BufferDecl) -> &'static str {
    match bdecl.class {
        BufferClass::Input => "an `input`",
        BufferClass::InOut => "an `inout`",
        BufferClass::Output => "an `output`",
        BufferClass::Intermediate => "an `intermediate`",
        BufferClass::Uniform => "a `uniform`",
    }
}

/// Whether `over count(b)` / `until empty(b)` may read `b`'s count.
fn has_count(bdecl: &BufferDecl) -> bool {
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
) -> Option<(SizeOut, usize, Span)> {
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
                        what(bdecl),
                        bdecl.name
                    ),
                );
                return None;
            }
            Some((SizeOut::Count(b), b, span))
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
            Some((SizeOut::Indirect(b), b, span))
        }
    }
}

/// Adds `access` of `buffer` to `uses` (merged with an existing use).
fn add_use(uses: &mut Vec<Use>, buffer: usize, access: Access) {
    match uses.iter_mut().find(|u| u.buffer == buffer) {
        Some(u) => u.access = u.access.union(access),
        None => {
            uses.push(Use { buffer, access });
            uses.sort_by_key(|u| u.buffer);
        }
    }
}

/// The loop of `repeat up to K as i until ..` whose iterations unrolled to
/// `ranges` of `nodes`: resolves and checks the condition's buffer per
/// iteration, adds the gate's uses to each iteration's first node, and
/// marks the body unfused.
#[allow(clippy::too_many_arguments)]
pub fn loop_out(
    r: &RepeatDecl,
    until: &UntilDecl,
    ranges: &[std::ops::Range<usize>],
    buffer_index: &HashMap<String, usize>,
    buffer_decls: &[BufferDecl],
    nodes: &mut [NodeOut],
    uses: &mut [Vec<Use>],
    use_sites: &mut [HashMap<usize, crate::analyse::UseSite>],
    diag: &mut Diagnostics,
) -> Option<LoopOut> {
    let cond = format!("{}({})", until.keyword, ref_text(&until.target));
    let mut iterations = Vec::new();
    for (i, range) in ranges.iter().enumerate() {
        let var = Some((&r.var, i as u64));
        let (b, span) = resolve(&until.target, var, buffer_index, buffer_decls, diag)?;
        let bdecl = buffer_decls.get(b)?;
        if !until.zero && !has_count(bdecl) {
            diag.error(
                span,
                format!(
                    "`until {cond}`: `{}` is {} buffer, which has no count; `until empty(b)` stops when append buffer `b` (`append b[CAP];`) is empty; for a flag the body sets, write `until zero(flag)`",
                    bdecl.name,
                    what(bdecl)
                ),
            );
            return None;
        }
        // The gate reads the count before the iteration's first node: some
        // earlier node must have appended (an input arrives with its count).
        let appended_before = uses.get(..range.start).is_some_and(|u| {
            u.iter()
                .flatten()
                .any(|u| u.buffer == b && u.access.writes())
        });
        if !until.zero && bdecl.class != BufferClass::Input && !appended_before {
            diag.error(
                span,
                format!(
                    "`until {cond}` reads the count of `{}` before iteration {i} runs, but no node appends to `{}` before it; append to it in a node before the loop (the first frontier, for example)",
                    bdecl.name, bdecl.name
                ),
            );
            return None;
        }
        if until.zero {
            let written = range.clone().any(|n| {
                uses.get(n)
                    .is_some_and(|u| u.iter().any(|u| u.buffer == b && u.access.writes()))
            });
            if !written || bdecl.class.is_read_only() || bdecl.append.is_some() {
                diag.error(
                    span,
                    format!(
                        "`until {cond}` stops after an iteration that left `{}` at 0, so a node of the loop's body must write it (non-zero to go on), and it must be a one-`u32` buffer (`intermediate {}[1];`) that nodes may write; {}",
                        bdecl.name,
                        bdecl.name,
                        if written { format!("`{}` is {} buffer", bdecl.name, what(bdecl)) } else { format!("no node of the body writes `{}`", bdecl.name) }
                    ),
                );
                return None;
            }
        }
        // The gate at the start of the iteration reads the count or flag
        // (and resets the flag): a use by the iteration's first node.
        let access = match (until.zero, i) {
            (false, _) => Access::Read,
            (true, 0) => Access::Write,
            (true, _) => Access::ReadWrite,
        };
        if let Some(u) = uses.get_mut(range.start) {
            add_use(u, b, access);
        }
        if let Some(s) = use_sites.get_mut(range.start) {
            s.entry(b).or_insert(crate::analyse::UseSite {
                span,
                binding: format!("until {cond}"),
                kind: if until.zero {
                    BindingKind::ReadWriteStorage
                } else {
                    BindingKind::ReadOnlyStorage
                },
                wgsl_type: "u32".to_owned(),
            });
        }
        for n in nodes.get_mut(range.clone()).into_iter().flatten() {
            n.unfused = true;
        }
        iterations.push((range.start, range.len(), b));
    }
    Some(LoopOut {
        label: format!("repeat up to {} as {} until {cond}", r.count, r.var),
        zero: until.zero,
        iterations,
    })
}

/// After every node: a count read from an `input` needs the input bound as
/// `{ count: u32, items: array<T> }`, and a `zero` flag must be a `u32`.
/// `site(b)` is buffer `b`'s element type and first header member.
pub fn check_device_reads(
    nodes: &[NodeOut],
    loops: &[LoopOut],
    buffer_decls: &[BufferDecl],
    uses: &[Vec<Use>],
    use_sites: &[HashMap<usize, crate::analyse::UseSite>],
    site: impl Fn(usize) -> Option<(String, Option<(String, String)>)>,
    diag: &mut Diagnostics,
) {
    let _ = uses;
    let span_of = |node: usize, b: usize| {
        use_sites
            .get(node)
            .and_then(|s| s.get(&b))
            .map_or_else(Span::call_site, |s| s.span)
    };
    let mut reads: Vec<(usize, usize, String)> = nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n.size {
            SizeOut::Count(b) => Some((i, b, format!("node `{}` runs `over count(..)`", n.label))),
            _ => None,
        })
        .collect();
    for lp in loops.iter().filter(|l| !l.zero) {
        for &(first, _, b) in &lp.iterations {
            reads.push((first, b, format!("`{}`", lp.label)));
        }
    }
    let mut reported: Vec<usize> = Vec::new();
    for (node, b, who) in reads {
        let Some(bdecl) = buffer_decls.get(b) else {
            continue;
        };
        if bdecl.class != BufferClass::Input || reported.contains(&b) {
            continue;
        }
        let first = site(b).and_then(|(_, f)| f);
        if !is_count(first.as_ref()) {
            reported.push(b);
            diag.error(
                span_of(node, b),
                format!(
                    "{who} on input `{}`, which has no count: bind it in the kernels as `struct {{ count: u32, items: array<T> }}` (the layout of another graph's resident append output), or declare it `append {}[CAP];` if this graph fills it",
                    bdecl.name, bdecl.name
                ),
            );
        }
    }
    for lp in loops.iter().filter(|l| l.zero) {
        for &(first, _, b) in &lp.iterations {
            let Some(bdecl) = buffer_decls.get(b) else {
                continue;
            };
            let element = site(b).map(|(e, _)| e);
            if element.as_deref() != Some("u32") && !reported.contains(&b) {
                reported.push(b);
                diag.error(
                    span_of(first, b),
                    format!(
                        "`{}`: the flag `{}` holds `{}`, but the loop's gate reads and resets one `u32`; bind it as `array<u32>` (one element: `intermediate {}[1];`)",
                        lp.label,
                        bdecl.name,
                        element.unwrap_or_else(|| "?".to_owned()),
                        bdecl.name
                    ),
                );
            }
        }
    }
}
