//! Hints for graph-level mistakes: which node could fix them.

use crate::model::analysis::NodeOut;
use crate::model::kernel::{BindingKind, KernelInterface};
use crate::model::rust_types::RustTy;

/// "node `copy` could write it through `dst` (`array<f32>`)": the first node
/// whose kernel has a writable binding of element type `element` (any
/// type when `None`), for an output nothing writes.
pub fn writer(
    nodes: &[NodeOut],
    kernels: &[Option<KernelInterface>],
    element: Option<&RustTy>,
) -> Option<String> {
    nodes.iter().find_map(|node| {
        let kernel = kernels.get(node.kernel)?.as_ref()?;
        let binding = kernel.bindings.iter().find(|b| {
            b.kind == BindingKind::ReadWriteStorage && element.is_none_or(|e| *e == b.element)
        })?;
        Some(format!(
            "node `{}` could write it through its binding `{}` (`{}`)",
            node.label, binding.name, binding.wgsl_type
        ))
    })
}
