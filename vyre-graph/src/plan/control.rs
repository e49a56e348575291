//! Data-dependent graphs on the device: append buffers' counts, indirect
//! dispatches (`over count(b)`, `grid indirect(b)`) and loops that stop
//! themselves (`repeat up to K .. until ..`), all without a host round trip.
//!
//! One runtime-owned WGSL module ([`source`]) does every small step. The
//! steps recorded before a dispatch run as ONE single-invocation control
//! dispatch (a [`Group`]; more only when they touch
//! more than [`SLOTS`] graph buffers), in the same compute pass, right
//! before the dispatch they serve: its invocation walks a table of steps in
//! its control block, in order. A control dispatch binds `ctl` (its own
//! control block: a header `[steps, limit]`, one 16-word entry per step
//! written when the plan is made, the indirect arguments its steps write,
//! then a gate's per-node arguments), `state` (the plan's loop states, a
//! sticky stopped bit and the iterations that ran per loop, then one error
//! word per reporting step) and the graph buffers its steps read or reset
//! (`s0` to `s5`; an unused slot binds `state` again). The steps:
//!
//! * `COUNT`: the entry's arguments = the folded grid of
//!   `min(count, capacity)` invocations (zero workgroups for zero items, or
//!   when the loop stopped);
//! * `RESET`: the count set to 0 before a node appends to a buffer some node
//!   read since the last append (skipped once the loop stopped); a count
//!   over the capacity is remembered first and reported after the run as
//!   an overflow, so an overflow in an early loop iteration is never lost;
//! * `GATE_EMPTY` / `GATE_ZERO`: one per loop iteration, first in the
//!   control dispatch before its first node: evaluates the condition, keeps
//!   the stopped bit, counts the iteration, for `zero` sets the flag to 0,
//!   and writes the indirect arguments of the iteration's host-sized nodes
//!   (their planned grid, or zero once stopped);
//! * `GRID`: `grid indirect(b)`: copies `b[0..3]`, or writes zero and an
//!   error flag when a dimension exceeds the device limit (reported after the
//!   run, never a silently skipped dispatch);
//! * `EXIT`: after the last iteration a submission records of a loop
//!   recorded in part (`trips.rs`): the next iteration's condition stops
//!   the loop, or *holds* the run: then every later step does nothing and
//!   writes zero arguments, until the host continues the loop in a further
//!   submission.
//!
//! So an iteration of a loop whose one node runs `over count(..)` and
//! appends records two dispatches (the control dispatch: gate, reset and
//! arguments; then the node), stopped or not.
//!
//! After the pass the counts and the loop states with the error flags are
//! copied into one small status buffer that is read back with the outputs:
//! overflow and loop reports cost no extra submission.
//!
//! The steps are worked out in `steps.rs`; this file holds the control
//! kernel and the resources a graph and each of its plans need for it;
//! `run/` records the control dispatches and reads the status back.

use super::steps::{SLOTS, Steps};
use crate::device::gpu::Gpu;
use crate::spec::error::{BackendError, Result};

/// The control kernel's source for `slots` graph buffers (1 to
/// [`SLOTS`]): the bindings and their accessors, then [`BODY`].
pub(crate) fn source(slots: usize) -> String {
    use std::fmt::Write as _;
    let slots = slots.clamp(1, SLOTS);
    let mut s = String::from(
        "@group(0) @binding(0) var<storage, read_write> ctl: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> state: array<u32>;\n",
    );
    for k in 0..slots {
        let _ = writeln!(
            s,
            "@group(0) @binding({}) var<storage, read_write> s{k}: array<u32>;",
            k + 2
        );
    }
    // A switch over the slots: WGSL cannot index bindings.
    let arms = |body: &dyn Fn(usize) -> String| {
        let mut arms = String::new();
        for k in 0..slots {
            let label = if k + 1 == slots {
                "default".to_string()
            } else {
                format!("case {k}u")
            };
            let _ = writeln!(arms, "        {label}: {{ {} }}", body(k));
        }
        arms
    };
    let _ = write!(
        s,
        "fn load(slot: u32, i: u32) -> u32 {{\n    switch slot {{\n{}    }}\n}}\n\
         fn store(slot: u32, i: u32, v: u32) {{\n    switch slot {{\n{}    }}\n}}\n\
         fn length(slot: u32) -> u32 {{\n    switch slot {{\n{}    }}\n}}\n",
        arms(&|k| format!("return s{k}[i];")),
        arms(&|k| format!("s{k}[i] = v;")),
        arms(&|k| format!("return arrayLength(&s{k});")),
    );
    s.push_str(BODY);
    s
}

/// The control kernel's body (one entry point, one invocation walking its
/// table; the mode is in each entry).
pub(crate) const BODY: &str = r"
const NONE: u32 = 0xffffffffu;

fn div_ceil(a: u32, b: u32) -> u32 {
    return a / b + select(0u, 1u, a % b != 0u);
}

fn set_args(at: u32, x: u32, y: u32, z: u32) {
    ctl[at] = x; ctl[at + 1u] = y; ctl[at + 2u] = z;
}

// The host's fold (`grid::fold_grid`): x first, then y, then z.
fn fold_grid(at: u32, total: u32, limit: u32) {
    if total == 0u { set_args(at, 0u, 0u, 0u); return; }
    if total <= limit { set_args(at, total, 1u, 1u); return; }
    let y = min(div_ceil(total, limit), limit);
    let z = div_ceil(total, limit * y);
    set_args(at, limit, y, z);
}

// An append buffer's capacity: the words past its header, in elements.
fn capacity(e: u32) -> u32 {
    let w = length(ctl[e + 1u]);
    if w > ctl[e + 4u] { return (w - ctl[e + 4u]) / max(ctl[e + 5u], 1u); }
    return 0u;
}

fn stopped(lp: u32) -> bool {
    return lp != NONE && state[2u * lp] != 0u;
}

// A loop recorded in part holds the run (`trips.rs`): the hold word is in
// the header (ctl[2]); NONE for a graph without loops.
fn held() -> bool {
    return ctl[2] != NONE && state[ctl[2]] != 0u;
}

// An error found by a step, reported after the run.
fn raise(e: u32, v: u32) {
    if ctl[e + 8u] != NONE { state[ctl[e + 8u]] = v; }
}

// A gate writes the arguments of its iteration's host-sized nodes: 8 words
// each from ctl[e + 10], the arguments then the planned grid; zero once
// the loop stopped.
fn iteration_args(e: u32, running: bool) {
    for (var j = 0u; j < ctl[e + 9u]; j = j + 1u) {
        let at = ctl[e + 10u] + 8u * j;
        if running {
            set_args(at, ctl[at + 4u], ctl[at + 5u], ctl[at + 6u]);
        } else {
            set_args(at, 0u, 0u, 0u);
        }
    }
}

// Entry words: 0 mode, 1 slot, 2 loop, 3 workgroup size, 4 header words,
// 5 element words, 6 iteration, 7 x-only kernel, 8 error word in state,
// 9 fixed nodes, 10 their first word, 12..14 the arguments written.
fn run_step(e: u32, limit: u32) {
    let mode = ctl[e];
    let slot = ctl[e + 1u];
    let lp = ctl[e + 2u];
    let args = e + 12u;
    if held() {
        // Everything after a loop that holds the run waits for the
        // further submission that continues it.
        if mode == 3u || mode == 4u { iteration_args(e, false); } else { set_args(args, 0u, 0u, 0u); }
        return;
    }
    if mode == 6u {
        // EXIT: after the last iteration recorded, the next iteration's
        // condition (its slot in the table after the entry): met, the loop
        // stops; not met, it holds the run.
        if stopped(lp) { return; }
        let next = state[2u * lp + 1u];
        if next >= ctl[e + 6u] { return; }
        if load(ctl[20u + next], 0u) == 0u { state[2u * lp] = 1u; } else { state[ctl[2]] = lp + 1u; }
        return;
    }
    if mode == 0u {
        // COUNT: min(count, capacity) invocations of workgroup size ctl[e+3].
        if stopped(lp) { set_args(args, 0u, 0u, 0u); return; }
        let items = min(load(slot, 0u), capacity(e));
        let total = div_ceil(items, max(ctl[e + 3u], 1u));
        if ctl[e + 7u] != 0u && total > limit {
            // A kernel that may index with x alone: never fold it.
            set_args(args, 0u, 0u, 0u); raise(e, total); return;
        }
        fold_grid(args, total, limit);
    } else if mode == 2u {
        // RESET: an overflow is remembered before the count is cleared.
        if !stopped(lp) {
            let count = load(slot, 0u);
            if count > capacity(e) { raise(e, count); }
            store(slot, 0u, 0u);
        }
    } else if mode == 3u {
        // GATE_EMPTY: stop before an iteration when the count is 0.
        if !stopped(lp) && load(slot, 0u) == 0u { state[2u * lp] = 1u; }
        let running = !stopped(lp);
        if running { state[2u * lp + 1u] = state[2u * lp + 1u] + 1u; }
        iteration_args(e, running);
    } else if mode == 4u {
        // GATE_ZERO: do-while; stop after an iteration that left the flag 0.
        if !stopped(lp) && ctl[e + 6u] != 0u && load(slot, 0u) == 0u { state[2u * lp] = 1u; }
        let running = !stopped(lp);
        if running {
            state[2u * lp + 1u] = state[2u * lp + 1u] + 1u;
            store(slot, 0u, 0u);
        }
        iteration_args(e, running);
    } else {
        // GRID
        if stopped(lp) { set_args(args, 0u, 0u, 0u); return; }
        let x = load(slot, 0u); let y = load(slot, 1u); let z = load(slot, 2u);
        if x > limit || y > limit || z > limit {
            set_args(args, 0u, 0u, 0u); raise(e, max(max(x, y), z)); return;
        }
        set_args(args, x, y, z);
    }
}

@compute @workgroup_size(1)
fn main() {
    let steps = ctl[0];
    let limit = ctl[1];
    for (var k = 0u; k < steps; k = k + 1u) {
        run_step(4u + 16u * k, limit);
    }
}
";

/// The control pipeline, made once per graph that needs it.
pub(crate) struct Control {
    /// The layout of every control dispatch's bind group.
    pub(crate) layout: wgpu::BindGroupLayout,
    /// Recorded before each dispatch that has control steps.
    pub(crate) pipeline: wgpu::ComputePipeline,
    /// Graph buffers it binds: the most any control dispatch needs.
    pub(crate) slots: usize,
}

impl Control {
    /// The pipeline, when `steps` has any step.
    ///
    /// # Errors
    /// [`BackendError::KernelCompileFailed`] when the device rejects the
    /// control kernel (a bug of vyre's, reported rather than left to the
    /// device's error handler).
    pub(crate) async fn new(gpu: &Gpu, steps: &Steps) -> Result<Option<Self>> {
        if steps.steps.is_empty() {
            return Ok(None);
        }
        // Fewer bindings, cheaper dispatches (measured on lavapipe).
        let exits = steps.loops.iter().filter_map(|l| l.exit.as_ref());
        let slots = steps
            .groups
            .iter()
            .map(|g| g.srcs.len())
            .chain(exits.map(|e| e.srcs.len()))
            .max()
            .unwrap_or(1)
            .clamp(1, SLOTS);
        let device = gpu.device();
        let scope = gpu.catch_errors();
        let entry = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("vyre control"),
            entries: &(0..2 + slots as u32).map(entry).collect::<Vec<_>>(),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("vyre control"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("vyre control"),
            source: wgpu::ShaderSource::Wgsl(source(slots).into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("vyre control"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        gpu.count_pipeline();
        if let Some(error) = scope.pop().await {
            return Err(BackendError::KernelCompileFailed {
                kernel: "vyre control (runtime-generated)".to_string(),
                message: format!("{error}; please report this"),
            });
        }
        Ok(Some(Control {
            layout,
            pipeline,
            slots,
        }))
    }
}

/// A plan's control resources: a control block per control dispatch, the
/// loop states and error words, their bind groups, and the status read
/// back after the run.
pub(crate) struct ControlPlan {
    /// A control block per control dispatch (its steps' table and the
    /// indirect arguments they write).
    pub(crate) ctl: Vec<wgpu::Buffer>,
    /// Per loop (stopped, iterations), then an error word per reporting
    /// step: copied into the status as a whole.
    pub(crate) state: wgpu::Buffer,
    pub(crate) state_bytes: u64,
    /// What a control dispatch's unused slots bind: one small range each,
    /// apart from each other and from every other binding (WebGPU refuses
    /// two writable bindings of overlapping ranges of one buffer).
    pub(crate) spare: wgpu::Buffer,
    pub(crate) bind_groups: Vec<wgpu::BindGroup>,
    /// Each loop's exit (`trips.rs`): its control block and bind group,
    /// when the graph may record loops in part.
    pub(crate) exits: Vec<Option<(wgpu::Buffer, wgpu::BindGroup)>>,
    /// Counts, then loop states (stopped, iterations), then error flags.
    pub(crate) status: wgpu::Buffer,
    pub(crate) status_bytes: u64,
}

impl ControlPlan {
    /// Every buffer it owns, to free with the plan.
    pub(crate) fn buffers(&self) -> impl Iterator<Item = &wgpu::Buffer> {
        self.ctl
            .iter()
            .chain(self.exits.iter().flatten().map(|(b, _)| b))
            .chain(std::iter::once(&self.state))
            .chain(std::iter::once(&self.spare))
            .chain(std::iter::once(&self.status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The control kernel compiles for every number of slots a graph can
    /// need, each slot reachable through its own switch arm.
    #[test]
    fn the_control_kernel_compiles_for_one_to_six_slots() {
        let gpu = match Gpu::new() {
            Ok(gpu) => gpu,
            Err(e) => panic!("no GPU for this test: {e}"),
        };
        for slots in 1..=SLOTS {
            let text = source(slots);
            for k in 0..slots {
                assert!(text.contains(&format!("return s{k}[i];")), "{text}");
            }
            assert!(!text.contains(&format!("s{slots}")), "{text}");
            let device = gpu.device();
            let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("vyre control test"),
                source: wgpu::ShaderSource::Wgsl(text.into()),
            });
            let _pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("vyre control test"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            });
            if let Some(error) = pollster::block_on(scope.pop()) {
                panic!("{slots} slots: {error}");
            }
        }
    }
}
