//! Append buffers' capacities on the host side: the capacity of a buffer
//! declared `grow` raised for a problem size after a run overflowed it
//! ([`Grown`]), within the device's storage limit and the run's budget, and
//! the sizes of buffers that follow from it. The device side (counts reset,
//! overflow status) is `control.rs`, reading counts back `run/`'s.

use super::control_block::capacity;
use super::launch::LaunchPlan;
use super::program::Program;
use super::sizing::storage_limit;
use crate::device::gpu::Gpu;
use crate::spec::error::BackendError;

/// The capacity `grow` gives an append buffer that received `count` items:
/// a quarter more, so that a count that creeps up does not grow every run.
fn grown_capacity(count: u64) -> u64 {
    count.saturating_add(count / 4).max(1)
}

/// The most items append buffer `b` may hold after a run of `plan`
/// overflowed it, then the limit that says so (its name and bytes): the
/// device's storage limit for the buffer itself, or the run's memory budget
/// (when it has one) for the whole plan, where each item costs its bytes in
/// the buffer and, for an output, in its readback buffer too.
fn growth_limit(
    gpu: &Gpu,
    program: &Program,
    plan: &LaunchPlan,
    b: usize,
) -> (u64, &'static str, u64) {
    let spec = &program.spec.buffers[b];
    let element = u64::from(spec.element_size.max(1));
    let (name, max) = storage_limit(gpu.limits());
    let items = max.saturating_sub(u64::from(spec.header_bytes)) / element;
    let budget = plan.plan.device_memory_budget_bytes;
    if budget > 0 {
        let copies = 1 + u64::from(program.host_outputs.contains(&b));
        let room = budget.saturating_sub(plan.plan.estimated_peak_device_bytes);
        let within =
            capacity(program, plan, b).saturating_add(room / element.saturating_mul(copies));
        if within < items {
            return (within, "this run's `device_memory_budget_bytes`", budget);
        }
    }
    (items, name, max)
}

impl Program {
    /// After `error` in a run of `plan`: when it is an overflow of a `grow`
    /// buffer, grows that buffer's capacity for the plan's size and says
    /// so. A capacity only grows: another run's larger growth at this size
    /// stays. The growth stops at the device's storage limit and the run's
    /// budget; when even they cannot hold the count, nothing grows and the
    /// error names the limit.
    pub(crate) fn grow_on(&self, gpu: &Gpu, plan: &LaunchPlan, error: &mut BackendError) -> bool {
        let BackendError::AppendOverflow {
            buffer,
            count,
            limit,
            ..
        } = error
        else {
            return false;
        };
        let Some(b) = self.spec.buffer_index(buffer) else {
            return false;
        };
        match self.grow(gpu, plan, b, *count) {
            Ok(grew) => grew,
            Err(stop) => {
                *limit = Some(stop);
                false
            }
        }
    }

    /// After a run of `plan` that overflowed: grows every `grow` buffer
    /// among `overflowed` (buffer, count) that its limits let grow, so
    /// that one repeat fits them all, not only the one the error names.
    pub(crate) fn grow_each(&self, gpu: &Gpu, plan: &LaunchPlan, overflowed: &[(usize, u64)]) {
        for &(b, count) in overflowed {
            let _ = self.grow(gpu, plan, b, count);
        }
    }

    /// Grows append buffer `b` to hold `count` items at the plan's size
    /// when it is declared `grow`: `Ok(true)` when it grew, `Ok(false)`
    /// when it is not a `grow` buffer, `Err` with the limit (its name and
    /// bytes) that cannot hold `count`.
    fn grow(
        &self,
        gpu: &Gpu,
        plan: &LaunchPlan,
        b: usize,
        count: u64,
    ) -> Result<bool, (&'static str, u64)> {
        if !self.spec.buffers[b].append.is_some_and(|a| a.grow) {
            return Ok(false);
        }
        let (most, name, max) = growth_limit(gpu, self, plan, b);
        if count > most {
            return Err((name, max));
        }
        // Never below what another run of this size already grew it to
        // (runs of a stream or of `run_async` in flight together each
        // overflow the old capacity, with counts in any order).
        let before = self.grown.get(plan.n, b).unwrap_or(0);
        self.grown
            .set(plan.n, b, grown_capacity(count).max(before).min(most));
        Ok(true)
    }

    /// Whether `error`, from a run of problem size `n`, is an overflow of
    /// an append buffer declared `grow` whose capacity for `n` has since
    /// grown to hold the count (see `Graph::grew_for`).
    pub(crate) fn grew_for(&self, error: &BackendError, n: u64) -> bool {
        let BackendError::AppendOverflow { buffer, count, .. } = error else {
            return false;
        };
        let Some(b) = self.spec.buffer_index(buffer) else {
            return false;
        };
        self.spec.buffers[b].append.is_some_and(|a| a.grow) && self.buffer_elements(b, n) >= *count
    }
}
