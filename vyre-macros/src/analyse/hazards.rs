//! The graph's hazards, from `vyre_analysis` (the analysis the runtime
//! runs too): writes to read-only buffers, reads before any write, outputs
//! never written, unused buffers; and buffers no node binds, which have no
//! element type.

use vyre_analysis::{Analysis, BufferClass, Problem};

use super::appends::{appends_first, written_by_gate};
use super::context::{Ctx, TypeSite, UseSite, class_article, class_keyword};
use super::nodes::Unrolled;
use super::textures::alias_keys;
use crate::diag::Diagnostics;
use crate::diag::hints::writer;
use crate::model::{BufferDecl, KernelInterface, NodeOut};

/// Every buffer needs an element type, which only a binding gives it:
/// `false` (reported) when a buffer is bound by no node.
pub fn check_bound(
    buffer_decls: &[BufferDecl],
    sites: &[Option<TypeSite>],
    nodes: &[NodeOut],
    kernels: &[Option<KernelInterface>],
    diag: &mut Diagnostics,
) -> bool {
    let mut typed = true;
    for (b, site) in buffer_decls.iter().zip(sites) {
        if site.is_none() {
            typed = false;
            let writes = matches!(b.class, BufferClass::Output | BufferClass::InOut);
            let help = match writes.then(|| writer(nodes, kernels, None)).flatten() {
                Some(w) => format!("\nhelp: {w}; or remove it"),
                None => "\nhelp: bind it in a node, or remove it".to_owned(),
            };
            diag.error(
                b.name.span(),
                format!(
                    "{} `{}` is not bound by any node{help}",
                    class_keyword(b.class),
                    b.name
                ),
            );
        }
    }
    typed
}

/// Runs `vyre_analysis` over the unrolled nodes (with the same alias keys
/// as the runtime) and reports every problem it finds, each once per node
/// declaration.
pub fn analyse_hazards(ctx: &Ctx, unrolled: &Unrolled, diag: &mut Diagnostics) -> Analysis {
    let classes: Vec<BufferClass> = ctx.buffer_decls.iter().map(|b| b.class).collect();
    let alias_keys = alias_keys(ctx.buffer_decls);
    let analysis = vyre_analysis::analyse_keyed(&classes, &alias_keys, &unrolled.uses);
    let mut report = Report {
        ctx,
        unrolled,
        problems: &analysis.problems,
        reported: Vec::new(),
    };
    for problem in &analysis.problems {
        if written_by_gate(&unrolled.loops, problem) {
            continue;
        }
        report.problem(problem, diag);
    }
    analysis
}

/// Reporting the problems of one analysis.
struct Report<'a> {
    ctx: &'a Ctx<'a>,
    unrolled: &'a Unrolled,
    problems: &'a [Problem],
    /// `(node declaration, buffer, kind)` already reported.
    reported: Vec<(usize, usize, u8)>,
}

impl Report<'_> {
    /// Where node `node` names `buffer`.
    fn site(&self, node: usize, buffer: usize) -> Option<&UseSite> {
        self.unrolled
            .use_sites
            .get(node)
            .and_then(|s| s.get(&buffer))
    }

    /// Node `node`, where it names `buffer`, and `buffer`'s declaration.
    fn culprit(&self, node: usize, buffer: usize) -> Option<(&NodeOut, &UseSite, &BufferDecl)> {
        Some((
            self.unrolled.nodes.get(node)?,
            self.site(node, buffer)?,
            self.ctx.buffer_decls.get(buffer)?,
        ))
    }

    /// Whether this kind of problem of `buffer` is new for `node`'s
    /// declaration (a `repeat` body would repeat it per iteration).
    fn once(&mut self, node: usize, buffer: usize, kind: u8) -> bool {
        let decl = self
            .unrolled
            .node_decl_of
            .get(node)
            .copied()
            .unwrap_or(node);
        let key = (decl, buffer, kind);
        if self.reported.contains(&key) {
            false
        } else {
            self.reported.push(key);
            true
        }
    }

    fn problem(&mut self, problem: &Problem, diag: &mut Diagnostics) {
        match *problem {
            Problem::WritesReadOnly { node, buffer } => self.writes_read_only(node, buffer, diag),
            Problem::ReadBeforeWrite { node, buffer } => {
                self.read_before_write(node, buffer, diag);
            }
            Problem::OutputNeverWritten { buffer } => self.never_written(buffer, diag),
            Problem::Unused { buffer } => self.unused(buffer, diag),
            Problem::NoSuchBuffer { node, buffer } | Problem::DuplicateUse { node, buffer } => {
                let name = self
                    .ctx
                    .buffer_decls
                    .get(buffer)
                    .map(|d| d.name.to_string())
                    .unwrap_or_default();
                diag.error(
                    proc_macro2::Span::call_site(),
                    format!(
                        "internal error: node {node} and buffer `{name}` ({problem:?}); please report this"
                    ),
                );
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn writes_read_only(&mut self, node: usize, buffer: usize, diag: &mut Diagnostics) {
        if !self.once(node, buffer, 0) {
            return;
        }
        let Some((n, site, b)) = self.culprit(node, buffer) else {
            return;
        };
        diag.error(
            site.span,
            format!(
                "node `{}` writes `{}` through `{}` ({} {}), but `{}` is {} buffer, which nodes may only read; declare it `inout` (host data the graph may modify) or `intermediate`",
                n.label,
                b.name,
                site.binding,
                crate::model::var_words(site.kind),
                site.wgsl_type,
                b.name,
                class_article(b.class)
            ),
        );
    }

    fn read_before_write(&mut self, node: usize, buffer: usize, diag: &mut Diagnostics) {
        // The first append reads a count the runtime set to 0.
        if appends_first(
            self.ctx.buffer_decls.get(buffer),
            self.site(node, buffer).map(|s| s.kind),
        ) {
            return;
        }
        // An output nobody writes is reported once, as such.
        if self
            .problems
            .contains(&Problem::OutputNeverWritten { buffer })
            || !self.once(node, buffer, 1)
        {
            return;
        }
        let Some((n, site, b)) = self.culprit(node, buffer) else {
            return;
        };
        if b.append.is_some() {
            diag.error(
                site.span,
                format!(
                    "node `{}` reads append buffer `{}` through `{}` before any node appends to it; its count and items exist only after an append: put a node that appends to `{}` earlier",
                    n.label, b.name, site.binding, b.name
                ),
            );
            return;
        }
        diag.error(
            site.span,
            format!(
                "node `{}` reads `{}` through `{}` before any node writes it; {} buffers start with undefined contents: write it in an earlier node, or declare it `input`/`inout` to upload host data",
                n.label,
                b.name,
                site.binding,
                class_keyword(b.class)
            ),
        );
    }

    fn never_written(&mut self, buffer: usize, diag: &mut Diagnostics) {
        let Some(b) = self.ctx.buffer_decls.get(buffer) else {
            return;
        };
        let sites = &self.unrolled.sites;
        if sites.get(buffer).is_some_and(Option::is_none) {
            return; // already reported as unbound
        }
        let element = sites
            .get(buffer)
            .and_then(Option::as_ref)
            .map(|s| &s.element);
        let help = writer(&self.unrolled.nodes, self.ctx.kernels, element)
            .map(|w| format!("\nhelp: {w}"))
            .unwrap_or_default();
        if b.append.is_some() {
            diag.error(
                b.name.span(),
                format!(
                    "append buffer `{}` is never appended to by any node (nodes only read it)\nhelp: bind it in a kernel as `struct Hits {{ count: atomic<u32>, items: array<T> }}` with `var<storage, read_write>`, and append with `atomicAdd(&{}.count, 1u)`; or declare it `input` if another graph fills it",
                    b.name, b.name
                ),
            );
            return;
        }
        diag.error(
            b.name.span(),
            format!(
                "output `{}` is never written by any node (nodes only read it){help}\nhelp: or declare it `input`/`inout` if the host provides it",
                b.name
            ),
        );
    }

    fn unused(&mut self, buffer: usize, diag: &mut Diagnostics) {
        let Some(b) = self.ctx.buffer_decls.get(buffer) else {
            return;
        };
        // A read-only buffer a node writes is already reported there.
        if self
            .problems
            .iter()
            .any(|p| matches!(p, Problem::WritesReadOnly { buffer: w, .. } if *w == buffer))
        {
            return;
        }
        if self.unrolled.sites.get(buffer).is_some_and(Option::is_none) {
            return;
        }
        diag.error(
            b.name.span(),
            format!(
                "{} buffer `{}` is never read by any node; remove it",
                class_keyword(b.class),
                b.name
            ),
        );
    }
}
