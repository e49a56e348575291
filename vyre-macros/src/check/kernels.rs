//! Stage 2 for every kernel of a graph ([`check_kernels`]): load, validate,
//! reflect, in that order, collecting every error.

use naga::valid::Capabilities;

use super::imports::{Modules, link_kernel};
use super::load::load_all;
use super::partial::PartialTypes;
use super::reflect::reflect;
use super::validate::validate_or_partial;
use crate::diag::Diagnostics;
use crate::model::{KernelDecl, KernelInterface, LoadedKernel};

/// What stage 2 found out about a graph's kernels, one entry per declared
/// kernel.
pub struct Checked {
    /// Each kernel's interface; `None` when it failed (reported).
    pub interfaces: Vec<Option<KernelInterface>>,
    /// What a kernel that failed validation still says about its bindings'
    /// types, for the error stub.
    pub partial: Vec<Option<PartialTypes>>,
    /// The absolute paths of the kernel files, for `include_str!`s that
    /// make Cargo rebuild when one changes (even when it has errors).
    pub tracked: Vec<String>,
}

/// Loads every kernel (reporting unreadable files first), then validates
/// and reflects each with exactly `caps`: what wgpu grants every WebGPU
/// adapter plus the graph's declared features.
pub fn check_kernels(
    kernels: &[KernelDecl],
    caps: Capabilities,
    diag: &mut Diagnostics,
) -> Checked {
    check_kernels_with(kernels, &Modules::none(), caps, diag)
}

/// [`check_kernels`] for kernels that may import from `modules`: each
/// that imports (or uses `@if`) is linked first (`imports.rs`), and every
/// file the links read is tracked.
pub fn check_kernels_with(
    kernels: &[KernelDecl],
    modules: &Modules,
    caps: Capabilities,
    diag: &mut Diagnostics,
) -> Checked {
    let loaded = load_all(kernels, diag);
    let mut tracked: Vec<String> = loaded
        .iter()
        .flatten()
        .filter_map(|k| k.tracked_path().map(str::to_owned))
        .collect();
    let loaded: Vec<Option<LoadedKernel>> = loaded
        .into_iter()
        .map(|k| match link_kernel(k?, modules, &mut tracked) {
            Ok(k) => k,
            Err(e) => {
                diag.push(e);
                None
            }
        })
        .collect();
    tracked.sort();
    tracked.dedup();
    let mut partial = Vec::new();
    let interfaces = loaded
        .into_iter()
        .map(|kernel| {
            partial.push(None);
            let validated = match validate_or_partial(kernel?, caps) {
                Ok(v) => v,
                Err(failed) => {
                    diag.push(failed.error);
                    if let Some(slot) = partial.last_mut() {
                        *slot = failed.partial;
                    }
                    return None;
                }
            };
            match reflect(validated) {
                Ok(interface) => Some(interface),
                Err(errors) => {
                    errors.into_iter().for_each(|e| diag.push(e));
                    None
                }
            }
        })
        .collect();
    Checked {
        interfaces,
        partial,
        tracked,
    }
}
