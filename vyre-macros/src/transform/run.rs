//! Stage 5 from start to end ([`transform`]).

use naga::valid::Capabilities;

use super::fold::{fold, module_facts};
use super::fuse::{fuse, kernel_facts};
use super::reduce::fuse_reductions;
use super::stack::stackable;
use crate::diag::Diagnostics;
use crate::lower::LoweredGraph;
use crate::model::{GraphAnalysis, KernelInterface};
use crate::timings::Timer;

/// Fuses reductions and scans with their neighbours (unless `fuse off;`,
/// `reduce.rs`), folds, then fuses element-wise chains of `analysis`, and
/// says whether its instances may run stacked (`stack.rs`). `lowered` is
/// the graph `analysis` was made from (every kernel reflected, or there
/// would be no analysis); `caps` are the naga capabilities rewritten
/// kernels are validated with, as the user's were. `None` only when the
/// graph that reductions were fused into fails its analysis (errors in
/// `diag`).
pub fn transform(
    analysis: GraphAnalysis,
    lowered: LoweredGraph,
    caps: Capabilities,
    fuse_on: bool,
    timer: &Timer,
    diag: &mut Diagnostics,
) -> Option<GraphAnalysis> {
    let (mut analysis, interfaces) = fuse_reductions(analysis, lowered, caps, diag)?;
    rewrite(&mut analysis, &interfaces, caps, fuse_on, timer);
    Some(analysis)
}

/// Folds, then (unless `fuse off;`) fuses element-wise chains of
/// `analysis`, and says whether its instances may run stacked.
/// `interfaces[k]` is declared kernel `k`'s.
fn rewrite(
    analysis: &mut GraphAnalysis,
    interfaces: &[Option<KernelInterface>],
    caps: Capabilities,
    fuse_on: bool,
    timer: &Timer,
) {
    let fold_facts: Vec<_> = interfaces
        .iter()
        .map(|k| k.as_ref().map(|k| module_facts(&k.module)))
        .collect();
    // Fusion asks about the kernels as declared, before folding moved
    // nodes to wrapped copies.
    let node_kernels: Vec<usize> = analysis.nodes.iter().map(|n| n.kernel).collect();
    fold(analysis, &fold_facts, caps);
    // The element-wise facts of the declared kernels: fusion and stacking
    // both ask them.
    let facts: Vec<_> = interfaces
        .iter()
        .map(|k| {
            k.as_ref()
                .map(|k| kernel_facts(&k.module, &k.source, &k.entry_point))
        })
        .collect();
    if fuse_on {
        let started = timer.lap();
        fuse(analysis, &facts, &node_kernels, caps);
        timer.report_stage(&analysis.header.name.to_string(), "fuse", started);
    }
    let modules: Vec<_> = interfaces
        .iter()
        .map(|k| k.as_ref().map(|k| &k.module))
        .collect();
    analysis.stackable = stackable(analysis, &facts, &modules, &node_kernels);
}
