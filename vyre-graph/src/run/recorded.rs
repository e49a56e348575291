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
use crate::device::map::{Wait, block_on};
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
    timeout: Option<std::time::Duration>,
    transfer: Option<TransferOptions>,
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
    ) -> Self {
        started.recorded_into(encoder);
        Self::of(Recorded::Run(Box::new(started)), sinks, config)
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
            timeout: config.timeout,
            transfer: config.transfer,
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

    /// As [`RecordedRun::read`], as a future that never blocks.
    ///
    /// # Errors
    /// As [`RecordedRun::read`].
    pub async fn read_async(self, sinks: &mut [Sink<'_>]) -> Result<RunReport> {
        self.read_with(sinks, Wait::Async).await
    }

    /// [`RecordedRun::read`] and [`RecordedRun::read_async`]: the sinks
    /// checked, then the run's read-back, waiting as `wait` says.
    async fn read_with(self, sinks: &mut [Sink<'_>], wait: Wait) -> Result<RunReport> {
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
    pub fn finish(self, submission: &wgpu::SubmissionIndex) -> RunReport {
        let _ = submission;
        match self.run {
            Recorded::Run(started) => started.succeeded(false, &[]),
            Recorded::Empty { report, .. } => *report,
        }
    }
}
