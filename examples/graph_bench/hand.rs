//! The baselines the benchmark holds `graph!` against, in plain wgpu, built
//! from the same `GraphSpec` (same WGSL, same dispatches): pipelines, buffers
//! and bind groups made once; `run` records every node into one encoder and
//! one compute pass and submits once; `run_naive` submits and waits once per
//! node.

use vyre_graph::Gpu;
use vyre_graph::grid::{fold_grid, workgroups_for};
use vyre_graph::spec::{BindingKind, BufferClass, DispatchSize, GraphSpec};
use vyre_graph::wgpu;

pub struct HandGraph {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipelines: Vec<wgpu::ComputePipeline>,
    bind_groups: Vec<Vec<wgpu::BindGroup>>,
    grids: Vec<[u32; 3]>,
    buffers: Vec<wgpu::Buffer>,
    inputs: Vec<usize>,
    outputs: Vec<(usize, wgpu::Buffer, u64)>,
}

impl HandGraph {
    /// The same kernels, buffers and dispatches as `spec` at problem size
    /// `n`, set up directly in wgpu: one buffer per graph buffer (no
    /// aliasing), one pipeline and one bind group per node and group.
    pub fn new(gpu: &Gpu, spec: &GraphSpec, n: u64) -> Self {
        Self::with_layout(gpu, spec, n, false)
    }

    /// As [`HandGraph::new`]; with `like_graph`, layouts carry the reflected
    /// minimum binding sizes and bind groups bind each buffer's exact size,
    /// as the runtime does (for profiling the difference).
    pub fn with_layout(gpu: &Gpu, spec: &GraphSpec, n: u64, like_graph: bool) -> Self {
        let device = gpu.device().clone();
        let queue = gpu.queue().clone();
        let max = gpu.limits().max_compute_workgroups_per_dimension;
        let layouts: Vec<(
            Vec<wgpu::BindGroupLayout>,
            wgpu::PipelineLayout,
            wgpu::ShaderModule,
        )> = spec
            .kernels
            .iter()
            .map(|k| {
                let groups = k.bindings.iter().map(|b| b.group + 1).max().unwrap_or(0);
                let bgls: Vec<wgpu::BindGroupLayout> = (0..groups)
                    .map(|g| {
                        let entries: Vec<wgpu::BindGroupLayoutEntry> = k
                            .bindings
                            .iter()
                            .filter(|b| b.group == g)
                            .map(|b| wgpu::BindGroupLayoutEntry {
                                binding: b.binding,
                                visibility: wgpu::ShaderStages::COMPUTE,
                                ty: wgpu::BindingType::Buffer {
                                    ty: match b.kind {
                                        BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                                        BindingKind::ReadOnlyStorage => {
                                            wgpu::BufferBindingType::Storage { read_only: true }
                                        }
                                        BindingKind::ReadWriteStorage => {
                                            wgpu::BufferBindingType::Storage { read_only: false }
                                        }
                                    },
                                    has_dynamic_offset: false,
                                    min_binding_size: None,
                                },
                                count: None,
                            })
                            .collect();
                        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                            label: None,
                            entries: &entries,
                        })
                    })
                    .collect();
                let refs: Vec<Option<&wgpu::BindGroupLayout>> = bgls.iter().map(Some).collect();
                let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &refs,
                    immediate_size: 0,
                });
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(k.source.clone()),
                });
                (bgls, pl, module)
            })
            .collect();
        let pipelines = spec
            .nodes
            .iter()
            .map(|node| {
                let k = &spec.kernels[node.kernel];
                let (_, pl, module) = &layouts[node.kernel];
                let constants: Vec<(&str, f64)> =
                    node.overrides.iter().map(|o| (&*o.name, o.value)).collect();
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: Some(pl),
                    module,
                    entry_point: Some(&k.entry_point),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: true,
                    },
                    cache: None,
                })
            })
            .collect();
        let sizes: Vec<u64> = spec
            .buffers
            .iter()
            .map(|b| b.bytes(n).max(4).next_multiple_of(4))
            .collect();
        let buffers: Vec<wgpu::Buffer> = spec
            .buffers
            .iter()
            .zip(&sizes)
            .map(|(b, &size)| {
                let usage = if b.class == BufferClass::Uniform {
                    wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
                } else {
                    wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_DST
                        | wgpu::BufferUsages::COPY_SRC
                };
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let bind_groups = spec
            .nodes
            .iter()
            .map(|node| {
                let (bgls, _, _) = &layouts[node.kernel];
                bgls.iter()
                    .enumerate()
                    .map(|(g, bgl)| {
                        let entries: Vec<wgpu::BindGroupEntry> = node
                            .bindings
                            .iter()
                            .filter(|nb| nb.group as usize == g)
                            .map(|nb| wgpu::BindGroupEntry {
                                binding: nb.binding,
                                resource: if like_graph {
                                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                        buffer: &buffers[nb.buffer],
                                        offset: 0,
                                        size: std::num::NonZeroU64::new(sizes[nb.buffer]),
                                    })
                                } else {
                                    buffers[nb.buffer].as_entire_binding()
                                },
                            })
                            .collect();
                        device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: None,
                            layout: bgl,
                            entries: &entries,
                        })
                    })
                    .collect()
            })
            .collect();
        let grids = (0..spec.nodes.len())
            .map(|i| match spec.nodes[i].size {
                DispatchSize::Invocations(e) => {
                    let wg = spec.node_workgroup_size(i)[0];
                    fold_grid(workgroups_for(e.eval(n), wg), max).expect("grid fits")
                }
                DispatchSize::Workgroups(g) => g.map(|e| e.eval(n) as u32),
                // The benchmark graphs are all sized on the host.
                DispatchSize::Count(_) | DispatchSize::Indirect(_) => {
                    panic!("hand-written wgpu has no device-sized nodes")
                }
            })
            .collect();
        let outputs = spec
            .host_outputs()
            .map(|b| {
                let size = sizes[b];
                let readback = device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                (b, readback, spec.buffers[b].bytes(n))
            })
            .collect();
        HandGraph {
            device,
            queue,
            pipelines,
            bind_groups,
            grids,
            buffers,
            inputs: spec.host_inputs().collect(),
            outputs,
        }
    }

    fn upload(&self, inputs: &[&[u8]]) {
        for (&b, data) in self.inputs.iter().zip(inputs) {
            self.queue.write_buffer(&self.buffers[b], 0, data);
        }
    }

    fn read(&self, encoder: &mut wgpu::CommandEncoder) {
        for (b, readback, size) in &self.outputs {
            encoder.copy_buffer_to_buffer(
                &self.buffers[*b],
                0,
                readback,
                0,
                size.next_multiple_of(4),
            );
        }
    }

    fn map(&self, index: wgpu::SubmissionIndex, outputs: &mut [&mut [u8]]) {
        for (_, readback, _) in &self.outputs {
            readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .expect("poll");
        for ((_, readback, _), out) in self.outputs.iter().zip(outputs) {
            let view = readback.slice(..).get_mapped_range().expect("mapped");
            out.copy_from_slice(&view[..out.len()]);
            drop(view);
            readback.unmap();
        }
    }

    fn encode_node(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        let grid = self.grids[i];
        pass.set_pipeline(&self.pipelines[i]);
        for (g, bind_group) in self.bind_groups[i].iter().enumerate() {
            pass.set_bind_group(g as u32, bind_group, &[]);
        }
        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
    }

    /// One encoder, one pass, one submission, one wait.
    pub fn run(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        self.upload(inputs);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            for i in 0..self.grids.len() {
                self.encode_node(&mut pass, i);
            }
        }
        self.read(&mut encoder);
        let index = self.queue.submit([encoder.finish()]);
        self.map(index, outputs);
    }

    /// [`HandGraph::run`], timing its phases (µs): upload, encode (encoder
    /// to `finish`), submit, wait and copy out.
    pub fn run_phases(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) -> [f64; 4] {
        let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
        let t = std::time::Instant::now();
        self.upload(inputs);
        let upload = us(t);
        let t = std::time::Instant::now();
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            for i in 0..self.grids.len() {
                self.encode_node(&mut pass, i);
            }
        }
        self.read(&mut encoder);
        let command = encoder.finish();
        let encode = us(t);
        let t = std::time::Instant::now();
        let index = self.queue.submit([command]);
        let submit = us(t);
        let t = std::time::Instant::now();
        self.map(index, outputs);
        [upload, encode, submit, us(t)]
    }

    /// [`HandGraph::run`] inside a wgpu validation error scope, as the
    /// runtime records (for profiling the difference).
    pub fn run_scoped(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        self.upload(inputs);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            for i in 0..self.grids.len() {
                self.encode_node(&mut pass, i);
            }
        }
        self.read(&mut encoder);
        let index = self.queue.submit([encoder.finish()]);
        assert!(
            pollster::block_on(scope.pop()).is_none(),
            "validation error"
        );
        self.map(index, outputs);
    }

    /// One submission and one wait per node.
    pub fn run_naive(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        self.upload(inputs);
        let last = self.grids.len().saturating_sub(1);
        for i in 0..self.grids.len() {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                self.encode_node(&mut pass, i);
            }
            if i == last {
                self.read(&mut encoder);
            }
            let index = self.queue.submit([encoder.finish()]);
            if i == last {
                self.map(index, outputs);
            } else {
                self.device
                    .poll(wgpu::PollType::Wait {
                        submission_index: Some(index),
                        timeout: None,
                    })
                    .expect("poll");
            }
        }
    }

    /// CPU time to record `reps` passes of every node (no submission), in
    /// nanoseconds per node.
    pub fn record_ns_per_node(&self, reps: usize) -> f64 {
        let start = std::time::Instant::now();
        for _ in 0..reps {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                for i in 0..self.grids.len() {
                    self.encode_node(&mut pass, i);
                }
            }
            drop(encoder.finish());
        }
        start.elapsed().as_nanos() as f64 / (reps * self.grids.len().max(1)) as f64
    }

    /// GPU time of one pass of every node from timestamp queries, in
    /// nanoseconds per node, when the device has them.
    pub fn gpu_ns_per_node(&self, gpu: &Gpu, inputs: &[&[u8]]) -> Option<f64> {
        if !gpu.has_timestamps() {
            return None;
        }
        self.upload(inputs);
        let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: &set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            for i in 0..self.grids.len() {
                self.encode_node(&mut pass, i);
            }
        }
        encoder.resolve_query_set(&set, 0..2, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, &read, 0, 16);
        let index = self.queue.submit([encoder.finish()]);
        read.slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .ok()?;
        let ticks: Vec<u64> =
            bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range().ok()?);
        let period = f64::from(self.queue.get_timestamp_period());
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * period;
        Some(ns / self.grids.len().max(1) as f64)
    }
}
