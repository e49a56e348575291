//! Breadth-first search driven from the host: the baseline the device loop
//! of [`super::device`] is measured against.
//!
//! The same two kernels as the graph (`examples/kernels/bfs/init.wgsl` and
//! `expand.wgsl`, as `graph!` linked them with `common.wesl`: the text in
//! `Bfs::SPEC`), in plain wgpu, everything made once (pipelines, layouts,
//! buffers, bind groups, the graph uploaded once). Then per level: one
//! submission that clears the next frontier's count, dispatches `expand`
//! over exactly the current frontier (its size is known on the host) and
//! copies the next frontier's count into a mapped buffer; one wait and one
//! 4-byte readback of that count; stop when it is 0. This is how the
//! algorithm is written without device-side counts, indirect dispatch or
//! self-stopping loops: a round trip per level, nothing wasted otherwise.

use vyre_graph::Gpu;
use vyre_graph::grid::{fold_grid, workgroups_for};
use vyre_graph::wgpu;

use super::Csr;

/// Workgroup size of both kernels.
const WG: u32 = 256;

/// Bytes of an append buffer's header (the `count: u32` before `items`).
const HEADER: u64 = 4;

/// A breadth-first search of one graph, driven from the host.
pub struct HostBfs {
    device: wgpu::Device,
    queue: wgpu::Queue,
    max_per_dimension: u32,
    vertices: u32,
    init: wgpu::ComputePipeline,
    expand: wgpu::ComputePipeline,
    init_group: wgpu::BindGroup,
    /// `expand` reading frontier `a` and appending to `b`, then the reverse.
    expand_groups: [wgpu::BindGroup; 2],
    params: wgpu::Buffer,
    levels: wgpu::Buffer,
    frontiers: [wgpu::Buffer; 2],
    count_read: wgpu::Buffer,
    levels_read: wgpu::Buffer,
}

/// What a host-driven search did.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostReport {
    /// Levels expanded with a non-empty frontier.
    pub iterations: u32,
    /// Submissions (and waits): the initial one, one per expanded level,
    /// and the final readback of the levels.
    pub submissions: u32,
}

fn storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The WGSL `graph!` made of one of the device graph's kernels: the kernel
/// file linked with the module it imports (`common.wesl`), which plain wgpu
/// cannot read by itself. The host loop runs the same code as the graph.
fn kernel(label: &str) -> (&'static str, &'static str) {
    super::device::Bfs::SPEC
        .kernels
        .iter()
        .find(|k| k.label == label)
        .map_or(("", "main"), |k| (&*k.source, &*k.entry_point))
}

fn pipeline(
    device: &wgpu::Device,
    (source, entry): (&str, &str),
    entries: &[wgpu::BindGroupLayoutEntry],
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    (pipeline, layout)
}

fn buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: size.max(4).next_multiple_of(4),
        usage,
        mapped_at_creation: false,
    })
}

fn group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout,
        entries: &entries,
    })
}

impl HostBfs {
    /// Pipelines, buffers and bind groups for `csr`, which is uploaded once.
    pub fn new(gpu: &Gpu, csr: &Csr) -> Self {
        let device = gpu.device().clone();
        let queue = gpu.queue().clone();
        let vertices = csr.vertices();
        let uniform = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let (init, init_layout) = pipeline(
            &device,
            kernel("init"),
            &[uniform, storage(1, false), storage(2, false)],
        );
        let (expand, expand_layout) = pipeline(
            &device,
            kernel("expand"),
            &[
                storage(0, true),
                storage(1, true),
                storage(2, false),
                storage(3, true),
                storage(4, false),
            ],
        );
        use wgpu::BufferUsages as U;
        let upload = |data: &[u32]| {
            let b = buffer(&device, (data.len() * 4) as u64, U::STORAGE | U::COPY_DST);
            queue.write_buffer(&b, 0, bytemuck::cast_slice(data));
            b
        };
        let offsets = upload(&csr.offsets);
        let edges = upload(&csr.edges);
        let params = buffer(&device, 16, U::UNIFORM | U::COPY_DST);
        let levels = buffer(&device, u64::from(vertices) * 4, U::STORAGE | U::COPY_SRC);
        let frontier = || {
            buffer(
                &device,
                HEADER + u64::from(vertices) * 4,
                U::STORAGE | U::COPY_DST | U::COPY_SRC,
            )
        };
        let frontiers = [frontier(), frontier()];
        let count_read = buffer(&device, 4, U::MAP_READ | U::COPY_DST);
        let levels_read = buffer(&device, u64::from(vertices) * 4, U::MAP_READ | U::COPY_DST);
        let init_group = group(&device, &init_layout, &[&params, &levels, &frontiers[0]]);
        let expand_group = |from: usize| {
            group(
                &device,
                &expand_layout,
                &[
                    &offsets,
                    &edges,
                    &levels,
                    &frontiers[from],
                    &frontiers[1 - from],
                ],
            )
        };
        let expand_groups = [expand_group(0), expand_group(1)];
        HostBfs {
            max_per_dimension: gpu.limits().max_compute_workgroups_per_dimension,
            device,
            queue,
            vertices,
            init,
            expand,
            init_group,
            expand_groups,
            params,
            levels,
            frontiers,
            count_read,
            levels_read,
        }
    }

    /// Submit `encoder` and wait for it; then map `read` and copy its first
    /// `out.len()` bytes out.
    fn submit_and_read(&self, encoder: wgpu::CommandEncoder, read: &wgpu::Buffer, out: &mut [u8]) {
        let index = self.queue.submit([encoder.finish()]);
        read.slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("map the readback buffer"));
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .expect("wait for the submission");
        {
            let view = read.slice(..).get_mapped_range().expect("mapped");
            out.copy_from_slice(&view[..out.len()]);
        }
        read.unmap();
    }

    /// Dispatch `pipeline` with `group` over `invocations` (folded into y
    /// and z past the per-dimension limit: both kernels index linearly).
    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        invocations: u64,
    ) {
        let grid = fold_grid(workgroups_for(invocations, WG), self.max_per_dimension)
            .expect("a frontier of at most 2^32 vertices folds into three dimensions");
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
    }

    /// The level of every vertex from `source` (u32::MAX: unreachable),
    /// expanding at most `max_levels` frontiers.
    pub fn run(&self, source: u32, max_levels: u32, levels: &mut Vec<u32>) -> HostReport {
        let mut report = HostReport::default();
        let mut params = [0u32; 4];
        params[0] = source;
        self.queue
            .write_buffer(&self.params, 0, bytemuck::cast_slice(&params));
        let mut count = [0u8; 4];

        // Levels and the first frontier, and that frontier's size.
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&self.frontiers[0], 0, Some(HEADER));
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            self.dispatch(
                &mut pass,
                &self.init,
                &self.init_group,
                u64::from(self.vertices),
            );
        }
        encoder.copy_buffer_to_buffer(&self.frontiers[0], 0, &self.count_read, 0, HEADER);
        self.submit_and_read(encoder, &self.count_read, &mut count);
        report.submissions += 1;

        let mut from = 0;
        let mut frontier = u32::from_le_bytes(count).min(self.vertices);
        while frontier > 0 && report.iterations < max_levels {
            let next = &self.frontiers[1 - from];
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.clear_buffer(next, 0, Some(HEADER));
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                self.dispatch(
                    &mut pass,
                    &self.expand,
                    &self.expand_groups[from],
                    u64::from(frontier),
                );
            }
            encoder.copy_buffer_to_buffer(next, 0, &self.count_read, 0, HEADER);
            self.submit_and_read(encoder, &self.count_read, &mut count);
            report.submissions += 1;
            report.iterations += 1;
            frontier = u32::from_le_bytes(count).min(self.vertices);
            from = 1 - from;
        }

        let mut encoder = self.device.create_command_encoder(&Default::default());
        let bytes = u64::from(self.vertices) * 4;
        encoder.copy_buffer_to_buffer(&self.levels, 0, &self.levels_read, 0, bytes);
        levels.resize(self.vertices as usize, 0);
        self.submit_and_read(
            encoder,
            &self.levels_read,
            bytemuck::cast_slice_mut(levels.as_mut_slice()),
        );
        report.submissions += 1;
        report
    }
}
