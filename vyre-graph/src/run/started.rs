//! [`Started`]: one run of a graph from its checked-out plan to its report:
//! bind (step 3), encode (4), submit (5) and read back (6), each one method
//! that `Graph` calls in that order. Reading back is one implementation for
//! blocking and async runs alike: a future parameterised by how it waits
//! ([`Wait`]), which a blocking run drives with
//! [`block_on`](crate::device::map::block_on).

use std::sync::{Mutex, PoisonError};
use web_time::Instant;

use smallvec::SmallVec;

use super::counted::{read_by_count, read_counted};
use super::encode::{Recording, Scopes, encode};
use super::readback::{Reading, Scatter, StatusBytes, check_stamp, gpu_ns, targets};
use super::report::{RunPhases, RunReport, elapsed_ns};
use super::status::{check_status, held_loop, overflowed};
use crate::device::buffer::GpuBufferHandle;
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::device::map::{Wait, map_and_copy};
use crate::device::transfer::Stacked;
use crate::plan::plans::Checkout;
use crate::plan::program::Program;
use crate::plan::timer::PassTimer;
use crate::plan::trips::Trip;
use crate::spec::config::{DispatchConfig, GridStride, LoopBound};
use crate::spec::error::{BackendError, Result};
use crate::spec::transfer::TransferOptions;

/// One run's host side: its feeds and sinks and, for a stacked run
/// (`run_batch`), each host input's instance bytes in order (its feeds are
/// then placeholders).
#[derive(Clone, Copy)]
pub(crate) struct Io<'f, 'p> {
    /// One feed per host input.
    pub(crate) feeds: &'f [Feed<'f>],
    /// One sink per output.
    pub(crate) sinks: &'f [Sink<'f>],
    /// A stacked run's instance bytes.
    pub(crate) stacked: Option<&'p Stacked<'p>>,
}

/// Whose command encoder a run is recorded into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EncoderUse {
    /// Its own, which the runtime submits right after (`run`, `run_async`,
    /// a stream's or a stacked run): large inputs may go through the
    /// plan's staging buffers, and a loop may continue in a further
    /// submission.
    Own,
    /// One that others record into too (the caller's in `record`, a
    /// batch's recorded copies): inputs are written through the queue.
    Shared,
}

/// A run whose plan is checked out: its plan, its report so far.
pub(crate) struct Started<'g> {
    gpu: &'g Gpu,
    program: &'g Program,
    /// Where a profiled run leaves each dispatch's GPU nanoseconds (the
    /// graph's latest, for `Graph::node_times`).
    times: &'g Mutex<Vec<u64>>,
    /// The plan, this run's until it succeeds.
    pub(crate) checkout: Checkout<'g>,
    /// The report so far.
    pub(crate) report: RunReport,
    /// Whether any output is read back to the host.
    pub(crate) reads_back: bool,
    /// How the run moves data (`None`: as the device's options say).
    transfer: Option<TransferOptions>,
    /// For each host output, whether it is an append output read by its
    /// count after the run (see `counted.rs`).
    pub(crate) by_count: SmallVec<[bool; 4]>,
    /// Whose encoder the run is recorded into: only in its own may a loop
    /// continue in a further submission.
    encoder: EncoderUse,
    /// How the run records its loops (`plan/trips.rs`).
    trip: Trip,
    /// How its fused groups launch (for a continuation).
    grid_stride: GridStride,
}

impl<'g> Started<'g> {
    /// The run of `checkout`'s plan after steps 1 and 2 (check and plan,
    /// whose times `phases` holds).
    pub(crate) fn new(
        gpu: &'g Gpu,
        program: &'g Program,
        times: &'g Mutex<Vec<u64>>,
        checkout: Checkout<'g>,
        phases: RunPhases,
        started: Instant,
    ) -> Self {
        let report = RunReport {
            n: checkout.n,
            plan: checkout.plan.plan,
            cache_hit: checkout.cache_hit,
            cache_entries: checkout.cache_entries,
            submissions: 0,
            dispatches: 0,
            record_ns: 0,
            gpu_ns: None,
            dispatch_gpu_ns: Vec::new(),
            loops: Vec::new(),
            device: 0,
            rank: 0,
            tracks: program.tracks.clone(),
            started: Some(started),
            profiled: false,
            phases,
        };
        Started {
            gpu,
            program,
            times,
            checkout,
            report,
            reads_back: false,
            transfer: None,
            by_count: SmallVec::new(),
            encoder: EncoderUse::Shared,
            trip: Trip::default(),
            grid_stride: GridStride::Never,
        }
    }

    /// Step 3: bind `feeds` to the plan (uploads, bind-group changes), and
    /// its pass timer when the run profiles. Large host inputs go through
    /// the plan's staging buffers when the run has its own encoder;
    /// a run recorded into the caller's encoder writes them through the
    /// queue. Returns the resident feeds the recording copies.
    pub(crate) fn bind<'f>(
        &mut self,
        feeds: &'f [Feed<'f>],
        stacked: Option<&Stacked<'_>>,
        config: &DispatchConfig,
        encoder: EncoderUse,
    ) -> SmallVec<[(usize, &'f GpuBufferHandle); 4]> {
        let start = Instant::now();
        self.transfer = config.transfer;
        self.encoder = encoder;
        let options = self.gpu.copier(config.transfer).options;
        let plan = &mut self.checkout.plan;
        let copies = plan.bind_feeds(
            self.gpu,
            self.program,
            feeds,
            stacked,
            (encoder == EncoderUse::Own).then_some(&options),
        );
        plan.timer(self.gpu, config);
        self.report.profiled = config.profile;
        plan.stamp(self.gpu, None);
        self.report.phases.bind_ns = elapsed_ns(start);
        copies
    }

    /// Step 4: record the run into `encoder`: the copies of resident feeds,
    /// one compute pass of every dispatch (on `override_grids` when the
    /// config overrides them), the outputs' copies to their sinks.
    pub(crate) fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        io: Io<'_, '_>,
        copies: &[(usize, &GpuBufferHandle)],
        override_grids: Option<&[[u32; 3]]>,
        config: &DispatchConfig,
        scopes: Scopes<'_>,
    ) {
        let (program, plan) = (self.program, &self.checkout.plan);
        let start = Instant::now();
        let options = self.gpu.copier(config.transfer).options;
        self.by_count = read_by_count(program, plan, io.sinks, &options);
        let recording = Recording {
            label: config.label.as_deref().unwrap_or(&program.spec.name),
            grids: override_grids.unwrap_or(&plan.grids),
            // Overridden grids are the caller's: launched as given.
            grid_stride: override_grids.is_none().then_some(config.grid_stride),
            copies,
            feeds: io.feeds,
            sinks: io.sinks,
            by_count: &self.by_count,
            timer: plan.timer.as_ref().filter(|_| config.profile),
            continuation: false,
            scopes,
        };
        // Loops recorded in part only where the run can continue them: it
        // submits itself, on the plan's grids, without per-dispatch stamps.
        let learned = self.encoder == EncoderUse::Own
            && override_grids.is_none()
            && !recording.timer.is_some_and(PassTimer::times_dispatches);
        let bound = if learned {
            config.loop_bound
        } else {
            LoopBound::Full
        };
        let ks = program.steps.loops.iter().map(|l| l.k());
        let bounds = (bound == LoopBound::Learned && program.steps.partial)
            .then(|| program.trips.bounds(plan.n, ks));
        self.trip = Trip::new(&program.steps, bound, bounds);
        self.grid_stride = config.grid_stride;
        let (reads_back, dispatches) =
            encode(encoder, self.gpu, program, plan, &recording, &mut self.trip);
        self.reads_back = reads_back;
        self.report.dispatches = dispatches;
        self.report.record_ns = elapsed_ns(start);
        self.report.phases.encode_ns = self.report.record_ns;
    }

    /// Instead of step 5, for a run recorded into the caller's `encoder`:
    /// stamp it (see [`Stamp`](crate::plan::stamp::Stamp)), and keep its
    /// plan from destroying its buffers at once should the run be dropped
    /// unfinished (the caller's command buffer names them).
    pub(crate) fn recorded_into(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let plan = &mut self.checkout.plan;
        plan.stamp(self.gpu, Some(encoder));
        plan.set_destroy_on_drop(false);
    }

    /// Step 5: finish the encoder and submit it, once.
    pub(crate) fn submit(&mut self, encoder: wgpu::CommandEncoder) -> wgpu::SubmissionIndex {
        let _span = enter!("submit");
        let start = Instant::now();
        let command = encoder.finish();
        self.report.submissions = 1 + self.checkout.plan.staged_submissions();
        let index = self.gpu.submit(command);
        // Its staging buffers, mapped again for the next run: this run's
        // wait completes the mapping.
        self.checkout.plan.remap_staging();
        self.report.phases.submit_ns = elapsed_ns(start);
        index
    }

    /// Step 6: wait as `wait` says, copy the host outputs into `sinks`,
    /// check the run's status, and finish the run. With [`Wait::Block`]
    /// the future is ready when first polled.
    ///
    /// # Errors
    /// As [`map_and_copy`]; [`BackendError::NotSubmitted`] for a recorded
    /// run whose commands never ran; the status's errors
    /// ([`check_status`]).
    pub(crate) async fn read_back(
        mut self,
        sinks: &mut [Sink<'_>],
        mut scatter: Option<&mut Scatter<'_, '_>>,
        profiling: bool,
        wait: Wait,
    ) -> Result<RunReport> {
        let (gpu, program, plan) = (self.gpu, self.program, &self.checkout.plan);
        let copier = gpu.copier(self.transfer);
        let mut stamps = Vec::new();
        let mut status = StatusBytes::new();
        let reading = Reading {
            program,
            plan,
            by_count: &self.by_count,
            profiling,
        };
        let mut targets = targets(
            &reading,
            &mut *sinks,
            scatter.as_deref_mut(),
            &mut stamps,
            &mut status,
        );
        let wait_start = Instant::now();
        let mut again = wait.again();
        let mut copy_ns = map_and_copy(gpu, copier, &plan.map_slots, &mut targets, wait).await?;
        drop(targets);
        check_stamp(plan, &status)?;
        // A loop that held the run: continued in a further submission, and
        // everything read again after it.
        while let Some(submission) = self.continue_held(&status, sinks).await? {
            let reading = Reading {
                program,
                plan: &self.checkout.plan,
                by_count: &self.by_count,
                profiling,
            };
            let mut targets = super::readback::targets(
                &reading,
                &mut *sinks,
                scatter.as_deref_mut(),
                &mut stamps,
                &mut status,
            );
            let wait = again(submission);
            again = wait.again();
            let plan = &self.checkout.plan;
            copy_ns += map_and_copy(gpu, copier, &plan.map_slots, &mut targets, wait).await?;
        }
        if let Err(e) = self.check_status(&status) {
            return Err(self.failed_after_wait(e));
        }
        // Append outputs read by their count: a second, small submission.
        if self.by_count.contains(&true) {
            let reading = Reading {
                program,
                plan: &self.checkout.plan,
                by_count: &self.by_count,
                profiling,
            };
            copy_ns += read_counted(gpu, copier, &reading, sinks, &status, again).await?;
            self.report.submissions += 1;
        }
        self.report.phases.wait_ns = elapsed_ns(wait_start).saturating_sub(copy_ns);
        self.report.phases.copy_ns = copy_ns;
        Ok(self.succeeded(profiling, &stamps))
    }

    /// After a wait whose status says a loop held the run (`plan/trips.rs`):
    /// records and submits the rest of the run from that loop's next
    /// iteration, from the device's state, and returns the submission.
    /// `None` when no loop holds it.
    ///
    /// # Errors
    /// [`BackendError::DispatchFailed`] when the device rejects the
    /// continuation.
    async fn continue_held(
        &mut self,
        status: &[u8],
        sinks: &[Sink<'_>],
    ) -> Result<Option<wgpu::SubmissionIndex>> {
        let (gpu, program) = (self.gpu, self.program);
        let Some(l) = held_loop(program, status) else {
            return Ok(None);
        };
        if !self.trip.resume(&program.steps, l) {
            return Ok(None);
        }
        let plan = &self.checkout.plan;
        let scope = gpu.catch_errors();
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some(&program.spec.name),
            });
        let recording = Recording {
            label: &program.spec.name,
            grids: &plan.grids,
            grid_stride: Some(self.grid_stride),
            copies: &[],
            feeds: &[],
            sinks,
            by_count: &self.by_count,
            timer: None,
            continuation: true,
            scopes: Scopes::default(),
        };
        let (_, dispatches) = encode(&mut encoder, gpu, program, plan, &recording, &mut self.trip);
        self.report.dispatches += dispatches;
        self.report.submissions += 1;
        let submission = gpu.submit(encoder.finish());
        // Popped before the await: nothing else may push or pop between.
        if let Some(error) = scope.pop().await {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        Ok(Some(submission))
    }

    /// The device-side status of the run (append counts, loops, indirect
    /// grids): loop reports into the report, and an overflow or a grid over
    /// the limit as the run's error. The plan is fine either way: it goes
    /// back to the cache, so the next run of this size reuses it.
    fn check_status(&mut self, status: &[u8]) -> Result<()> {
        let plan = &self.checkout.plan;
        if plan.control.is_none() {
            return Ok(());
        }
        let max = self.gpu.limits().max_compute_workgroups_per_dimension;
        let loops = &mut self.report.loops;
        let checked = check_status(self.program, plan, status, max, loops);
        if let Err(BackendError::AppendOverflow { .. }) = &checked {
            // Every `grow` buffer that overflowed grows now, not only the
            // one the error names: the repeat then fits them all.
            let over = overflowed(self.program, plan, status);
            self.program.grow_each(self.gpu, plan, &over);
        }
        for (report, &done) in loops.iter_mut().zip(&self.trip.done) {
            report.recorded = done;
        }
        // What each loop needed: the bound of the next runs at this size.
        let ks = self.program.steps.loops.iter().map(|l| l.k());
        let needs = loops
            .iter()
            .zip(ks)
            .map(|(r, k)| if r.stopped { r.iterations } else { k });
        self.program.trips.learn(plan.n, needs);
        checked
    }

    /// The run failed after a complete, successful wait (an append overflow,
    /// an indirect grid over the limit): the plan is sound and goes back to
    /// the cache.
    fn failed_after_wait(mut self, mut error: BackendError) -> BackendError {
        self.checkout.plan.set_destroy_on_drop(true);
        if self
            .program
            .grow_on(self.gpu, &self.checkout.plan, &mut error)
        {
            // Its buffers are too small now: dropped, the next run of this
            // size makes a plan with the grown capacity.
            return error;
        }
        self.checkout.succeeded();
        error
    }

    /// The run succeeded: its plan goes back to the cache.
    pub(crate) fn succeeded(mut self, profiled: bool, stamps: &[u8]) -> RunReport {
        self.checkout.plan.set_destroy_on_drop(true);
        let mut report = self.report;
        if profiled && self.checkout.plan.timer.is_some() {
            let (pass, nodes) = gpu_ns(self.gpu, stamps);
            report.gpu_ns = Some(pass);
            // A run timing its pass only leaves no dispatch times: none
            // stale from an earlier run either.
            self.times
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone_from(&nodes);
            report.dispatch_gpu_ns = nodes;
        }
        self.checkout.succeeded();
        report
    }

    /// The program the run runs.
    pub(crate) fn program(&self) -> &'g Program {
        self.program
    }
}
