//! [`RecordedRun`]: a run recorded into the caller's encoder
//! ([`Graph::record`](crate::Graph::record)), read back after the caller
//! submits it (blocking or async, one implementation) or finished without
//! reading.

use smallvec::SmallVec;

use super::empty::read_empty;
use super::report::RunReport;
use super::started::Started;
use crate::device::gpu::Gpu;
use crate::device::io::Sink;
use crate::device::map::Wait;
#[cfg(not(target_arch = "wasm32"))]
use crate::device::map::block_on;
use crate::device::scopes::Deferred;
use crate::plan::program::Program;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::transfer::TransferOptions;

/// A run recorded into the caller's encoder by
/// [`Graph::record`](crate::Graph::record), waiting for the caller to
/// submit it.
#[must_use = "a recorded run keeps its launch plan until it is read or finished"]
pub struct RecordedRun<'g> {
    run: Recorded<'g>,
    /// Which outputs were recorded as host sinks.
    host_sinks: SmallVec<[bool; 4]>,
    profile: bool,
    #[cfg(not(target_arch = "wasm32"))]
    timeout: Option<std::time::Duration>,
    transfer: Option<TransferOptions>,
    /// The device's verdict on the recording, when it was not known as
    /// `record` returned (in a browser): awaited by the first await of the
    /// run, whose error it then is.
    deferred: Option<Deferred>,
}

/// What was recorded: a run, or nothing (problem size 0 with outputs that
/// need no run, `empty.rs`).
enum Recorded<'g> {
    /// Steps 1 to 4 done into the caller's encoder (boxed: a run in
    /// flight is far larger than an empty one).
    Run(Box<Started<'g>>),
    /// Checked at n = 0, resident sinks written; the host sinks are filled
    /// when it is read.
    Empty {
        gpu: &'g Gpu,
        program: &'g Program,
        report: Box<RunReport>,
    },
}

impl std::fmt::Debug for RecordedRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedRun")
            .field("report", self.report())
            .finish_non_exhaustive()
    }
}

impl<'g> RecordedRun<'g> {
    /// A run `started` into the caller's `encoder` (steps 1 to 4), for
    /// `sinks`: stamped, so that reading it proves its commands ran, and
    /// its plan kept from destroying buffers that the caller's command
    /// buffer names, should the run be dropped unfinished.
    pub(crate) fn new(
        mut started: Started<'g>,
        encoder: &mut wgpu::CommandEncoder,
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
        deferred: Option<Deferred>,
    ) -> Self {
        started.recorded_into(encoder);
        let mut run = Self::of(Recorded::Run(Box::new(started)), sinks, config);
        run.deferred = deferred;
        run
    }

    /// A run at problem size 0 whose outputs need no run, checked and its
    /// resident sinks written by `run/empty.rs` (`report`): nothing was
    /// recorded; reading it fills the host sinks.
    pub(crate) fn empty(
        gpu: &'g Gpu,
        program: &'g Program,
        report: RunReport,
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Self {
        let run = Recorded::Empty {
            gpu,
            program,
            report: Box::new(report),
        };
        Self::of(run, sinks, config)
    }

    fn of(run: Recorded<'g>, sinks: &[Sink<'_>], config: &DispatchConfig) -> Self {
        RecordedRun {
            run,
            host_sinks: sinks.iter().map(Sink::is_host).collect(),
            profile: config.profile,
            #[cfg(not(target_arch = "wasm32"))]
            timeout: config.timeout,
            transfer: config.transfer,
            deferred: None,
        }
    }

    /// The run's report so far (plan, cache hit, recording time).
    #[must_use]
    pub fn report(&self) -> &RunReport {
        match &self.run {
            Recorded::Run(started) => &started.report,
            Recorded::Empty { report, .. } => report,
        }
    }

    /// Whether the run reads outputs back to the host (then call
    /// [`RecordedRun::read`] or [`RecordedRun::read_async`]).
    #[must_use]
    pub fn reads_back(&self) -> bool {
        match &self.run {
            Recorded::Run(started) => started.reads_back,
            Recorded::Empty { .. } => self.host_sinks.contains(&true),
        }
    }

    fn program(&self) -> &'g Program {
        match &self.run {
            Recorded::Run(started) => started.program(),
            Recorded::Empty { program, .. } => program,
        }
    }

    /// After the caller submitted the encoder (`submission`), wait for it
    /// and copy the host outputs into `sinks` (the same sinks, in the same
    /// order, as [`Graph::record`](crate::Graph::record) got; `Sink::Host` slices receive data).
    ///
    /// # Errors
    /// [`BackendError::OutputCountMismatch`] or
    /// [`BackendError::LengthMismatch`] when `sinks` differ from the
    /// recorded ones, [`BackendError::NotSubmitted`] when the recorded
    /// commands never ran (the encoder was dropped, or only other work was
    /// submitted), [`BackendError::Timeout`], [`BackendError::ReadbackFailed`].
    ///
    /// Not on wasm32: use [`RecordedRun::read_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(
        self,
        submission: wgpu::SubmissionIndex,
        sinks: &mut [Sink<'_>],
    ) -> Result<RunReport> {
        let wait = Wait::Block {
            submission: Some(submission),
            timeout: self.timeout,
        };
        block_on(self.read_with(sinks, wait))
    }

    /// As [`RecordedRun::read`], as a future that never blocks: after the
    /// caller submitted the encoder, wait for the run and copy the host
    /// outputs into `sinks`. In a browser, a device error of the recording
    /// (known only after `record` returned) is reported here first.
    ///
    /// ```no_run
    /// # async fn f(gpu: &vyre_graph::Gpu, graph: &vyre_graph::Graph, x: &[u32], y: &mut [u32]) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Sink};
    /// let mut encoder = gpu.device().create_command_encoder(&Default::default());
    /// let feeds = [Feed::Host(bytemuck::cast_slice(x))];
    /// let mut sinks = [Sink::Host(bytemuck::cast_slice_mut(y))];
    /// let recorded = graph.record(&mut encoder, &DispatchConfig::default(), x.len() as u64, &feeds, &sinks)?;
    /// gpu.queue().submit([encoder.finish()]);
    /// let report = recorded.read_async(&mut sinks).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`RecordedRun::read`] (but for the timeout);
    /// [`BackendError::DispatchFailed`] for a device error of the recording.
    pub async fn read_async(self, sinks: &mut [Sink<'_>]) -> Result<RunReport> {
        self.read_with(sinks, Wait::Async).await
    }

    /// [`RecordedRun::read`] and [`RecordedRun::read_async`]: the
    /// recording's deferred verdict, the sinks checked, then the run's
    /// read-back, waiting as `wait` says.
    async fn read_with(mut self, sinks: &mut [Sink<'_>], wait: Wait) -> Result<RunReport> {
        self.deferred_error().await?;
        self.check_same_sinks(sinks)?;
        match self.run {
            Recorded::Run(started) => started.read_back(sinks, None, self.profile, wait).await,
            Recorded::Empty {
                gpu,
                program,
                report,
            } => {
                read_empty(gpu, program, sinks, self.transfer)?;
                Ok(*report)
            }
        }
    }

    /// The sinks given to `read` must be those given to `record`: a host
    /// slice where a host sink was recorded, of the same length.
    fn check_same_sinks(&self, sinks: &[Sink<'_>]) -> Result<()> {
        let program = self.program();
        let n = self.report().n;
        if sinks.len() != self.host_sinks.len() {
            return Err(BackendError::OutputCountMismatch {
                graph: program.spec.name.to_string(),
                expected: self.host_sinks.len(),
                given: sinks.len(),
                names: program.names(&program.host_outputs),
            });
        }
        for ((sink, &host), &b) in sinks
            .iter()
            .zip(&self.host_sinks)
            .zip(&program.host_outputs)
        {
            let spec = &program.spec.buffers[b];
            match sink {
                Sink::Host(dst) if host && dst.len() as u64 != program.buffer_bytes(b, n) => {
                    return Err(BackendError::LengthMismatch {
                        buffer: spec.name.to_string(),
                        n,
                        expected: program.buffer_bytes(b, n),
                        actual: dst.len() as u64,
                    });
                }
                Sink::Host(_) | Sink::Vector(_) if !host => {
                    return Err(BackendError::SinkMismatch {
                        buffer: spec.name.to_string(),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The caller submitted the encoder (`submission`) and reads nothing
    /// back (resident outputs only): the plan goes back to the cache for
    /// the next run, which the queue orders after this one. Nothing waits.
    ///
    /// In a browser the device's verdict on the recording may not be known
    /// yet: then the plan is dropped rather than reused, and the verdict is
    /// not reported. Use [`RecordedRun::finish_async`] there to get it.
    pub fn finish(self, submission: &wgpu::SubmissionIndex) -> RunReport {
        let _ = submission;
        let verdict_known = self.deferred.is_none();
        match self.run {
            Recorded::Run(started) if verdict_known => started.succeeded(false, &[]),
            // Without the verdict, its plan is not trusted again (dropped
            // with its buffers once the submission is done).
            Recorded::Run(started) => started.report.clone(),
            Recorded::Empty { report, .. } => *report,
        }
    }

    /// As [`RecordedRun::finish`], awaiting the device's verdict on the
    /// recording first: in a browser, where it comes after `record`
    /// returned, the way to learn of a device error of a run read back
    /// through resident outputs only. Natively ready at once.
    ///
    /// # Errors
    /// [`BackendError::DispatchFailed`] for a device error of the
    /// recording (the plan is then dropped, never reused).
    pub async fn finish_async(mut self, submission: &wgpu::SubmissionIndex) -> Result<RunReport> {
        self.deferred_error().await?;
        Ok(self.finish(submission))
    }

    /// The recording's verdict when it was deferred (see
    /// [`Graph::record`](crate::Graph::record)): awaited once.
    async fn deferred_error(&mut self) -> Result<()> {
        let Some(deferred) = self.deferred.take() else {
            return Ok(());
        };
        match deferred.error().await {
            // `self` dropped by the caller's `?`: its plan is dropped too.
            Some(error) => Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            }),
            None => Ok(()),
        }
    }
}
