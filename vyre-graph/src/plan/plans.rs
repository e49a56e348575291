//! A graph's launch plans by problem size ([`Plans`]): a run checks its
//! plan out of the cache ([`Checkout`]) and puts it back when it succeeds,
//! so the lock is held only for the lookup and the return, never across a
//! call into wgpu; a plan whose run failed after submission (or panicked)
//! is dropped, never reused.

use std::sync::{Mutex, MutexGuard};

use super::control_block;
use super::launch::LaunchPlan;
use super::program::Program;
use super::sizing::{check, override_grids};
use crate::device::gpu::Gpu;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::plan::PlanCache;

/// The launch plans of one graph, keyed by problem size.
pub(crate) struct Plans {
    /// Plain data behind a lock held only for lookups, inserts and
    /// removals.
    pub(crate) cache: Mutex<PlanCache<LaunchPlan>>,
    /// More plans of sizes the cache already holds: runs of one size in
    /// flight at once (a batch's recorded copies, a stream's depth) each
    /// need a plan, and get them back from here in their steady state. At
    /// most the cache's capacity of them; dropped with the cache when it
    /// is cleared.
    pub(crate) spares: Mutex<Vec<(u64, LaunchPlan)>>,
}

/// Whether `plan` (of size `n`) still has the sizes `program` gives its
/// buffers: an append buffer that grew since makes it too small.
fn is_current(program: &Program, n: u64, plan: &LaunchPlan) -> bool {
    program.spec.buffers.iter().enumerate().all(|(b, spec)| {
        spec.append.is_none() || plan.bytes.get(b) == Some(&program.buffer_bytes(b, n))
    })
}

impl Plans {
    /// An empty cache of at most `capacity` plans.
    pub(crate) fn new(capacity: usize) -> Self {
        Plans {
            cache: Mutex::new(PlanCache::new(capacity)),
            spares: Mutex::new(Vec::new()),
        }
    }

    /// The plan cache. It holds plain data and is only locked for lookups,
    /// inserts and removals; if a thread panicked while holding it anyway,
    /// its plans are dropped (never trusted) and the cache goes on empty.
    pub(crate) fn lock(&self) -> MutexGuard<'_, PlanCache<LaunchPlan>> {
        self.cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            drop(cache.clear());
            drop(std::mem::take(&mut *self.spare_plans()));
            self.cache.clear_poison();
            cache
        })
    }

    /// The spare plans (see [`Plans::spares`]), recovering from a poisoned
    /// lock by dropping them.
    pub(crate) fn spare_plans(&self) -> MutexGuard<'_, Vec<(u64, LaunchPlan)>> {
        self.spares.lock().unwrap_or_else(|poisoned| {
            let mut spares = poisoned.into_inner();
            spares.clear();
            self.spares.clear_poison();
            spares
        })
    }

    /// A spare plan of size `n`, if one is kept whose buffers still have
    /// the sizes `program` gives them (an append buffer that grew since
    /// makes older plans of `n` too small: those are dropped).
    fn take_spare(&self, program: &Program, n: u64) -> Option<LaunchPlan> {
        let mut spares = self.spare_plans();
        let mut stale = Vec::new();
        let mut found = None;
        while let Some(at) = spares.iter().position(|(size, _)| *size == n) {
            let (_, plan) = spares.swap_remove(at);
            if is_current(program, n, &plan) {
                found = Some(plan);
                break;
            }
            stale.push(plan);
        }
        drop(spares);
        drop(stale);
        found
    }

    /// Take the plan of `n` out of the cache, or make one (sized, checked,
    /// then allocated), under this run's budget.
    ///
    /// # Errors
    /// Every sizing, limit and budget error of `sizing.rs`; nothing is
    /// allocated when one is found.
    pub(crate) fn checkout(
        &self,
        gpu: &Gpu,
        program: &Program,
        n: u64,
        config: &DispatchConfig,
    ) -> Result<Checkout<'_>> {
        let cached = {
            let mut cache = self.lock();
            let plan = cache.remove(n);
            let others = cache.len();
            drop(cache);
            // A plan put back by a run that was in flight when another
            // grew an append buffer of `n` is too small now: dropped.
            let plan = plan.filter(|plan| is_current(program, n, plan));
            plan.or_else(|| self.take_spare(program, n))
                .map(|plan| (plan, others))
        };
        let (mut plan, cache_hit, cache_entries) = match cached {
            Some((plan, others)) => (plan, true, others + 1),
            None => {
                let plan = prepare(gpu, program, n, config)?;
                let cache = self.lock();
                let entries = cache.len();
                (plan, false, (entries + 1).min(cache.capacity()))
            }
        };
        if let Err(e) = plan.recheck_budget(gpu, config) {
            // The plan itself is fine: back in the cache for the next run.
            self.lock().insert(n, plan);
            return Err(e);
        }
        Ok(Checkout {
            plans: self,
            n,
            plan,
            cache_hit,
            cache_entries,
        })
    }

    /// Check problem size `n` against every limit a run would check before
    /// allocating (see `Graph::check_problem_size`), allocating nothing.
    ///
    /// # Errors
    /// As `Graph::check_problem_size`.
    pub(crate) fn check_problem_size(
        &self,
        gpu: &Gpu,
        program: &Program,
        n: u64,
        config: &DispatchConfig,
    ) -> Result<()> {
        if n == 0 {
            // Nothing to allocate when the outputs need no run
            // (`run/empty.rs`); refused otherwise.
            return if program.runs_empty() {
                Ok(())
            } else {
                Err(program.zero_problem_size())
            };
        }
        let readback = program
            .host_outputs
            .iter()
            .map(|&b| program.buffer_bytes(b, n))
            .fold(0u64, u64::saturating_add);
        if let Some(limit) = config.max_output_bytes
            && readback > limit
        {
            return Err(BackendError::OutputTooLarge {
                requested: readback,
                limit,
            });
        }
        // A cached plan of `n` passed every size and grid check when it was
        // made: only this config's budget remains to check, with no
        // allocation (a steady-state typed run allocates nothing of ours).
        let cached = self.lock().peek(n).map(|plan| plan.plan);
        match cached {
            Some(mut plan) => {
                plan.device_memory_budget_bytes = config.device_memory_budget_bytes;
                if !plan.fits_budget() {
                    return Err(BackendError::DeviceOutOfMemory {
                        requested: plan.estimated_peak_device_bytes,
                        available: plan.device_memory_budget_bytes,
                    });
                }
            }
            None => {
                check(gpu, program, n, config)?;
            }
        }
        override_grids(gpu, program, n, config).map(drop)
    }
}

impl Plans {
    /// Estimated peak device bytes of a plan of `n` (the cached one's, or
    /// worked out without allocating): how a batch of recorded copies
    /// keeps its live plans within the memory budget.
    ///
    /// # Errors
    /// As [`Plans::check_problem_size`].
    pub(crate) fn plan_bytes(
        &self,
        gpu: &Gpu,
        program: &Program,
        n: u64,
        config: &DispatchConfig,
    ) -> Result<u64> {
        let cached = self.lock().peek(n).map(|plan| plan.plan);
        match cached {
            Some(plan) => Ok(plan.estimated_peak_device_bytes),
            None => Ok(check(gpu, program, n, config)?
                .1
                .estimated_peak_device_bytes),
        }
    }
}

/// A new launch plan for `n`: sized and checked, then allocated, with its
/// control resources.
fn prepare(gpu: &Gpu, program: &Program, n: u64, config: &DispatchConfig) -> Result<LaunchPlan> {
    let (sizing, plan) = check(gpu, program, n, config)?;
    let mut plan = LaunchPlan::build(gpu, program, sizing, plan);
    plan.control = control_block::build(gpu, program, &plan);
    Ok(plan)
}

/// A launch plan checked out of its graph's cache for one run. Dropped
/// without [`Checkout::succeeded`] (an error after submission, or a panic
/// anywhere in the run), it drops the plan: its buffers may be mapped or in
/// use by unfinished work, so the next run of that size builds a fresh one.
pub(crate) struct Checkout<'p> {
    plans: &'p Plans,
    /// The problem size.
    pub(crate) n: u64,
    /// The plan, this run's until it succeeds.
    pub(crate) plan: LaunchPlan,
    /// Whether it came from the cache.
    pub(crate) cache_hit: bool,
    /// Live plans in the cache after the lookup.
    pub(crate) cache_entries: usize,
}

impl Checkout<'_> {
    /// The run succeeded: the plan goes back to the cache. Evicted plans
    /// (and a plan another run cached for the same size meanwhile) are
    /// dropped here, freeing their buffers.
    pub(crate) fn succeeded(self) {
        let (replaced, capacity) = {
            let mut cache = self.plans.lock();
            (cache.insert(self.n, self.plan), cache.capacity())
        };
        // A plan of the same size that another run put back meanwhile is
        // kept as a spare, for the next time two runs of it are in flight.
        for (size, plan) in replaced {
            if size == self.n && capacity > 0 {
                let mut spares = self.plans.spare_plans();
                if spares.len() < capacity {
                    spares.push((size, plan));
                }
            }
        }
    }
}
