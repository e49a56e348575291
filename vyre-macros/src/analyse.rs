//! Stage 5: the graph as a whole ([`GraphAnalysis`]).
//!
//! Resolves names (kernels, buffers, bindings, overrides), unrolls `repeat`
//! blocks, checks every node against its kernel's interface, gives every
//! buffer one element type, checks the WebGPU default limits, and runs
//! `vyre_analysis` for the hazards a graph can have (writes to read-only
//! buffers, reads before any write, outputs never written, unused buffers).
//! Every problem is reported; nothing here stops at the first.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use syn::Ident;
use vyre_analysis::{Access, BufferClass, Problem, Use};

use crate::diag::{Diagnostics, list};
use crate::fold::Fold;
use crate::input::{
    BufferDecl, BufferRef, Extent, ExtentExpr, GraphInput, Header, NodeDecl, NodeItem, SizeDecl,
};
use crate::reflect::{BindingKind, KernelInterface, ReflectedBinding, check_override_value};
use crate::rust_types::{RustTy, StructDef};

/// WebGPU's default `maxComputeWorkgroupSizeX/Y/Z`.
const MAX_WORKGROUP_SIZE: [u32; 3] = [256, 256, 64];
/// WebGPU's default `maxComputeInvocationsPerWorkgroup`.
const MAX_INVOCATIONS: u64 = 256;
/// WebGPU's default `maxStorageBuffersPerShaderStage`.
const MAX_STORAGE_BUFFERS: usize = 8;
/// WebGPU's default `maxUniformBuffersPerShaderStage`.
const MAX_UNIFORM_BUFFERS: usize = 12;
/// WebGPU's default `maxBindGroups`.
const MAX_BIND_GROUPS: u32 = 4;
/// WebGPU's default `maxBindingsPerBindGroup`.
const MAX_BINDINGS_PER_GROUP: u32 = 1000;
/// Most nodes a graph may unroll to.
pub const MAX_NODES: u64 = 4096;

const NATIVE_HINT: &str =
    "write `limits native;` in graph! to check against the device's own limits at run time instead";

/// How `run` gets the problem size `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemSize {
    /// From the length of an `input`/`inout` buffer whose size is `K * n`.
    Infer,
    /// As the first parameter `n: u64`.
    Param,
    /// Nothing depends on `n`: it is 0.
    Unused,
}

/// A kernel as the spec needs it.
#[derive(Clone)]
pub struct KernelOut {
    /// Its name.
    pub label: String,
    /// The WGSL.
    pub source: String,
    /// The entry point.
    pub entry_point: String,
    /// The default workgroup size.
    pub workgroup_size: [u32; 3],
    /// The bindings.
    pub bindings: Vec<ReflectedBinding>,
    /// Whether it may run on a folded grid (decided by `fold.rs`).
    pub fold: Fold,
}

/// A buffer as the spec and the typed API need it.
pub struct BufferOut {
    /// Its name.
    pub name: Ident,
    /// Its class.
    pub class: BufferClass,
    /// Rust element type.
    pub element: RustTy,
    /// Bytes per element.
    pub element_size: u32,
    /// Length.
    pub len: Extent,
    /// The generated header struct of a `struct { fields..., items: array<T> }`
    /// binding.
    pub header: Option<RustTy>,
    /// Bytes before the elements.
    pub header_bytes: u32,
    /// A texture (`len` is its width) or a sampler.
    pub texture: Option<crate::textures::TextureDecl>,
    /// An append buffer (`Some(grow)`).
    pub append: Option<bool>,
}

/// A node's dispatch size.
#[derive(Clone, Copy, Debug)]
pub enum SizeOut {
    /// Invocations.
    Invocations(Extent),
    /// Workgroups.
    Workgroups([Extent; 3]),
    /// `over count(b)`: the count of buffer `b`, read on the device.
    Count(usize),
    /// `grid indirect(b)`: the grid in buffer `b`, read on the device.
    Indirect(usize),
}

/// One unrolled node.
pub struct NodeOut {
    /// `label` or `label[i]`.
    pub label: String,
    /// Index of its kernel.
    pub kernel: usize,
    /// `(group, binding, buffer index)`, in the kernel's binding order.
    pub bindings: Vec<(u32, u32, usize)>,
    /// `(pipeline constant key, value)`.
    pub overrides: Vec<(String, f64)>,
    /// Set when the node's overrides change the workgroup size.
    pub workgroup_size: Option<[u32; 3]>,
    /// How many invocations or workgroups.
    pub size: SizeOut,
    /// `unfused`: never part of a fused group.
    pub unfused: bool,
}

/// Everything the expansion needs, all checked.
pub struct GraphAnalysis {
    /// The generated type.
    pub header: Header,
    /// Kernels in declaration order.
    pub kernels: Vec<KernelOut>,
    /// Buffers in declaration order.
    pub buffers: Vec<BufferOut>,
    /// Nodes in program order, unrolled.
    pub nodes: Vec<NodeOut>,
    /// Dependency level of each node (from `vyre_analysis`).
    pub levels: Vec<u32>,
    /// Device slot of each buffer (from `vyre_analysis`).
    pub slots: Vec<usize>,
    /// Generated structs (deduplicated, dependency order) and the kernel
    /// each came from.
    pub structs: Vec<(StructDef, String)>,
    /// How `run` gets `n`.
    pub problem_size: ProblemSize,
    /// Groups of nodes fused into one dispatch (decided by `fuse.rs`).
    pub fused: Vec<crate::fuse::FusedOut>,
    /// Declared device features (`vyre_graph::spec::Feature` variants).
    pub features: Vec<&'static str>,
    /// Loops that stop themselves (`repeat up to K .. until ..`).
    pub loops: Vec<crate::append::LoopOut>,
}

/// Rust prelude names a generated struct must not take: it would shadow
/// them in the user's module.
const PRELUDE: &[&str] = &[
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "ToString",
    "ToOwned",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Default",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "TryFrom",
    "TryInto",
    "FromIterator",
];

/// Why a generated struct may not be called `name` in graph `graph`.
fn struct_name_clash(name: &str, graph: &str) -> Option<String> {
    if name == graph {
        Some(format!("the graph's own type is `{graph}`"))
    } else if name == format!("{graph}Outputs") || name == format!("{graph}Resident") {
        Some(format!("graph! generates `{name}` for the graph `{graph}`"))
    } else if PRELUDE.contains(&name) {
        Some(format!("it would shadow the Rust prelude's `{name}`"))
    } else {
        None
    }
}

/// The first binding that gave a buffer its element type.
struct Site {
    kernel: String,
    binding: String,
    wgsl_type: String,
    element: RustTy,
    element_size: u32,
    header: Option<RustTy>,
    header_bytes: u32,
    first_member: Option<(String, String)>,
    span: Span,
}

/// One node use of a buffer, for hazard messages.
pub struct UseSite {
    /// Where the node names the buffer.
    pub span: Span,
    /// The binding (or `count(b)`, `until empty(b)`).
    pub binding: String,
    /// How it is bound.
    pub kind: BindingKind,
    /// Its WGSL type.
    pub wgsl_type: String,
}

/// Checks the whole graph. `kernels[i]` is the interface of kernel `i`, or
/// `None` when an earlier stage failed for it (already reported); nodes of
/// such kernels are not checked, and no analysis is returned.
pub fn analyse(
    input: GraphInput,
    kernels: Vec<Option<KernelInterface>>,
    diag: &mut Diagnostics,
) -> Option<GraphAnalysis> {
    let GraphInput {
        header,
        limits_native,
        fuse_off: _,
        kernels: kernel_decls,
        buffers: buffer_decls,
        items,
        features: _,
    } = input;
    let native = limits_native.is_some();
    let mut incomplete = kernels.iter().any(Option::is_none);

    // Names.
    let kernel_index = index_names(kernel_decls.iter().map(|k| &k.name), "kernel", diag);
    for b in &buffer_decls {
        let name = b.name.to_string();
        if name == "n" || name == "config" || name.starts_with("__vyre") {
            diag.error(
                b.name.span(),
                format!("`{name}` cannot name a buffer: it is reserved for the generated `run` functions (`n` is the problem size)"),
            );
        }
    }
    let buffer_index = index_names(buffer_decls.iter().map(|b| &b.name), "buffer", diag);
    for b in &buffer_decls {
        for e in crate::textures::check_decl(b, native) {
            diag.push(e);
        }
        if b.len.extent == Extent::constant(0) {
            diag.error(
                b.len.span,
                format!(
                    "buffer `{}` would always be empty: its length is always 0 elements; give it at least one (`{}[n]`, `{}[1]`) or remove it",
                    b.name, b.name, b.name
                ),
            );
        }
    }

    // Node labels.
    let mut labels: HashMap<String, Span> = HashMap::new();
    let mut total_nodes: u64 = 0;
    for item in &items {
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

    // Nodes.
    let mut sites: Vec<Option<Site>> = buffer_decls.iter().map(|_| None).collect();
    let mut nodes = Vec::new();
    let mut uses: Vec<Vec<Use>> = Vec::new();
    let mut use_sites: Vec<HashMap<usize, UseSite>> = Vec::new();
    let mut node_decl_of: Vec<usize> = Vec::new();
    let mut default_size_users: Vec<bool> = kernels.iter().map(|_| false).collect();
    let mut decl_counter = 0usize;
    let mut loops: Vec<crate::append::LoopOut> = Vec::new();
    let ctx = Ctx {
        kernel_decls: &kernel_decls,
        kernels: &kernels,
        kernel_index: &kernel_index,
        buffer_decls: &buffer_decls,
        buffer_index: &buffer_index,
        native,
    };
    for item in &items {
        let (decls, repeat): (Vec<&NodeDecl>, Option<(&Ident, u64)>) = match item {
            NodeItem::Node(n) => (vec![n], None),
            NodeItem::Repeat(r) => (r.nodes.iter().collect(), Some((&r.var, r.count))),
        };
        // Check each declaration once (static parts), then every iteration.
        let mut checked: Vec<Option<usize>> = Vec::new();
        for decl in &decls {
            checked.push(ctx.check_static(decl, diag));
        }
        let iterations = repeat.map_or(1, |(_, c)| c);
        let mut failed: Vec<bool> = decls.iter().map(|_| false).collect();
        // Node ranges of each iteration, for `repeat up to K .. until`.
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        for i in 0..iterations {
            let first = nodes.len();
            for (d, decl) in decls.iter().enumerate() {
                let decl_id = decl_counter + d;
                let Some(Some(kernel)) = checked.get(d) else {
                    incomplete = true;
                    continue;
                };
                if failed.get(d).copied().unwrap_or(true) {
                    continue;
                }
                let var = repeat.map(|(v, _)| (v, i));
                match ctx.instance(decl, *kernel, var, &mut sites, diag) {
                    Some((node, node_uses, node_sites, uses_default_size)) => {
                        if uses_default_size && let Some(slot) = default_size_users.get_mut(*kernel)
                        {
                            *slot = true;
                        }
                        nodes.push(node);
                        uses.push(node_uses);
                        use_sites.push(node_sites);
                        node_decl_of.push(decl_id);
                    }
                    None => {
                        incomplete = true;
                        if let Some(f) = failed.get_mut(d) {
                            *f = true;
                        }
                    }
                }
            }
            ranges.push(first..nodes.len());
        }
        if let NodeItem::Repeat(r) = item
            && let Some(until) = &r.until
            && !incomplete
            && let Some(lp) = crate::append::loop_out(
                r,
                until,
                &ranges,
                &buffer_index,
                &buffer_decls,
                &mut nodes,
                &mut uses,
                &mut use_sites,
                diag,
            )
        {
            loops.push(lp);
        }
        decl_counter += decls.len();
    }

    // Per-kernel limits, for kernels some node runs.
    if !native {
        for (i, k) in kernels.iter().enumerate() {
            let (Some(k), Some(decl)) = (k, kernel_decls.get(i)) else {
                continue;
            };
            let used = nodes.iter().any(|n| n.kernel == i);
            if !used {
                continue;
            }
            let storage = k
                .bindings
                .iter()
                .filter(|b| b.kind.is_storage_buffer())
                .count();
            let uniform = k
                .bindings
                .iter()
                .filter(|b| b.kind == BindingKind::Uniform)
                .count();
            // The first binding over the limit, where the kernel has it.
            let over = |uniforms: bool, max: usize| {
                k.bindings
                    .iter()
                    .filter(|b| {
                        if uniforms {
                            b.kind == BindingKind::Uniform
                        } else {
                            b.kind.is_storage_buffer()
                        }
                    })
                    .nth(max)
                    .and_then(|b| k.sites.global(&b.name))
            };
            let at = |site: Option<&crate::sites::Site>, message: String| match site {
                Some(site) => site.error(&message),
                None => syn::Error::new(decl.name.span(), message),
            };
            if storage > MAX_STORAGE_BUFFERS {
                diag.push(at(
                    over(false, MAX_STORAGE_BUFFERS),
                    format!(
                        "kernel `{}` binds {storage} storage buffers, over WebGPU's default maxStorageBuffersPerShaderStage = {MAX_STORAGE_BUFFERS}\nhelp: use at most {MAX_STORAGE_BUFFERS} (merge buffers into one array), or {NATIVE_HINT}",
                        decl.name
                    ),
                ));
            }
            if uniform > MAX_UNIFORM_BUFFERS {
                diag.push(at(
                    over(true, MAX_UNIFORM_BUFFERS),
                    format!(
                        "kernel `{}` binds {uniform} uniform buffers, over WebGPU's default maxUniformBuffersPerShaderStage = {MAX_UNIFORM_BUFFERS}\nhelp: use at most {MAX_UNIFORM_BUFFERS} (merge them into one struct), or {NATIVE_HINT}",
                        decl.name
                    ),
                ));
            }
            if let Some(b) = k
                .bindings
                .iter()
                .find(|b| b.group >= MAX_BIND_GROUPS || b.binding >= MAX_BINDINGS_PER_GROUP)
            {
                diag.push(at(
                    k.sites.global(&b.name),
                    format!(
                        "kernel `{}` binds {} beyond WebGPU's default maxBindGroups = {MAX_BIND_GROUPS} and maxBindingsPerBindGroup = {MAX_BINDINGS_PER_GROUP}\nhelp: {NATIVE_HINT}",
                        decl.name,
                        b.describe()
                    ),
                ));
            }
            if default_size_users.get(i).copied().unwrap_or(false)
                && let Ok(size) = k.workgroup_size
                && let Some(message) = workgroup_limit_problem(size)
            {
                diag.push(at(
                    k.sites.workgroup_size.as_ref(),
                    format!(
                        "kernel `{}`: workgroup size {size:?} {message}\nhelp: {NATIVE_HINT}",
                        decl.name
                    ),
                ));
            }
        }
    }

    // The spec holds every kernel's workgroup size. Where the defaults
    // cannot give it, every node that runs the kernel carries its own size
    // and the kernel takes its first node's; a kernel no node runs has
    // nothing to take it from.
    let mut kernel_sizes: Vec<[u32; 3]> = Vec::new();
    for (i, (k, decl)) in kernels.iter().zip(&kernel_decls).enumerate() {
        let Some(k) = k else { continue };
        let size = match &k.workgroup_size {
            Ok(size) => Some(*size),
            Err(message) => {
                let first = nodes
                    .iter()
                    .find(|n| n.kernel == i)
                    .and_then(|n| n.workgroup_size);
                if first.is_none() && !incomplete {
                    let why = match k.overrides.iter().find(|o| !o.has_init) {
                        Some(o) => format!(
                            "override `{}` has no default; give it one (`override {} = ...;`) or remove the kernel",
                            o.name, o.name
                        ),
                        None => {
                            format!("{message}; fix its overrides' defaults or remove the kernel")
                        }
                    };
                    diag.error(
                        decl.name.span(),
                        format!(
                            "kernel `{}`: no node runs it, so its workgroup size cannot be known at compile time: {why}",
                            decl.name
                        ),
                    );
                }
                first
            }
        };
        kernel_sizes.push(size.unwrap_or_default());
    }

    if incomplete || !diag.is_empty() {
        return None;
    }

    // Every buffer needs an element type, which only a binding gives it.
    let mut typed = true;
    for (b, site) in buffer_decls.iter().zip(&sites) {
        if site.is_none() {
            typed = false;
            let writes = matches!(b.class, BufferClass::Output | BufferClass::InOut);
            let help = match writes
                .then(|| crate::hints::writer(&nodes, &kernels, None))
                .flatten()
            {
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

    // Data-dependent sizes and loops (`append.rs`).
    crate::append::check_device_reads(
        &nodes,
        &loops,
        &buffer_decls,
        &uses,
        &use_sites,
        |b| {
            sites
                .get(b)
                .and_then(Option::as_ref)
                .map(|s| (s.element.display(), s.first_member.clone()))
        },
        diag,
    );
    if !diag.is_empty() {
        return None;
    }

    // Hazards.
    let classes: Vec<BufferClass> = buffer_decls.iter().map(|b| b.class).collect();
    let alias_keys = crate::textures::alias_keys(&buffer_decls);
    let analysis = vyre_analysis::analyse_keyed(&classes, &alias_keys, &uses);
    let mut reported: Vec<(usize, usize, u8)> = Vec::new();
    for problem in &analysis.problems {
        if crate::append::written_by_gate(&loops, problem) {
            continue;
        }
        report_problem(
            problem,
            &analysis.problems,
            &ctx,
            &nodes,
            &use_sites,
            &node_decl_of,
            &sites,
            &mut reported,
            diag,
        );
    }
    if !typed || !diag.is_empty() {
        return None;
    }

    // Structs, deduplicated across kernels.
    let mut structs: Vec<(StructDef, String)> = Vec::new();
    let mut struct_spans: HashMap<String, Span> = HashMap::new();
    let graph_name = header.name.to_string();
    for (k, decl) in kernels.iter().zip(&kernel_decls) {
        let Some(k) = k else { continue };
        for s in &k.structs {
            if let Some(clash) = struct_name_clash(&s.name, &graph_name) {
                let at = k
                    .struct_spans
                    .iter()
                    .find(|(n, _)| *n == s.name)
                    .map_or_else(|| decl.name.span(), |(_, span)| *span);
                diag.error(
                    at,
                    format!(
                        "kernel `{}`: WGSL struct `{}` becomes a Rust struct of that name beside the graph, but {clash}; rename the WGSL struct",
                        decl.name, s.name
                    ),
                );
                continue;
            }
            match structs.iter().find(|(existing, _)| existing.name == s.name) {
                Some((existing, origin)) if existing != s => {
                    let first = struct_spans
                        .get(&s.name)
                        .copied()
                        .unwrap_or_else(|| decl.name.span());
                    diag.error_with_note(
                        decl.name.span(),
                        format!(
                            "kernel `{}` defines struct `{}` differently from kernel `{origin}`; both become one Rust struct `{}`, so their members, types and layout must match",
                            decl.name, s.name, s.name
                        ),
                        first,
                        format!("kernel `{origin}` defines `{}` here", s.name),
                    );
                }
                Some(_) => {}
                None => {
                    struct_spans.insert(s.name.clone(), decl.name.span());
                    structs.push((s.clone(), decl.name.to_string()));
                }
            }
        }
    }
    if !diag.is_empty() {
        return None;
    }

    let buffers: Vec<BufferOut> = buffer_decls
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
            })
        })
        .collect();
    let problem_size = if buffer_decls.iter().any(|b| {
        matches!(b.class, BufferClass::Input | BufferClass::InOut)
            && ((b.texture.is_none() && b.len.extent.solvable()) || crate::textures::inferable(b))
    }) {
        ProblemSize::Infer
    } else if buffer_decls.iter().any(|b| {
        b.len.extent.depends_on_n()
            || matches!(&b.texture, Some(crate::textures::TextureDecl::Texture { height, .. }) if height.extent.depends_on_n())
    })
        || nodes.iter().any(|n| match n.size {
            SizeOut::Invocations(e) => e.depends_on_n(),
            SizeOut::Workgroups(es) => es.iter().any(Extent::depends_on_n),
            SizeOut::Count(_) | SizeOut::Indirect(_) => false,
        })
    {
        ProblemSize::Param
    } else {
        ProblemSize::Unused
    };
    let mut kernels: Vec<KernelOut> = kernels
        .into_iter()
        .flatten()
        .zip(kernel_sizes)
        .map(|(k, workgroup_size)| KernelOut {
            label: k.name.to_string(),
            source: k.source,
            entry_point: k.entry_point,
            workgroup_size,
            bindings: k.bindings,
            fold: Fold::XOnly,
        })
        .collect();
    for (ki, message) in crate::textures::resolve_layouts(&mut kernels, &nodes, &buffer_decls) {
        let span = kernel_decls
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
    })
}

/// Index declared names by their first declaration, reporting each repeat
/// (`what` is `kernel` or `buffer`) with a note at the first.
fn index_names<'a>(
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

/// WebGPU's default `maxComputeWorkgroupsPerDimension`.
const MAX_WORKGROUPS_PER_DIMENSION: u64 = 65_535;

/// A node size that is constant zero never runs, and a grid dimension that
/// is always over what a dispatch can count (or, without `limits native;`,
/// over the WebGPU default limit) always fails: both are compile errors.
fn check_node_size(decl: &NodeDecl, native: bool, diag: &mut Diagnostics) {
    let label = decl.label.as_ref().unwrap_or(&decl.kernel);
    match &decl.size {
        SizeDecl::Device(_) => {}
        SizeDecl::Over(e) => {
            if e.extent == Extent::constant(0) {
                diag.error(
                    e.span,
                    format!(
                        "node `{label}` would never run: this size is always 0 invocations; give it at least one (`over n`, `over 1`) or remove the node"
                    ),
                );
            }
        }
        SizeDecl::Grid(dims) => {
            for (e, axis) in dims.iter().zip(["x", "y", "z"]) {
                let extent = e.extent;
                // The smallest value over every `n` (sizes never shrink as
                // `n` grows).
                let least = extent.add;
                let (is, at_least) = if extent.depends_on_n() {
                    ("is at least", format!("{least} workgroups for every `n`"))
                } else {
                    ("is", format!("{least} workgroups"))
                };
                if extent == Extent::constant(0) {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}` would never run: grid dimension {axis} is always 0 workgroups; every dimension needs at least 1 (write `1` for a dimension the kernel does not use) or remove the node"
                        ),
                    );
                } else if least > u64::from(u32::MAX) {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}`: grid dimension {axis} {is} {at_least}, more than a dispatch can hold ({} per dimension, on any device); spread the work over the other dimensions",
                            u32::MAX
                        ),
                    );
                } else if !native && least > MAX_WORKGROUPS_PER_DIMENSION {
                    diag.error(
                        e.span,
                        format!(
                            "node `{label}`: grid dimension {axis} {is} {at_least}, over the WebGPU default limit maxComputeWorkgroupsPerDimension = {MAX_WORKGROUPS_PER_DIMENSION}; spread the work over the other dimensions, or {NATIVE_HINT}"
                        ),
                    );
                }
            }
        }
    }
}

fn workgroup_limit_problem(size: [u32; 3]) -> Option<String> {
    let names = ["X", "Y", "Z"];
    for ((v, max), axis) in size.iter().zip(MAX_WORKGROUP_SIZE).zip(names) {
        if *v > max {
            return Some(format!(
                "exceeds WebGPU's default maxComputeWorkgroupSize{axis} = {max}"
            ));
        }
    }
    let total = size.iter().map(|&v| u64::from(v)).product::<u64>();
    if total > MAX_INVOCATIONS {
        return Some(format!(
            "has {total} invocations, over WebGPU's default maxComputeInvocationsPerWorkgroup = {MAX_INVOCATIONS}"
        ));
    }
    None
}

struct Ctx<'a> {
    kernel_decls: &'a [crate::input::KernelDecl],
    kernels: &'a [Option<KernelInterface>],
    kernel_index: &'a HashMap<String, usize>,
    buffer_decls: &'a [BufferDecl],
    buffer_index: &'a HashMap<String, usize>,
    native: bool,
}

type Instance = (NodeOut, Vec<Use>, HashMap<usize, UseSite>, bool);

impl Ctx<'_> {
    fn kernel(&self, i: usize) -> Option<&KernelInterface> {
        self.kernels.get(i).and_then(Option::as_ref)
    }

    /// Name checks that do not depend on the iteration; returns the kernel
    /// index when the node can be instantiated.
    fn check_static(&self, decl: &NodeDecl, diag: &mut Diagnostics) -> Option<usize> {
        let kname = decl.kernel.to_string();
        let Some(&ki) = self.kernel_index.get(&kname) else {
            diag.error(
                decl.kernel.span(),
                crate::suggest::unknown(
                    "kernel",
                    &kname,
                    &self
                        .kernel_decls
                        .iter()
                        .map(|k| k.name.to_string())
                        .collect::<Vec<_>>(),
                ),
            );
            return None;
        };
        let kernel = self.kernel(ki)?;
        let before = diag.len();
        let mut bound: HashMap<String, Span> = HashMap::new();
        let mut unknown_binding = false;
        for arg in &decl.args {
            let bname = arg.binding.to_string();
            if let Some(first) = bound.insert(bname.clone(), arg.binding.span()) {
                diag.error_with_note(
                    arg.binding.span(),
                    format!("binding `{bname}` is bound twice in this node"),
                    first,
                    "first bound here",
                );
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
                        crate::suggest::did_you_mean(
                            &bname,
                            kernel.bindings.iter().map(|b| b.name.as_str())
                        ),
                        describe_bindings(kernel)
                    ),
                );
            }
            self.check_buffer_ref(&arg.target, diag);
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
        let mut set: HashMap<String, Span> = HashMap::new();
        for o in &decl.overrides {
            let oname = o.name.to_string();
            if let Some(first) = set.insert(oname.clone(), o.name.span()) {
                diag.error_with_note(
                    o.name.span(),
                    format!("override `{oname}` is set twice"),
                    first,
                    "first set here",
                );
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
                        crate::suggest::did_you_mean(
                            &oname,
                            kernel.overrides.iter().map(|o| o.name.as_str())
                        )
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
        (diag.len() == before).then_some(ki)
    }

    fn check_buffer_ref(&self, target: &BufferRef, diag: &mut Diagnostics) {
        let names: Vec<&Ident> = match target {
            BufferRef::Name(n) => vec![n],
            BufferRef::Alternate { a, b, .. } => vec![a, b],
        };
        for n in names {
            if !self.buffer_index.contains_key(&n.to_string()) {
                diag.error(
                    n.span(),
                    crate::suggest::unknown(
                        "buffer",
                        &n.to_string(),
                        &self
                            .buffer_decls
                            .iter()
                            .map(|b| b.name.to_string())
                            .collect::<Vec<_>>(),
                    ),
                );
            }
        }
    }

    /// One iteration of a node: resolves buffers and overrides, checks
    /// bindings against buffers.
    fn instance(
        &self,
        decl: &NodeDecl,
        ki: usize,
        var: Option<(&Ident, u64)>,
        sites: &mut [Option<Site>],
        diag: &mut Diagnostics,
    ) -> Option<Instance> {
        let kernel = self.kernel(ki)?;
        let before = diag.len();
        let base = decl.label.as_ref().unwrap_or(&decl.kernel).to_string();
        let label = match var {
            Some((_, i)) => format!("{base}[{i}]"),
            None => base,
        };
        let in_iteration = match var {
            Some((v, i)) => format!(" (in iteration {v} = {i})"),
            None => String::new(),
        };
        let mut node_bindings = Vec::new();
        let mut by_buffer: BufferUses = HashMap::new();
        let mut node_sites: HashMap<usize, UseSite> = HashMap::new();
        for arg in &decl.args {
            let Some(binding) = kernel.binding(&arg.binding.to_string()) else {
                continue;
            };
            let (buf_ident, span) = match &arg.target {
                BufferRef::Name(n) => (n, n.span()),
                BufferRef::Alternate {
                    keyword,
                    pong,
                    a,
                    b,
                } => match var {
                    Some((_, i)) => {
                        let first = (i % 2 == 0) != *pong;
                        (if first { a } else { b }, keyword.span())
                    }
                    None => {
                        diag.error(
                            keyword.span(),
                            format!(
                                "`{keyword}(a, b)` alternates between iterations of a `repeat`; outside one, name the buffer directly"
                            ),
                        );
                        continue;
                    }
                },
            };
            let Some(&bi) = self.buffer_index.get(&buf_ident.to_string()) else {
                continue;
            };
            let Some(bdecl) = self.buffer_decls.get(bi) else {
                continue;
            };
            if bdecl.texture.is_some() || binding.kind.is_texture() {
                if let Some(message) =
                    crate::textures::check_binding(bdecl, binding, &kernel.name.to_string())
                {
                    diag.error(span, format!("{message}{in_iteration}"));
                    continue;
                }
                if let Some(slot @ None) = sites.get_mut(bi) {
                    let format = bdecl.texture.as_ref().and_then(|t| t.format());
                    *slot = Some(Site {
                        kernel: kernel.name.to_string(),
                        binding: binding.name.clone(),
                        wgsl_type: binding.wgsl_type.clone(),
                        element: format.map_or(binding.element.clone(), |f| f.texel()),
                        element_size: format.map_or(binding.element_size, |f| f.bytes()),
                        header: None,
                        header_bytes: 0,
                        first_member: None,
                        span,
                    });
                }
                node_bindings.push((binding.group, binding.binding, bi));
                record_use(
                    &mut by_buffer,
                    &mut node_sites,
                    bi,
                    binding,
                    binding.access,
                    span,
                );
                continue;
            }
            // Uniform buffers bind to uniforms, everything else to storage.
            let is_uniform_buffer = bdecl.class == BufferClass::Uniform;
            if is_uniform_buffer != (binding.kind == BindingKind::Uniform) {
                let fix = if is_uniform_buffer && binding.kind == BindingKind::ReadWriteStorage {
                    format!(
                        "a `uniform` is read-only; declare the buffer as `inout {}[...]` (or `intermediate`/`output`) for a writable storage binding",
                        bdecl.name
                    )
                } else if is_uniform_buffer {
                    format!(
                        "bind a `var<uniform>`, or declare the buffer as `input {}[...]` for a storage binding",
                        bdecl.name
                    )
                } else {
                    format!("declare the buffer as `uniform {};`", bdecl.name)
                };
                diag.error(
                    span,
                    format!(
                        "`{}` is {} buffer but kernel `{}` binds it through {}{in_iteration}; {fix}",
                        bdecl.name,
                        class_article(bdecl.class),
                        kernel.name,
                        binding.describe()
                    ),
                );
                continue;
            }
            // One element type per buffer.
            match sites.get_mut(bi) {
                Some(Some(site)) => {
                    // Writers and readers of an append buffer name their
                    // structs differently (`count: atomic<u32>` / `u32`).
                    let same_header = bdecl.append.is_some() || site.header == binding.header;
                    if site.element != binding.element
                        || site.element_size != binding.element_size
                        || !same_header
                        || site.header_bytes != binding.header_bytes
                    {
                        diag.error_with_note(
                            span,
                            format!(
                                "buffer `{}` has two element types: `{}` binds it as {} (stride {}, Rust `{}`) but `{}` binds it as {} (stride {}, Rust `{}`){in_iteration}",
                                bdecl.name,
                                site.kernel,
                                site.wgsl_type,
                                site.element_size,
                                site.element.display(),
                                kernel.name,
                                binding.wgsl_type,
                                binding.element_size,
                                binding.element.display()
                            ),
                            site.span,
                            format!("`{}` binds `{}` through `{}` here", site.kernel, bdecl.name, site.binding),
                        );
                        continue;
                    }
                }
                Some(slot @ None) => {
                    *slot = Some(Site {
                        kernel: kernel.name.to_string(),
                        binding: binding.name.clone(),
                        wgsl_type: binding.wgsl_type.clone(),
                        element: binding.element.clone(),
                        element_size: binding.element_size,
                        header: binding.header.clone(),
                        header_bytes: binding.header_bytes,
                        first_member: binding.first_member.clone(),
                        span,
                    });
                }
                None => continue,
            }
            // A fixed-size binding needs enough elements.
            if let Some(min) = binding.min_elements
                && !bdecl.len.extent.depends_on_n()
                && bdecl.len.extent.add < min
            {
                diag.error_with_note(
                    span,
                    format!(
                        "kernel `{}` binds `{}` as {}, which needs {min} element(s), but buffer `{}` has {}{in_iteration}",
                        kernel.name, binding.name, binding.wgsl_type, bdecl.name, bdecl.len.extent.add
                    ),
                    bdecl.len.span,
                    format!("`{}`'s length is declared here", bdecl.name),
                );
            }
            node_bindings.push((binding.group, binding.binding, bi));
            // Append buffers: the count's contract (`append.rs`); appending
            // to an input is one error, not also a write to a read-only one.
            let access = crate::append::check_binding(bdecl, binding, span, &in_iteration, diag);
            record_use(&mut by_buffer, &mut node_sites, bi, binding, access, span);
        }
        // A linear sampler may only filter a filterable format.
        for (span, message) in crate::textures::check_sampling(
            kernel,
            &node_bindings,
            &node_sites.iter().map(|(&b, s)| (b, s.span)).collect(),
            self.buffer_decls,
        ) {
            diag.error(span, format!("node `{label}`: {message}{in_iteration}"));
        }
        // A buffer bound twice, once writable, is a usage conflict in wgpu.
        let mut conflicts: Vec<(usize, Vec<String>)> = by_buffer
            .iter()
            .filter(|(_, (_, b))| {
                b.len() > 1 && b.iter().any(|(_, k)| *k == BindingKind::ReadWriteStorage)
            })
            .map(|(bi, (_, b))| (*bi, b.iter().map(|(n, _)| n.clone()).collect()))
            .collect();
        conflicts.sort();
        for (bi, names) in conflicts {
            let bname = self
                .buffer_decls
                .get(bi)
                .map(|b| b.name.to_string())
                .unwrap_or_default();
            diag.error(
                decl.args_span,
                format!(
                    "node `{label}` binds buffer `{bname}` to {} and one of them is `var<storage, read_write>`; a dispatch cannot use a buffer as writable storage and bind it again",
                    list(names)
                ),
            );
        }
        // Overrides.
        let before_overrides = diag.len();
        let mut overrides = Vec::new();
        for o in &decl.overrides {
            let Some(od) = kernel.override_named(&o.name.to_string()) else {
                continue;
            };
            let value = match o.value.eval(var.map(|(v, i)| (v, i128::from(i)))) {
                Ok(v) => v,
                Err(e) => {
                    diag.push(e);
                    continue;
                }
            };
            match check_override_value(od, value) {
                Ok(v) => {
                    overrides.push((od.key.clone(), v));
                }
                Err(message) => diag.error(o.value.span(), format!("{message}{in_iteration}")),
            }
        }
        // Workgroup size: naga evaluates the node's overrides the way wgpu
        // will when it creates the pipeline; a size it cannot know is an
        // error here, never a placeholder.
        let mut workgroup_size = None;
        let mut uses_default = true;
        if kernel.size_from_overrides && diag.len() == before_overrides {
            let size = match (&kernel.workgroup_size, overrides.is_empty()) {
                (Ok(size), true) => Ok(*size),
                _ => kernel.workgroup_size_with(&overrides),
            };
            let span = decl
                .overrides
                .first()
                .map_or(decl.keyword.span(), |o| o.name.span());
            match size {
                Ok(size) => {
                    if kernel.workgroup_size.as_ref().ok() != Some(&size) {
                        workgroup_size = Some(size);
                        uses_default = false;
                        if !self.native
                            && let Some(message) = workgroup_limit_problem(size)
                        {
                            diag.error(span, format!("node `{label}`: workgroup size {size:?} {message}{in_iteration}; {NATIVE_HINT}"));
                        }
                    }
                }
                Err(message) => {
                    let set = if overrides.is_empty() {
                        "its override defaults".to_owned()
                    } else {
                        format!(
                            "`with {{ {} }}`",
                            decl.overrides
                                .iter()
                                .map(|o| o.name.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    diag.error(
                        span,
                        format!(
                            "node `{label}`: the workgroup size of kernel `{}` cannot be known with {set}{in_iteration}: {message}",
                            kernel.name
                        ),
                    );
                }
            }
        }
        if diag.len() != before {
            return None;
        }
        let size = match &decl.size {
            SizeDecl::Over(e) => SizeOut::Invocations(e.extent),
            SizeDecl::Grid(es) => SizeOut::Workgroups(es.map(|e: ExtentExpr| e.extent)),
            SizeDecl::Device(d) => {
                let (size, bi, span) = crate::append::device_size(
                    d,
                    var,
                    self.buffer_index,
                    self.buffer_decls,
                    &label,
                    diag,
                )?;
                // The count (or grid) is a read of the buffer by this node.
                let entry = by_buffer.entry(bi).or_insert((Access::Read, Vec::new()));
                entry.0 = entry.0.union(Access::Read);
                node_sites.entry(bi).or_insert(UseSite {
                    span,
                    binding: crate::append::size_text(d),
                    kind: BindingKind::ReadOnlyStorage,
                    wgsl_type: "u32".to_owned(),
                });
                size
            }
        };
        let mut uses: Vec<Use> = by_buffer
            .iter()
            .map(|(&buffer, (access, _))| Use {
                buffer,
                access: *access,
            })
            .collect();
        uses.sort_by_key(|u| u.buffer);
        Some((
            NodeOut {
                label,
                kernel: ki,
                bindings: node_bindings,
                overrides,
                workgroup_size,
                size,
                unfused: decl.unfused,
            },
            uses,
            node_sites,
            uses_default,
        ))
    }
}

fn class_keyword(class: BufferClass) -> &'static str {
    match class {
        BufferClass::Input => "input",
        BufferClass::InOut => "inout",
        BufferClass::Output => "output",
        BufferClass::Intermediate => "intermediate",
        BufferClass::Uniform => "uniform",
    }
}

fn class_article(class: BufferClass) -> &'static str {
    match class {
        BufferClass::Input => "an `input`",
        BufferClass::InOut => "an `inout`",
        BufferClass::Output => "an `output`",
        BufferClass::Intermediate => "an `intermediate`",
        BufferClass::Uniform => "a `uniform`",
    }
}

fn describe_bindings(kernel: &KernelInterface) -> String {
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

#[allow(clippy::too_many_arguments)]
fn report_problem(
    problem: &Problem,
    problems: &[Problem],
    ctx: &Ctx<'_>,
    nodes: &[NodeOut],
    use_sites: &[HashMap<usize, UseSite>],
    node_decl_of: &[usize],
    sites: &[Option<Site>],
    reported: &mut Vec<(usize, usize, u8)>,
    diag: &mut Diagnostics,
) {
    let buffer_name = |b: usize| {
        ctx.buffer_decls
            .get(b)
            .map(|d| d.name.to_string())
            .unwrap_or_default()
    };
    let node_site = |node: usize, buffer: usize| use_sites.get(node).and_then(|s| s.get(&buffer));
    let mut once = |node: usize, buffer: usize, kind: u8| {
        let key = (
            node_decl_of.get(node).copied().unwrap_or(node),
            buffer,
            kind,
        );
        if reported.contains(&key) {
            false
        } else {
            reported.push(key);
            true
        }
    };
    match *problem {
        Problem::WritesReadOnly { node, buffer } => {
            if !once(node, buffer, 0) {
                return;
            }
            let (Some(n), Some(site), Some(b)) = (
                nodes.get(node),
                node_site(node, buffer),
                ctx.buffer_decls.get(buffer),
            ) else {
                return;
            };
            diag.error(
                site.span,
                format!(
                    "node `{}` writes `{}` through `{}` ({} {}), but `{}` is {} buffer, which nodes may only read; declare it `inout` (host data the graph may modify) or `intermediate`",
                    n.label,
                    b.name,
                    site.binding,
                    site.kind.wgsl(),
                    site.wgsl_type,
                    b.name,
                    class_article(b.class)
                ),
            );
        }
        Problem::ReadBeforeWrite { node, buffer } => {
            // The first append reads a count the runtime set to 0.
            if crate::append::appends_first(
                ctx.buffer_decls.get(buffer),
                node_site(node, buffer).map(|s| s.kind),
            ) {
                return;
            }
            // An output nobody writes is reported once, as such.
            if problems.contains(&Problem::OutputNeverWritten { buffer }) || !once(node, buffer, 1)
            {
                return;
            }
            let (Some(n), Some(site), Some(b)) = (
                nodes.get(node),
                node_site(node, buffer),
                ctx.buffer_decls.get(buffer),
            ) else {
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
        Problem::OutputNeverWritten { buffer } => {
            let Some(b) = ctx.buffer_decls.get(buffer) else {
                return;
            };
            if sites.get(buffer).is_some_and(Option::is_none) {
                return; // already reported as unbound
            }
            let element = sites
                .get(buffer)
                .and_then(Option::as_ref)
                .map(|s| &s.element);
            let help = crate::hints::writer(nodes, ctx.kernels, element)
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
        Problem::Unused { buffer } => {
            let Some(b) = ctx.buffer_decls.get(buffer) else {
                return;
            };
            // A read-only buffer a node writes is already reported there.
            if problems
                .iter()
                .any(|p| matches!(p, Problem::WritesReadOnly { buffer: w, .. } if *w == buffer))
            {
                return;
            }
            if sites.get(buffer).is_some_and(Option::is_none) {
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
        Problem::NoSuchBuffer { node, buffer } | Problem::DuplicateUse { node, buffer } => {
            diag.error(
                Span::call_site(),
                format!(
                    "internal error: node {node} and buffer `{}` ({problem:?}); please report this",
                    buffer_name(buffer)
                ),
            );
        }
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

/// What the error stub can still say about the outputs: the Rust element
/// type of each `output`/`inout` buffer that some successfully reflected
/// kernel binds, and the structs those types need. Best effort, never an
/// error: it only keeps user code that reads the outputs from cascading
/// into "no field" errors while the real mistake is being fixed.
pub struct StubTypes {
    /// Per output/inout buffer, in declaration order: its name and element
    /// type when known.
    pub outputs: Vec<(Ident, Option<TokenStream>)>,
    /// Structs the known types need (deduplicated by name).
    pub structs: Vec<(StructDef, String)>,
}

/// Resolve what [`StubTypes`] can from the declarations and the kernels
/// that reflected.
pub fn stub_types(
    graph: &GraphInput,
    interfaces: &[Option<KernelInterface>],
    partial: &[Option<crate::partial::PartialTypes>],
) -> StubTypes {
    let nodes: Vec<&NodeDecl> = graph
        .items
        .iter()
        .flat_map(|item| match item {
            NodeItem::Node(node) => std::slice::from_ref(node).iter().collect::<Vec<_>>(),
            NodeItem::Repeat(r) => r.nodes.iter().collect(),
        })
        .collect();
    let mut structs: Vec<(StructDef, String)> = Vec::new();
    let outputs = graph
        .buffers
        .iter()
        .filter(|b| matches!(b.class, BufferClass::Output | BufferClass::InOut))
        .map(|b| {
            let ty = nodes.iter().find_map(|node| {
                let arg = node.args.iter().find(|arg| match &arg.target {
                    BufferRef::Name(name) => *name == b.name,
                    BufferRef::Alternate { a, b: other, .. } => *a == b.name || *other == b.name,
                })?;
                let index = graph.kernels.iter().position(|k| k.name == node.kernel)?;
                let Some(interface) = interfaces.get(index)?.as_ref() else {
                    // A kernel that failed: what its bindings hold, if known.
                    let types = partial.get(index)?.as_ref()?;
                    let (_, element) = types
                        .bindings
                        .iter()
                        .find(|(n, _)| arg.binding == n.as_str())?;
                    for def in &types.structs {
                        if !structs.iter().any(|(d, _)| d.name == def.name) {
                            structs.push((def.clone(), node.kernel.to_string()));
                        }
                    }
                    return Some(element.tokens());
                };
                let binding = interface
                    .bindings
                    .iter()
                    .find(|r| arg.binding == r.name.as_str())?;
                let clashes = |name: &str| {
                    graph
                        .header
                        .as_ref()
                        .is_some_and(|h| struct_name_clash(name, &h.name.to_string()).is_some())
                };
                if interface.structs.iter().any(|def| clashes(&def.name)) {
                    // Reported; emitting it would add rustc errors.
                    return None;
                }
                for def in &interface.structs {
                    if !structs.iter().any(|(d, _)| d.name == def.name) {
                        structs.push((def.clone(), interface.name.to_string()));
                    }
                }
                // A headed output is not a `Vec` of elements.
                binding.header.is_none().then(|| binding.element.tokens())
            });
            (b.name.clone(), ty)
        })
        .collect();
    StubTypes { outputs, structs }
}

/// Per buffer a node binds: its accesses together, and each binding it goes
/// through (name, kind).
type BufferUses = HashMap<usize, (Access, Vec<(String, BindingKind)>)>;

/// A node's use of buffer `bi` through `binding`: the union of its accesses
/// and the bindings it goes through, and the first place it does so (for
/// messages).
fn record_use(
    by_buffer: &mut BufferUses,
    node_sites: &mut HashMap<usize, UseSite>,
    bi: usize,
    binding: &ReflectedBinding,
    access: Access,
    span: Span,
) {
    let entry = by_buffer.entry(bi).or_insert((access, Vec::new()));
    entry.0 = entry.0.union(access);
    entry.1.push((binding.name.clone(), binding.kind));
    node_sites.entry(bi).or_insert(UseSite {
        span,
        binding: binding.name.clone(),
        kind: binding.kind,
        wgsl_type: binding.wgsl_type.clone(),
    });
}
