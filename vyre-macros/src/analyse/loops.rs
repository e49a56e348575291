//! Loops that stop themselves (`repeat up to K as i until empty(b) | zero(f)
//! { .. }`), unrolled: the condition's buffer per iteration, the gate's
//! uses of it (so the hazard analysis orders them), and the checks of
//! counts and flags read on the device.

use std::collections::HashMap;

use proc_macro2::Span;
use vyre_analysis::spec::DispatchSize;
use vyre_analysis::{Access, BufferClass, Use};

use super::appends::{has_count, is_count, ref_text, resolve};
use super::context::{UseSite, class_article};
use crate::diag::Diagnostics;
use crate::model::{BindingKind, BufferDecl, LoopOut, NodeOut, RepeatDecl, UntilDecl};

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
    use_sites: &mut [HashMap<usize, UseSite>],
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
                    class_article(bdecl.class)
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
                        if written { format!("`{}` is {} buffer", bdecl.name, class_article(bdecl.class)) } else { format!("no node of the body writes `{}`", bdecl.name) }
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
            s.entry(b).or_insert(UseSite {
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
    use_sites: &[HashMap<usize, UseSite>],
    site: impl Fn(usize) -> Option<(String, Option<(String, String)>)>,
    diag: &mut Diagnostics,
) {
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
            DispatchSize::Count(b) => {
                Some((i, b, format!("node `{}` runs `over count(..)`", n.label)))
            }
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
