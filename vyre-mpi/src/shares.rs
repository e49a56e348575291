//! Who runs what: each instance goes to the rank expected to finish it
//! soonest, from each rank's learned throughput (elements per second, per
//! size class, smoothed over batches); equal shares until every rank has
//! been measured.

use std::collections::HashMap;

/// An instance's size class: sizes within a factor of two share one.
pub(crate) fn class(n: u64) -> u32 {
    64 - n.leading_zeros()
}

/// The weight of this batch's new measurement against what was learned.
const SMOOTHING: f64 = 0.5;

/// Learned throughput per rank and size class.
#[derive(Debug, Default)]
pub(crate) struct Throughput {
    /// (rank, class) → elements per second.
    learned: HashMap<(usize, u32), f64>,
}

impl Throughput {
    /// Records that `rank` ran instances of these sizes in `wall_ns`.
    pub(crate) fn learn(&mut self, rank: usize, sizes: &[u64], wall_ns: u64) {
        if sizes.is_empty() || wall_ns == 0 {
            return;
        }
        let elements: u64 = sizes.iter().map(|&n| n.max(1)).sum();
        let rate = elements as f64 / (wall_ns as f64 * 1e-9);
        let mut classes: Vec<u32> = sizes.iter().map(|&n| class(n)).collect();
        classes.sort_unstable();
        classes.dedup();
        for c in classes {
            let entry = self.learned.entry((rank, c)).or_insert(rate);
            *entry = (1.0 - SMOOTHING) * *entry + SMOOTHING * rate;
        }
    }

    /// Each rank's mean over the classes it was measured at.
    fn mean(&self, rank: usize) -> Option<f64> {
        let rates: Vec<f64> = self
            .learned
            .iter()
            .filter(|((r, _), _)| *r == rank)
            .map(|(_, &rate)| rate)
            .collect();
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
    }

    /// The relative speed of each of `ranks` ranks at size class `c`: the
    /// class's own rates when every rank has one, else each rank's mean,
    /// else equal.
    pub(crate) fn weights(&self, ranks: usize, c: u32) -> Vec<f64> {
        let own: Option<Vec<f64>> = (0..ranks)
            .map(|r| self.learned.get(&(r, c)).copied())
            .collect();
        let means = || {
            (0..ranks)
                .map(|r| self.mean(r))
                .collect::<Option<Vec<f64>>>()
        };
        own.or_else(means)
            .filter(|w| w.iter().all(|&x| x.is_finite() && x > 0.0))
            .unwrap_or_else(|| vec![1.0; ranks])
    }

    /// The rank for each instance of sizes `sizes`: largest first, each to
    /// the rank whose expected finish time (the work it already has plus
    /// this instance, at its speed) is earliest. `pinned[i]` keeps
    /// instance `i` on rank 0.
    pub(crate) fn assign(&self, ranks: usize, sizes: &[u64], pinned: &[bool]) -> Vec<usize> {
        let ranks = ranks.max(1);
        let mut owner = vec![0usize; sizes.len()];
        let mut load = vec![0.0f64; ranks];
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
        let mut weights: HashMap<u32, Vec<f64>> = HashMap::new();
        for &i in &order {
            let n = sizes[i].max(1) as f64;
            let w = weights
                .entry(class(sizes[i]))
                .or_insert_with(|| self.weights(ranks, class(sizes[i])));
            let cost = |r: usize| n / w.get(r).copied().unwrap_or(1.0);
            let best = if pinned.get(i).copied().unwrap_or(false) {
                0
            } else {
                (0..ranks)
                    .min_by(|&a, &b| (load[a] + cost(a)).total_cmp(&(load[b] + cost(b))))
                    .unwrap_or(0)
            };
            load[best] += cost(best);
            owner[i] = best;
        }
        owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_at_first_then_in_proportion_to_measured_speed() {
        let mut t = Throughput::default();
        let sizes = vec![1000u64; 12];
        let owners = t.assign(3, &sizes, &[]);
        for r in 0..3 {
            assert_eq!(owners.iter().filter(|&&o| o == r).count(), 4);
        }
        // Rank 1 turns out three times as fast as ranks 0 and 2.
        t.learn(0, &[1000; 4], 4_000_000);
        t.learn(1, &[1000; 4], 1_333_333);
        t.learn(2, &[1000; 4], 4_000_000);
        let owners = t.assign(3, &[1000; 10], &[]);
        let counts: Vec<usize> = (0..3)
            .map(|r| owners.iter().filter(|&&o| o == r).count())
            .collect();
        assert_eq!(counts, vec![2, 6, 2]);
    }

    #[test]
    fn pinned_instances_stay_on_rank_zero_and_empty_batches_assign_nothing() {
        let t = Throughput::default();
        assert_eq!(t.assign(4, &[5, 5, 5], &[true, true, true]), vec![0, 0, 0]);
        assert!(t.assign(4, &[], &[]).is_empty());
        assert_eq!(t.assign(0, &[0, 0], &[]), vec![0, 0]);
        // One rank: everything on it.
        assert_eq!(t.assign(1, &[9, 1, u64::MAX], &[]), vec![0, 0, 0]);
    }

    #[test]
    fn an_unmeasured_class_uses_each_ranks_mean() {
        let mut t = Throughput::default();
        t.learn(0, &[100], 1_000);
        t.learn(1, &[100], 3_000);
        let w = t.weights(2, class(1 << 20));
        assert!(w[0] > w[1] * 2.9 && w[0] < w[1] * 3.1, "{w:?}");
        // A rank never measured: equal.
        assert_eq!(t.weights(3, class(100)), vec![1.0; 3]);
    }
}
