//! Many runs of one graph at once: [`Graph::run_batch`] (independent
//! instances in as few submissions as the device allows) and
//! [`Graph::run_many`] (a stream of runs with several in flight).
//!
//! Beside `graph.rs`, on the same level: it uses `Graph`'s run steps and
//! the run layer's batch helpers (`run/batch.rs`); `graph.rs` does not
//! import it. See `docs/batches.md`.

use std::collections::{BTreeMap, VecDeque};

use crate::device::io::Feed;
use crate::device::io::Sink;
use crate::device::map::Waiting;
#[cfg(not(target_arch = "wasm32"))]
use crate::device::map::block_on;
use crate::device::transfer::Stacked;
use crate::graph::Graph;
use crate::run::batch::{
    BatchReport, Instance, host_bytes, of_instance, scatter, shared_error, stackable,
};
use crate::run::encode::Scopes;
use crate::run::encode::encoder;
use crate::run::readback::Scatter;
use crate::run::report::RunReport;
use crate::run::started::{EncoderUse, Io, Started};
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};

/// Each instance's result so far (`None`: not run yet).
type Results = Vec<Option<Result<RunReport>>>;

impl Graph {
    /// Run independent `instances` of the graph's problem, each with its own
    /// size, feeds and sinks, in as few submissions as the device allows,
    /// and report each instance's result in order.
    ///
    /// Every instance is checked (size, feeds, sinks, limits) before
    /// anything runs. Then:
    /// - when the graph is *stackable* (`graph!` found every node
    ///   element-wise over `n` with every buffer exactly `n` elements; see
    ///   [`ScheduleSpec::stackable`](crate::spec::ScheduleSpec::stackable)),
    ///   the host-fed instances of one size `n` run as **one run** of size
    ///   `B × n` through the plan cache: their inputs gathered one after
    ///   another, the outputs of the one read-back scattered to each
    ///   instance's sinks;
    /// - every other instance (a graph that is not stackable, or an
    ///   instance with resident feeds or sinks) runs as a recorded copy
    ///   with its own launch plan, all of them recorded into one encoder
    ///   and submitted once, read back after one wait.
    ///
    /// A batch the device cannot hold at once (binding sizes, grids, the
    /// memory budget of `config`, `max_output_bytes`, the plan cache's
    /// capacity for recorded copies) is split into the largest chunks that
    /// fit, each its own submission: never a device error.
    /// [`BatchReport::chunks`] says how many.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, xs: &[Vec<u32>]) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Instance, Sink};
    /// let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    /// let mut instances: Vec<Instance> = xs
    ///     .iter()
    ///     .zip(&mut ys)
    ///     .map(|(x, y)| Instance::new(x.len() as u64, vec![Feed::Host(bytemuck::cast_slice(x))], vec![Sink::from(y)]))
    ///     .collect();
    /// let report = graph.run_batch(&DispatchConfig::default(), &mut instances)?;
    /// for run in report.runs {
    ///     run?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`BackendError::BatchInstance`] naming the first instance that fails
    /// its checks (any error of [`Graph::run`]'s checks, a problem size of
    /// 0 included), before anything runs. Errors after submission are the
    /// failing instances' own, in [`BatchReport::runs`].
    ///
    /// Not on wasm32: use [`Graph::run_batch_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_batch(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        let _count = instances.len();
        let batch = self.batch_with(config, instances, Waiting::Block(config.timeout));
        block_on(
            instrument!(batch, "run_batch", graph = %self.program.spec.name, instances = _count),
        )
    }

    /// As [`Graph::run_batch`], as a future that never blocks the thread
    /// (the way to run a batch in a browser): the same stacked runs and
    /// recorded copies, each chunk's results awaited instead of waited for;
    /// [`DispatchConfig::timeout`] does not apply (see
    /// [`Graph::run_async`]).
    ///
    /// ```no_run
    /// # async fn f(graph: &vyre_graph::Graph, xs: &[Vec<u32>]) -> vyre_graph::Result<()> {
    /// use vyre_graph::{DispatchConfig, Feed, Instance, Sink};
    /// let mut ys: Vec<Vec<u32>> = vec![Vec::new(); xs.len()];
    /// let mut instances: Vec<Instance> = xs
    ///     .iter()
    ///     .zip(&mut ys)
    ///     .map(|(x, y)| Instance::new(x.len() as u64, vec![Feed::Host(bytemuck::cast_slice(x))], vec![Sink::from(y)]))
    ///     .collect();
    /// let report = graph.run_batch_async(&DispatchConfig::default(), &mut instances).await?;
    /// for run in report.runs {
    ///     run?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Graph::run_batch`].
    pub async fn run_batch_async(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
    ) -> Result<BatchReport> {
        let _count = instances.len();
        let batch = self.batch_with(config, instances, Waiting::Async);
        instrument!(batch, "run_batch_async", graph = %self.program.spec.name, instances = _count)
            .await
    }

    /// [`Graph::run_batch`] and [`Graph::run_batch_async`], waiting as
    /// `waiting` says (a blocking batch is ready at its first poll).
    async fn batch_with(
        &self,
        config: &DispatchConfig,
        instances: &mut [Instance<'_>],
        waiting: Waiting,
    ) -> Result<BatchReport> {
        self.check_batch(instances, config)?;
        let mut report = BatchReport {
            runs: Vec::new(),
            submissions: 0,
            chunks: 0,
            stacked: 0,
        };
        let mut results: Results = instances.iter().map(|_| None).collect();
        // Instances of size 0 passed their checks, so their outputs need
        // no run: answered as `Graph::run` answers them.
        for (index, instance) in instances.iter_mut().enumerate() {
            if instance.n == 0 {
                let Instance { feeds, sinks, .. } = instance;
                let run = self.run_with(config, 0, feeds, sinks, waiting).await;
                if let Some(result) = results.get_mut(index) {
                    *result = Some(run.map_err(|e| of_instance(index, e)));
                }
            }
        }
        if stackable(&self.program) {
            let mut groups: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
            for (index, instance) in instances.iter().enumerate() {
                if instance.host_only() && results.get(index).is_some_and(Option::is_none) {
                    groups.entry(instance.n).or_default().push(index);
                }
            }
            for (n, indices) in groups {
                let mut rest = &indices[..];
                while !rest.is_empty() {
                    let (chunk, tail) = rest.split_at(self.stack_fits(n, rest.len(), config));
                    let stack = Stack { n, chunk, waiting };
                    self.run_stacked(stack, instances, config, &mut results, &mut report)
                        .await;
                    rest = tail;
                }
            }
        }
        let mut rest: Vec<usize> = (0..instances.len())
            .filter(|&i| results.get(i).is_some_and(Option::is_none))
            .collect();
        while !rest.is_empty() {
            let count = self.copies_fit(&rest, instances, config);
            let tail = rest.split_off(count);
            let copies = Copies {
                chunk: &rest,
                waiting,
            };
            self.run_copies(copies, instances, config, &mut results, &mut report)
                .await;
            rest = tail;
        }
        report.runs = results
            .into_iter()
            .enumerate()
            .map(|(index, r)| {
                r.unwrap_or_else(|| {
                    Err(of_instance(
                        index,
                        BackendError::DispatchFailed {
                            reason: "the instance was not run (a bug in vyre: please report it)"
                                .into(),
                        },
                    ))
                })
            })
            .collect();
        Ok(report)
    }

    /// [`Graph::infer_problem_size`] for instance `index` of a batch: its
    /// error names the instance. The typed `run_batch` of `graph!` finds
    /// each instance's size with it.
    ///
    /// # Errors
    /// [`BackendError::BatchInstance`] around the error of
    /// [`Graph::infer_problem_size`].
    pub fn instance_size(&self, index: usize, feeds: &[crate::Feed<'_>]) -> Result<u64> {
        self.infer_problem_size(feeds)
            .map_err(|e| of_instance(index, e))
    }

    /// Every instance's checks, before anything of the batch runs.
    fn check_batch(&self, instances: &[Instance<'_>], config: &DispatchConfig) -> Result<()> {
        for (index, instance) in instances.iter().enumerate() {
            self.check_instance(index, instance, config)?;
        }
        Ok(())
    }

    /// The checks of [`Graph::run_batch`] for one instance, at position
    /// `index` of its batch (a device set checks each instance on every
    /// device that may run it).
    pub(crate) fn check_instance(
        &self,
        index: usize,
        instance: &Instance<'_>,
        config: &DispatchConfig,
    ) -> Result<()> {
        self.program
            .check_run(
                &self.gpu,
                instance.n,
                &instance.feeds,
                &instance.sinks,
                config,
            )
            .and_then(|_| self.check_problem_size(config, instance.n))
            .map_err(|e| of_instance(index, e))
    }

    /// The most of `count` instances of size `n` that one stacked run can
    /// hold: every size, grid, budget and read-back limit checked for the
    /// stacked size, allocating nothing (at least 1: each instance passed
    /// them alone).
    fn stack_fits(&self, n: u64, count: usize, config: &DispatchConfig) -> usize {
        let fits = |b: usize| {
            (b as u64)
                .checked_mul(n)
                .is_some_and(|total| self.check_problem_size(config, total).is_ok())
        };
        if fits(count) {
            return count;
        }
        let (mut good, mut bad) = (1usize, count);
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if fits(mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        good
    }

    /// One stacked run of the instances `chunk` (all of size `n`): one run
    /// of `B × n` through the ordinary steps, each instance's host input
    /// uploaded at its offset straight into the plan's upload path, each
    /// instance's part of the one read-back copied straight from the mapped
    /// buffer into its sinks. Each instance gets the run's report with its
    /// own `n`.
    async fn run_stacked(
        &self,
        stack: Stack<'_>,
        instances: &mut [Instance<'_>],
        config: &DispatchConfig,
        results: &mut Results,
        report: &mut BatchReport,
    ) {
        let Stack { n, chunk, waiting } = stack;
        let mut picked = pick(instances, chunk);
        let program = &self.program;
        let stacked: Vec<Vec<&[u8]>> = (0..program.host_inputs.len())
            .map(|j| picked.iter().map(|i| host_bytes(&i.feeds[j])).collect())
            .collect();
        let feeds = vec![Feed::Host(&[]); stacked.len()];
        // An output every instance skips is skipped by the stacked run too.
        let sinks: Vec<Sink<'_>> = (0..program.host_outputs.len())
            .map(
                |k| match picked.iter().all(|i| matches!(i.sinks[k], Sink::Skip)) {
                    true => Sink::Skip,
                    false => Sink::Host(&mut []),
                },
            )
            .collect();
        let mut scatter = scatter(program, n, &mut picked);
        let total = n * chunk.len() as u64;
        let ran = self
            .run_stack(
                total,
                &feeds,
                sinks,
                &stacked,
                &mut scatter,
                config,
                waiting,
            )
            .await;
        report.chunks += 1;
        match ran {
            Ok(run) => {
                report.submissions += run.submissions;
                report.stacked += chunk.len();
                for &index in chunk {
                    let mut own = run.clone();
                    own.n = n;
                    set(results, index, Ok(own));
                }
            }
            Err(error) => {
                report.submissions += 1;
                for (&index, result) in chunk.iter().zip(shared_error(chunk, error)) {
                    set(results, index, result);
                }
            }
        }
    }

    /// The steps of [`Graph::run`] for a stacked run of size `total`:
    /// check, plan, bind (`stacked`: each host input's instance bytes),
    /// encode, one submission, one read-back into `scatter`, waiting as
    /// `waiting` says.
    #[allow(clippy::too_many_arguments)]
    async fn run_stack(
        &self,
        total: u64,
        feeds: &[Feed<'_>],
        mut sinks: Vec<Sink<'_>>,
        stacked: &Stacked<'_>,
        scatter: &mut Scatter<'_, '_>,
        config: &DispatchConfig,
        waiting: Waiting,
    ) -> Result<RunReport> {
        let io = Io {
            feeds,
            sinks: &sinks,
            stacked: Some(stacked),
        };
        let submitted = self.submit_one(total, io, config).await?;
        let read = submitted.finish(&mut sinks, Some(scatter), config, waiting);
        read.await
    }

    /// How many of the instances `rest` (in order) one submission of
    /// recorded copies holds: at most the plan cache's capacity (so a
    /// steady batch reuses its plans) and, with a memory budget, plans
    /// whose estimated bytes sum to at most the budget (at least one).
    fn copies_fit(
        &self,
        rest: &[usize],
        instances: &[Instance<'_>],
        config: &DispatchConfig,
    ) -> usize {
        let most = self.plans.lock().capacity().max(1).min(rest.len());
        let budget = config.device_memory_budget_bytes;
        if budget == 0 {
            return most;
        }
        let mut used = 0u64;
        for (count, &index) in rest.iter().take(most).enumerate() {
            let n = instances[index].n;
            let bytes = self
                .plans
                .plan_bytes(&self.gpu, &self.program, n, config)
                .unwrap_or(u64::MAX);
            used = used.saturating_add(bytes);
            if used > budget && count > 0 {
                return count;
            }
        }
        most
    }

    /// The instances `chunk` as recorded copies: each with its own plan,
    /// all recorded into one encoder, one submission, one wait.
    async fn run_copies(
        &self,
        copies: Copies<'_>,
        instances: &mut [Instance<'_>],
        config: &DispatchConfig,
        results: &mut Results,
        report: &mut BatchReport,
    ) {
        let Copies { chunk, waiting } = copies;
        let scope = self.gpu.catch_errors();
        let mut encoder = encoder(&self.gpu, &self.program, config);
        let mut started = Vec::with_capacity(chunk.len());
        for &index in chunk {
            let Some(instance) = instances.get(index) else {
                continue;
            };
            let io = Io {
                feeds: &instance.feeds,
                sinks: &instance.sinks,
                stacked: None,
            };
            match self.start(
                &mut encoder,
                instance.n,
                io,
                config,
                Scopes::default(),
                EncoderUse::Shared,
            ) {
                Ok(run) => started.push((index, run)),
                Err(e) => set(results, index, Err(of_instance(index, e))),
            }
        }
        if started.is_empty() {
            // Popped before the await: nothing else may push or pop between.
            drop(scope.pop().await);
            return;
        }
        let submission = {
            let _span = enter!("submit");
            self.gpu.submit(encoder.finish())
        };
        report.chunks += 1;
        report.submissions += 1;
        if let Some(error) = scope.pop().await {
            let indices: Vec<usize> = started.iter().map(|(i, _)| *i).collect();
            drop(started);
            let error = BackendError::DispatchFailed {
                reason: error.to_string(),
            };
            for (&index, result) in indices.iter().zip(shared_error(&indices, error)) {
                set(results, index, result);
            }
            return;
        }
        for (index, mut run) in started {
            run.report.submissions = 1;
            let wait = waiting.wait(submission.clone());
            let Some(instance) = instances.get_mut(index) else {
                continue;
            };
            let sinks = &mut instance.sinks;
            let read = run.read_back(sinks, None, config.profile, wait).await;
            if let Ok(run) = &read {
                report.submissions += run.submissions.saturating_sub(1);
            }
            set(results, index, read.map_err(|e| of_instance(index, e)));
        }
    }

    /// Run `instances` one after another as a stream, keeping up to `depth`
    /// of them in flight (at least 1): run `k + 1` is checked, uploaded and
    /// submitted before run `k` is waited for, so uploads, kernels and
    /// read-backs of consecutive runs overlap. Results come in order, one
    /// per instance; an error is that run's own (naming the instance), and
    /// the stream goes on with the next. Runs of one size in flight at once
    /// each have a launch plan, kept between streams (`depth` plans per
    /// size in the steady state).
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, mut instances: Vec<vyre_graph::Instance<'_>>) {
    /// use vyre_graph::DispatchConfig;
    /// for (k, result) in graph.run_many(&DispatchConfig::default(), 3, &mut instances).into_iter().enumerate() {
    ///     if let Err(e) = result {
    ///         eprintln!("run {k}: {e}");
    ///     }
    /// }
    /// # }
    /// ```
    ///
    /// The calling thread waits for each run's own submission (the later
    /// runs stay queued on the device meanwhile), for at most
    /// [`DispatchConfig::timeout`] each; no device poller thread is
    /// involved. At depth 1, or for a single run, the runs are plain
    /// blocking runs, one after another.
    ///
    /// `depth` is what the stream may keep in flight:
    /// [`DispatchConfig::stream_depth`] picks the depth per adapter (by
    /// default one run at a time on a CPU adapter, where overlapping runs
    /// was measured slower than sequential runs; see
    /// [`Graph::stream_depth`]). A run that overflowed a `grow` append
    /// buffer runs once more after the growth, as the typed `run` does,
    /// when its sinks can take the grown size (vectors can; a host slice
    /// sized for the old capacity keeps the overflow).
    ///
    /// Not on wasm32: use [`Graph::run_many_async`].
    #[must_use = "each run's result says whether it succeeded"]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_many(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        let _count = instances.len();
        let waiting = Waiting::Block(config.timeout);
        let stream = self.many_with(config, depth, instances, waiting);
        block_on(
            instrument!(stream, "run_many", graph = %self.program.spec.name, instances = _count, depth),
        )
    }

    /// As [`Graph::run_many`], as a future that never blocks the thread
    /// (the way to stream runs in a browser): up to `depth` runs submitted
    /// ahead, each run's results awaited in order;
    /// [`DispatchConfig::timeout`] does not apply (see
    /// [`Graph::run_async`]).
    ///
    /// ```no_run
    /// # async fn f(graph: &vyre_graph::Graph, mut instances: Vec<vyre_graph::Instance<'_>>) {
    /// use vyre_graph::DispatchConfig;
    /// let results = graph.run_many_async(&DispatchConfig::default(), 3, &mut instances).await;
    /// for (k, result) in results.into_iter().enumerate() {
    ///     if let Err(e) = result {
    ///         eprintln!("run {k}: {e}");
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn run_many_async(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
    ) -> Vec<Result<RunReport>> {
        let _count = instances.len();
        let stream = self.many_with(config, depth, instances, Waiting::Async);
        instrument!(stream, "run_many_async", graph = %self.program.spec.name, instances = _count, depth).await
    }

    /// [`Graph::run_many`] and [`Graph::run_many_async`], waiting as
    /// `waiting` says (a blocking stream is ready at its first poll).
    async fn many_with(
        &self,
        config: &DispatchConfig,
        depth: usize,
        instances: &mut [Instance<'_>],
        waiting: Waiting,
    ) -> Vec<Result<RunReport>> {
        let depth = self.stream_depth(depth, config);
        if depth == 1 || instances.len() == 1 {
            // Nothing to overlap: plain runs, one after another (blocking
            // ones with no device poller).
            let mut results = Vec::with_capacity(instances.len());
            for (index, i) in instances.iter_mut().enumerate() {
                let ran = self
                    .run_with(config, i.n, &i.feeds, &mut i.sinks, waiting)
                    .await;
                let ran = self.again_if_grown(i, ran, config, waiting).await;
                results.push(ran.map_err(|e| of_instance(index, e)));
            }
            return results;
        }
        let mut results: Results = instances.iter().map(|_| None).collect();
        let mut in_flight: VecDeque<(usize, Submitted<'_>)> = VecDeque::with_capacity(depth);
        for index in 0..instances.len() {
            let Some(instance) = instances.get_mut(index) else {
                break;
            };
            // Size 0: nothing to overlap; `Graph::run` answers it (or
            // refuses it) at once.
            if instance.n == 0 {
                let Instance { feeds, sinks, .. } = instance;
                let ran = self.run_with(config, 0, feeds, sinks, waiting).await;
                set(&mut results, index, ran);
                continue;
            }
            // Check, plan, upload, record and submit run `k + 1` ...
            let Instance { n, feeds, sinks } = &*instance;
            let io = Io {
                feeds,
                sinks,
                stacked: None,
            };
            match self.submit_one(*n, io, config).await {
                Ok(submitted) => in_flight.push_back((index, submitted)),
                Err(e) => set(&mut results, index, Err(e)),
            }
            // ... then wait for the oldest run's own submission only, so
            // the later runs' work stays queued behind it.
            while in_flight.len() >= depth {
                if let Some((k, submitted)) = in_flight.pop_front() {
                    let ran = self.finish_streamed(k, submitted, instances, config, waiting);
                    set(&mut results, k, ran.await);
                }
            }
        }
        for (k, submitted) in in_flight {
            let ran = self.finish_streamed(k, submitted, instances, config, waiting);
            set(&mut results, k, ran.await);
        }
        results
            .into_iter()
            .enumerate()
            .map(|(index, r)| {
                r.unwrap_or_else(|| {
                    Err(BackendError::DispatchFailed {
                        reason: "the run was not started (a bug in vyre: please report it)".into(),
                    })
                })
                .map_err(|e| of_instance(index, e))
            })
            .collect()
    }
}

impl Graph {
    /// The runs a stream keeps in flight when asked for `asked`: as
    /// [`DispatchConfig::stream_depth`] says for this graph's adapter (on
    /// a CPU adapter, by default, one; see
    /// [`StreamDepth`](crate::StreamDepth)).
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph) {
    /// use vyre_graph::{DispatchConfig, StreamDepth};
    /// let asked = DispatchConfig::default().with_stream_depth(StreamDepth::Asked);
    /// assert_eq!(graph.stream_depth(3, &asked), 3);
    /// # }
    /// ```
    #[must_use]
    pub fn stream_depth(&self, asked: usize, config: &DispatchConfig) -> usize {
        config
            .stream_depth
            .depth(asked, self.gpu.adapter().device_type)
    }

    /// A run of a stream that overflowed a `grow` append buffer whose
    /// capacity has grown since (by this run, or by an earlier one of the
    /// same size that was in flight with it) runs once more, as the typed
    /// `run` repeats it: so a stream whose append output grows at a new
    /// size returns every run's items, not an overflow for each run that
    /// was already in flight. Sinks that cannot take the grown size (a
    /// host slice sized for the old capacity) keep the overflow.
    async fn again_if_grown(
        &self,
        instance: &mut Instance<'_>,
        ran: Result<RunReport>,
        config: &DispatchConfig,
        waiting: Waiting,
    ) -> Result<RunReport> {
        let Instance { n, feeds, sinks } = instance;
        match ran {
            Err(e)
                if self.program.grew_for(&e, *n)
                    && self
                        .program
                        .check_io(&self.gpu, *n, feeds, sinks, config)
                        .is_ok() =>
            {
                self.run_with(config, *n, feeds, sinks, waiting).await
            }
            other => other,
        }
    }

    /// Step 6 of stream run `k` (`submitted`), into instance `k`'s sinks,
    /// then once more if it overflowed a `grow` buffer that has grown
    /// ([`Graph::again_if_grown`]).
    async fn finish_streamed(
        &self,
        k: usize,
        submitted: Submitted<'_>,
        instances: &mut [Instance<'_>],
        config: &DispatchConfig,
        waiting: Waiting,
    ) -> Result<RunReport> {
        let Some(instance) = instances.get_mut(k) else {
            return Err(BackendError::DispatchFailed {
                reason: "a stream run lost its instance (a bug in vyre: please report it)".into(),
            });
        };
        let ran = submitted
            .finish(&mut instance.sinks, None, config, waiting)
            .await;
        self.again_if_grown(instance, ran, config, waiting).await
    }

    /// Steps 1 to 5 of one run (of a stream, or a stacked run): check,
    /// plan, bind, encode and submit, as [`Graph::run`] does, leaving the
    /// read-back for later.
    async fn submit_one<'g>(
        &'g self,
        n: u64,
        io: Io<'_, '_>,
        config: &DispatchConfig,
    ) -> Result<Submitted<'g>> {
        let scope = self.gpu.catch_errors();
        let mut encoder = encoder(&self.gpu, &self.program, config);
        let started = self.start(
            &mut encoder,
            n,
            io,
            config,
            Scopes::default(),
            EncoderUse::Own,
        );
        let started = started.map(|mut run| {
            let submission = run.submit(encoder);
            (run, submission)
        });
        // Popped before the await: nothing else may push or pop between.
        let error = scope.pop();
        let (run, submission) = started?;
        if let Some(error) = error.await {
            return Err(BackendError::DispatchFailed {
                reason: error.to_string(),
            });
        }
        Ok(Submitted { run, submission })
    }
}

/// A run submitted and not yet read back.
struct Submitted<'g> {
    run: Started<'g>,
    submission: wgpu::SubmissionIndex,
}

impl Submitted<'_> {
    /// Step 6: wait for this run's own submission as `waiting` says
    /// (blocking for at most the config's timeout, or through the future)
    /// and read its outputs back into the sinks (and a stacked run's
    /// scatter).
    async fn finish(
        self,
        sinks: &mut [Sink<'_>],
        scatter: Option<&mut Scatter<'_, '_>>,
        config: &DispatchConfig,
        waiting: Waiting,
    ) -> Result<RunReport> {
        let wait = waiting.wait(self.submission);
        self.run
            .read_back(sinks, scatter, config.profile, wait)
            .await
    }
}

/// One stacked run of a batch: instances `chunk`, all of size `n`.
#[derive(Clone, Copy)]
struct Stack<'c> {
    n: u64,
    chunk: &'c [usize],
    waiting: Waiting,
}

/// One submission of recorded copies of a batch: instances `chunk`.
#[derive(Clone, Copy)]
struct Copies<'c> {
    chunk: &'c [usize],
    waiting: Waiting,
}

/// Instance `index`'s result.
fn set(results: &mut Results, index: usize, result: Result<RunReport>) {
    if let Some(slot) = results.get_mut(index) {
        *slot = Some(result);
    }
}

/// The instances at `indices` (ascending), borrowed mutably together.
fn pick<'i, 'a>(instances: &'i mut [Instance<'a>], indices: &[usize]) -> Vec<&'i mut Instance<'a>> {
    let mut wanted = indices.iter().peekable();
    instances
        .iter_mut()
        .enumerate()
        .filter_map(|(i, instance)| {
            (wanted.peek() == Some(&&i)).then(|| {
                wanted.next();
                instance
            })
        })
        .collect()
}
