//! What the error stub can still say when stage 2, 3 or 4 failed
//! ([`stub_types`]): the element types of the outputs some kernel that
//! reflected (or a failed kernel's partial types) binds.

use super::structs::struct_name_clash;
use crate::check::partial::PartialTypes;
use crate::model::{
    BufferClass, BufferRef, GraphInput, KernelInterface, NodeDecl, NodeItem, StructDef, StubTypes,
};

/// Resolve what [`StubTypes`] can from the declarations and the kernels
/// that reflected.
pub fn stub_types(
    graph: &GraphInput,
    interfaces: &[Option<KernelInterface>],
    partial: &[Option<PartialTypes>],
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
                    return Some(element.clone());
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
                binding.header.is_none().then(|| binding.element.clone())
            });
            (b.name.clone(), ty)
        })
        .collect();
    StubTypes { outputs, structs }
}
