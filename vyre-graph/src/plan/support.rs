//! What a device allows of a graph, checked by `Graph::new` before anything
//! is created, so that a device that cannot run the graph refuses it with
//! an error naming the limit or the feature, never a device error: the
//! features the graph declares ([`check_features`]), its kernels' workgroup
//! sizes and bindings against the device's limits ([`check_limits`]), and
//! its texture formats against the device's features and format features
//! ([`check_formats`]; wgpu's OpenGL backend mishandles some textures
//! without an error: [`check_gl`]).

use crate::device::gpu::Gpu;
use crate::spec::error::{BackendError, Result};
use crate::spec::{BindingKind, Feature, GraphSpec, SampleType, TextureDimension, TextureResource};
use crate::spec::{FormatFlag, ToWgpu};

/// What wgpu's OpenGL backend gets wrong without an error (measured on
/// Mesa's llvmpipe through EGL, and read in wgpu-hal's GLES code): it makes
/// a 1D texture 2D, so kernels read zeros from it; it binds only the first
/// z slice of a 3D storage texture; and its snorm storage textures store
/// negative values as 0.
fn check_gl(spec: &GraphSpec) -> Result<()> {
    let refuse = |texture: &str, reason: &str| BackendError::UnsupportedTexture {
        texture: texture.to_string(),
        reason: reason.to_string(),
    };
    for b in spec.buffers.iter() {
        if b.texture_shape().map(|s| s.dimension) == Some(TextureDimension::D1) {
            return Err(refuse(
                &b.name,
                "wgpu's OpenGL backend makes 1D textures 2D, and kernels then read zeros from them; declare it `texture` with a height of 1 (`[n, 1]`) and bind `texture_2d`, or run on Vulkan",
            ));
        }
    }
    for node in spec.nodes.iter() {
        let Some(kernel) = spec.kernels.get(node.kernel) else {
            continue;
        };
        for nb in node.bindings.iter() {
            let Some(b) = spec.buffers.get(nb.buffer) else {
                continue;
            };
            let stored = kernel.bindings.iter().find_map(|kb| match kb.kind {
                BindingKind::StorageTexture {
                    format, dimension, ..
                } if kb.group == nb.group && kb.binding == nb.binding => Some((format, dimension)),
                _ => None,
            });
            match stored {
                Some((_, TextureDimension::D3)) => {
                    return Err(refuse(
                        &b.name,
                        "wgpu's OpenGL backend binds only the first z slice of a 3D storage texture; store it as a `texture_2d_array` (one layer per slice), or run on Vulkan",
                    ));
                }
                Some((format, _)) if format.name().ends_with("snorm") => {
                    return Err(refuse(
                        &b.name,
                        "wgpu's OpenGL backend stores snorm storage textures as unorm (negative values become 0); store a sint or float format and convert in the kernel, or run on Vulkan",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every texture format of `spec` against `gpu`: the features a format
/// needs to exist (the 16-bit normalised ones), to be stored with each
/// access its kernels declare, and to be filtered linearly (32-bit float
/// formats); then whether the adapter allows each storage binding.
///
/// # Errors
/// [`BackendError::UnsupportedFeature`] naming the missing feature;
/// [`BackendError::UnsupportedTextureFormat`] when the device has every
/// feature but the adapter still does not store the format that way;
/// [`BackendError::UnsupportedTexture`] for what wgpu's OpenGL backend
/// mishandles ([`check_gl`]).
fn check_formats(gpu: &Gpu, spec: &GraphSpec) -> Result<()> {
    let device = gpu.device().features();
    let missing = |f: Feature| BackendError::UnsupportedFeature {
        graph: spec.name.to_string(),
        feature: f.name(),
        wgpu: f.wgpu_name(),
    };
    for shape in spec.buffers.iter().filter_map(|b| b.texture_shape()) {
        if let Some(f) = shape.format.format_feature()
            && !device.contains(f.wgpu())
        {
            return Err(missing(f));
        }
    }
    if gpu.adapter().backend == wgpu::Backend::Gl {
        check_gl(spec)?;
    }
    for kernel in spec.kernels.iter() {
        for b in kernel.bindings.iter() {
            let BindingKind::StorageTexture { format, access, .. } = b.kind else {
                continue;
            };
            if let Some(f) = format.format_feature()
                && !device.contains(f.wgpu())
            {
                return Err(missing(f));
            }
            let allowed = crate::device::texture::format_features(gpu, format.wgpu()).flags;
            if allowed.contains(access.format_flag()) {
                continue;
            }
            if let Some(f) = format.storage_feature(access)
                && !device.contains(f.wgpu())
            {
                return Err(missing(f));
            }
            return Err(BackendError::UnsupportedTextureFormat {
                kernel: kernel.label.to_string(),
                binding: b.name.to_string(),
                format: format.name(),
                access: access.wgsl(),
                reason: format!("its storage format features are {allowed:?}"),
            });
        }
    }
    // A filtering layout on a 32-bit float texture needs FLOAT32_FILTERABLE.
    let filtered_float32 = spec.nodes.iter().any(|node| {
        let Some(kernel) = spec.kernels.get(node.kernel) else {
            return false;
        };
        node.bindings.iter().any(|nb| {
            let filtering = kernel.bindings.iter().any(|kb| {
                kb.group == nb.group
                    && kb.binding == nb.binding
                    && matches!(
                        kb.kind,
                        BindingKind::SampledTexture {
                            sample: SampleType::Float { filterable: true },
                            ..
                        }
                    )
            });
            let float32 = matches!(
                spec.buffers.get(nb.buffer).and_then(|b| b.texture.as_ref()),
                Some(TextureResource::Texture(shape)) if shape.format.is_float32()
            );
            filtering && float32
        })
    });
    if filtered_float32 && !device.contains(wgpu::Features::FLOAT32_FILTERABLE) {
        return Err(missing(Feature::Float32Filterable));
    }
    Ok(())
}

/// Refuses a device without a feature the graph declares, or whose texture
/// formats it cannot bind as the kernels do ([`check_formats`]), before
/// anything is created.
pub(crate) fn check_features(gpu: &Gpu, spec: &GraphSpec) -> Result<()> {
    let device = gpu.device().features();
    match spec.features.iter().find(|f| !device.contains(f.wgpu())) {
        Some(f) => Err(BackendError::UnsupportedFeature {
            graph: spec.name.to_string(),
            feature: f.name(),
            wgpu: f.wgpu_name(),
        }),
        None => check_formats(gpu, spec),
    }
}

/// Check every kernel against the device's limits before anything is
/// created, so that a device adopted with low limits (or opened with
/// WebGPU's defaults) refuses a graph with a named limit, not a wgpu error.
pub(crate) fn check_limits(gpu: &Gpu, spec: &GraphSpec) -> Result<()> {
    let limits = gpu.limits();
    let exceeded = |kernel: &str, limit: &'static str, needed: u64, available: u64| {
        BackendError::LimitExceeded {
            kernel: kernel.to_string(),
            limit,
            needed,
            available,
        }
    };
    let sizes = spec
        .kernels
        .iter()
        .map(|k| (&*k.label, k.workgroup_size))
        .chain(spec.nodes.iter().filter_map(|n| {
            let kernel = spec.kernels.get(n.kernel)?;
            n.workgroup_size.map(|size| (&*kernel.label, size))
        }));
    for (label, size) in sizes {
        if size.contains(&0) {
            return Err(BackendError::InvalidProgram {
                graph: spec.name.to_string(),
                reason: format!(
                    "kernel `{label}` has workgroup size {size:?}; every dimension must be at least 1"
                ),
            });
        }
        let per_dimension = [
            (
                "max_compute_workgroup_size_x",
                limits.max_compute_workgroup_size_x,
            ),
            (
                "max_compute_workgroup_size_y",
                limits.max_compute_workgroup_size_y,
            ),
            (
                "max_compute_workgroup_size_z",
                limits.max_compute_workgroup_size_z,
            ),
        ];
        for (&d, (name, max)) in size.iter().zip(per_dimension) {
            if d > max {
                return Err(exceeded(label, name, d.into(), max.into()));
            }
        }
        let invocations = size.iter().map(|&d| u64::from(d)).product::<u64>();
        let max = limits.max_compute_invocations_per_workgroup;
        if invocations > u64::from(max) {
            return Err(exceeded(
                label,
                "max_compute_invocations_per_workgroup",
                invocations,
                max.into(),
            ));
        }
    }
    for kernel in spec.kernels.iter() {
        let count =
            |kind: BindingKind| kernel.bindings.iter().filter(|b| b.kind == kind).count() as u64;
        let storage = count(BindingKind::ReadOnlyStorage) + count(BindingKind::ReadWriteStorage);
        let checks = [
            (
                "max_storage_buffers_per_shader_stage",
                storage,
                limits.max_storage_buffers_per_shader_stage,
            ),
            (
                "max_uniform_buffers_per_shader_stage",
                count(BindingKind::Uniform),
                limits.max_uniform_buffers_per_shader_stage,
            ),
            (
                "max_bind_groups",
                kernel
                    .bindings
                    .iter()
                    .map(|b| u64::from(b.group) + 1)
                    .max()
                    .unwrap_or(0),
                limits.max_bind_groups,
            ),
        ];
        for (name, needed, available) in checks {
            if needed > u64::from(available) {
                return Err(exceeded(&kernel.label, name, needed, available.into()));
            }
        }
    }
    Ok(())
}
