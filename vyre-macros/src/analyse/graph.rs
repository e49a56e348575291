//! Stage 4 from start to end ([`analyse`]): each step a function of its
//! own file, in the order their messages appear.

use syn::Ident;
use vyre_analysis::spec::{DispatchSize, GridFold};

use super::context::{Ctx, TypeSite};
use super::hazards::{analyse_hazards, check_bound};
use super::limits::{check_kernel_limits, kernel_sizes};
use super::loops::check_device_reads;
use super::names::{check_declarations, check_labels, check_reserved, index_names};
use super::nodes::{Unrolled, unroll};
use super::structs::collect_structs;
use super::textures::{Declared, check_kernels, resolve_layouts};
use crate::diag::Diagnostics;
use crate::model::{
    BufferDecl, BufferOut, Extent, GraphAnalysis, GraphInput, Header, KernelDecl, KernelInterface,
    KernelOut, ProblemSize, StructDef, TextureDecl,
};
use vyre_analysis::Analysis;

/// Checks the whole graph (its built-in nodes lowered). `kernels[i]` is the
/// interface of kernel `i`, or `None` when stage 2 failed for it (already
/// reported); nodes of such kernels are not checked, and no analysis is
/// returned. `identities` are the values reductions of sources empty at
/// n = 0 leave (`LoweredGraph::identities`).
pub fn analyse(
    input: GraphInput,
    kernels: &[Option<KernelInterface>],
    identities: &[(Ident, Vec<u8>)],
    diag: &mut Diagnostics,
) -> Option<GraphAnalysis> {
    let GraphInput {
        header,
        limits_native,
        fuse_off: _,
        kernels: kernel_decls,
        buffers: buffer_decls,
        items,
        features,
        reductions: _,
        modules: _,
        flags: _,
    } = input;
    let native = limits_native.is_some();
    let texture_features = Declared::new(&features);

    // Names and declarations.
    let kernel_index = index_names(kernel_decls.iter().map(|k| &k.name), "kernel", diag);
    check_reserved(&buffer_decls, diag);
    let buffer_index = index_names(buffer_decls.iter().map(|b| &b.name), "buffer", diag);
    check_kernels(kernels, &texture_features, diag);
    check_declarations(&buffer_decls, native, &texture_features, diag);
    check_labels(&items, native, diag)?;
    let header = header?;
    if items.is_empty() {
        diag.error(
            header.name.span(),
            format!(
                "graph `{}` has no nodes: add `node kernel(binding: buffer, ...) over n;`",
                header.name
            ),
        );
    }

    // Nodes, unrolled, then what depends on all of them.
    let ctx = Ctx {
        kernel_decls: &kernel_decls,
        kernels,
        kernel_index: &kernel_index,
        buffer_decls: &buffer_decls,
        buffer_index: &buffer_index,
        native,
        textures: &texture_features,
    };
    let incomplete = kernels.iter().any(Option::is_none);
    let unrolled = unroll(&ctx, &items, incomplete, diag);
    let nodes = &unrolled.nodes;
    if !native {
        check_kernel_limits(
            kernels,
            &kernel_decls,
            nodes,
            &unrolled.default_size_users,
            diag,
        );
    }
    let kernel_sizes = kernel_sizes(kernels, &kernel_decls, nodes, unrolled.incomplete, diag);
    if unrolled.incomplete || !diag.is_empty() {
        return None;
    }
    let typed = check_bound(&buffer_decls, &unrolled.sites, nodes, kernels, diag);
    check_device_reads(
        nodes,
        &unrolled.loops,
        &buffer_decls,
        &unrolled.use_sites,
        |b| {
            unrolled
                .sites
                .get(b)
                .and_then(Option::as_ref)
                .map(|s| (s.element.display(), s.first_member.clone()))
        },
        diag,
    );
    if !diag.is_empty() {
        return None;
    }
    let analysis = analyse_hazards(&ctx, &unrolled, diag);
    if !typed || !diag.is_empty() {
        return None;
    }
    let structs = collect_structs(kernels, &kernel_decls, &header.name.to_string(), diag);
    if !diag.is_empty() {
        return None;
    }

    let output = Output {
        kernels,
        kernel_sizes,
        buffer_decls: &buffer_decls,
        kernel_decls: &kernel_decls,
        declared: &texture_features,
    };
    let mut analysis = output.build(header, unrolled, analysis, structs, diag)?;
    analysis.features = features.iter().map(|f| f.feature).collect();
    set_empty_values(&mut analysis, identities);
    Some(analysis)
}

/// A reduction's destination holds its identity at n = 0 when the
/// reduction is its only writer (`identities`: from the lowering, for
/// sources empty at n = 0).
fn set_empty_values(a: &mut GraphAnalysis, identities: &[(Ident, Vec<u8>)]) {
    for (name, bytes) in identities {
        let Some(b) = a.buffers.iter().position(|x| x.name == *name) else {
            continue;
        };
        let writers = a
            .nodes
            .iter()
            .filter(|n| {
                n.bindings.iter().any(|&(group, binding, buffer)| {
                    buffer == b
                        && a.kernels.get(n.kernel).is_some_and(|k| {
                            k.bindings.iter().any(|kb| {
                                kb.group == group && kb.binding == binding && kb.access.writes()
                            })
                        })
                })
            })
            .count();
        if let Some(buffer) = a.buffers.get_mut(b).filter(|_| writers == 1) {
            buffer.empty_value = Some(bytes.clone());
        }
    }
}

/// What the checked graph becomes.
struct Output<'a> {
    kernels: &'a [Option<KernelInterface>],
    kernel_sizes: Vec<[u32; 3]>,
    buffer_decls: &'a [BufferDecl],
    kernel_decls: &'a [KernelDecl],
    declared: &'a Declared,
}

impl Output<'_> {
    /// The [`GraphAnalysis`] of a graph whose every check passed, once
    /// each kernel's layout has taken its textures' filtering.
    fn build(
        self,
        header: Header,
        unrolled: Unrolled,
        analysis: Analysis,
        structs: Vec<(StructDef, String)>,
        diag: &mut Diagnostics,
    ) -> Option<GraphAnalysis> {
        let problem_size = problem_size(self.buffer_decls, &unrolled);
        let Unrolled {
            nodes,
            loops,
            sites,
            ..
        } = unrolled;
        let buffers = buffers_out(self.buffer_decls, sites);
        let mut kernels: Vec<KernelOut> = self
            .kernels
            .iter()
            .flatten()
            .zip(self.kernel_sizes)
            .map(|(k, workgroup_size)| KernelOut {
                label: k.name.to_string(),
                source: k.source.clone(),
                entry_point: k.entry_point.clone(),
                workgroup_size,
                bindings: k.bindings.clone(),
                fold: GridFold::XOnly,
            })
            .collect();
        for (ki, message) in resolve_layouts(&mut kernels, &nodes, self.buffer_decls, self.declared)
        {
            let span = self
                .kernel_decls
                .get(ki)
                .map_or_else(|| header.name.span(), |k| k.name.span());
            diag.error(span, message);
        }
        if !diag.is_empty() {
            return None;
        }
        Some(GraphAnalysis {
            header,
            kernels,
            buffers,
            nodes,
            structs,
            problem_size,
            features: Vec::new(),
            levels: analysis.levels,
            slots: analysis.slots,
            fused: Vec::new(),
            loops,
            stackable: Err("not decided yet"),
        })
    }
}

/// Every buffer with the element type its first binding gave it.
fn buffers_out(buffer_decls: &[BufferDecl], sites: Vec<Option<TypeSite>>) -> Vec<BufferOut> {
    buffer_decls
        .iter()
        .zip(sites)
        .filter_map(|(b, site)| {
            site.map(|s| BufferOut {
                name: b.name.clone(),
                class: b.class,
                element: s.element,
                element_size: s.element_size,
                len: b.len.extent,
                header: s.header,
                header_bytes: s.header_bytes,
                texture: b.texture.clone(),
                append: b.append.as_ref().map(|a| a.grow.is_some()),
                empty_value: None,
            })
        })
        .collect()
}

/// How `run` gets the problem size `n`: from an input's length, as its
/// first parameter, or not at all when nothing depends on it.
fn problem_size(buffer_decls: &[BufferDecl], unrolled: &Unrolled) -> ProblemSize {
    if buffer_decls.iter().any(BufferDecl::infers_n) {
        ProblemSize::Infer
    } else if buffer_decls.iter().any(|b| {
        b.len.extent.depends_on_n() || b.texture.as_ref().is_some_and(TextureDecl::depends_on_n)
    }) || unrolled.nodes.iter().any(|n| match n.size {
        DispatchSize::Invocations(e) => e.depends_on_n(),
        DispatchSize::Workgroups(es) => es.iter().any(Extent::depends_on_n),
        DispatchSize::Count(_) | DispatchSize::Indirect(_) => false,
    }) {
        ProblemSize::Param
    } else {
        ProblemSize::Unused
    }
}
