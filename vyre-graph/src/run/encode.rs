//! Recording a run: one encoder, the copies of staged and device-fed inputs, one compute
//! pass with every node's dispatch, the copies of every output to its sink,
//! and the timestamp resolve. Recording reads the program and the launch plan
//! and changes neither; it allocates nothing of ours.

use crate::device::buffer::{GpuBufferHandle, round4};
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::plan::launch::LaunchPlan;
use crate::plan::program::Program;
use crate::plan::timer::PassTimer;
use crate::plan::trips::{Item, Trip, walk};
use crate::spec::config::{DispatchConfig, GridStride};
use crate::spec::{GRID_STRIDE_GROUP, TextureShape};

/// Where a recorded run's GPU scopes go (feature `profiler`): the
/// application's `wgpu-profiler`, if it gave one.
#[cfg(feature = "profiler")]
pub(crate) type Scopes<'a> = Option<super::profiler::ProfilerScope<'a>>;
/// Where a recorded run's GPU scopes go: nowhere without the `profiler`
/// feature.
#[cfg(not(feature = "profiler"))]
pub(crate) type Scopes<'a> = std::marker::PhantomData<&'a ()>;

/// What to record beyond the plan itself.
pub(crate) struct Recording<'a> {
    /// Labels the encoder and the pass.
    pub(crate) label: &'a str,
    /// The grid of each dispatch (the plan's, or this run's overrides).
    pub(crate) grids: &'a [[u32; 3]],
    /// How fused groups launch (`None`: as `grids` says; see
    /// `LaunchPlan::launch`).
    pub(crate) grid_stride: Option<GridStride>,
    /// Inputs fed from resident handles that are copied, not bound.
    pub(crate) copies: &'a [(usize, &'a GpuBufferHandle)],
    /// The run's inputs (resident textures are copied in).
    pub(crate) feeds: &'a [Feed<'a>],
    /// Where each output goes.
    pub(crate) sinks: &'a [Sink<'a>],
    /// For each output, whether it is read by its count after the run
    /// (`counted.rs`): then it is not copied to its read-back buffer here.
    pub(crate) by_count: &'a [bool],
    /// Timestamps around the pass, when profiling.
    pub(crate) timer: Option<&'a PassTimer>,
    /// Whether it continues a run that a loop held (`plan/trips.rs`).
    pub(crate) continuation: bool,
    /// The application's profiler scopes, one per dispatch.
    pub(crate) scopes: Scopes<'a>,
}

/// Record a run into `encoder`: the whole run, or for a continuation
/// (`recording.continuation`) the rest of it after a loop held it
/// (`trips.rs`): no uploads or count resets then, the hold word cleared,
/// the dispatches from `trip.from`, then the status and the outputs again.
/// Returns whether any output is read back to the host, and the dispatches
/// recorded (control dispatches included).
pub(crate) fn encode(
    encoder: &mut wgpu::CommandEncoder,
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    recording: &Recording<'_>,
    trip: &mut Trip,
) -> (bool, u32) {
    if recording.continuation {
        super::control::encode_resume(encoder, program, plan);
    } else {
        encode_inputs(encoder, program, plan, recording);
        super::control::encode_start(encoder, program, plan);
    }
    let dispatches = encode_pass(encoder, gpu, program, plan, recording, trip);
    super::control::encode_status(encoder, program, plan);
    let reads_back = encode_outputs(encoder, program, plan, recording);
    if let Some(t) = recording.timer {
        encoder.resolve_query_set(&t.queries, 0..t.written, &t.resolve, 0);
        encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, u64::from(t.written) * 8);
    }
    (reads_back, dispatches)
}

/// The copies of staged, resident and texture inputs into the plan.
fn encode_inputs(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
    recording: &Recording<'_>,
) {
    plan.encode_staged(encoder, program);
    for &(b, h) in recording.copies {
        encoder.copy_buffer_to_buffer(
            h.buffer(),
            0,
            plan.buffer_of(program, b),
            0,
            round4(plan.bytes[b]),
        );
    }
    for (feed, &b) in recording.feeds.iter().zip(&program.host_inputs) {
        if let (Feed::Texture(h), Some(texture)) = (feed, plan.texture_of(program, b)) {
            copy_texture(encoder, h.texture(), texture);
        }
    }
}

/// The compute pass: what `trip` says the submission records, each
/// dispatch after its control dispatches. Returns the dispatches recorded.
fn encode_pass(
    encoder: &mut wgpu::CommandEncoder,
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    recording: &Recording<'_>,
    trip: &mut Trip,
) -> u32 {
    // An application's profiler (feature `profiler`): a scope per dispatch
    // inside the pass where the device has timestamps inside passes, else
    // one for the pass (through its timestamp writes, unless vyre's own
    // timer has them).
    #[cfg(feature = "profiler")]
    let inside = gpu
        .device()
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
    #[cfg(feature = "profiler")]
    let pass_scope = recording
        .scopes
        .filter(|_| !inside && recording.timer.is_none())
        .map(|s| {
            let query = s.profiler.begin_pass_query(recording.label, encoder);
            (s, query.with_parent(s.parent))
        });
    #[cfg(feature = "profiler")]
    let scope_writes = pass_scope
        .as_ref()
        .and_then(|(_, q)| q.compute_pass_timestamp_writes());
    #[cfg(not(feature = "profiler"))]
    let scope_writes = None;
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(recording.label),
        timestamp_writes: recording
            .timer
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            })
            .or(scope_writes),
    });
    // Pipeline state persists across dispatches in a pass: set it only
    // when it changes (a chain of one kernel sets it once).
    let mut current = usize::MAX;
    let mut dispatches = 0u32;
    let per_dispatch = recording.timer.filter(|t| t.times_dispatches());
    // A fused group is one dispatch in place of its member nodes.
    walk(&program.steps, recording.grids.len(), trip, |item| {
        let node = match item {
            Item::Dispatch(d) => d,
            Item::Exit(l) => {
                super::control::encode_exit(&mut pass, program, plan, l);
                current = usize::MAX;
                dispatches += 1;
                return;
            }
        };
        let grid = recording.grids[node];
        if let Some(t) = per_dispatch {
            pass.write_timestamp(&t.queries, 2 + node as u32);
        }
        #[cfg(feature = "profiler")]
        let query = recording.scopes.filter(|_| inside).map(|s| {
            let name = program.tracks.dispatches.get(node).map_or("?", |d| &d.name);
            (s, s.begin(&mut pass, name))
        });
        // Counts reset, loop gates, indirect arguments (`run/control.rs`).
        let indirect = super::control::encode_before(&mut pass, program, plan, node);
        if program.steps.has_steps_before(node) {
            current = usize::MAX;
            dispatches += program.steps.before[node].len() as u32;
        }
        // A fused group may loop on fewer workgroups (`plan/stride.rs`); a
        // node sized on the device is never fused, so never both.
        let (pipeline, grid, stride) = plan.launch(gpu, program, node, grid, recording.grid_stride);
        if pipeline != current {
            pass.set_pipeline(&program.pipelines[pipeline]);
            current = pipeline;
        }
        for (group, bind_group) in plan.bind_groups[node].iter().enumerate() {
            pass.set_bind_group(group as u32, bind_group, &[]);
        }
        if let Some(bind_group) = stride {
            pass.set_bind_group(GRID_STRIDE_GROUP, bind_group, &[]);
        }
        match indirect {
            Some((args, offset)) => pass.dispatch_workgroups_indirect(args, offset),
            None => pass.dispatch_workgroups(grid[0], grid[1], grid[2]),
        }
        #[cfg(feature = "profiler")]
        if let Some((s, query)) = query {
            s.end(&mut pass, query);
        }
        dispatches += 1;
    });
    if let Some(t) = per_dispatch {
        pass.write_timestamp(&t.queries, 2 + recording.grids.len() as u32);
    }
    drop(pass);
    #[cfg(feature = "profiler")]
    if let Some((s, query)) = pass_scope {
        s.profiler.end_query(encoder, query);
    }
    dispatches
}

/// The copies of every output to its read-back buffer or resident sink.
/// Returns whether any output is read back to the host.
fn encode_outputs(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
    recording: &Recording<'_>,
) -> bool {
    let mut reads_back = false;
    for (k, (sink, &b)) in recording
        .sinks
        .iter()
        .zip(&program.host_outputs)
        .enumerate()
    {
        if let (Some(shape), Some(texture), true) = (
            program.spec.buffers[b].texture_shape(),
            plan.texture_of(program, b),
            sink.is_host(),
        ) {
            copy_out(encoder, texture, &plan.readback[k], shape, plan.n);
            reads_back = true;
            continue;
        }
        let src = plan.buffer_of(program, b);
        let bytes = round4(plan.bytes[b]);
        match sink {
            // Read by its count after the run: only its count now, in the
            // status.
            Sink::Host(_) | Sink::Vector(_) if recording.by_count.get(k) == Some(&true) => {
                reads_back = true;
            }
            Sink::Host(_) | Sink::Vector(_) => {
                encoder.copy_buffer_to_buffer(src, 0, &plan.readback[k], 0, bytes);
                reads_back = true;
            }
            Sink::Device(h) => encoder.copy_buffer_to_buffer(src, 0, h.buffer(), 0, bytes),
            Sink::Texture(h) => {
                if let Some(texture) = plan.texture_of(program, b) {
                    copy_texture(encoder, texture, h.texture());
                }
            }
            Sink::Skip => {}
        }
    }
    reads_back
}

/// Record the copy of `texture` into `buffer`, rows padded to 256 bytes.
pub(crate) fn copy_out(
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    buffer: &wgpu::Buffer,
    shape: &TextureShape,
    n: u64,
) {
    let size = crate::device::texture::extent(shape, n);
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(
                    u32::try_from(crate::device::texture::padded_row(shape, n)).unwrap_or(u32::MAX),
                ),
                rows_per_image: Some(size.height),
            },
        },
        size,
    );
}

/// Record a copy of a whole texture into another of the same size.
pub(crate) fn copy_texture(
    encoder: &mut wgpu::CommandEncoder,
    from: &wgpu::Texture,
    to: &wgpu::Texture,
) {
    encoder.copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), from.size());
}

/// The encoder of a run the runtime submits itself, labelled with the
/// config's label or the graph's name.
pub(crate) fn encoder(
    gpu: &Gpu,
    program: &Program,
    config: &DispatchConfig,
) -> wgpu::CommandEncoder {
    let label = config.label.as_deref().unwrap_or(&program.spec.name);
    gpu.device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
}
