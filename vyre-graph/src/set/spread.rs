//! A [`GraphSet`]'s batches and streams ([`Engine`] for `GraphSet`): the
//! whole batch checked first, instances with resident data sent to their
//! device, the rest split in contiguous shares by learned throughput, each
//! share run through its device's own `Graph` (one thread each, or one
//! future each for the async twins), a failed device's unfinished
//! instances run again on the others, results in the batch's order.

use std::sync::Arc;
use std::time::Instant;

use super::graph_set::{GraphSet, panicked};
use super::join::join_all;
use super::learn::{class_of, work};
use crate::device::io::Feed;
use crate::device::map::block_on;
use crate::engine::Engine;
use crate::graph::Graph;
use crate::run::batch::{BatchReport, Instance, in_order, of_instance};
use crate::run::report::RunReport;
use crate::spec::GraphSpec;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};

/// What a share runs: a batch, or a stream at this depth.
#[derive(Clone, Copy)]
enum Work {
    Batch,
    Many(usize),
}

/// How a round of shares runs: one thread each, or one future each.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    Block,
    Async,
}

/// A stream's results as a batch's report (a stream counts no
/// submissions or chunks of its own here).
fn of_many(runs: Vec<Result<RunReport>>) -> BatchReport {
    BatchReport {
        runs,
        submissions: 0,
        chunks: 0,
        stacked: 0,
    }
}

/// A device's share of one round: the batch positions `indices` (in
/// order) and their instances, moved out of the batch meanwhile (their
/// feeds and sinks; nothing is copied).
struct Share<'a> {
    device: usize,
    graph: Arc<Graph>,
    indices: Vec<usize>,
    instances: Vec<Instance<'a>>,
}

impl<'a> Share<'a> {
    fn take(
        device: usize,
        graph: Arc<Graph>,
        indices: Vec<usize>,
        batch: &mut [Instance<'a>],
    ) -> Self {
        let mut instances = Vec::with_capacity(indices.len());
        for &i in &indices {
            if let Some(i) = batch.get_mut(i) {
                instances.push(Instance {
                    n: i.n,
                    feeds: std::mem::take(&mut i.feeds),
                    sinks: std::mem::take(&mut i.sinks),
                });
            }
        }
        Share {
            device,
            graph,
            indices,
            instances,
        }
    }

    /// Put the instances back into the batch.
    fn give_back(&mut self, batch: &mut [Instance<'a>]) {
        for (&i, instance) in self.indices.iter().zip(self.instances.iter_mut()) {
            if let Some(slot) = batch.get_mut(i) {
                slot.feeds = std::mem::take(&mut instance.feeds);
                slot.sinks = std::mem::take(&mut instance.sinks);
            }
        }
    }

    fn run_blocking(&mut self, config: &DispatchConfig, work: Work) -> Result<BatchReport> {
        match work {
            Work::Batch => self.graph.run_batch(config, &mut self.instances),
            Work::Many(depth) => Ok(of_many(self.graph.run_many(
                config,
                depth,
                &mut self.instances,
            ))),
        }
    }

    async fn run_async(&mut self, config: &DispatchConfig, work: Work) -> Result<BatchReport> {
        match work {
            Work::Batch => {
                self.graph
                    .run_batch_async(config, &mut self.instances)
                    .await
            }
            Work::Many(depth) => Ok(of_many(
                self.graph
                    .run_many_async(config, depth, &mut self.instances)
                    .await,
            )),
        }
    }
}

/// Run every share of a round at once: each on its own thread (one share:
/// on this one), or each as a future of one join; with each share's wall
/// time in seconds.
async fn run_round(
    shares: &mut [Share<'_>],
    config: &DispatchConfig,
    work: Work,
    wait: Wait,
) -> Vec<(Result<BatchReport>, f64)> {
    let timed = |share: &mut Share<'_>| {
        let start = Instant::now();
        let ran = share.run_blocking(config, work);
        (ran, start.elapsed().as_secs_f64())
    };
    match (wait, shares) {
        (Wait::Block, [share]) => vec![timed(share)],
        (Wait::Block, shares) => std::thread::scope(|scope| {
            let handles: Vec<_> = shares
                .iter_mut()
                .map(|share| scope.spawn(move || timed(share)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| (Err(panicked(&p)), 0.0)))
                .collect()
        }),
        (Wait::Async, shares) => {
            let futures = shares.iter_mut().map(|share| async move {
                let start = Instant::now();
                let ran = share.run_async(config, work).await;
                (ran, start.elapsed().as_secs_f64())
            });
            join_all(futures.collect()).await
        }
    }
}

/// Whether `error` says that the device failed (lost, out of memory,
/// timed out, busy, abandoned, a failed read-back, an error or a panic of
/// the backend), not that the instance is wrong: its instance may run
/// on another device.
fn is_fault(error: &BackendError) -> bool {
    match error {
        BackendError::BatchInstance { source, .. } | BackendError::OnDevice { source, .. } => {
            is_fault(source)
        }
        BackendError::DeviceLost { .. }
        | BackendError::Timeout { .. }
        | BackendError::DeviceBusy
        | BackendError::Abandoned
        | BackendError::ReadbackFailed { .. }
        | BackendError::DispatchFailed { .. }
        | BackendError::BackendPanicked { .. } => true,
        _ => false,
    }
}

/// A copy of a device's error (a `BackendError` is not `Clone`): the
/// same variant for the device failures of [`is_fault`], else its message.
fn copy_fault(error: &BackendError) -> BackendError {
    match error {
        BackendError::BatchInstance { source, .. } => copy_fault(source),
        BackendError::DeviceLost { reason } => BackendError::DeviceLost {
            reason: reason.clone(),
        },
        BackendError::Timeout { timeout } => BackendError::Timeout { timeout: *timeout },
        BackendError::DeviceBusy => BackendError::DeviceBusy,
        BackendError::Abandoned => BackendError::Abandoned,
        BackendError::ReadbackFailed { reason } => BackendError::ReadbackFailed {
            reason: reason.clone(),
        },
        error => BackendError::DispatchFailed {
            reason: error.to_string(),
        },
    }
}

/// `error` without the instance it names.
fn bare(error: BackendError) -> BackendError {
    match error {
        BackendError::BatchInstance { source, .. } => bare(*source),
        error => error,
    }
}

/// `error` as the error of instance `index` of the whole batch (a share's
/// error names the instance by its place in the share).
fn reindex(index: usize, error: BackendError) -> BackendError {
    of_instance(index, bare(error))
}

/// The error of a device whose graph is on `graph`'s `Gpu`: `DeviceLost`
/// when that device was lost (whatever the run saw of it), else `error`.
fn device_error(graph: &Graph, error: BackendError) -> BackendError {
    match graph.gpu().lost() {
        Some(reason) => BackendError::DeviceLost { reason },
        None => bare(error),
    }
}

/// The results of a batch on a set so far.
struct Tally {
    results: Vec<Option<Result<RunReport>>>,
    submissions: u32,
    chunks: u32,
    stacked: usize,
    /// Whether the instance runs on its resident data's device only.
    pinned: Vec<bool>,
    /// Instances to run (again) in the next round.
    pending: Vec<usize>,
}

impl Tally {
    fn set(&mut self, index: usize, result: Result<RunReport>) {
        if let Some(slot) = self.results.get_mut(index) {
            *slot = Some(result);
        }
    }

    /// Instance `index` did not finish on its device because the device
    /// failed with `error`: it runs again elsewhere, unless its resident
    /// data keeps it there.
    fn unfinished(&mut self, index: usize, error: BackendError) {
        if self.pinned.get(index).copied().unwrap_or(false) {
            self.set(index, Err(of_instance(index, error)));
        } else {
            self.pending.push(index);
        }
    }

    fn into_report(self) -> BatchReport {
        let runs = in_order(self.results, "the device set");
        BatchReport {
            runs,
            submissions: self.submissions,
            chunks: self.chunks,
            stacked: self.stacked,
        }
    }
}

impl GraphSet {
    /// A batch or stream on a set of one device: its graph's own call, the
    /// reports marked, a device failure leaving it out.
    async fn alone(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
        work: Work,
        wait: Wait,
    ) -> Result<BatchReport> {
        let Some(graph) = self.graph(0) else {
            return Err(no_device());
        };
        if !instances.is_empty() && !self.healthy().contains(&0) {
            return Err(self.all_failed(instances.len()));
        }
        let ran = match (wait, work) {
            (Wait::Block, Work::Batch) => graph.run_batch(config, instances),
            (Wait::Block, Work::Many(depth)) => {
                Ok(of_many(graph.run_many(config, depth, instances)))
            }
            (Wait::Async, Work::Batch) => graph.run_batch_async(config, instances).await,
            (Wait::Async, Work::Many(depth)) => Ok(of_many(
                graph.run_many_async(config, depth, instances).await,
            )),
        };
        let mut runs = match ran {
            Err(e) if is_fault(&e) => {
                self.leave_out(0, device_error(&graph, e));
                return Err(self.all_failed(instances.len()));
            }
            other => other?,
        };
        let (mut faults, mut first) = (0usize, None);
        for run in &mut runs.runs {
            match run {
                Ok(report) => report.device = 0,
                Err(e) if is_fault(e) => {
                    faults += 1;
                    first.get_or_insert_with(|| copy_fault(e));
                }
                Err(_) => {}
            }
        }
        if let Some(error) = first {
            self.leave_out(0, device_error(&graph, error));
            if matches!(work, Work::Batch) {
                return Err(self.all_failed(faults));
            }
            for (index, run) in runs.runs.iter_mut().enumerate() {
                if run.as_ref().is_err_and(is_fault) {
                    *run = Err(of_instance(index, self.all_failed(faults)));
                }
            }
        }
        Ok(runs)
    }

    /// [`BackendError::AllDevicesFailed`] for `unfinished` instances.
    fn all_failed(&self, unfinished: usize) -> BackendError {
        BackendError::AllDevicesFailed {
            unfinished,
            devices: self.failures(&self.graphs()),
        }
    }

    /// Where each instance runs (a device, or any) and, for a batch, the
    /// checks of [`Graph::run_batch`] on every device that may run it,
    /// before anything runs.
    fn place(
        &self,
        graphs: &[Arc<Graph>],
        config: &DispatchConfig,
        instances: &[Instance<'_>],
        work: Work,
        tally: &mut Tally,
    ) -> Result<Vec<Vec<usize>>> {
        // A device found lost, abandoned or busy now is left out before
        // the checks, which it would fail for every instance.
        for d in self.healthy() {
            if let Some(Err(e)) = graphs.get(d).map(|g| g.gpu().check_ready()) {
                self.leave_out(d, e);
            }
        }
        let healthy = self.healthy();
        let mut pinned: Vec<Vec<usize>> = graphs.iter().map(|_| Vec::new()).collect();
        for (index, instance) in instances.iter().enumerate() {
            let placed = self.placement(graphs, index, instance).and_then(|place| {
                if matches!(work, Work::Batch) {
                    let devices = place.map_or_else(|| healthy.clone(), |d| vec![d]);
                    for d in devices {
                        if let Some(graph) = graphs.get(d) {
                            graph.check_instance(index, instance, config)?;
                        }
                    }
                }
                Ok(place)
            });
            match placed {
                Ok(Some(d)) => {
                    if let (Some(list), Some(p)) = (pinned.get_mut(d), tally.pinned.get_mut(index))
                    {
                        list.push(index);
                        *p = true;
                    }
                }
                Ok(None) => tally.pending.push(index),
                Err(e) if matches!(work, Work::Batch) => return Err(e),
                Err(e) => tally.set(index, Err(e)),
            }
        }
        Ok(pinned)
    }

    /// A batch or stream spread over the healthy devices, rounds repeated
    /// until every instance ran or no device is left.
    async fn spread(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
        work: Work,
        wait: Wait,
    ) -> Result<BatchReport> {
        let graphs = self.graphs();
        let mut tally = Tally {
            results: instances.iter().map(|_| None).collect(),
            submissions: 0,
            chunks: 0,
            stacked: 0,
            pinned: vec![false; instances.len()],
            pending: Vec::new(),
        };
        let mut pinned = self.place(&graphs, config, instances, work, &mut tally)?;
        loop {
            let healthy = self.healthy();
            if tally.pending.is_empty() && pinned.iter().all(Vec::is_empty) {
                break;
            }
            if healthy.is_empty() {
                let unfinished = tally.pending.len();
                if matches!(work, Work::Batch) {
                    return Err(self.all_failed(unfinished));
                }
                for index in std::mem::take(&mut tally.pending) {
                    tally.set(index, Err(of_instance(index, self.all_failed(unfinished))));
                }
                break;
            }
            let pending = std::mem::take(&mut tally.pending);
            let sizes: Vec<u64> = pending
                .iter()
                .map(|&i| instances.get(i).map_or(0, |i| i.n))
                .collect();
            let ranges = self.learning().split(&healthy, &sizes);
            let mut shares = Vec::with_capacity(healthy.len());
            for (&d, range) in healthy.iter().zip(ranges) {
                let mut indices: Vec<usize> = pending.get(range).unwrap_or_default().to_vec();
                if let Some(list) = pinned.get_mut(d) {
                    indices.append(list);
                }
                indices.sort_unstable();
                if let (false, Some(graph)) = (indices.is_empty(), graphs.get(d)) {
                    shares.push(Share::take(d, Arc::clone(graph), indices, instances));
                }
            }
            // Resident data of a device left out since the checks: refused.
            for (d, list) in pinned.iter_mut().enumerate() {
                for index in std::mem::take(list) {
                    tally.set(index, Err(of_instance(index, self.left_out_error(d))));
                }
            }
            let ran = run_round(&mut shares, config, work, wait).await;
            let mut refused = None;
            for (mut share, (result, seconds)) in shares.into_iter().zip(ran) {
                share.give_back(instances);
                if let Err(e) = self.settle(&share, result, seconds, instances, &mut tally) {
                    refused.get_or_insert(e);
                }
            }
            if let Some(e) = refused {
                return Err(e);
            }
            tally.pending.sort_unstable();
        }
        Ok(tally.into_report())
    }

    /// The error of resident data on device `device`, left out.
    fn left_out_error(&self, device: usize) -> BackendError {
        let why = match self.status(device) {
            Some(super::graph_set::DeviceStatus::LeftOut(e)) => e.to_string(),
            _ => "it failed".into(),
        };
        BackendError::InvalidHandle {
            buffer: String::new(),
            reason: format!(
                "the instance's resident data belongs to device {device} of the set, which failed during the batch ({why}); call `GraphSet::retry({device})` and make the data again"
            ),
        }
    }

    /// Take in what a share returned: each finished instance's report
    /// (marked with the device), each instance's own error, and, when the
    /// device failed, its unfinished instances for the next round (the
    /// device is left out); else its throughput learned from `seconds`.
    /// `Err` only for a share refused whole for an instance's own error
    /// (which the checks before the batch should have caught).
    fn settle(
        &self,
        share: &Share<'_>,
        result: Result<BatchReport>,
        seconds: f64,
        instances: &[Instance<'_>],
        tally: &mut Tally,
    ) -> Result<()> {
        let lost = share.graph.gpu().lost().is_some();
        let runs = match result {
            Err(e) if lost || is_fault(&e) => {
                let error = device_error(&share.graph, e);
                for &index in &share.indices {
                    tally.unfinished(index, copy_fault(&error));
                }
                self.leave_out(share.device, error);
                return Ok(());
            }
            Err(BackendError::BatchInstance { index, source }) => {
                let global = share.indices.get(index).copied().unwrap_or(index);
                return Err(reindex(global, *source));
            }
            Err(e) => return Err(e),
            Ok(runs) => runs,
        };
        tally.submissions += runs.submissions;
        tally.chunks += runs.chunks;
        tally.stacked += runs.stacked;
        let mut fault = None;
        for (&index, run) in share.indices.iter().zip(runs.runs) {
            match run {
                Ok(mut report) => {
                    report.device = share.device;
                    tally.set(index, Ok(report));
                }
                Err(e) if lost || is_fault(&e) => {
                    let error = device_error(&share.graph, e);
                    fault.get_or_insert_with(|| copy_fault(&error));
                    tally.unfinished(index, error);
                }
                Err(e) => tally.set(index, Err(reindex(index, e))),
            }
        }
        if let Some(error) = fault {
            self.leave_out(share.device, error);
        } else {
            let sizes = share
                .indices
                .iter()
                .filter_map(|&i| instances.get(i))
                .map(|i| i.n);
            let elements: u64 = sizes.clone().map(work).sum();
            let mut classes: Vec<u32> = sizes.map(class_of).collect();
            classes.dedup();
            self.learning()
                .record(share.device, &classes, elements, seconds);
        }
        Ok(())
    }

    async fn batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
        wait: Wait,
    ) -> Result<BatchReport> {
        if self.len() == 1 {
            self.alone(config, instances, Work::Batch, wait).await
        } else {
            self.spread(config, instances, Work::Batch, wait).await
        }
    }

    async fn many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
        wait: Wait,
    ) -> Vec<Result<RunReport>> {
        let work = Work::Many(depth);
        let runs = if self.len() == 1 {
            self.alone(config, instances, work, wait).await
        } else {
            self.spread(config, instances, work, wait).await
        };
        match runs {
            Ok(runs) => runs.runs,
            // A stream reports every error as its instances'.
            Err(e) => {
                let count = instances.len();
                let all = matches!(e, BackendError::AllDevicesFailed { .. });
                let reason = e.to_string();
                (0..count)
                    .map(|i| {
                        Err(of_instance(
                            i,
                            match all {
                                true => self.all_failed(count),
                                false => BackendError::DispatchFailed {
                                    reason: reason.clone(),
                                },
                            },
                        ))
                    })
                    .collect()
            }
        }
    }
}

/// The error of a set with no device (none can be made: [`Gpus`](crate::Gpus) is never empty).
fn no_device() -> BackendError {
    BackendError::InvalidDeviceSet {
        reason: "the set has no device".into(),
    }
}

/// A device set runs batches and streams as one [`Graph`] does, spread
/// over its healthy devices (see [`GraphSet`]): results in the batch's
/// order, each report's [`device`](RunReport::device) saying which device
/// ran it.
///
/// Beyond [`Graph`]'s errors: an instance whose resident handles belong to
/// no device of the set, to two of them, or to a device left out is
/// refused before anything runs ([`BackendError::InvalidHandle`] naming
/// it); a device that fails (lost, out of memory, timed out, a backend
/// error) is left out and its unfinished instances run on the others; when
/// none is left, a batch fails with [`BackendError::AllDevicesFailed`]
/// naming every device's error (a stream reports it for each instance that
/// did not run). An instance whose resident data was on the failed device
/// cannot move: it reports that device's error.
impl Engine for GraphSet {
    fn spec(&self) -> &GraphSpec {
        &self.spec
    }

    fn instance_size(&self, index: usize, feeds: &[Feed<'_>]) -> Result<u64> {
        self.graph(0)
            .ok_or_else(no_device)?
            .instance_size(index, feeds)
    }

    fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        block_on(self.batch(config, instances, Wait::Block))
    }

    async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        self.batch(config, instances, Wait::Async).await
    }

    fn run_many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        block_on(self.many(config, depth, instances, Wait::Block))
    }

    async fn run_many_async(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        self.many(config, depth, instances, Wait::Async).await
    }
}
