//! The launch-plan data ([`BatchDispatchPlan`], made from a
//! [`LaunchRecommendation`] and a [`PlanConfig`]) and the least-recently-used
//! cache keyed by problem size ([`PlanCache`]). Only [`BatchDispatchPlan`]
//! and [`Topology`] are public (what `Graph::plan` and a run's report
//! carry); the cache is the crate's own, as in the seed. Plain data: the
//! launch plans that own device buffers are `plan/launch.rs`'s.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use smallvec::SmallVec;

/// Shape of a graph's dependency structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Topology {
    /// No nodes at all.
    #[default]
    Empty,
    /// Exactly one node.
    Single,
    /// More than one level, and every level has one node.
    Chain,
    /// All nodes independent: one level with more than one node.
    Parallel,
    /// Anything else (fan-out, fan-in, diamonds).
    Dag,
}

impl Topology {
    /// Classifies a graph from the number of nodes at each dependency level.
    ///
    /// Levels with no nodes are ignored, so `[1, 0, 1]` is a
    /// [`Chain`](Topology::Chain) and `[0]` is [`Empty`](Topology::Empty).
    pub(crate) fn classify(level_widths: &[usize]) -> Topology {
        let mut levels = 0usize;
        let mut nodes = 0usize;
        let mut widest = 0usize;
        for &width in level_widths.iter().filter(|&&w| w > 0) {
            levels += 1;
            nodes = nodes.saturating_add(width);
            widest = widest.max(width);
        }
        match (levels, nodes, widest) {
            (0, _, _) => Topology::Empty,
            (_, 1, _) => Topology::Single,
            (_, _, 1) => Topology::Chain,
            (1, _, _) => Topology::Parallel,
            _ => Topology::Dag,
        }
    }
}

/// What planning recommends for a problem size; computed by the runtime from
/// the graph's kernels and the device's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct LaunchRecommendation {
    /// Workgroups along x for the largest node's grid.
    pub worker_groups: u32,
    /// Results a launch can emit: in a graph with append buffers, the sum of
    /// their capacities at this problem size (grown ones included);
    /// otherwise the invocations the largest node's grid covers
    /// (`worker_groups × workgroup_size_x`).
    pub hit_capacity: u64,
    /// Estimated peak of device memory held while the graph runs, in bytes.
    pub estimated_peak_device_bytes: u64,
    /// Shape of the graph's dependency structure.
    pub topology: Topology,
}

/// Seed values and limits a plan is made under.
///
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct PlanConfig {
    /// Seed number of worker groups, used before any recommendation exists
    /// (default 1).
    pub worker_groups: u32,
    /// Seed hit capacity, used before any recommendation exists (default 0).
    pub hit_capacity: u64,
    /// Threads per workgroup along x (default 64).
    pub workgroup_size_x: u32,
    /// Device memory budget in bytes; 0 means unbounded (the default).
    pub device_memory_budget_bytes: u64,
}

impl Default for PlanConfig {
    fn default() -> Self {
        Self {
            worker_groups: 1,
            hit_capacity: 0,
            workgroup_size_x: 64,
            device_memory_budget_bytes: 0,
        }
    }
}

impl PlanConfig {
    /// Returns the config with the seed number of worker groups replaced.
    #[must_use]
    #[cfg(test)]
    pub fn with_worker_groups(mut self, worker_groups: u32) -> Self {
        self.worker_groups = worker_groups;
        self
    }

    /// Returns the config with the seed hit capacity replaced.
    #[must_use]
    #[cfg(test)]
    pub fn with_hit_capacity(mut self, hit_capacity: u64) -> Self {
        self.hit_capacity = hit_capacity;
        self
    }

    /// Returns the config with the workgroup size along x replaced.
    #[must_use]
    pub fn with_workgroup_size_x(mut self, workgroup_size_x: u32) -> Self {
        self.workgroup_size_x = workgroup_size_x;
        self
    }

    /// Returns the config with the device memory budget replaced
    /// (0 = unbounded).
    #[must_use]
    pub fn with_device_memory_budget_bytes(mut self, device_memory_budget_bytes: u64) -> Self {
        self.device_memory_budget_bytes = device_memory_budget_bytes;
        self
    }
}

/// A launch plan for one problem size.
///
/// `hit_capacity` is the number of invocations the largest node's grid covers
/// (`worker_groups × workgroup_size_x`); the runtime's recommendation keeps it
/// at least `queue_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BatchDispatchPlan {
    /// Problem size the plan was made for; the cache key.
    pub queue_len: u64,
    /// Workgroups of the largest dispatch's grid; for a graph's run, what
    /// its largest dispatch launched (a fused group run as a grid-stride
    /// loop, see [`crate::GridStride`], launches fewer than its grid has).
    pub worker_groups: u32,
    /// Threads per workgroup along x.
    pub workgroup_size_x: u32,
    /// Results a launch can emit: the sum of the append buffers' capacities
    /// in a graph that has any (`append hits[CAP];`), else the invocations
    /// the largest node's grid covers.
    pub hit_capacity: u64,
    /// Estimated peak of device memory held while the graph runs, in bytes.
    pub estimated_peak_device_bytes: u64,
    /// Device memory budget in bytes; 0 means unbounded.
    pub device_memory_budget_bytes: u64,
    /// Shape of the graph's dependency structure.
    pub topology: Topology,
}

impl BatchDispatchPlan {
    /// Makes the plan for `queue_len`.
    ///
    /// `worker_groups`, `hit_capacity`, `estimated_peak_device_bytes` and
    /// `topology` come from the recommendation (not from the config's seed
    /// values); `workgroup_size_x` and the memory budget come from the config.
    pub(crate) fn new(
        queue_len: u64,
        recommendation: &LaunchRecommendation,
        config: &PlanConfig,
    ) -> Self {
        Self {
            queue_len,
            worker_groups: recommendation.worker_groups,
            workgroup_size_x: config.workgroup_size_x,
            hit_capacity: recommendation.hit_capacity,
            estimated_peak_device_bytes: recommendation.estimated_peak_device_bytes,
            device_memory_budget_bytes: config.device_memory_budget_bytes,
            topology: recommendation.topology,
        }
    }

    /// Whether the estimated peak fits the budget: true when the budget is 0
    /// (unbounded) or the peak is at most the budget.
    pub fn fits_budget(&self) -> bool {
        self.device_memory_budget_bytes == 0
            || self.estimated_peak_device_bytes <= self.device_memory_budget_bytes
    }
}

/// Result of a plan-cache lookup, for telemetry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlanLookup {
    /// The plan found (or, for a miss recorded by the caller, the plan made).
    pub plan: BatchDispatchPlan,
    /// Whether the plan came from the cache.
    pub cache_hit: bool,
    /// Number of entries in the cache after the lookup.
    pub cache_entries: usize,
}

/// Default number of problem sizes a [`PlanCache`] keeps.
pub(crate) const DEFAULT_PLAN_CACHE_CAPACITY: usize = 32;

/// One live cache entry.
#[derive(Clone, Debug)]
struct Entry<V> {
    value: V,
    /// Logical tick of the last insert or `get`.
    last_seen: u64,
}

/// A least-recently-used cache keyed by problem size (`u64`).
///
/// The runtime stores values that own GPU buffers; whenever the cache lets go
/// of a value (eviction, replacement, [`remove`](PlanCache::remove),
/// [`clear`](PlanCache::clear)) it hands the value back so the caller can
/// free it (dropping it is fine too).
///
/// # Recency and eviction
///
/// Recency is a logical `u64` clock, ticked by every [`insert`](PlanCache::insert)
/// and every successful [`get`](PlanCache::get) / [`get_mut`](PlanCache::get_mut);
/// [`peek`](PlanCache::peek) and [`contains`](PlanCache::contains) leave it
/// alone. Eviction order comes from a binary min-heap of `(last_seen, key)`
/// with lazy deletion: a heap record whose tick no longer matches its live
/// entry (or whose key is gone) is skipped when popped. The heap is compacted
/// (rebuilt from the live entries) whenever it grows past
/// `max(4 × len, 8)` records, so its size stays proportional to the cache's.
///
/// Should the clock ever reach `u64::MAX`, it is rebased: the live entries are
/// renumbered `0..len` in their current recency order, the clock restarts at
/// `len` and the heap is rebuilt. Unlike resetting every entry to one tick,
/// this keeps the least-recently-used order exact across the rebase.
#[derive(Clone, Debug)]
pub(crate) struct PlanCache<V> {
    capacity: usize,
    entries: HashMap<u64, Entry<V>>,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// The next tick to hand out.
    clock: u64,
}

impl<V> Default for PlanCache<V> {
    /// A cache holding up to [`DEFAULT_PLAN_CACHE_CAPACITY`] entries.
    fn default() -> Self {
        Self::new(DEFAULT_PLAN_CACHE_CAPACITY)
    }
}

impl<V> PlanCache<V> {
    /// Makes an empty cache holding up to `capacity` entries.
    ///
    /// A capacity of 0 caches nothing: [`insert`](Self::insert) hands the
    /// value straight back as evicted. Nothing is allocated up front, so any
    /// capacity is accepted.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: HashMap::new(),
            heap: BinaryHeap::new(),
            clock: 0,
        }
    }

    /// The most entries the cache holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of entries in the cache.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache has no entries.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of entries, saturating at `u16::MAX` (for compact telemetry).
    #[cfg(test)]
    pub fn len_u16(&self) -> u16 {
        u16::try_from(self.entries.len()).unwrap_or(u16::MAX)
    }

    /// Whether `key` is cached. Does not change recency.
    #[cfg(test)]
    pub fn contains(&self, key: u64) -> bool {
        self.entries.contains_key(&key)
    }

    /// The value cached for `key`, marking it most recently used.
    pub fn get(&mut self, key: u64) -> Option<&V> {
        self.get_mut(key).map(|value| &*value)
    }

    /// The value cached for `key`, mutably, marking it most recently used.
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        if !self.entries.contains_key(&key) {
            return None;
        }
        let tick = self.tick();
        self.heap.push(Reverse((tick, key)));
        self.compact_if_needed();
        let entry = self.entries.get_mut(&key)?;
        entry.last_seen = tick;
        Some(&mut entry.value)
    }

    /// The value cached for `key`, without changing recency.
    pub fn peek(&self, key: u64) -> Option<&V> {
        self.entries.get(&key).map(|entry| &entry.value)
    }

    /// Inserts `value` for `key` as the most recently used entry and returns
    /// the `(key, value)` pairs the cache let go of.
    ///
    /// If `key` is already cached its value is replaced in place and the old
    /// value is returned (no other entry is evicted). Otherwise least recently
    /// used entries are evicted until there is room. With capacity 0 the
    /// value itself is returned.
    pub fn insert(&mut self, key: u64, value: V) -> SmallVec<[(u64, V); 1]> {
        let mut evicted = SmallVec::new();
        if self.capacity == 0 {
            evicted.push((key, value));
            return evicted;
        }
        if self.entries.contains_key(&key) {
            let tick = self.tick();
            if let Some(entry) = self.entries.get_mut(&key) {
                let old = std::mem::replace(&mut entry.value, value);
                entry.last_seen = tick;
                evicted.push((key, old));
            }
            self.heap.push(Reverse((tick, key)));
            self.compact_if_needed();
            return evicted;
        }
        while self.entries.len() >= self.capacity {
            match self.pop_lru() {
                Some(pair) => evicted.push(pair),
                None => break,
            }
        }
        let tick = self.tick();
        self.entries.insert(
            key,
            Entry {
                value,
                last_seen: tick,
            },
        );
        self.heap.push(Reverse((tick, key)));
        self.compact_if_needed();
        evicted
    }

    /// Removes `key` and returns its value.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let entry = self.entries.remove(&key)?;
        // The heap record goes stale and is skipped or compacted away.
        self.compact_if_needed();
        Some(entry.value)
    }

    /// Empties the cache and returns the values it held, in no particular
    /// order.
    pub fn clear(&mut self) -> Vec<V> {
        self.heap.clear();
        self.clock = 0;
        self.entries.drain().map(|(_, entry)| entry.value).collect()
    }

    /// The cached keys, most recently used first. For tests and debugging.
    #[cfg(test)]
    pub fn keys_by_recency(&self) -> Vec<u64> {
        let mut keyed: Vec<(u64, u64)> = self
            .entries
            .iter()
            .map(|(&key, entry)| (entry.last_seen, key))
            .collect();
        keyed.sort_unstable_by(|a, b| b.cmp(a));
        keyed.into_iter().map(|(_, key)| key).collect()
    }

    /// Number of records in the eviction heap, live and stale. For tests of
    /// heap compaction.
    #[doc(hidden)]
    #[cfg(test)]
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Hands out the next tick, rebasing first if the clock is exhausted.
    fn tick(&mut self) -> u64 {
        if self.clock == u64::MAX {
            self.rebase();
        }
        let tick = self.clock;
        self.clock = self.clock.saturating_add(1);
        tick
    }

    /// Renumbers the live entries `0..len` in recency order, restarts the
    /// clock at `len` and rebuilds the heap.
    fn rebase(&mut self) {
        let mut order: Vec<(u64, u64)> = self
            .entries
            .iter()
            .map(|(&key, entry)| (entry.last_seen, key))
            .collect();
        order.sort_unstable();
        let mut next = 0u64;
        for &(_, key) in &order {
            if let Some(entry) = self.entries.get_mut(&key) {
                entry.last_seen = next;
                next = next.saturating_add(1);
            }
        }
        self.clock = next;
        self.rebuild_heap();
    }

    /// Rebuilds the heap from the live entries only, in the heap's own
    /// allocation (a steady stream of hits compacts without allocating).
    fn rebuild_heap(&mut self) {
        let mut records = std::mem::take(&mut self.heap).into_vec();
        records.clear();
        records.extend(
            self.entries
                .iter()
                .map(|(&key, entry)| Reverse((entry.last_seen, key))),
        );
        self.heap = BinaryHeap::from(records);
    }

    /// Rebuilds the heap once it holds more than `max(4 × len, 8)` records.
    fn compact_if_needed(&mut self) {
        let limit = self.entries.len().saturating_mul(4).max(8);
        if self.heap.len() > limit {
            self.rebuild_heap();
        }
    }

    /// Removes and returns the least recently used entry, skipping stale
    /// heap records.
    fn pop_lru(&mut self) -> Option<(u64, V)> {
        let mut rebuilt = false;
        loop {
            let Some(Reverse((seen, key))) = self.heap.pop() else {
                // Every live entry has a heap record, so this only happens
                // when the cache is empty; rebuild once to be safe.
                if rebuilt || self.entries.is_empty() {
                    return None;
                }
                self.rebuild_heap();
                rebuilt = true;
                continue;
            };
            let live = self
                .entries
                .get(&key)
                .is_some_and(|entry| entry.last_seen == seen);
            if live {
                return self.entries.remove(&key).map(|entry| (key, entry.value));
            }
        }
    }

    /// Moves the clock, for tests of the rebase.
    #[cfg(test)]
    fn set_clock_for_test(&mut self, clock: u64) {
        self.clock = clock;
    }
}

/// The seed's cache of launch plans, keyed by `queue_len`.
pub(crate) type BatchDispatchPlanCache = PlanCache<BatchDispatchPlan>;

impl PlanCache<BatchDispatchPlan> {
    /// Caches `plan` under its `queue_len`; returns what was let go of (see
    /// [`insert`](Self::insert)).
    pub fn insert_plan(
        &mut self,
        plan: BatchDispatchPlan,
    ) -> SmallVec<[(u64, BatchDispatchPlan); 1]> {
        self.insert(plan.queue_len, plan)
    }

    /// Looks up the plan for `queue_len`, marking it most recently used.
    ///
    /// A hit reports `cache_hit: true` and the number of cached entries; a
    /// miss returns `None`, and the caller plans, inserts and records its own
    /// [`PlanLookup`] with `cache_hit: false`.
    pub fn lookup(&mut self, queue_len: u64) -> Option<PlanLookup> {
        let plan = *self.get(queue_len)?;
        Some(PlanLookup {
            plan,
            cache_hit: true,
            cache_entries: self.len(),
        })
    }
}

/// Nanoseconds per hit of [`BatchDispatchPlanCache::lookup`], over
/// `iterations` lookups into a cache of 32 plans: what `graph_bench`
/// reports as the plan cache's own cost (the cache is not public).
pub(crate) fn lookup_hit_ns(iterations: u64) -> f64 {
    use std::hint::black_box;
    let mut cache = BatchDispatchPlanCache::default();
    let recommendation = LaunchRecommendation::default();
    for n in 0..32u64 {
        cache.insert_plan(BatchDispatchPlan::new(
            1024 + n,
            &recommendation,
            &PlanConfig::default(),
        ));
    }
    let start = web_time::Instant::now();
    let mut hits = 0u64;
    for i in 0..iterations {
        if cache.lookup(black_box(1024 + (i & 31))).is_some() {
            hits += 1;
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / iterations.max(1) as f64;
    assert_eq!(hits, iterations, "every lookup of a cached size hits");
    ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn recommendation() -> LaunchRecommendation {
        LaunchRecommendation {
            worker_groups: 7,
            hit_capacity: 7 * 128,
            estimated_peak_device_bytes: 5000,
            topology: Topology::Dag,
        }
    }

    #[test]
    fn plan_takes_the_recommendation_not_the_seed() {
        let config = PlanConfig::default()
            .with_worker_groups(99)
            .with_hit_capacity(12_345)
            .with_workgroup_size_x(128)
            .with_device_memory_budget_bytes(4096);
        let plan = BatchDispatchPlan::new(800, &recommendation(), &config);
        assert_eq!(
            plan,
            BatchDispatchPlan {
                queue_len: 800,
                worker_groups: 7,
                workgroup_size_x: 128,
                hit_capacity: 7 * 128,
                estimated_peak_device_bytes: 5000,
                device_memory_budget_bytes: 4096,
                topology: Topology::Dag,
            }
        );
        assert!(plan.hit_capacity >= plan.queue_len);
    }

    #[test]
    fn config_defaults() {
        let config = PlanConfig::default();
        assert_eq!(config.worker_groups, 1);
        assert_eq!(config.hit_capacity, 0);
        assert_eq!(config.workgroup_size_x, 64);
        assert_eq!(config.device_memory_budget_bytes, 0);
        assert_eq!(LaunchRecommendation::default().topology, Topology::Empty);
    }

    #[test]
    fn budget() {
        let rec = recommendation();
        let plan = |budget| {
            BatchDispatchPlan::new(
                1,
                &rec,
                &PlanConfig::default().with_device_memory_budget_bytes(budget),
            )
        };
        assert!(plan(0).fits_budget(), "0 is unbounded");
        assert!(plan(5000).fits_budget());
        assert!(plan(u64::MAX).fits_budget());
        assert!(!plan(4999).fits_budget());
        assert!(!plan(1).fits_budget());
    }

    #[test]
    fn classify() {
        assert_eq!(Topology::classify(&[]), Topology::Empty);
        assert_eq!(Topology::classify(&[0]), Topology::Empty);
        assert_eq!(Topology::classify(&[0, 0]), Topology::Empty);
        assert_eq!(Topology::classify(&[1]), Topology::Single);
        assert_eq!(Topology::classify(&[0, 1, 0]), Topology::Single);
        assert_eq!(Topology::classify(&[1, 1]), Topology::Chain);
        assert_eq!(Topology::classify(&[1, 1, 1, 1]), Topology::Chain);
        assert_eq!(Topology::classify(&[1, 0, 1]), Topology::Chain);
        assert_eq!(Topology::classify(&[2]), Topology::Parallel);
        assert_eq!(Topology::classify(&[1000]), Topology::Parallel);
        assert_eq!(Topology::classify(&[1, 2]), Topology::Dag);
        assert_eq!(Topology::classify(&[2, 1]), Topology::Dag);
        assert_eq!(Topology::classify(&[1, 2, 1]), Topology::Dag);
        assert_eq!(Topology::classify(&[3, 3]), Topology::Dag);
        assert_eq!(Topology::classify(&[usize::MAX, usize::MAX]), Topology::Dag);
    }

    #[test]
    fn seed_heap_stays_bounded() {
        let bound = |cache: &PlanCache<u64>| (4 * cache.len()).max(8);
        let mut cache = PlanCache::new(4);
        for key in 0..127u64 {
            cache.insert(key, key * 10);
            assert_eq!(cache.get(key), Some(&(key * 10)));
            assert!(cache.heap_len() <= bound(&cache));
        }
        assert_eq!(cache.len(), 4);
        assert_eq!(cache.keys_by_recency(), vec![126, 125, 124, 123]);
        assert!(cache.heap_len() <= 16, "max(4 * 4, 8)");
        for i in 0..100_000u64 {
            let key = 123 + i % 4;
            assert_eq!(cache.get(key), Some(&(key * 10)));
            assert!(
                cache.heap_len() <= bound(&cache),
                "heap {}",
                cache.heap_len()
            );
        }
        assert_eq!(cache.len(), 4);
    }

    #[test]
    fn heap_stays_bounded_under_removals() {
        let mut cache = PlanCache::new(64);
        for key in 0..64u64 {
            cache.insert(key, ());
            cache.get(key);
        }
        for key in 0..64u64 {
            assert_eq!(cache.remove(key), Some(()));
            assert!(cache.heap_len() <= (4 * cache.len()).max(8));
        }
        assert!(cache.is_empty());
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let mut cache = PlanCache::new(0);
        let evicted = cache.insert(5, "five");
        assert_eq!(evicted.as_slice(), &[(5, "five")]);
        assert!(cache.is_empty());
        assert!(!cache.contains(5));
        assert_eq!(cache.get(5), None);
        assert_eq!(cache.capacity(), 0);
    }

    #[test]
    fn default_capacity() {
        let cache: PlanCache<u8> = PlanCache::default();
        assert_eq!(cache.capacity(), DEFAULT_PLAN_CACHE_CAPACITY);
        assert_eq!(cache.capacity(), 32);
        assert!(cache.is_empty());
        assert_eq!(BatchDispatchPlanCache::default().capacity(), 32);
    }

    #[test]
    fn len_u16_saturates() {
        let mut cache = PlanCache::new(100_000);
        for key in 0..70_000u64 {
            assert!(cache.insert(key, ()).is_empty());
        }
        assert_eq!(cache.len(), 70_000);
        assert_eq!(cache.len_u16(), u16::MAX);
        let mut small = PlanCache::new(4);
        small.insert(1, ());
        small.insert(2, ());
        assert_eq!(small.len_u16(), 2);
    }

    #[test]
    fn huge_capacity_does_not_allocate() {
        let mut cache = PlanCache::new(usize::MAX);
        assert!(cache.insert(1, 1u8).is_empty());
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn replacement_in_place_does_not_evict_others() {
        let mut cache = PlanCache::new(2);
        cache.insert(1, "a");
        cache.insert(2, "b");
        let evicted = cache.insert(1, "A");
        assert_eq!(evicted.as_slice(), &[(1, "a")]);
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.peek(1), Some(&"A"));
        assert_eq!(cache.peek(2), Some(&"b"));
        // The replacement made 1 the most recent, so 2 goes next.
        assert_eq!(cache.keys_by_recency(), vec![1, 2]);
        assert_eq!(cache.insert(3, "c").as_slice(), &[(2, "b")]);
    }

    #[test]
    fn lru_order() {
        let mut cache = PlanCache::new(2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        assert_eq!(cache.insert(3, 3).as_slice(), &[(1, 1)]);

        let mut cache = PlanCache::new(2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        assert_eq!(cache.get(1), Some(&1));
        assert_eq!(cache.insert(3, 3).as_slice(), &[(2, 2)]);
        assert_eq!(cache.keys_by_recency(), vec![3, 1]);
    }

    #[test]
    fn peek_and_contains_leave_recency_alone() {
        let mut cache = PlanCache::new(2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        assert!(cache.contains(1));
        assert_eq!(cache.peek(1), Some(&1));
        assert_eq!(cache.insert(3, 3).as_slice(), &[(1, 1)]);
    }

    #[test]
    fn get_mut_marks_recent_and_mutates() {
        let mut cache = PlanCache::new(2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        *cache.get_mut(1).expect("cached") += 10;
        assert_eq!(cache.insert(3, 3).as_slice(), &[(2, 2)]);
        assert_eq!(cache.peek(1), Some(&11));
        assert_eq!(cache.get_mut(2), None);
    }

    #[test]
    fn remove_and_clear() {
        let mut cache = PlanCache::new(3);
        cache.insert(1, 1);
        cache.insert(2, 2);
        cache.insert(3, 3);
        assert_eq!(cache.remove(2), Some(2));
        assert_eq!(cache.remove(2), None);
        // Room was made by the removal: nothing is evicted.
        assert!(cache.insert(4, 4).is_empty());
        assert_eq!(cache.insert(5, 5).as_slice(), &[(1, 1)]);
        let mut drained = cache.clear();
        drained.sort_unstable();
        assert_eq!(drained, vec![3, 4, 5]);
        assert!(cache.is_empty());
        assert_eq!(cache.heap_len(), 0);
        assert!(cache.insert(6, 6).is_empty());
        assert_eq!(cache.keys_by_recency(), vec![6]);
    }

    #[test]
    fn removed_then_reinserted_key_is_not_evicted_by_its_stale_record() {
        let mut cache = PlanCache::new(2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        cache.remove(1);
        cache.insert(1, 10); // 1 is now the most recent; its old record is stale
        assert_eq!(cache.insert(3, 3).as_slice(), &[(2, 2)]);
        assert_eq!(cache.keys_by_recency(), vec![3, 1]);
    }

    #[test]
    fn clock_rebase_keeps_lru_order() {
        let mut cache = PlanCache::new(3);
        cache.insert(1, 1);
        cache.insert(2, 2);
        cache.insert(3, 3);
        cache.get(1); // recency: 1, 3, 2
        cache.set_clock_for_test(u64::MAX - 2);
        cache.get(2); // tick MAX - 2; recency: 2, 1, 3
        cache.get(1); // tick MAX - 1; recency: 1, 2, 3
        assert_eq!(cache.keys_by_recency(), vec![1, 2, 3]);
        // The clock is exhausted: this get rebases before ticking.
        assert_eq!(cache.get(2), Some(&2)); // recency: 2, 1, 3
        assert!(cache.clock < 10, "rebased clock {}", cache.clock);
        assert_eq!(cache.keys_by_recency(), vec![2, 1, 3]);
        assert_eq!(cache.insert(4, 4).as_slice(), &[(3, 3)]);
        assert_eq!(cache.insert(5, 5).as_slice(), &[(1, 1)]);
        cache.get(2);
        assert_eq!(cache.insert(6, 6).as_slice(), &[(4, 4)]);
        assert_eq!(cache.keys_by_recency(), vec![6, 2, 5]);
    }

    #[test]
    fn clock_rebase_on_insert_of_a_new_key() {
        let mut cache = PlanCache::new(3);
        cache.insert(1, 1);
        cache.insert(2, 2);
        cache.set_clock_for_test(u64::MAX - 1);
        cache.get(1); // last tick before exhaustion; recency: 1, 2
        assert!(cache.insert(3, 3).is_empty()); // rebases
        assert_eq!(cache.keys_by_recency(), vec![3, 1, 2]);
        assert_eq!(cache.insert(4, 4).as_slice(), &[(2, 2)]);
        assert!(cache.heap_len() <= 8);
    }

    /// A plain LRU: front is most recently used.
    struct ReferenceLru {
        capacity: usize,
        items: VecDeque<(u64, u64)>,
    }

    impl ReferenceLru {
        fn position(&self, key: u64) -> Option<usize> {
            self.items.iter().position(|&(k, _)| k == key)
        }

        fn get(&mut self, key: u64) -> Option<u64> {
            let i = self.position(key)?;
            let item = self.items.remove(i)?;
            self.items.push_front(item);
            Some(item.1)
        }

        fn peek(&self, key: u64) -> Option<u64> {
            self.position(key).map(|i| self.items[i].1)
        }

        fn insert(&mut self, key: u64, value: u64) -> Vec<(u64, u64)> {
            if self.capacity == 0 {
                return vec![(key, value)];
            }
            if let Some(i) = self.position(key) {
                let old = self.items.remove(i).unwrap();
                self.items.push_front((key, value));
                return vec![old];
            }
            let mut evicted = Vec::new();
            while self.items.len() >= self.capacity {
                evicted.push(self.items.pop_back().unwrap());
            }
            self.items.push_front((key, value));
            evicted
        }

        fn remove(&mut self, key: u64) -> Option<u64> {
            let i = self.position(key)?;
            self.items.remove(i).map(|(_, v)| v)
        }

        fn keys(&self) -> Vec<u64> {
            self.items.iter().map(|&(k, _)| k).collect()
        }
    }

    fn xorshift(state: &mut u64) -> u64 {
        let mut x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        x
    }

    /// Runs `steps` random operations against the cache and the reference.
    /// With `kick_every`, the clock is pushed to just below `u64::MAX` every
    /// that many steps, so the run rebases many times.
    fn compare_with_reference(capacity: usize, steps: u64, seed: u64, kick_every: Option<u64>) {
        let mut cache = PlanCache::new(capacity);
        let mut reference = ReferenceLru {
            capacity,
            items: VecDeque::new(),
        };
        let mut state = seed;
        for step in 0..steps {
            if kick_every.is_some_and(|every| step % every == 0) {
                let near_max = u64::MAX - xorshift(&mut state) % 4;
                cache.set_clock_for_test(cache.clock.max(near_max));
            }
            let r = xorshift(&mut state);
            let key = (r >> 8) % 64;
            match r % 10 {
                0..=3 => assert_eq!(
                    cache.get(key).copied(),
                    reference.get(key),
                    "step {step}: get {key}"
                ),
                4..=7 => {
                    let evicted = cache.insert(key, step);
                    assert_eq!(
                        evicted.to_vec(),
                        reference.insert(key, step),
                        "step {step}: insert {key}"
                    );
                }
                8 => assert_eq!(
                    cache.remove(key),
                    reference.remove(key),
                    "step {step}: remove {key}"
                ),
                _ => {
                    assert_eq!(cache.peek(key).copied(), reference.peek(key));
                    assert_eq!(cache.contains(key), reference.peek(key).is_some());
                }
            }
            assert_eq!(cache.len(), reference.items.len(), "step {step}: len");
            assert!(cache.len() <= capacity);
            assert!(
                cache.heap_len() <= (4 * cache.len()).max(8),
                "step {step}: heap {} for {} entries",
                cache.heap_len(),
                cache.len()
            );
            if step % 97 == 0 {
                assert_eq!(cache.keys_by_recency(), reference.keys(), "step {step}");
            }
        }
        assert_eq!(cache.keys_by_recency(), reference.keys());
    }

    #[test]
    fn random_operations_match_reference_lru() {
        for (i, capacity) in [0usize, 1, 3, 8, 32].into_iter().enumerate() {
            compare_with_reference(capacity, 100_000, 0x9E37_79B9_7F4A_7C15 ^ i as u64, None);
        }
    }

    #[test]
    fn random_operations_across_many_rebases_match_reference_lru() {
        for (i, capacity) in [1usize, 3, 8, 32].into_iter().enumerate() {
            compare_with_reference(capacity, 20_000, 0xDEAD_BEEF_1234_5678 + i as u64, Some(37));
        }
    }

    #[test]
    fn plan_cache_lookup() {
        let config = PlanConfig::default();
        let mut cache = BatchDispatchPlanCache::new(2);
        assert_eq!(cache.lookup(10), None);
        let plan = |n| BatchDispatchPlan::new(n, &recommendation(), &config);
        assert!(cache.insert_plan(plan(10)).is_empty());
        assert!(cache.insert_plan(plan(20)).is_empty());
        assert_eq!(
            cache.lookup(10),
            Some(PlanLookup {
                plan: plan(10),
                cache_hit: true,
                cache_entries: 2,
            })
        );
        // 10 was just looked up, so 20 is the one evicted.
        let evicted = cache.insert_plan(plan(30));
        assert_eq!(evicted.as_slice(), &[(20, plan(20))]);
        assert_eq!(cache.lookup(20), None);
        assert_eq!(cache.lookup(30).map(|l| l.plan.queue_len), Some(30));
    }
}
