//! Grid-stride launches of fused groups: a fused kernel that `graph!` gave
//! a loop entry point ([`FusedGroup::grid_stride_entry`]) may run on a fixed
//! number of workgroups, each looping over the plain grid's invocations,
//! instead of one workgroup per `workgroup_size` elements.
//!
//! [`GridStride`] (in [`crate::DispatchConfig`]) chooses per run; the plain
//! grid's invocation count lives in a 16-byte uniform per launch plan and
//! fused group (written once, when the plan is made), bound at group
//! [`GRID_STRIDE_GROUP`] of a second pipeline of the fused kernel.
//!
//! [`FusedGroup::grid_stride_entry`]: crate::spec::FusedGroup::grid_stride_entry

use crate::device::gpu::Gpu;
use crate::device::pipeline::{KernelLayout, build_entry_pipeline};
use crate::spec::config::GridStride;
use crate::spec::error::Result;
use crate::spec::{GRID_STRIDE_GROUP, GraphSpec};

/// The grid-stride pipelines of a graph: by fused group, the index (into
/// `Program::pipelines`) of its loop pipeline and its
/// [`Gpu::grid_stride_workgroups`].
#[derive(Debug, Default)]
pub(crate) struct StridePipelines {
    /// Layout of the invocation-count uniform's group.
    pub(crate) layout: Option<wgpu::BindGroupLayout>,
    /// By fused group: (pipeline, auto workgroups), or `None`.
    pub(crate) by_group: Vec<Option<(usize, u32)>>,
}

/// Build the loop pipelines of `spec`'s fused groups that have one,
/// appending them to `pipelines`.
pub(crate) async fn build(
    gpu: &Gpu,
    spec: &GraphSpec,
    layouts: &[std::sync::Arc<KernelLayout>],
    pipelines: &mut Vec<wgpu::ComputePipeline>,
) -> Result<StridePipelines> {
    if spec.fused.iter().all(|g| g.grid_stride_entry.is_none()) {
        return Ok(StridePipelines {
            layout: None,
            by_group: vec![None; spec.fused.len()],
        });
    }
    let device = gpu.device();
    let uniform = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("vyre grid-stride extent"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: std::num::NonZeroU64::new(16),
            },
            count: None,
        }],
    });
    let mut by_group = Vec::with_capacity(spec.fused.len());
    for group in spec.fused.iter() {
        let (Some(entry), Some(kernel), Some(layout)) = (
            group.grid_stride_entry.as_deref(),
            spec.kernels.get(group.dispatch.kernel),
            layouts.get(group.dispatch.kernel),
        ) else {
            by_group.push(None);
            continue;
        };
        // Fused kernels bind group 0 only; anything else runs plain.
        if layout.groups.len() != GRID_STRIDE_GROUP as usize {
            by_group.push(None);
            continue;
        }
        let mut groups: Vec<Option<&wgpu::BindGroupLayout>> =
            layout.groups.iter().map(Some).collect();
        groups.push(Some(&uniform));
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(entry),
            bind_group_layouts: &groups,
            immediate_size: 0,
        });
        let pipeline = build_entry_pipeline(
            gpu,
            kernel,
            &layout.module,
            &pipeline_layout,
            entry,
            &group.dispatch.overrides,
        )
        .await?;
        pipelines.push(pipeline);
        let wgx = group
            .dispatch
            .workgroup_size
            .unwrap_or(kernel.workgroup_size)[0];
        by_group.push(Some((pipelines.len() - 1, gpu.grid_stride_workgroups(wgx))));
    }
    Ok(StridePipelines {
        layout: Some(uniform),
        by_group,
    })
}

/// A plan's grid-stride state of one fused dispatch: the uniform holding
/// the plain grid's invocation count, bound, and that grid's workgroups.
pub(crate) struct StrideLaunch {
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) bind_group: wgpu::BindGroup,
    pub(crate) plain_workgroups: u64,
    /// The pipeline and the adapter's workgroup count.
    pub(crate) pipeline: usize,
    pub(crate) auto: u32,
}

impl StrideLaunch {
    /// For a dispatch with loop pipeline `pipeline` (launching `auto`
    /// workgroups when the config leaves it to the runtime) whose plain grid
    /// is `grid` of `wgx`-wide workgroups; `None` when that grid runs more
    /// than `u32::MAX` invocations (the loop counts in u32).
    pub(crate) fn new(
        gpu: &Gpu,
        layout: &wgpu::BindGroupLayout,
        pipeline: usize,
        auto: u32,
        grid: [u32; 3],
        wgx: u32,
    ) -> Option<Self> {
        let plain_workgroups: u64 = grid.iter().map(|&d| u64::from(d)).product();
        let invocations = u32::try_from(plain_workgroups.checked_mul(u64::from(wgx))?).ok()?;
        let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre grid-stride extent"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut bytes = [0u8; 16];
        bytes[..4].copy_from_slice(&invocations.to_le_bytes());
        gpu.queue().write_buffer(&buffer, 0, &bytes);
        let bind_group = gpu.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("vyre grid-stride extent"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });
        Some(StrideLaunch {
            buffer,
            bind_group,
            plain_workgroups,
            pipeline,
            auto,
        })
    }

    /// The workgroups this run launches under `mode` (`None`: the plain
    /// grid).
    pub(crate) fn workgroups(&self, mode: GridStride, max: u32) -> Option<u32> {
        mode.workgroups(self.plain_workgroups, self.auto, max)
    }
}
