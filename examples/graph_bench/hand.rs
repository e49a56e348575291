//! The baselines the benchmark holds `graph!` against, in plain wgpu:
//! pipelines, buffers and bind groups made once; `run` records every node
//! into one encoder and one compute pass and submits once, `run_naive`
//! submits and waits once per node.

use vyre_graph::Gpu;
use vyre_graph::wgpu;

/// A kernel: WGSL, override constants, and for each binding (group 0,
/// binding i) whether it is read-only storage.
pub struct HandKernel {
    pub source: &'static str,
    pub constants: Vec<(&'static str, f64)>,
    pub read_only: Vec<bool>,
}

/// A dispatch: kernel index, buffer index per binding, workgroups.
pub struct HandNode {
    pub kernel: usize,
    pub buffers: Vec<usize>,
    pub grid: [u32; 3],
}

pub struct HandGraph {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipelines: Vec<wgpu::ComputePipeline>,
    bind_groups: Vec<wgpu::BindGroup>,
    nodes: Vec<(usize, [u32; 3])>,
    buffers: Vec<wgpu::Buffer>,
    inputs: Vec<usize>,
    outputs: Vec<(usize, wgpu::Buffer, u64)>,
}

impl HandGraph {
    /// `inputs` and `outputs` are buffer indices written before and read
    /// after each run.
    pub fn new(
        gpu: &Gpu,
        kernels: &[HandKernel],
        buffer_bytes: &[u64],
        nodes: &[HandNode],
        inputs: &[usize],
        outputs: &[usize],
    ) -> Self {
        let device = gpu.device().clone();
        let queue = gpu.queue().clone();
        let layouts: Vec<(wgpu::BindGroupLayout, wgpu::PipelineLayout, wgpu::ShaderModule)> = kernels
            .iter()
            .map(|k| {
                let entries: Vec<wgpu::BindGroupLayoutEntry> = k
                    .read_only
                    .iter()
                    .enumerate()
                    .map(|(i, &read_only)| wgpu::BindGroupLayoutEntry {
                        binding: i as u32,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Storage { read_only },
                            has_dynamic_offset: false,
                            min_binding_size: None,
                        },
                        count: None,
                    })
                    .collect();
                let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: None,
                    entries: &entries,
                });
                let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &[Some(&bgl)],
                    immediate_size: 0,
                });
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(k.source.into()),
                });
                (bgl, pl, module)
            })
            .collect();
        let pipelines = kernels
            .iter()
            .zip(&layouts)
            .map(|(k, (_, pl, module))| {
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: Some(pl),
                    module,
                    entry_point: Some("main"),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &k.constants,
                        zero_initialize_workgroup_memory: true,
                    },
                    cache: None,
                })
            })
            .collect();
        let buffers: Vec<wgpu::Buffer> = buffer_bytes
            .iter()
            .map(|&size| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_DST
                        | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let bind_groups = nodes
            .iter()
            .map(|n| {
                let entries: Vec<wgpu::BindGroupEntry> = n
                    .buffers
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: buffers[b].as_entire_binding(),
                    })
                    .collect();
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layouts[n.kernel].0,
                    entries: &entries,
                })
            })
            .collect();
        let outputs = outputs
            .iter()
            .map(|&b| {
                let size = buffer_bytes[b];
                let readback = device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                (b, readback, size)
            })
            .collect();
        HandGraph {
            device,
            queue,
            pipelines,
            bind_groups,
            nodes: nodes.iter().map(|n| (n.kernel, n.grid)).collect(),
            buffers,
            inputs: inputs.to_vec(),
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
            encoder.copy_buffer_to_buffer(&self.buffers[*b], 0, readback, 0, *size);
        }
    }

    fn map(&self, index: wgpu::SubmissionIndex, outputs: &mut [&mut [u8]]) {
        for (_, readback, _) in &self.outputs {
            readback.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .expect("poll");
        for ((_, readback, _), out) in self.outputs.iter().zip(outputs) {
            out.copy_from_slice(&readback.slice(..).get_mapped_range().expect("mapped"));
            readback.unmap();
        }
    }

    fn encode_node(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        let (kernel, grid) = self.nodes[i];
        pass.set_pipeline(&self.pipelines[kernel]);
        pass.set_bind_group(0, &self.bind_groups[i], &[]);
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
            for i in 0..self.nodes.len() {
                self.encode_node(&mut pass, i);
            }
        }
        self.read(&mut encoder);
        let index = self.queue.submit([encoder.finish()]);
        self.map(index, outputs);
    }

    /// One submission and one wait per node.
    pub fn run_naive(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        self.upload(inputs);
        let last = self.nodes.len().saturating_sub(1);
        for i in 0..self.nodes.len() {
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
                for i in 0..self.nodes.len() {
                    self.encode_node(&mut pass, i);
                }
            }
            drop(encoder.finish());
        }
        start.elapsed().as_nanos() as f64 / (reps * self.nodes.len().max(1)) as f64
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
            for i in 0..self.nodes.len() {
                self.encode_node(&mut pass, i);
            }
        }
        encoder.resolve_query_set(&set, 0..2, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, &read, 0, 16);
        let index = self.queue.submit([encoder.finish()]);
        read.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .ok()?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range().ok()?);
        let period = f64::from(self.queue.get_timestamp_period());
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * period;
        Some(ns / self.nodes.len().max(1) as f64)
    }
}
