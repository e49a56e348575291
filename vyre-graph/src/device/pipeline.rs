//! [`WgpuPipeline`]: a compiled kernel with explicit bind group and pipeline
//! layouts.
//!
//! Layouts are always explicit: pipelines made with `layout: None` cannot
//! share bind groups, and a graph's nodes often run one kernel with several
//! override sets, all bound the same way.

use std::any::Any;
use std::num::NonZeroU64;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use super::gpu::Gpu;
use crate::spec::error::{BackendError, Result};
use crate::spec::{BindingKind, BindingSpec, KernelSpec, OverrideValue};

/// The bind group layouts (one per group, `0..=max group`, empty for gaps)
/// and the pipeline layout of one kernel.
#[derive(Debug)]
pub(crate) struct KernelLayout {
    pub(crate) groups: Vec<wgpu::BindGroupLayout>,
    pub(crate) pipeline_layout: wgpu::PipelineLayout,
    pub(crate) module: wgpu::ShaderModule,
}

impl KernelLayout {
    /// Compile the module and build the layouts of `kernel`.
    /// The device's verdict is awaited (natively it is known at once; a
    /// browser answers later).
    pub(crate) async fn new(gpu: &Gpu, kernel: &KernelSpec) -> Result<Self> {
        check_bindings_unique(kernel)?;
        let device = gpu.device();
        let scope = gpu.catch_errors();
        // On a `?` the scope is dropped, which pops it: a caught panic
        // leaves no scope pushed.
        let module = catch_backend_panic(kernel, &kernel.entry_point, MAKING_MODULE, || {
            if gpu.take_backend_panic() {
                panic!("vyre: injected panic inside create_shader_module");
            }
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&kernel.label),
                source: wgpu::ShaderSource::Wgsl(kernel.source.clone()),
            })
        })?;
        let group_count = kernel
            .bindings
            .iter()
            .map(|b| b.group as usize + 1)
            .max()
            .unwrap_or(0);
        let groups: Vec<wgpu::BindGroupLayout> = (0..group_count)
            .map(|group| {
                let entries: Vec<wgpu::BindGroupLayoutEntry> = kernel
                    .bindings
                    .iter()
                    .filter(|b| b.group as usize == group)
                    .map(layout_entry)
                    .collect();
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(&kernel.label),
                    entries: &entries,
                })
            })
            .collect();
        let group_refs: Vec<Option<&wgpu::BindGroupLayout>> = groups.iter().map(Some).collect();
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&kernel.label),
            bind_group_layouts: &group_refs,
            immediate_size: 0,
        });
        // Popped before the await: nothing else may push or pop between.
        if let Some(error) = scope.pop().await {
            return Err(BackendError::KernelCompileFailed {
                kernel: kernel.label.to_string(),
                message: error.to_string(),
            });
        }
        Ok(KernelLayout {
            groups,
            pipeline_layout,
            module,
        })
    }
}

fn check_bindings_unique(kernel: &KernelSpec) -> Result<()> {
    for (i, a) in kernel.bindings.iter().enumerate() {
        if let Some(b) = kernel.bindings[..i]
            .iter()
            .find(|b| b.group == a.group && b.binding == a.binding)
        {
            return Err(BackendError::KernelCompileFailed {
                kernel: kernel.label.to_string(),
                message: format!(
                    "`{}` and `{}` both claim group {}, binding {}; give each resource its own slot",
                    b.name, a.name, a.group, a.binding
                ),
            });
        }
    }
    Ok(())
}

fn layout_entry(b: &BindingSpec) -> wgpu::BindGroupLayoutEntry {
    if let Some(ty) = super::texture::binding_type(b.kind) {
        return wgpu::BindGroupLayoutEntry {
            binding: b.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        };
    }
    let ty = match b.kind {
        BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
        BindingKind::ReadWriteStorage => wgpu::BufferBindingType::Storage { read_only: false },
        _ => wgpu::BufferBindingType::Storage { read_only: true },
    };
    wgpu::BindGroupLayoutEntry {
        binding: b.binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(b.min_binding_size),
        },
        count: None,
    }
}

/// Build one compute pipeline of a kernel with a set of override values.
pub(crate) async fn build_pipeline(
    gpu: &Gpu,
    kernel: &KernelSpec,
    layout: &KernelLayout,
    overrides: &[OverrideValue],
) -> Result<wgpu::ComputePipeline> {
    build_entry_pipeline(
        gpu,
        kernel,
        &layout.module,
        &layout.pipeline_layout,
        &kernel.entry_point,
        overrides,
    )
    .await
}

/// Build one compute pipeline of entry point `entry` of a kernel's module
/// with `layout` (a fused kernel's grid-stride entry has a layout of its
/// own).
pub(crate) async fn build_entry_pipeline(
    gpu: &Gpu,
    kernel: &KernelSpec,
    module: &wgpu::ShaderModule,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    overrides: &[OverrideValue],
) -> Result<wgpu::ComputePipeline> {
    let device = gpu.device();
    let constants: Vec<(&str, f64)> = overrides.iter().map(|o| (&*o.name, o.value)).collect();
    let scope = gpu.catch_errors();
    let pipeline = catch_backend_panic(kernel, entry, MAKING_PIPELINE, || {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&kernel.label),
            layout: Some(layout),
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: true,
            },
            cache: None,
        })
    })?;
    gpu.count_pipeline();
    if let Some(error) = scope.pop().await {
        return Err(BackendError::KernelCompileFailed {
            kernel: kernel.label.to_string(),
            message: error.to_string(),
        });
    }
    Ok(pipeline)
}

/// The stages a backend panic is caught in (see
/// [`BackendError::BackendPanicked`]).
const MAKING_MODULE: &str = "creating the shader module";
const MAKING_PIPELINE: &str = "creating the compute pipeline";

/// Run `make`, one wgpu call that compiles entry point `entry` of `kernel`,
/// turning a panic inside wgpu or naga into
/// [`BackendError::BackendPanicked`] (naga 30's SPIR-V writer panics on
/// some WGSL its validator accepts, and Vulkan compiles the module while
/// the call runs).
///
/// Unwinding out of wgpu releases wgpu's own locks, and no lock of the
/// runtime is held here: kernels are compiled by `Graph::new` alone,
/// before the graph (its plan cache included) exists. The caller's error
/// scopes are still pushed and are popped by the caller, as after any
/// other failure.
fn catch_backend_panic<T>(
    kernel: &KernelSpec,
    entry: &str,
    stage: &str,
    make: impl FnOnce() -> T,
) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(make)).map_err(|payload| {
        BackendError::BackendPanicked {
            kernel: kernel.label.to_string(),
            entry_point: entry.to_string(),
            stage: stage.to_string(),
            message: panic_message(payload.as_ref()),
        }
    })
}

/// The text of a panic's payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic whose payload is not text".to_string()
    }
}

/// A compiled compute kernel: WGSL, entry point, explicit layouts and its
/// binding description.
///
/// ```no_run
/// use std::borrow::Cow;
/// use vyre_graph::spec::{Access, BindingKind, BindingSpec, GridFold, KernelSpec};
/// use vyre_graph::{Gpu, WgpuPipeline};
///
/// let gpu = Gpu::new()?;
/// let kernel = KernelSpec {
///     label: Cow::Borrowed("double"),
///     source: Cow::Borrowed(
///         "@group(0) @binding(0) var<storage, read> src: array<u32>;
///          @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
///          @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
///              if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2u; }
///          }",
///     ),
///     entry_point: Cow::Borrowed("main"),
///     workgroup_size: [64, 1, 1],
///     bindings: Cow::Owned(vec![
///         BindingSpec::storage("src", 0, 0, BindingKind::ReadOnlyStorage, 4),
///         BindingSpec::storage("dst", 0, 1, BindingKind::ReadWriteStorage, 4),
///     ]),
///     // It indexes with `g.x` alone: a size past 65,535 workgroups is refused.
///     fold: GridFold::XOnly,
/// };
/// let pipeline = WgpuPipeline::new(&gpu, kernel)?;
/// assert_eq!(pipeline.workgroup_size(), [64, 1, 1]);
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
#[derive(Clone, Debug)]
pub struct WgpuPipeline {
    pub(crate) gpu: Gpu,
    pub(crate) kernel: Arc<KernelSpec>,
    pub(crate) layout: Arc<KernelLayout>,
    pub(crate) pipeline: wgpu::ComputePipeline,
}

impl WgpuPipeline {
    /// Compile `kernel` with its default override values.
    ///
    /// Not on wasm32: use [`WgpuPipeline::new_async`].
    ///
    /// # Errors
    /// [`BackendError::KernelCompileFailed`] with naga's message when the
    /// WGSL does not compile or does not match the binding description;
    /// [`BackendError::BackendPanicked`] when wgpu or naga panicked while
    /// compiling it (caught: the `Gpu` stays usable).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(gpu: &Gpu, kernel: KernelSpec) -> Result<Self> {
        Self::with_overrides(gpu, kernel, &[])
    }

    /// Compile `kernel` with pipeline-overridable constants set.
    ///
    /// Not on wasm32: use [`WgpuPipeline::with_overrides_async`].
    ///
    /// # Errors
    /// As [`WgpuPipeline::new`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn with_overrides(
        gpu: &Gpu,
        kernel: KernelSpec,
        overrides: &[OverrideValue],
    ) -> Result<Self> {
        super::map::block_on(Self::with_overrides_async(gpu, kernel, overrides))
    }

    /// As [`WgpuPipeline::new`], awaiting the device's verdict instead of
    /// blocking on it (the way to compile a kernel in a browser).
    ///
    /// # Errors
    /// As [`WgpuPipeline::new`].
    pub async fn new_async(gpu: &Gpu, kernel: KernelSpec) -> Result<Self> {
        Self::with_overrides_async(gpu, kernel, &[]).await
    }

    /// As [`WgpuPipeline::with_overrides`], awaiting the device's verdict.
    ///
    /// # Errors
    /// As [`WgpuPipeline::new`].
    pub async fn with_overrides_async(
        gpu: &Gpu,
        kernel: KernelSpec,
        overrides: &[OverrideValue],
    ) -> Result<Self> {
        let layout = KernelLayout::new(gpu, &kernel).await?;
        let pipeline = build_pipeline(gpu, &kernel, &layout, overrides).await?;
        Ok(WgpuPipeline {
            gpu: gpu.clone(),
            kernel: Arc::new(kernel),
            layout: Arc::new(layout),
            pipeline,
        })
    }

    /// The kernel's label.
    #[must_use]
    pub fn label(&self) -> &str {
        &self.kernel.label
    }

    /// The kernel's bindings.
    #[must_use]
    pub fn bindings(&self) -> &[BindingSpec] {
        &self.kernel.bindings
    }

    /// The kernel's workgroup size.
    #[must_use]
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.kernel.workgroup_size
    }

    /// The kernel description it was compiled from.
    #[must_use]
    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    /// The wgpu pipeline, for interop.
    #[must_use]
    pub fn wgpu_pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipeline
    }
}
