//! Learned loop bounds: how many iterations of each `repeat up to K ..
//! until ..` loop a run records ([`LoopBound::Learned`]), learned per
//! problem size from the iterations the last runs needed ([`Trips`]), and
//! the order a submission records the dispatches in when loops are
//! recorded in part ([`walk`]).
//!
//! The policy: a loop needs `t` iterations when it stopped after `t` (the
//! exit after the `t`-th finds the condition met), `K` when it did not
//! stop. A run at size `n` records `m = min(K, max(FLOOR, ceil(1.25 *
//! p) + 2))` iterations, `p` the most any of the last [`HISTORY`] runs at
//! `n` needed; the first run at a size records `min(K, FIRST)`. A loop
//! that has not stopped after them holds the run (its exit, see
//! `steps.rs`); the run continues it in a further submission from the
//! device's state with as many iterations again as it has recorded
//! (doubling), never past `K`.

use std::sync::{Mutex, PoisonError};

use smallvec::SmallVec;

use super::steps::Steps;
use crate::spec::config::LoopBound;

/// The runs per size and loop whose needs decide the next bound.
pub(crate) const HISTORY: usize = 4;
/// The fewest iterations a learned bound records.
pub(crate) const FLOOR: u32 = 4;
/// Iterations recorded by the first run at a size.
pub(crate) const FIRST: u32 = 8;
/// Sizes remembered per graph (the oldest is forgotten first).
const SIZES: usize = 64;

/// Per loop, iterations: small for every graph with a few loops.
pub(crate) type PerLoop = SmallVec<[u32; 4]>;

/// What one loop needed in the last runs at one size, oldest first.
type Needs = SmallVec<[u32; HISTORY]>;

/// The iterations each loop needed in the last runs, by problem size.
#[derive(Debug, Default)]
pub(crate) struct Trips(Mutex<Vec<(u64, Vec<Needs>)>>);

impl Trips {
    /// The iterations to record of each loop (`ks`: each loop's `K`) in a
    /// run at size `n`.
    pub(crate) fn bounds(&self, n: u64, ks: impl Iterator<Item = u32>) -> PerLoop {
        let trips = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let history = trips.iter().find(|(m, _)| *m == n).map(|(_, h)| h);
        ks.enumerate()
            .map(|(l, k)| match history.and_then(|h| h.get(l)) {
                Some(needs) if !needs.is_empty() => bound(needs, k),
                _ => FIRST.min(k),
            })
            .collect()
    }

    /// A run at size `n` needed `needs` iterations of each loop.
    pub(crate) fn learn(&self, n: u64, needs: impl Iterator<Item = u32>) {
        let mut trips = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match trips.iter().position(|(m, _)| *m == n) {
            Some(at) => at,
            None => {
                if trips.len() >= SIZES {
                    trips.remove(0);
                }
                trips.push((n, Vec::new()));
                trips.len() - 1
            }
        };
        let history = &mut trips[at].1;
        for (l, need) in needs.enumerate() {
            if history.len() <= l {
                history.resize(l + 1, SmallVec::new());
            }
            let runs = &mut history[l];
            if runs.len() == HISTORY {
                runs.remove(0);
            }
            runs.push(need);
        }
    }
}

/// The learned bound of a loop of `k` iterations that needed `needs` in
/// its last runs.
pub(crate) fn bound(needs: &[u32], k: u32) -> u32 {
    let peak = needs.iter().copied().max().unwrap_or(0);
    let margin = peak.saturating_add(peak.div_ceil(4)).saturating_add(2);
    margin.max(FLOOR).min(k)
}

/// How one run records its loops: the iterations each submission records of
/// each loop, those recorded so far, and where the next submission starts.
#[derive(Debug, Default)]
pub(crate) struct Trip {
    /// Per loop, the iterations the next submission records (`K`: all).
    pub(crate) budget: PerLoop,
    /// Per loop, the iterations recorded so far (the ones that may run;
    /// all `K` from the start when the run records loops whole).
    pub(crate) done: PerLoop,
    /// The dispatch the next submission starts at.
    pub(crate) from: usize,
    /// Whether loops may be recorded in part (else the run is one
    /// submission of every dispatch).
    pub(crate) partial: bool,
}

/// One thing a submission records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// A dispatch, with its control dispatches before it.
    Dispatch(usize),
    /// The exit of a loop recorded in part.
    Exit(usize),
}

impl Trip {
    /// The trip of a run of `steps` whose loops have `ks` iterations:
    /// `bounds` recorded of each when `bound` is learned and the graph
    /// allows it, else every one.
    pub(crate) fn new(steps: &Steps, bound: LoopBound, bounds: Option<PerLoop>) -> Self {
        let ks: PerLoop = steps.loops.iter().map(|l| l.k()).collect();
        let partial = steps.partial && bound == LoopBound::Learned;
        let budget = match bounds {
            Some(b) if partial => b.iter().zip(&ks).map(|(&b, &k)| b.max(1).min(k)).collect(),
            _ => ks.clone(),
        };
        // Recorded whole: every iteration, in the one submission.
        let done = if partial {
            ks.iter().map(|_| 0).collect()
        } else {
            ks.clone()
        };
        Trip {
            done,
            budget,
            from: 0,
            partial,
        }
    }

    /// After a submission that loop `l` held: the next one starts at its
    /// next iteration and records as many again as it has (doubling, never
    /// past `K`); the loops after it start again from their first
    /// iteration. `false` when the loop cannot go on (a bug: then the run
    /// reports what it has).
    pub(crate) fn resume(&mut self, steps: &Steps, l: usize) -> bool {
        let Some(layout) = steps.loops.get(l) else {
            return false;
        };
        let done = self.done[l];
        if !self.partial || done == 0 || done >= layout.k() {
            return false;
        }
        self.from = layout.start(done);
        self.budget[l] = done.max(FLOOR);
        for (m, other) in steps.loops.iter().enumerate() {
            if other.start(0) > self.from {
                self.done[m] = 0;
            }
        }
        true
    }
}

/// Calls `f` on everything the next submission of `trip` records, in
/// order, from `trip.from`: every dispatch, but of each loop only the
/// iterations its budget allows, followed by its exit when that leaves
/// some out. Updates `trip.done`.
pub(crate) fn walk(steps: &Steps, count: usize, trip: &mut Trip, mut f: impl FnMut(Item)) {
    if !trip.partial {
        (trip.from..count).for_each(|d| f(Item::Dispatch(d)));
        return;
    }
    let mut d = trip.from;
    while d < count {
        let Some(l) = steps.dispatch_loop.get(d).copied().flatten() else {
            f(Item::Dispatch(d));
            d += 1;
            continue;
        };
        let layout = &steps.loops[l];
        let k = layout.k();
        let first = trip.done[l];
        let last = first.saturating_add(trip.budget[l]).min(k);
        (layout.start(first)..layout.start(last)).for_each(|d| f(Item::Dispatch(d)));
        trip.done[l] = last;
        if last < k {
            f(Item::Exit(l));
        }
        d = layout.start(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_peak_of_the_last_runs_with_a_margin_within_floor_and_k() {
        assert_eq!(bound(&[11], 64), 16);
        assert_eq!(bound(&[7, 11, 9], 64), 16);
        assert_eq!(bound(&[0], 64), FLOOR);
        assert_eq!(bound(&[3], 10), 6);
        assert_eq!(bound(&[9], 10), 10);
        assert_eq!(bound(&[64], 64), 64);
        assert_eq!(bound(&[u32::MAX], 64), 64);
    }

    #[test]
    fn sizes_learn_apart_and_forget_the_oldest_runs() {
        let trips = Trips::default();
        assert_eq!(trips.bounds(10, [64, 3].into_iter()).as_slice(), &[8, 3]);
        trips.learn(10, [20, 1].into_iter());
        assert_eq!(trips.bounds(10, [64, 3].into_iter()).as_slice(), &[27, 3]);
        assert_eq!(trips.bounds(11, [64, 3].into_iter()).as_slice(), &[8, 3]);
        for _ in 0..HISTORY {
            trips.learn(10, [2, 1].into_iter());
        }
        // 2 + 1 + 2: the 20 is forgotten after 4 runs.
        assert_eq!(trips.bounds(10, [64, 3].into_iter()).as_slice(), &[5, 3]);
        for n in 0..(SIZES as u64 + 1) {
            trips.learn(1000 + n, [30].into_iter());
        }
        assert_eq!(
            trips.bounds(10, [64].into_iter()).as_slice(),
            &[8],
            "forgotten"
        );
    }
}
