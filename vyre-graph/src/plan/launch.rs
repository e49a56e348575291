//! A launch plan: everything a run of one problem size needs (grids, device
//! buffers, textures, bind groups, readback buffers, control and
//! grid-stride resources), allocated once what `sizing.rs` checked passed,
//! then kept in the graph's cache (`plans.rs`). This is the runtime's
//! resource tracking; binding a run's inputs is `bind.rs`'s job, recording
//! commands `run/`'s.

use std::num::NonZeroU64;
use std::sync::Arc;

use smallvec::SmallVec;

use super::program::Program;
use super::sizing::{Sizing, check_budget, readback_size};
use super::stamp::Stamp;
use super::stride::StrideLaunch;
use super::timer::PassTimer;
use crate::device::buffer::{BoundHandle, round4};
use crate::device::gpu::Gpu;
use crate::device::map::MapSlots;
use crate::device::texture::TextureSlot;
use crate::spec::BufferClass;
use crate::spec::config::{DispatchConfig, GridStride};
use crate::spec::error::Result;
use crate::spec::plan::BatchDispatchPlan;

/// The smallest buffer a launch plan makes: one `vec4` of 64-bit
/// scalars, so that a vector view (`array<vec4<f32>>` of an `f32`
/// buffer, `array<vec4<f64>>` of an `f64` one) of a buffer shorter than
/// one vector can still be bound.
pub(crate) const MIN_SLOT_BYTES: u64 = 32;

/// Everything a run of one problem size needs, made once and cached.
pub(crate) struct LaunchPlan {
    /// The device, to free the plan's buffers when it is dropped.
    gpu: Gpu,
    /// Whether dropping the plan destroys its buffers at once (not while a
    /// caller's command buffer that names them may still be submitted).
    destroy_on_drop: bool,
    pub(crate) plan: BatchDispatchPlan,
    /// Workgroup grid of each dispatch (`Program::dispatches`).
    pub(crate) grids: Vec<[u32; 3]>,
    /// Logical bytes of each graph buffer (unrounded).
    pub(crate) bytes: Vec<u64>,
    /// One device buffer per analysis slot (a 4-byte placeholder for a
    /// texture's slot).
    pub(crate) slots: Vec<wgpu::Buffer>,
    /// The texture of each analysis slot that holds textures.
    pub(crate) textures: Vec<Option<TextureSlot>>,
    /// The problem size the plan was made for.
    pub(crate) n: u64,
    /// Bind groups of each dispatch, one per kernel group.
    pub(crate) bind_groups: Vec<SmallVec<[wgpu::BindGroup; 2]>>,
    /// Each dispatch's grid-stride state, when it can loop (a fused group
    /// with a loop entry point).
    pub(crate) strides: Vec<Option<StrideLaunch>>,
    /// Readback buffer of each host output.
    pub(crate) readback: Vec<wgpu::Buffer>,
    /// For each host output that is a texture, `(row bytes, padded row
    /// bytes)` of its readback buffer.
    pub(crate) texture_rows: Vec<Option<(usize, usize)>>,
    /// Where the readback buffers' map callbacks report, reused every run
    /// (one more slot for the timestamps).
    pub(crate) map_slots: Arc<MapSlots>,
    /// Timestamp queries around the pass, made by the first run that asks
    /// for profiling on a device that has them.
    pub(crate) timer: Option<PassTimer>,
    /// The resident handle each input's bind groups currently point at, if
    /// any (a weak reference: a dropped handle's memory is freed at once).
    pub(crate) bound_handles: Vec<Option<BoundHandle>>,
    /// Control blocks, loop states and the status of a data-dependent
    /// graph (`control.rs`).
    pub(crate) control: Option<super::control::ControlPlan>,
    /// Proof that a recorded run ran, made by the first recorded run.
    pub(crate) stamp: Option<Stamp>,
    /// The staging buffers of each host input (`Program::host_inputs`
    /// order; one, or one per chunk), made by the first run that stages it
    /// (`staging.rs`).
    pub(crate) staging: Vec<smallvec::SmallVec<[super::staging::Staging; 1]>>,
}

impl Drop for LaunchPlan {
    fn drop(&mut self) {
        // Free device memory now rather than when wgpu gets round to it.
        let timer = self.timer.iter().flat_map(|t| [&t.resolve, &t.read]);
        let control = self.control.iter().flat_map(|c| c.buffers());
        let strides = self.strides.iter().flatten().map(|s| &s.buffer);
        let stamp = self.stamp.iter().flat_map(Stamp::buffers);
        let staging = self.staging_buffers();
        for b in self
            .slots
            .iter()
            .chain(&self.readback)
            .chain(timer)
            .chain(control)
            .chain(strides)
            .chain(stamp)
            .chain(staging)
        {
            if self.destroy_on_drop {
                self.gpu.free_buffer(b);
            } else {
                // wgpu frees it once nothing refers to it any more.
                self.gpu.forget_buffer(b);
            }
        }
        if self.destroy_on_drop {
            for t in self.textures.iter().flatten() {
                t.texture.destroy();
            }
        }
    }
}

fn usage_of(class: BufferClass) -> wgpu::BufferUsages {
    match class {
        BufferClass::Uniform => wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        _ => {
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC
        }
    }
}

impl LaunchPlan {
    /// Allocate the plan that `sizing` and `plan` describe: its buffers
    /// (one per analysis slot), textures, readback buffers, bind groups and
    /// grid-stride uniforms. Its control resources, when the program has
    /// control steps, are `control_block::build`'s (`plans.rs` attaches
    /// them).
    pub(crate) fn build(
        gpu: &Gpu,
        program: &Program,
        sizing: Sizing,
        plan: BatchDispatchPlan,
    ) -> Self {
        let analysis = &program.analysis;
        let n = plan.queue_len;
        let mut usages = vec![wgpu::BufferUsages::empty(); analysis.slot_count];
        let mut textures: Vec<Option<TextureSlot>> =
            (0..analysis.slot_count).map(|_| None).collect();
        for (b, spec) in program.spec.buffers.iter().enumerate() {
            usages[analysis.slots[b]] |= usage_of(spec.class);
            let slot = analysis.slots[b];
            if let Some(shape) = spec.texture_shape()
                && textures[slot].is_none()
            {
                textures[slot] = Some(crate::device::texture::create(gpu, &spec.name, shape, n));
            }
        }
        let slots: Vec<wgpu::Buffer> = sizing
            .slot_bytes
            .iter()
            .zip(&usages)
            .zip(&textures)
            .map(|((&size, &usage), texture)| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&program.spec.name),
                    size: if texture.is_some() {
                        4
                    } else {
                        round4(size).max(MIN_SLOT_BYTES)
                    },
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let readback: Vec<wgpu::Buffer> = program
            .host_outputs
            .iter()
            .map(|&b| {
                gpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&program.spec.buffers[b].name),
                    size: readback_size(program, b, n, round4(sizing.bytes[b])),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut plan = LaunchPlan {
            gpu: gpu.clone(),
            destroy_on_drop: true,
            plan,
            grids: sizing.grids,
            bytes: sizing.bytes,
            slots,
            textures,
            n,
            texture_rows: program
                .host_outputs
                .iter()
                .map(|&b| crate::device::texture::row_layout(&program.spec.buffers[b], n))
                .collect(),
            bind_groups: Vec::new(),
            strides: Vec::new(),
            // One more slot each for the timestamps, the status and the
            // stamp of a recorded run.
            map_slots: MapSlots::new(readback.len() + 3),
            timer: None,
            readback,
            bound_handles: (0..program.spec.buffers.len()).map(|_| None).collect(),
            control: None,
            stamp: None,
            staging: (0..program.host_inputs.len())
                .map(|_| SmallVec::new())
                .collect(),
        };
        plan.bind_groups = (0..program.dispatches.len())
            .map(|node| plan.make_bind_groups(gpu, program, node))
            .collect();
        plan.strides = (0..program.dispatches.len())
            .map(|d| {
                let layout = program.stride.layout.as_ref()?;
                let (pipeline, auto) = program.stride_pipeline(d)?;
                let wgx = program.dispatch_workgroup_size(d)[0];
                StrideLaunch::new(gpu, layout, pipeline, auto, plan.grids[d], wgx)
            })
            .collect();
        plan.plan.worker_groups = plan.launched_workgroups(gpu, Some(GridStride::default()));
        plan
    }

    /// What dispatch `d` launches this run: its pipeline, grid and the
    /// grid-stride group's bind group when it loops. `mode` is `None` for a
    /// run whose grids are overridden (`grid` is then this run's).
    pub(crate) fn launch(
        &self,
        gpu: &Gpu,
        program: &Program,
        d: usize,
        grid: [u32; 3],
        mode: Option<GridStride>,
    ) -> (usize, [u32; 3], Option<&wgpu::BindGroup>) {
        let max = gpu.limits().max_compute_workgroups_per_dimension;
        let stride = self.strides.get(d).and_then(Option::as_ref);
        match stride
            .zip(mode)
            .and_then(|(s, m)| Some((s, s.workgroups(m, max)?)))
        {
            Some((s, workgroups)) => (s.pipeline, [workgroups, 1, 1], Some(&s.bind_group)),
            None => (program.dispatch_pipeline(d), grid, None),
        }
    }

    /// The most workgroups one dispatch launches under `mode` (`None`: the
    /// planned grids as they are).
    pub(crate) fn launched_workgroups(&self, gpu: &Gpu, mode: Option<GridStride>) -> u32 {
        let max = gpu.limits().max_compute_workgroups_per_dimension;
        self.grids
            .iter()
            .enumerate()
            .map(|(d, grid)| {
                let stride = self.strides.get(d).and_then(Option::as_ref);
                match stride.zip(mode).and_then(|(s, m)| s.workgroups(m, max)) {
                    Some(w) => u64::from(w),
                    None => grid.iter().map(|&x| u64::from(x)).product(),
                }
            })
            .max()
            .map_or(0, |w| u32::try_from(w).unwrap_or(u32::MAX))
    }

    pub(crate) fn set_destroy_on_drop(&mut self, destroy: bool) {
        self.destroy_on_drop = destroy;
    }

    /// The device buffer graph buffer `b` lives in for this run.
    pub(crate) fn buffer_of(&self, program: &Program, b: usize) -> &wgpu::Buffer {
        match &self.bound_handles[b] {
            Some(h) => h.buffer(),
            None => &self.slots[program.analysis.slots[b]],
        }
    }

    /// The size to bind buffer `b` with: its own bytes, so that
    /// `arrayLength` sees the buffer and not a larger aliased slot or
    /// resident handle, but at least `at_least` (a binding's minimum, e.g.
    /// one element of a `vec4` view of a shorter buffer: slots are made
    /// [`MIN_SLOT_BYTES`] or more for it); the whole buffer (`None`) when
    /// that is the same.
    pub(crate) fn binding_size(
        &self,
        program: &Program,
        b: usize,
        at_least: u64,
    ) -> Option<NonZeroU64> {
        let buffer = self.buffer_of(program, b);
        let bytes = round4(self.bytes[b]).max(at_least).min(buffer.size());
        if buffer.size() == bytes {
            None
        } else {
            NonZeroU64::new(bytes)
        }
    }

    /// What a bind group entry for graph resource `b` binds: its texture's
    /// view, its sampler, or its buffer.
    fn resource_of<'s>(
        &'s self,
        program: &'s Program,
        b: usize,
        at_least: u64,
    ) -> wgpu::BindingResource<'s> {
        if let Some(Some(sampler)) = program.samplers.get(b) {
            return wgpu::BindingResource::Sampler(sampler);
        }
        if let Some(Some(t)) = self.textures.get(program.analysis.slots[b]) {
            return wgpu::BindingResource::TextureView(&t.view);
        }
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer_of(program, b),
            offset: 0,
            size: self.binding_size(program, b, at_least),
        })
    }

    /// The texture graph resource `b` lives in, if it is a texture.
    pub(crate) fn texture_of(&self, program: &Program, b: usize) -> Option<&wgpu::Texture> {
        self.textures
            .get(program.analysis.slots[b])?
            .as_ref()
            .map(|t| &t.texture)
    }

    pub(crate) fn make_bind_groups(
        &self,
        gpu: &Gpu,
        program: &Program,
        node: usize,
    ) -> SmallVec<[wgpu::BindGroup; 2]> {
        let spec = program.dispatch(node);
        let layout = &program.layouts[spec.kernel];
        let kernel = program.spec.kernels.get(spec.kernel);
        let at_least = |nb: &crate::spec::NodeBinding| {
            kernel
                .and_then(|k| {
                    k.bindings
                        .iter()
                        .find(|kb| kb.group == nb.group && kb.binding == nb.binding)
                })
                .map_or(0, |kb| kb.min_binding_size)
        };
        layout
            .groups
            .iter()
            .enumerate()
            .map(|(group, bgl)| {
                let entries: SmallVec<[wgpu::BindGroupEntry<'_>; 8]> = spec
                    .bindings
                    .iter()
                    .filter(|nb| nb.group as usize == group)
                    .map(|nb| wgpu::BindGroupEntry {
                        binding: nb.binding,
                        resource: self.resource_of(program, nb.buffer, at_least(nb)),
                    })
                    .collect();
                gpu.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&spec.label),
                    layout: bgl,
                    entries: &entries,
                })
            })
            .collect()
    }

    /// A cached plan under this run's budget, its `worker_groups` those this
    /// run's largest dispatch launches (a grid-stride loop's, when one runs).
    pub(crate) fn recheck_budget(&mut self, gpu: &Gpu, config: &DispatchConfig) -> Result<()> {
        self.plan.device_memory_budget_bytes = config.device_memory_budget_bytes;
        let overridden = config.grid_override.is_some() || config.workgroup_override.is_some();
        let mode = (!overridden).then_some(config.grid_stride);
        self.plan.worker_groups = self.launched_workgroups(gpu, mode);
        check_budget(&self.plan)
    }
}
