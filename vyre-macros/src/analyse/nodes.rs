//! Nodes, unrolled: every `repeat` iteration of every node becomes a
//! [`NodeOut`], its buffers resolved (`ping`/`pong` per iteration), each
//! binding checked against the buffer it binds (kind, one element type per
//! buffer, enough elements, the append contract, textures), and the node's
//! uses of each buffer recorded for the hazard analysis.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::Ident;
use vyre_analysis::spec::DispatchSize;
use vyre_analysis::{Access, BufferClass, Use};

use super::appends::{check_binding as check_append, device_size, size_text};
use super::context::{BufferUses, Ctx, TypeSite, UseSite, alternate, class_article, record_use};
use super::loops::loop_out;
use super::names::check_node_names;
use super::overrides::{node_overrides, node_workgroup_size};
use super::textures::{check_binding as check_texture, check_sampling};
use crate::diag::{Diagnostics, list};
use crate::model::texture::texel_type;
use crate::model::{
    BindingKind, BufferDecl, ExtentExpr, KernelInterface, LoopOut, NodeDecl, NodeItem, NodeOut,
    ReflectedBinding, RustTy, SizeDecl,
};

/// Every node of the graph, unrolled, with what the later checks need.
pub struct Unrolled {
    /// Nodes in program order.
    pub nodes: Vec<NodeOut>,
    /// Each node's uses of buffers (for `vyre_analysis`).
    pub uses: Vec<Vec<Use>>,
    /// Where each node names each buffer it uses.
    pub use_sites: Vec<HashMap<usize, UseSite>>,
    /// The declaration (counted over the graph, a `repeat`'s body once)
    /// each node comes from, so a problem is reported once per declaration.
    pub node_decl_of: Vec<usize>,
    /// Per kernel: whether some node runs it with its default workgroup
    /// size.
    pub default_size_users: Vec<bool>,
    /// Loops that stop themselves.
    pub loops: Vec<LoopOut>,
    /// Per buffer: the binding that gave it its element type.
    pub sites: Vec<Option<TypeSite>>,
    /// Whether some node could not be checked (its kernel failed, or it
    /// did): no analysis is returned then.
    pub incomplete: bool,
}

/// Unrolls and checks every node of `items`; `incomplete` when a kernel
/// already failed.
pub fn unroll(ctx: &Ctx, items: &[NodeItem], incomplete: bool, diag: &mut Diagnostics) -> Unrolled {
    let mut out = Unrolled {
        nodes: Vec::new(),
        uses: Vec::new(),
        use_sites: Vec::new(),
        node_decl_of: Vec::new(),
        default_size_users: ctx.kernels.iter().map(|_| false).collect(),
        loops: Vec::new(),
        sites: ctx.buffer_decls.iter().map(|_| None).collect(),
        incomplete,
    };
    let mut decl_counter = 0usize;
    for item in items {
        let (decls, repeat): (Vec<&NodeDecl>, Option<(&Ident, u64)>) = match item {
            NodeItem::Node(n) => (vec![n], None),
            NodeItem::Repeat(r) => (r.nodes.iter().collect(), Some((&r.var, r.count))),
        };
        // Check each declaration once (static parts), then every iteration.
        let checked: Vec<Option<usize>> = decls
            .iter()
            .map(|decl| check_node_names(ctx, decl, diag))
            .collect();
        let iterations = repeat.map_or(1, |(_, c)| c);
        let mut failed: Vec<bool> = decls.iter().map(|_| false).collect();
        // Node ranges of each iteration, for `repeat up to K .. until`.
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        for i in 0..iterations {
            let first = out.nodes.len();
            for (d, decl) in decls.iter().enumerate() {
                let Some(Some(kernel)) = checked.get(d) else {
                    out.incomplete = true;
                    continue;
                };
                if failed.get(d).copied().unwrap_or(true) {
                    continue;
                }
                let var = repeat.map(|(v, _)| (v, i));
                if !instantiate(ctx, decl, *kernel, var, decl_counter + d, &mut out, diag) {
                    out.incomplete = true;
                    if let Some(f) = failed.get_mut(d) {
                        *f = true;
                    }
                }
            }
            ranges.push(first..out.nodes.len());
        }
        if let NodeItem::Repeat(r) = item
            && let Some(until) = &r.until
            && !out.incomplete
            && let Some(lp) = loop_out(
                r,
                until,
                &ranges,
                ctx.buffer_index,
                ctx.buffer_decls,
                &mut out.nodes,
                &mut out.uses,
                &mut out.use_sites,
                diag,
            )
        {
            out.loops.push(lp);
        }
        decl_counter += decls.len();
    }
    out
}

/// One iteration of node `decl` (declaration `decl_id`, kernel `ki`)
/// added to `out`; `false` when it failed (reported).
fn instantiate(
    ctx: &Ctx,
    decl: &NodeDecl,
    ki: usize,
    var: Option<(&Ident, u64)>,
    decl_id: usize,
    out: &mut Unrolled,
    diag: &mut Diagnostics,
) -> bool {
    let Some(instance) = instance(ctx, decl, ki, var, &mut out.sites, diag) else {
        return false;
    };
    if instance.uses_default_size
        && let Some(slot) = out.default_size_users.get_mut(ki)
    {
        *slot = true;
    }
    out.nodes.push(instance.node);
    out.uses.push(instance.uses);
    out.use_sites.push(instance.sites);
    out.node_decl_of.push(decl_id);
    true
}

/// One iteration of a node, checked.
struct Instance {
    node: NodeOut,
    /// Its uses of buffers.
    uses: Vec<Use>,
    /// Where it names each buffer it uses.
    sites: HashMap<usize, UseSite>,
    /// Whether it runs with its kernel's default workgroup size.
    uses_default_size: bool,
}

/// A node's bindings: `(group, binding, buffer)` in the kernel's order,
/// its uses of each buffer, and where it names each.
#[derive(Default)]
struct Bound {
    bindings: Vec<(u32, u32, usize)>,
    by_buffer: BufferUses,
    sites: HashMap<usize, UseSite>,
}

/// One iteration of a node: resolves buffers and overrides, checks
/// bindings against buffers.
fn instance(
    ctx: &Ctx,
    decl: &NodeDecl,
    ki: usize,
    var: Option<(&Ident, u64)>,
    sites: &mut [Option<TypeSite>],
    diag: &mut Diagnostics,
) -> Option<Instance> {
    let kernel = ctx.kernel(ki)?;
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
    let mut bound = Bound::default();
    for arg in &decl.args {
        let Some(binding) = kernel.binding(&arg.binding.to_string()) else {
            continue;
        };
        let (buf_ident, span) = match alternate(&arg.target, var) {
            Ok(found) => found,
            Err(e) => {
                diag.push(e);
                continue;
            }
        };
        let Some(&bi) = ctx.buffer_index.get(&buf_ident.to_string()) else {
            continue;
        };
        let Some(bdecl) = ctx.buffer_decls.get(bi) else {
            continue;
        };
        let arg = Arg {
            kernel,
            binding,
            bi,
            bdecl,
            span,
            in_iteration: &in_iteration,
        };
        if bdecl.texture.is_some() || binding.kind.is_texture() {
            bind_texture(&arg, sites, &mut bound, diag);
        } else {
            bind_buffer(&arg, sites, &mut bound, diag);
        }
    }
    // A linear sampler may only filter a filterable format.
    for (span, message) in check_sampling(
        kernel,
        &bound.bindings,
        &bound.sites.iter().map(|(&b, s)| (b, s.span)).collect(),
        ctx.buffer_decls,
        ctx.textures,
    ) {
        diag.error(span, format!("node `{label}`: {message}{in_iteration}"));
    }
    check_conflicts(ctx, decl, &label, &bound.by_buffer, diag);
    let before_overrides = diag.len();
    let overrides = node_overrides(kernel, decl, var, &in_iteration, diag);
    let (workgroup_size, uses_default) = if diag.len() == before_overrides {
        node_workgroup_size(
            kernel,
            decl,
            &label,
            &in_iteration,
            &overrides,
            ctx.native,
            diag,
        )
    } else {
        (None, true)
    };
    if diag.len() != before {
        return None;
    }
    let size = dispatch_size(ctx, decl, var, &label, &mut bound, diag)?;
    let mut uses: Vec<Use> = bound
        .by_buffer
        .iter()
        .map(|(&buffer, (access, _))| Use {
            buffer,
            access: *access,
        })
        .collect();
    uses.sort_by_key(|u| u.buffer);
    Some(Instance {
        node: NodeOut {
            label,
            kernel: ki,
            bindings: bound.bindings,
            overrides,
            workgroup_size,
            size,
            unfused: decl.unfused,
        },
        uses,
        sites: bound.sites,
        uses_default_size: uses_default,
    })
}

/// One argument of a node, resolved: the kernel's binding and the graph
/// buffer it binds.
struct Arg<'a> {
    kernel: &'a KernelInterface,
    binding: &'a ReflectedBinding,
    bi: usize,
    bdecl: &'a BufferDecl,
    span: Span,
    in_iteration: &'a str,
}

impl Arg<'_> {
    /// The element type this binding gives its buffer (a texture's texel
    /// type comes from the graph texture's format).
    fn type_site(&self, element: RustTy, element_size: u32) -> TypeSite {
        let b = self.binding;
        TypeSite {
            kernel: self.kernel.name.to_string(),
            binding: b.name.clone(),
            wgsl_type: b.wgsl_type.clone(),
            element,
            element_size,
            header: b.header.clone(),
            header_bytes: b.header_bytes,
            first_member: b.first_member.clone(),
            span: self.span,
        }
    }

    /// The node binds the buffer through this binding, with `access`.
    fn bind(&self, bound: &mut Bound, access: Access) {
        let b = self.binding;
        bound.bindings.push((b.group, b.binding, self.bi));
        record_use(
            &mut bound.by_buffer,
            &mut bound.sites,
            self.bi,
            b,
            access,
            self.span,
        );
    }
}

/// A texture or sampler (or a buffer bound where the kernel takes one).
fn bind_texture(
    arg: &Arg,
    sites: &mut [Option<TypeSite>],
    bound: &mut Bound,
    diag: &mut Diagnostics,
) {
    let (binding, bdecl) = (arg.binding, arg.bdecl);
    if let Some(message) = check_texture(bdecl, binding, &arg.kernel.name.to_string()) {
        diag.error(arg.span, format!("{message}{}", arg.in_iteration));
        return;
    }
    if let Some(slot @ None) = sites.get_mut(arg.bi) {
        let format = bdecl.texture.as_ref().and_then(|t| t.format());
        *slot = Some(arg.type_site(
            format.map_or(binding.element.clone(), texel_type),
            format.map_or(binding.element_size, |f| f.texel_bytes()),
        ));
    }
    arg.bind(bound, binding.access);
}

/// A storage or uniform buffer: the right kind of buffer, one element
/// type per buffer, enough elements for a fixed-size binding, and an
/// append buffer's contract.
fn bind_buffer(
    arg: &Arg,
    sites: &mut [Option<TypeSite>],
    bound: &mut Bound,
    diag: &mut Diagnostics,
) {
    let (binding, bdecl, in_iteration) = (arg.binding, arg.bdecl, arg.in_iteration);
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
            arg.span,
            format!(
                "`{}` is {} buffer but kernel `{}` binds it through {}{in_iteration}; {fix}",
                bdecl.name,
                class_article(bdecl.class),
                arg.kernel.name,
                binding.describe()
            ),
        );
        return;
    }
    if !one_element_type(arg, sites, diag) {
        return;
    }
    // A fixed-size binding needs enough elements.
    if let Some(min) = binding.min_elements
        && !bdecl.len.extent.depends_on_n()
        && bdecl.len.extent.add < min
    {
        diag.error_with_note(
            arg.span,
            format!(
                "kernel `{}` binds `{}` as {}, which needs {min} element(s), but buffer `{}` has {}{in_iteration}",
                arg.kernel.name, binding.name, binding.wgsl_type, bdecl.name, bdecl.len.extent.add
            ),
            bdecl.len.span,
            format!("`{}`'s length is declared here", bdecl.name),
        );
    }
    // Append buffers: the count's contract (`appends.rs`); appending to an
    // input is one error, not also a write to a read-only one.
    let access = check_append(bdecl, binding, arg.span, in_iteration, diag);
    arg.bind(bound, access);
}

/// One element type per buffer: the first binding gives it, every other
/// must agree (`false`: it does not, reported).
fn one_element_type(arg: &Arg, sites: &mut [Option<TypeSite>], diag: &mut Diagnostics) -> bool {
    let (binding, bdecl) = (arg.binding, arg.bdecl);
    match sites.get_mut(arg.bi) {
        Some(Some(site)) => {
            // Writers and readers of an append buffer name their
            // structs differently (`count: atomic<u32>` / `u32`).
            let same_header = bdecl.append.is_some() || site.header == binding.header;
            match vector_view(site, binding) {
                View::OfSite => return true,
                View::SiteViews => {
                    // The buffer's type is the scalar: this binding gives it.
                    *site = arg.type_site(binding.element.clone(), binding.element_size);
                    return true;
                }
                View::No => {}
            }
            if site.element != binding.element
                || site.element_size != binding.element_size
                || !same_header
                || site.header_bytes != binding.header_bytes
            {
                diag.error_with_note(
                    arg.span,
                    format!(
                        "buffer `{}` has two element types: `{}` binds it as {} (stride {}, Rust `{}`) but `{}` binds it as {} (stride {}, Rust `{}`){}",
                        bdecl.name,
                        site.kernel,
                        site.wgsl_type,
                        site.element_size,
                        site.element.display(),
                        arg.kernel.name,
                        binding.wgsl_type,
                        binding.element_size,
                        binding.element.display(),
                        arg.in_iteration
                    ),
                    site.span,
                    format!("`{}` binds `{}` through `{}` here", site.kernel, bdecl.name, site.binding),
                );
                return false;
            }
            true
        }
        Some(slot @ None) => {
            *slot = Some(arg.type_site(binding.element.clone(), binding.element_size));
            true
        }
        None => false,
    }
}

/// How two bindings of one buffer relate when one is a vector view of the
/// other: `array<vec4<f32>>` (or `vec2`) over a buffer of `f32`, the
/// vectorised loads a reduction makes (and users may write).
enum View {
    /// The new binding views the site's scalars.
    OfSite,
    /// The site views the new binding's scalars.
    SiteViews,
    /// Neither.
    No,
}

fn vector_view(site: &TypeSite, binding: &ReflectedBinding) -> View {
    let lanes_of = |vector: &RustTy, vector_size: u32, scalar: &RustTy, scalar_size: u32| {
        matches!(vector, RustTy::Array(inner, lanes)
            if **inner == *scalar
                && matches!(scalar, RustTy::Prim(_))
                && matches!(lanes, 2 | 4)
                && vector_size == lanes * scalar_size)
    };
    let plain = site.header.is_none()
        && binding.header.is_none()
        && site.header_bytes == 0
        && binding.header_bytes == 0;
    if !plain {
        View::No
    } else if binding.wgsl_type.starts_with("array<vec")
        && lanes_of(
            &binding.element,
            binding.element_size,
            &site.element,
            site.element_size,
        )
    {
        View::OfSite
    } else if site.wgsl_type.starts_with("array<vec")
        && lanes_of(
            &site.element,
            site.element_size,
            &binding.element,
            binding.element_size,
        )
    {
        View::SiteViews
    } else {
        View::No
    }
}

/// A buffer bound by one node both writable and not (read-only storage, a
/// uniform) is a usage conflict in wgpu. Two writable bindings of it (a
/// vector view beside a scalar one) are not.
fn check_conflicts(
    ctx: &Ctx,
    decl: &NodeDecl,
    label: &str,
    by_buffer: &BufferUses,
    diag: &mut Diagnostics,
) {
    let names = |b: &[(String, BindingKind)], writable: bool| -> Vec<String> {
        b.iter()
            .filter(|(_, k)| (*k == BindingKind::ReadWriteStorage) == writable)
            .map(|(n, _)| n.clone())
            .collect()
    };
    let mut conflicts: Vec<(usize, Vec<String>, Vec<String>)> = by_buffer
        .iter()
        .map(|(bi, (_, b))| (*bi, names(b, false), names(b, true)))
        .filter(|(_, read, write)| !read.is_empty() && !write.is_empty())
        .collect();
    conflicts.sort();
    for (bi, read, write) in conflicts {
        let bname = ctx
            .buffer_decls
            .get(bi)
            .map(|b| b.name.to_string())
            .unwrap_or_default();
        diag.error(
            decl.args_span,
            format!(
                "node `{label}` binds buffer `{bname}` read-only through {} and writable through {}; wgpu refuses a dispatch that uses one buffer both ways: read it through the writable binding, or declare every binding of it `var<storage, read_write>`",
                list(read),
                list(write)
            ),
        );
    }
}

/// How many invocations or workgroups the node launches; a size read on
/// the device is a read of its buffer by the node.
fn dispatch_size(
    ctx: &Ctx,
    decl: &NodeDecl,
    var: Option<(&Ident, u64)>,
    label: &str,
    bound: &mut Bound,
    diag: &mut Diagnostics,
) -> Option<DispatchSize> {
    Some(match &decl.size {
        SizeDecl::Over(e) => DispatchSize::Invocations(e.extent),
        SizeDecl::Grid(es) => DispatchSize::Workgroups(es.map(|e: ExtentExpr| e.extent)),
        SizeDecl::Device(d) => {
            let (size, bi, span) =
                device_size(d, var, ctx.buffer_index, ctx.buffer_decls, label, diag)?;
            // The count (or grid) is a read of the buffer by this node.
            let entry = bound
                .by_buffer
                .entry(bi)
                .or_insert((Access::Read, Vec::new()));
            entry.0 = entry.0.union(Access::Read);
            bound.sites.entry(bi).or_insert(UseSite {
                span,
                binding: size_text(d),
                kind: BindingKind::ReadOnlyStorage,
                wgsl_type: "u32".to_owned(),
            });
            size
        }
    })
}
