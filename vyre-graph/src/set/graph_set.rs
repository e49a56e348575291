//! [`GraphSet`]: one graph per device of a [`Gpus`], each device's status
//! (healthy, or left out after an error), bringing devices back
//! ([`GraphSet::retry`]), what was learned of each device's throughput,
//! and where an instance with resident data must run
//! ([`GraphSet::placement`]). `spread.rs` runs batches on it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use super::gpus::Gpus;
use super::learn::{Learned, Throughput, class_of};
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::graph::Graph;
use crate::run::batch::{Instance, of_instance};
use crate::spec::GraphSpec;
use crate::spec::error::{BackendError, Result};

/// Whether a device of a [`GraphSet`] takes part in batches.
#[derive(Clone, Debug)]
pub enum DeviceStatus {
    /// It runs its share of every batch.
    Healthy,
    /// It failed during a batch (lost, out of memory, timed out, ...) and
    /// later batches leave it out until [`GraphSet::retry`] brings it back;
    /// the error is the one it failed with.
    LeftOut(Arc<BackendError>),
}

impl DeviceStatus {
    /// Whether it runs its share of batches.
    #[must_use]
    pub fn is_healthy(&self) -> bool {
        matches!(self, DeviceStatus::Healthy)
    }
}

/// One device's graph and status.
pub(crate) struct Slot {
    graph: RwLock<Arc<Graph>>,
    status: Mutex<DeviceStatus>,
    /// Ids of the `Gpu`s this device had before [`GraphSet::retry`]
    /// replaced a lost one: their handles get a clear error.
    retired: Mutex<Vec<u64>>,
}

/// A graph on every device of a device set ([`Gpus`]): each device has its
/// own [`Graph`] (pipelines created once, its own launch-plan cache), and
/// a batch ([`Engine::run_batch`](crate::Engine::run_batch),
/// [`Engine::run_many`](crate::Engine::run_many) and their async twins)
/// is spread over the healthy devices in proportion to each one's
/// measured throughput, results in the batch's order, each report's
/// [`device`](crate::RunReport::device) saying which device ran it. A
/// device that fails during a batch has its unfinished instances rerun on
/// the others and is left out of later batches until
/// [`GraphSet::retry`]. See `docs/device-sets.md`.
///
/// Not on wasm32: a browser offers one adapter.
///
/// ```no_run
/// # fn f(spec: vyre_graph::spec::GraphSpec, mut instances: Vec<vyre_graph::Instance<'_>>) -> vyre_graph::Result<()> {
/// use vyre_graph::{DispatchConfig, Engine, GpuFilter, GraphSet, Gpus};
/// let gpus = Gpus::open(&GpuFilter::default())?;
/// let set = GraphSet::new(&gpus, spec)?;
/// let report = set.run_batch(&DispatchConfig::default(), &mut instances)?;
/// for run in &report.runs {
///     println!("ran on device {}", run.as_ref().map_or(usize::MAX, |r| r.device));
/// }
/// # Ok(()) }
/// ```
pub struct GraphSet {
    pub(crate) spec: GraphSpec,
    pub(crate) slots: Vec<Slot>,
    pub(crate) learned: Mutex<Learned>,
}

impl std::fmt::Debug for GraphSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphSet")
            .field("graph", &self.spec.name)
            .field("devices", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// `lock`'s guard, whatever a panicking holder left (every guarded value
/// here is valid at every step).
fn guard<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GraphSet {
    /// Build `spec`'s graph on every device of `gpus` (each compiles its
    /// own pipelines, once; several devices build at once, one thread
    /// each).
    ///
    /// # Errors
    /// [`BackendError::OnDevice`] naming the device around the error of
    /// [`Graph::new`] there.
    pub fn new(gpus: &Gpus, spec: GraphSpec) -> Result<GraphSet> {
        let build = |(device, gpu): (usize, &Gpu)| {
            Graph::new(gpu, spec.clone()).map_err(|e| on_device(device, gpu, e))
        };
        let graphs: Vec<Result<Graph>> = if gpus.len() == 1 {
            gpus.iter().enumerate().map(build).collect()
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = gpus
                    .iter()
                    .enumerate()
                    .map(|job| scope.spawn(move || build(job)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|panic| Err(panicked(&panic))))
                    .collect()
            })
        };
        let slots = graphs
            .into_iter()
            .map(|graph| {
                Ok(Slot {
                    graph: RwLock::new(Arc::new(graph?)),
                    status: Mutex::new(DeviceStatus::Healthy),
                    retired: Mutex::new(Vec::new()),
                })
            })
            .collect::<Result<Vec<Slot>>>()?;
        Ok(GraphSet {
            spec,
            slots,
            learned: Mutex::new(Learned::default()),
        })
    }

    /// How many devices (healthy or not).
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether it has no device (never: [`Gpus`] has at least one).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The graph description it runs.
    #[must_use]
    pub fn spec(&self) -> &GraphSpec {
        &self.spec
    }

    /// Device `device`'s graph (a new one after [`GraphSet::retry`]
    /// replaced a lost device).
    #[must_use]
    pub fn graph(&self, device: usize) -> Option<Arc<Graph>> {
        let slot = self.slots.get(device)?;
        Some(Arc::clone(
            &slot.graph.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }

    /// Every device's graph, in order.
    #[must_use]
    pub fn graphs(&self) -> Vec<Arc<Graph>> {
        (0..self.len()).filter_map(|d| self.graph(d)).collect()
    }

    /// The devices now, in order (a lost device replaced by
    /// [`GraphSet::retry`] is its new `Gpu`): where to make resident data
    /// for instances that should run on a given device.
    #[must_use]
    pub fn gpus(&self) -> Gpus {
        Gpus::of(self.graphs().iter().map(|g| g.gpu().clone()).collect())
    }

    /// Device `device`'s status.
    #[must_use]
    pub fn status(&self, device: usize) -> Option<DeviceStatus> {
        self.slots.get(device).map(|s| guard(&s.status).clone())
    }

    /// Every device's status, in order.
    #[must_use]
    pub fn statuses(&self) -> Vec<DeviceStatus> {
        self.slots
            .iter()
            .map(|s| guard(&s.status).clone())
            .collect()
    }

    /// The devices that take part in batches now.
    #[must_use]
    pub fn healthy(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&d| self.status(d).is_some_and(|s| s.is_healthy()))
            .collect()
    }

    /// Bring device `device` back into later batches. A device that was
    /// lost (or abandoned) cannot run again, so it is replaced: a new
    /// device is requested from the same adapter, with the same features,
    /// limits and transfer options, and the graph is built again on it
    /// (its resident data is gone: handles of the old device get a clear
    /// error; [`GraphSet::gpus`] gives the new one). Any other device is
    /// checked to be ready and taken back as it is. What was learned of
    /// the device's throughput is kept, unless it was replaced.
    ///
    /// # Errors
    /// [`BackendError::InvalidDeviceSet`] for a device not in the set;
    /// [`BackendError::OnDevice`] when the device is still busy with a
    /// run that timed out, when its adapter refuses a new device, or when
    /// the graph cannot be built again. The device then stays left out.
    pub fn retry(&self, device: usize) -> Result<()> {
        let (Some(slot), Some(graph)) = (self.slots.get(device), self.graph(device)) else {
            return Err(BackendError::InvalidDeviceSet {
                reason: format!(
                    "there is no device {device}: the set has {} (0 to {})",
                    self.len(),
                    self.len().saturating_sub(1)
                ),
            });
        };
        let gpu = graph.gpu();
        if gpu.lost().is_some() || gpu.is_abandoned() {
            let fresh = pollster::block_on(gpu.reopen()).map_err(|e| on_device(device, gpu, e))?;
            let rebuilt =
                Graph::new(&fresh, self.spec.clone()).map_err(|e| on_device(device, gpu, e))?;
            guard(&slot.retired).push(gpu.id());
            *slot.graph.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(rebuilt);
            guard(&self.learned).forget(device);
        } else {
            gpu.check_ready().map_err(|e| on_device(device, gpu, e))?;
        }
        *guard(&slot.status) = DeviceStatus::Healthy;
        Ok(())
    }

    /// [`GraphSet::retry`] every device that is left out.
    ///
    /// # Errors
    /// The first device's error (every device is tried).
    pub fn retry_all(&self) -> Result<()> {
        let mut first = None;
        let left_out = |d: &usize| self.status(*d).is_some_and(|s| !s.is_healthy());
        for device in (0..self.len()).filter(left_out) {
            if let Err(e) = self.retry(device) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Device `device`'s learned throughput for instances of problem size
    /// `n` (its size class: `n` rounded up to a power of two), in elements
    /// per second; `None` until a batch ran such instances there (a set
    /// of one device learns nothing: there is nothing to share).
    #[must_use]
    pub fn throughput(&self, device: usize, n: u64) -> Option<f64> {
        guard(&self.learned).rate(device, class_of(n))
    }

    /// Every learned throughput, by device and size class.
    #[must_use]
    pub fn learned(&self) -> Vec<Throughput> {
        guard(&self.learned).all()
    }

    /// What was learned, locked (for a split or a record: no call that
    /// can panic while it is held).
    pub(crate) fn learning(&self) -> MutexGuard<'_, Learned> {
        guard(&self.learned)
    }

    /// Leave `device` out of later batches after `error`.
    pub(crate) fn leave_out(&self, device: usize, error: BackendError) {
        if let Some(slot) = self.slots.get(device) {
            *guard(&slot.status) = DeviceStatus::LeftOut(Arc::new(error));
        }
    }

    /// Each device's error, for [`BackendError::AllDevicesFailed`].
    pub(crate) fn failures(&self, graphs: &[Arc<Graph>]) -> Vec<String> {
        self.statuses()
            .iter()
            .zip(graphs)
            .enumerate()
            .map(|(d, (status, graph))| {
                let adapter = &graph.gpu().adapter().name;
                match status {
                    DeviceStatus::LeftOut(e) => format!("device {d} ({adapter}): {e}"),
                    DeviceStatus::Healthy => format!("device {d} ({adapter}): healthy"),
                }
            })
            .collect()
    }

    /// Where instance `index` must run: `Ok(None)` when it has no resident
    /// data (any device), `Ok(Some(d))` when its handles belong to device
    /// `d` (healthy), else the error that names the instance.
    pub(crate) fn placement(
        &self,
        graphs: &[Arc<Graph>],
        index: usize,
        instance: &Instance<'_>,
    ) -> Result<Option<usize>> {
        let mut owner: Option<(usize, String)> = None;
        for (id, buffer) in handles(graphs, instance) {
            let refuse = |reason: String| {
                of_instance(
                    index,
                    BackendError::InvalidHandle {
                        buffer: buffer.clone(),
                        reason,
                    },
                )
            };
            let Some(device) = graphs.iter().position(|g| g.gpu().id() == id) else {
                return Err(refuse(self.foreign(id)));
            };
            match &owner {
                Some((first, name)) if *first != device => {
                    return Err(refuse(format!(
                        "it belongs to device {device} of the set, but the handle passed for `{name}` belongs to device {first}: one instance runs on one device; make every handle of an instance on the same device (`GraphSet::gpus`)"
                    )));
                }
                Some(_) => {}
                None => owner = Some((device, buffer.clone())),
            }
            if let Some(DeviceStatus::LeftOut(e)) = self.status(device) {
                return Err(refuse(format!(
                    "it belongs to device {device} of the set, which is left out after an error ({e}); call `GraphSet::retry({device})` first, or pass the data from the host"
                )));
            }
        }
        Ok(owner.map(|(d, _)| d))
    }

    /// Why a handle of `Gpu` id `id`, in no device of the set, is refused.
    fn foreign(&self, id: u64) -> String {
        let retired = self
            .slots
            .iter()
            .position(|s| guard(&s.retired).contains(&id));
        match retired {
            Some(d) => format!(
                "it belongs to device {d}'s earlier Gpu (id {id}), lost and replaced by `GraphSet::retry`: resident data does not survive a lost device; make it again on the device's new Gpu (`GraphSet::gpus`)"
            ),
            None => format!(
                "it belongs to a Gpu outside this device set (id {id}); make it on one of the set's devices (`GraphSet::gpus`), or pass the data from the host"
            ),
        }
    }
}

/// Each resident handle of `instance` (feeds, then sinks): its `Gpu` id
/// and the graph buffer it was passed for.
fn handles(graphs: &[Arc<Graph>], instance: &Instance<'_>) -> Vec<(u64, String)> {
    let Some(graph) = graphs.first() else {
        return Vec::new();
    };
    let program = &graph.program;
    let name = |b: Option<&usize>| {
        b.and_then(|&b| program.spec.buffers.get(b))
            .map_or_else(String::new, |b| b.name.to_string())
    };
    let feeds = instance.feeds.iter().enumerate().filter_map(|(j, f)| {
        let id = match f {
            Feed::Device(h) => h.gpu_id(),
            Feed::Texture(t) => t.gpu_id(),
            Feed::Host(_) => return None,
        };
        Some((id, name(program.host_inputs.get(j))))
    });
    let sinks = instance.sinks.iter().enumerate().filter_map(|(k, s)| {
        let id = match s {
            Sink::Device(h) => h.gpu_id(),
            Sink::Texture(t) => t.gpu_id(),
            Sink::Host(_) | Sink::Vector(_) | Sink::Skip => return None,
        };
        Some((id, name(program.host_outputs.get(k))))
    });
    feeds.chain(sinks).collect()
}

/// `error` on device `device` (`gpu`).
pub(crate) fn on_device(device: usize, gpu: &Gpu, error: BackendError) -> BackendError {
    BackendError::OnDevice {
        device,
        adapter: gpu.adapter().to_string(),
        source: Box::new(error),
    }
}

/// The error of a device's thread that panicked (a bug in vyre or wgpu).
pub(crate) fn panicked(panic: &(dyn std::any::Any + Send)) -> BackendError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    BackendError::DispatchFailed {
        reason: format!("the device's thread panicked: {message}"),
    }
}
