//! What a device set learns of its devices: each device's throughput per
//! size class ([`Learned`]), and the split of a batch's instances into
//! contiguous shares in proportion to it ([`Learned::split`]). Plain data:
//! no device.

use std::collections::HashMap;
use std::ops::Range;

/// Weight of a new measurement in the smoothed figure.
const SMOOTHING: f64 = 0.5;

/// The size class of problem size `n`: `n` rounded up to a power of two,
/// as its exponent (1 → 0, 2 → 1, 3 and 4 → 2, ...).
pub(crate) fn class_of(n: u64) -> u32 {
    64 - n.max(1).saturating_sub(1).leading_zeros()
}

/// The largest problem size of size class `class`.
pub(crate) fn class_max(class: u32) -> u64 {
    1u64.checked_shl(class).unwrap_or(u64::MAX)
}

/// The work of an instance of size `n` (size 0 still costs a little).
pub(crate) fn work(n: u64) -> u64 {
    n.max(1)
}

/// A device's learned throughput for one size class
/// ([`GraphSet::learned`](crate::GraphSet::learned)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Throughput {
    /// The device's index in the set.
    pub device: usize,
    /// The size class: problem sizes above half of this, up to it (sizes
    /// rounded up to a power of two).
    pub max_n: u64,
    /// Elements (problem size units) per second of wall time, smoothed
    /// over the batches that ran instances of this class on the device.
    pub elements_per_second: f64,
}

/// Elements per second by device and size class.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    rates: HashMap<(usize, u32), f64>,
}

impl Learned {
    /// Device `device`'s figure for size class `class`.
    pub(crate) fn rate(&self, device: usize, class: u32) -> Option<f64> {
        self.rates.get(&(device, class)).copied()
    }

    /// A share of `elements` elements over the size classes `classes` ran
    /// on `device` in `seconds` of wall time: each class's figure moves
    /// toward the share's rate.
    pub(crate) fn record(&mut self, device: usize, classes: &[u32], elements: u64, seconds: f64) {
        if seconds <= 0.0 || elements == 0 {
            return;
        }
        let measured = elements as f64 / seconds;
        for &class in classes {
            let rate = self.rates.entry((device, class)).or_insert(measured);
            *rate = *rate * (1.0 - SMOOTHING) + measured * SMOOTHING;
        }
    }

    /// Forget what was learned of `device` (a new device in its place).
    pub(crate) fn forget(&mut self, device: usize) {
        self.rates.retain(|(d, _), _| *d != device);
    }

    /// Every figure, by device then size class.
    pub(crate) fn all(&self) -> Vec<Throughput> {
        let mut all: Vec<Throughput> = self
            .rates
            .iter()
            .map(|(&(device, class), &rate)| Throughput {
                device,
                max_n: class_max(class),
                elements_per_second: rate,
            })
            .collect();
        all.sort_by_key(|t| (t.device, t.max_n));
        all
    }

    /// Device `device`'s rate for `class`, else the mean of the other
    /// `devices`' known rates for it, else `None` (nothing known).
    fn estimate(&self, device: usize, class: u32, devices: &[usize]) -> Option<f64> {
        self.rate(device, class).or_else(|| {
            let known: Vec<f64> = devices
                .iter()
                .filter_map(|&d| self.rate(d, class))
                .collect();
            (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
        })
    }

    /// Split instances of sizes `sizes` (in order) into one contiguous
    /// range per device of `devices`, each device's share of the work in
    /// proportion to its estimated speed on these sizes (equal shares
    /// where nothing is known). A range may be empty.
    pub(crate) fn split(&self, devices: &[usize], sizes: &[u64]) -> Vec<Range<usize>> {
        let total: u64 = sizes.iter().map(|&n| work(n)).sum();
        // Each device's estimated time for the whole batch, in seconds (1
        // element per second where nothing is known: equal shares).
        let times: Vec<f64> = devices
            .iter()
            .map(|&d| {
                sizes
                    .iter()
                    .map(|&n| {
                        let rate = self.estimate(d, class_of(n), devices).unwrap_or(1.0);
                        work(n) as f64 / rate.max(f64::MIN_POSITIVE)
                    })
                    .sum::<f64>()
                    .max(f64::MIN_POSITIVE)
            })
            .collect();
        let speed: f64 = times.iter().map(|t| 1.0 / t).sum();
        let mut prefix = Vec::with_capacity(sizes.len() + 1);
        prefix.push(0u64);
        for &n in sizes {
            let last = prefix.last().copied().unwrap_or(0);
            prefix.push(last + work(n));
        }
        let mut ranges = Vec::with_capacity(devices.len());
        let (mut start, mut share) = (0usize, 0.0f64);
        for (k, t) in times.iter().enumerate() {
            share += (1.0 / t) / speed;
            let end = if k + 1 == devices.len() {
                sizes.len()
            } else {
                cut(&prefix, share * total as f64, start)
            };
            ranges.push(start..end);
            start = end;
        }
        ranges
    }
}

/// The index `i >= from` whose prefix sum `prefix[i]` is nearest `target`.
fn cut(prefix: &[u64], target: f64, from: usize) -> usize {
    let last = prefix.len().saturating_sub(1);
    let above = prefix.partition_point(|&p| (p as f64) < target).min(last);
    let below = above.saturating_sub(1);
    let nearest = match (prefix.get(above), prefix.get(below)) {
        (Some(&a), Some(&b)) if target - b as f64 <= a as f64 - target && below < above => below,
        _ => above,
    };
    nearest.max(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_round_up_to_powers_of_two() {
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 1024, 1025].map(class_of),
            [0, 0, 1, 2, 2, 3, 10, 11]
        );
        assert_eq!(class_max(class_of(1000)), 1024);
    }

    #[test]
    fn unknown_devices_get_equal_shares_and_every_instance_one_device() {
        let learned = Learned::default();
        let ranges = learned.split(&[0, 1], &[100; 37]);
        assert_eq!(ranges, [0..18, 18..37]);
        let ranges = learned.split(&[0, 1, 2], &[5]);
        assert_eq!(ranges.iter().map(|r| r.len()).sum::<usize>(), 1);
        assert!(learned.split(&[0, 1], &[]).iter().all(|r| r.is_empty()));
    }

    #[test]
    fn a_faster_device_gets_a_larger_share() {
        let mut learned = Learned::default();
        learned.record(0, &[class_of(100)], 300, 1.0);
        learned.record(1, &[class_of(100)], 100, 1.0);
        let ranges = learned.split(&[0, 1], &[100; 40]);
        assert_eq!(ranges, [0..30, 30..40]);
        // A device with no figure is taken at the mean of the known ones.
        let ranges = learned.split(&[0, 2], &[100; 40]);
        assert_eq!(ranges, [0..20, 20..40]);
    }

    #[test]
    fn figures_are_smoothed_and_forgotten() {
        let mut learned = Learned::default();
        learned.record(3, &[4], 100, 1.0);
        learned.record(3, &[4], 300, 1.0);
        assert_eq!(learned.rate(3, 4), Some(200.0));
        learned.record(3, &[4], 0, 0.0);
        assert_eq!(learned.rate(3, 4), Some(200.0));
        learned.forget(3);
        assert_eq!(learned.rate(3, 4), None);
    }
}
