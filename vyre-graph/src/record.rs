//! Recording a run: one encoder, the copies of device-fed inputs, one compute
//! pass with every node's dispatch, the copies of every output to its sink,
//! and the timestamp resolve. Recording reads the program and the launch plan
//! and changes neither; it allocates nothing of ours.

use crate::launch::{LaunchPlan, PassTimer};
use crate::program::Program;
use crate::resource::{GpuBufferHandle, Sink, round4};

/// What to record beyond the plan itself.
pub(crate) struct Recording<'a> {
    /// Labels the encoder and the pass.
    pub(crate) label: &'a str,
    /// The grid of each dispatch (the plan's, or this run's overrides).
    pub(crate) grids: &'a [[u32; 3]],
    /// Inputs fed from resident handles that are copied, not bound.
    pub(crate) copies: &'a [(usize, &'a GpuBufferHandle)],
    /// Where each output goes.
    pub(crate) sinks: &'a [Sink<'a>],
    /// Timestamps around the pass, when profiling.
    pub(crate) timer: Option<&'a PassTimer>,
}

/// Record a run into `encoder`. Returns whether any output is read back to
/// the host.
pub(crate) fn encode(
    encoder: &mut wgpu::CommandEncoder,
    program: &Program,
    plan: &LaunchPlan,
    recording: &Recording<'_>,
) -> bool {
    for &(b, h) in recording.copies {
        encoder.copy_buffer_to_buffer(
            h.buffer(),
            0,
            plan.buffer_of(program, b),
            0,
            round4(plan.bytes[b]),
        );
    }
    crate::indirect::encode_start(encoder, program, plan);
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(recording.label),
            timestamp_writes: recording.timer.map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        // Pipeline state persists across dispatches in a pass: set it only
        // when it changes (a chain of one kernel sets it once).
        let mut current = usize::MAX;
        let per_dispatch = recording.timer.filter(|t| t.per_dispatch);
        // A fused group is one dispatch in place of its member nodes.
        for (node, grid) in recording.grids.iter().enumerate() {
            if let Some(t) = per_dispatch {
                pass.write_timestamp(&t.queries, 2 + node as u32);
            }
            // Counts reset, loop gates, indirect arguments (`indirect.rs`).
            let indirect = crate::indirect::encode_before(&mut pass, program, plan, node);
            if program.steps.has_steps_before(node) {
                current = usize::MAX;
            }
            let pipeline = program.dispatch_pipeline(node);
            if pipeline != current {
                pass.set_pipeline(&program.pipelines[pipeline]);
                current = pipeline;
            }
            for (group, bind_group) in plan.bind_groups[node].iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            match indirect {
                Some((args, offset)) => pass.dispatch_workgroups_indirect(args, offset),
                None => pass.dispatch_workgroups(grid[0], grid[1], grid[2]),
            }
        }
        if let Some(t) = per_dispatch {
            pass.write_timestamp(&t.queries, 2 + recording.grids.len() as u32);
        }
    }
    crate::indirect::encode_status(encoder, program, plan);
    let mut reads_back = false;
    for (k, (sink, &b)) in recording
        .sinks
        .iter()
        .zip(&program.host_outputs)
        .enumerate()
    {
        let src = plan.buffer_of(program, b);
        let bytes = round4(plan.bytes[b]);
        match sink {
            Sink::Host(_) => {
                encoder.copy_buffer_to_buffer(src, 0, &plan.readback[k], 0, bytes);
                reads_back = true;
            }
            Sink::Device(h) => encoder.copy_buffer_to_buffer(src, 0, h.buffer(), 0, bytes),
            Sink::Skip => {}
        }
    }
    if let Some(t) = recording.timer {
        encoder.resolve_query_set(&t.queries, 0..t.count, &t.resolve, 0);
        encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, u64::from(t.count) * 8);
    }
    reads_back
}
