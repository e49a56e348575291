//! The generated `SPEC` constant: the static `GraphSpec` the runtime takes
//! (kernels with their WGSL and bindings, buffers, nodes, the schedule,
//! fused groups, loops, features), as plain data.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use vyre_analysis::Access;
use vyre_analysis::spec::{DispatchSize, GridFold};

use super::textures::{kind_tokens, resource_tokens};
use super::tokens::{borrowed_str, class_tokens, extent, private, variant_ident};
use crate::model::{BindingKind, GraphAnalysis, KernelOut, NodeOut};

/// The `GraphSpec` constant's value.
pub fn spec(a: &GraphAnalysis) -> TokenStream {
    let p = private();
    let name = borrowed_str(&a.header.name.to_string());
    let kernels = a.kernels.iter().map(kernel_spec);
    let buffers = a.buffers.iter().map(|b| {
        let bname = borrowed_str(&b.name.to_string());
        let class = class_tokens(b.class);
        let element_size = Literal::u32_suffixed(b.element_size);
        let len = extent(b.len);
        let header_bytes = Literal::u32_suffixed(b.header_bytes);
        let texture = resource_tokens(b.texture.as_ref(), b.len, &p);
        let empty_value = match &b.empty_value {
            Some(bytes) => {
                let bytes = bytes.iter().map(|&x| Literal::u8_suffixed(x));
                quote!(::core::option::Option::Some(#p::Cow::Borrowed(&[#(#bytes),*])))
            }
            None => quote!(::core::option::Option::None),
        };
        let append = match b.append {
            Some(grow) => quote!(::core::option::Option::Some(#p::AppendSpec { grow: #grow })),
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #p::BufferSpec { name: #bname, class: #class, element_size: #element_size, len: #len, header_bytes: #header_bytes, texture: #texture, append: #append, empty_value: #empty_value }
        }
    });
    let loops = a.loops.iter().map(|l| {
        let label = borrowed_str(&l.label);
        let until = if l.zero {
            quote!(#p::Until::Zero)
        } else {
            quote!(#p::Until::Empty)
        };
        let iterations = l.iterations.iter().map(|&(first, count, buffer)| {
            let (first, count, buffer) = (
                Literal::usize_suffixed(first),
                Literal::usize_suffixed(count),
                Literal::usize_suffixed(buffer),
            );
            quote!(#p::LoopIteration { first_node: #first, nodes: #count, buffer: #buffer })
        });
        quote!(#p::LoopSpec { label: #label, until: #until, iterations: #p::Cow::Borrowed(&[#(#iterations),*]) })
    });
    let nodes = a.nodes.iter().map(node_spec);
    let fused = a.fused.iter().map(|g| {
        let members = g.nodes.iter().map(|&i| Literal::usize_suffixed(i));
        let dispatch = node_spec(&g.dispatch);
        let grid_stride_entry = match &g.grid_stride_entry {
            Some(e) => {
                let e = borrowed_str(e);
                quote!(::core::option::Option::Some(#e))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(#p::FusedGroup { nodes: #p::Cow::Borrowed(&[#(#members),*]), dispatch: #dispatch, grid_stride_entry: #grid_stride_entry })
    });
    let features = a.features.iter().map(|f| {
        let variant = variant_ident(f);
        quote!(#p::Feature::#variant)
    });
    let levels = a.levels.iter().map(|l| Literal::u32_suffixed(*l));
    let slots = a.slots.iter().map(|s| Literal::usize_suffixed(*s));
    let stackable = a.stackable.is_ok();
    quote! {
        #p::GraphSpec {
            name: #name,
            kernels: #p::Cow::Borrowed(&[#(#kernels),*]),
            buffers: #p::Cow::Borrowed(&[#(#buffers),*]),
            nodes: #p::Cow::Borrowed(&[#(#nodes),*]),
            features: #p::Cow::Borrowed(&[#(#features),*]),
            schedule: ::core::option::Option::Some(#p::ScheduleSpec {
                levels: #p::Cow::Borrowed(&[#(#levels),*]),
                slots: #p::Cow::Borrowed(&[#(#slots),*]),
                stackable: #stackable,
            }),
            fused: #p::Cow::Borrowed(&[#(#fused),*]),
            loops: #p::Cow::Borrowed(&[#(#loops),*]),
        }
    }
}

/// One `NodeSpec` (a node, or a fused group's dispatch).
fn node_spec(n: &NodeOut) -> TokenStream {
    let p = private();
    {
        let label = borrowed_str(&n.label);
        let kernel = Literal::usize_suffixed(n.kernel);
        let bindings = n.bindings.iter().map(|&(group, binding, buffer)| {
            let (group, binding, buffer) = (
                Literal::u32_suffixed(group),
                Literal::u32_suffixed(binding),
                Literal::usize_suffixed(buffer),
            );
            quote!(#p::NodeBinding { group: #group, binding: #binding, buffer: #buffer })
        });
        let overrides = n.overrides.iter().map(|(key, value)| {
            let key = borrowed_str(key);
            let value = if value.is_finite() {
                Literal::f64_suffixed(*value)
            } else {
                Literal::f64_suffixed(0.0)
            };
            quote!(#p::OverrideValue { name: #key, value: #value })
        });
        let workgroup_size = match n.workgroup_size {
            Some(size) => {
                let [x, y, z] = size.map(Literal::u32_suffixed);
                quote!(::core::option::Option::Some([#x, #y, #z]))
            }
            None => quote!(::core::option::Option::None),
        };
        let size = match n.size {
            DispatchSize::Invocations(e) => {
                let e = extent(e);
                quote!(#p::DispatchSize::Invocations(#e))
            }
            DispatchSize::Workgroups(es) => {
                let [x, y, z] = es.map(extent);
                quote!(#p::DispatchSize::Workgroups([#x, #y, #z]))
            }
            DispatchSize::Count(b) => {
                let b = Literal::usize_suffixed(b);
                quote!(#p::DispatchSize::Count(#b))
            }
            DispatchSize::Indirect(b) => {
                let b = Literal::usize_suffixed(b);
                quote!(#p::DispatchSize::Indirect(#b))
            }
        };
        quote! {
            #p::NodeSpec {
                label: #label,
                kernel: #kernel,
                bindings: #p::Cow::Borrowed(&[#(#bindings),*]),
                overrides: #p::Cow::Borrowed(&[#(#overrides),*]),
                workgroup_size: #workgroup_size,
                size: #size,
            }
        }
    }
}

/// One `KernelSpec`: its WGSL, entry point, workgroup size, bindings and
/// how it copes with a folded grid.
fn kernel_spec(k: &KernelOut) -> TokenStream {
    let p = private();
    let label = borrowed_str(&k.label);
    let source = borrowed_str(&k.source);
    let entry = borrowed_str(&k.entry_point);
    let [x, y, z] = k.workgroup_size.map(Literal::u32_suffixed);
    let fold = match k.fold {
        GridFold::Linear => quote!(#p::GridFold::Linear),
        GridFold::XOnly => quote!(#p::GridFold::XOnly),
    };
    let bindings = k.bindings.iter().map(|b| {
        let bname = borrowed_str(&b.name);
        let group = Literal::u32_suffixed(b.group);
        let binding = Literal::u32_suffixed(b.binding);
        let kind = match b.kind {
            BindingKind::ReadOnlyStorage => quote!(#p::BindingKind::ReadOnlyStorage),
            BindingKind::ReadWriteStorage => quote!(#p::BindingKind::ReadWriteStorage),
            BindingKind::Uniform => quote!(#p::BindingKind::Uniform),
            kind => kind_tokens(kind, &p),
        };
        let element_size = Literal::u32_suffixed(b.element_size);
        let min = Literal::u64_suffixed(b.min_binding_size);
        let access = match b.access {
            Access::Read => quote!(#p::Access::Read),
            Access::Write => quote!(#p::Access::Write),
            Access::ReadWrite => quote!(#p::Access::ReadWrite),
        };
        let wgsl_type = borrowed_str(&b.wgsl_type);
        quote! {
            #p::BindingSpec {
                name: #bname,
                group: #group,
                binding: #binding,
                kind: #kind,
                element_size: #element_size,
                min_binding_size: #min,
                access: #access,
                wgsl_type: #wgsl_type,
            }
        }
    });
    quote! {
        #p::KernelSpec {
            label: #label,
            source: #source,
            entry_point: #entry,
            workgroup_size: [#x, #y, #z],
            bindings: #p::Cow::Borrowed(&[#(#bindings),*]),
            fold: #fold,
        }
    }
}
