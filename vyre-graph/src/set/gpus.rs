//! [`Gpus`]: the devices of a device set, opened from every adapter that
//! matches a [`GpuFilter`] or given as a list.

use crate::device::adapter::instance_descriptor;
use crate::device::gpu::{Gpu, GpuOptions};
use crate::spec::error::{BackendError, Result};

/// Which adapters [`Gpus::open`] opens, and how.
///
/// ```
/// use vyre_graph::{GpuFilter, wgpu};
/// // Two devices of every Vulkan adapter whose name contains "llvmpipe".
/// let filter = GpuFilter::default()
///     .with_backends(wgpu::Backends::VULKAN)
///     .with_name("llvmpipe")
///     .with_devices_per_adapter(2);
/// assert_eq!(filter.devices_per_adapter, 2);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GpuFilter {
    /// The backends to look on. `None` (the default): as `WGPU_BACKEND`
    /// says, as for [`Gpu::new`], else every backend compiled in.
    pub backends: Option<wgpu::Backends>,
    /// A case-insensitive substring of the adapter's name. `None` (the
    /// default): `WGPU_ADAPTER_NAME` when it is set, else any name.
    pub name: Option<String>,
    /// The device types to take (discrete, integrated, CPU, ...); empty
    /// (the default): any.
    pub device_types: Vec<wgpu::DeviceType>,
    /// Devices opened on each adapter (default 1; 0 counts as 1). More
    /// than one gives several devices of one adapter, each with its own
    /// queue: on a CPU adapter such as lavapipe they share the CPU.
    pub devices_per_adapter: usize,
    /// How each device is opened (limits, features, timestamps,
    /// transfers), as for [`Gpu::with_options`]; its power preference is
    /// not used (every matching adapter is opened).
    pub options: GpuOptions,
}

impl Default for GpuFilter {
    fn default() -> Self {
        GpuFilter {
            backends: None,
            name: None,
            device_types: Vec::new(),
            devices_per_adapter: 1,
            options: GpuOptions::default(),
        }
    }
}

impl GpuFilter {
    /// Look on these backends only.
    #[must_use]
    pub fn with_backends(mut self, backends: wgpu::Backends) -> Self {
        self.backends = Some(backends);
        self
    }

    /// Take adapters whose name contains `name` (case-insensitive).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Take adapters of these device types only.
    #[must_use]
    pub fn with_device_types(mut self, types: &[wgpu::DeviceType]) -> Self {
        self.device_types = types.to_vec();
        self
    }

    /// Open `count` devices on each adapter (at least 1).
    #[must_use]
    pub fn with_devices_per_adapter(mut self, count: usize) -> Self {
        self.devices_per_adapter = count;
        self
    }

    /// Open each device with `options`.
    #[must_use]
    pub fn with_options(mut self, options: GpuOptions) -> Self {
        self.options = options;
        self
    }

    /// The name filter in effect: the filter's own, else `WGPU_ADAPTER_NAME`.
    fn name_wanted(&self) -> Option<String> {
        self.name
            .clone()
            .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
            .map(|n| n.to_lowercase())
    }

    /// Whether `info` passes the filter.
    fn matches(&self, info: &wgpu::AdapterInfo, name: Option<&str>) -> bool {
        let named = name.is_none_or(|n| info.name.to_lowercase().contains(n));
        let typed = self.device_types.is_empty() || self.device_types.contains(&info.device_type);
        named && typed
    }
}

impl std::fmt::Display for GpuFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.backends {
            Some(b) => write!(f, "backends {b:?}")?,
            None => write!(f, "backends from WGPU_BACKEND or all")?,
        }
        if let Some(name) = self.name_wanted() {
            write!(f, ", name containing {name:?}")?;
        }
        if !self.device_types.is_empty() {
            write!(f, ", device types {:?}", self.device_types)?;
        }
        Ok(())
    }
}

/// The devices of a device set on one host: every adapter that matched a
/// [`GpuFilter`] ([`Gpus::open`]) or a given list ([`Gpus::from_gpus`]),
/// each an ordinary [`Gpu`] with its own device and queue. A
/// [`GraphSet`](crate::GraphSet) builds one graph on each and spreads
/// batches over them.
///
/// Not on wasm32: a browser offers one adapter.
///
/// ```no_run
/// use vyre_graph::{GpuFilter, Gpus};
/// let gpus = Gpus::open(&GpuFilter::default())?;
/// for (i, gpu) in gpus.iter().enumerate() {
///     println!("device {i}: {}", gpu.adapter());
/// }
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Gpus {
    gpus: Vec<Gpu>,
}

impl Gpus {
    /// Open every adapter that matches `filter`, `filter.devices_per_adapter`
    /// devices each, in the order wgpu lists the adapters.
    ///
    /// # Errors
    /// [`BackendError::NoAdapter`] naming the filter and the adapters found
    /// (with the driver setup step) when none matches;
    /// [`BackendError::OnDevice`] around
    /// [`BackendError::DeviceRequestFailed`] when an adapter refuses a
    /// device.
    pub fn open(filter: &GpuFilter) -> Result<Gpus> {
        pollster::block_on(Self::open_async(filter))
    }

    async fn open_async(filter: &GpuFilter) -> Result<Gpus> {
        let mut descriptor = instance_descriptor();
        if let Some(backends) = filter.backends {
            descriptor.backends = backends;
        }
        let backends = descriptor.backends;
        let instance = wgpu::Instance::new(descriptor);
        let adapters = instance.enumerate_adapters(backends).await;
        let name = filter.name_wanted();
        let found: Vec<String> = adapters
            .iter()
            .map(|a| {
                let info = a.get_info();
                format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
            })
            .collect();
        let matching: Vec<wgpu::Adapter> = adapters
            .into_iter()
            .filter(|a| filter.matches(&a.get_info(), name.as_deref()))
            .collect();
        if matching.is_empty() {
            return Err(BackendError::NoAdapter {
                reason: format!(
                    "no adapter matches the device set's filter ({filter}); adapters found: [{}]",
                    found.join(", ")
                ),
            });
        }
        let mut gpus = Vec::new();
        for adapter in matching {
            for _ in 0..filter.devices_per_adapter.max(1) {
                let device = gpus.len();
                let gpu = Gpu::open_adapter(adapter.clone(), &filter.options)
                    .await
                    .map_err(|e| BackendError::OnDevice {
                        device,
                        adapter: adapter.get_info().name,
                        source: Box::new(e),
                    })?;
                gpus.push(gpu);
            }
        }
        Ok(Gpus { gpus })
    }

    /// A device set of these devices, in this order (clones of one `Gpu`
    /// are one device: give each once).
    ///
    /// ```no_run
    /// use vyre_graph::{Gpu, Gpus};
    /// let gpus = Gpus::from_gpus(vec![Gpu::new()?, Gpu::new()?])?;
    /// assert_eq!(gpus.len(), 2);
    /// # Ok::<(), vyre_graph::BackendError>(())
    /// ```
    ///
    /// # Errors
    /// [`BackendError::InvalidDeviceSet`] for an empty list or a `Gpu`
    /// given twice.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Result<Gpus> {
        if gpus.is_empty() {
            return Err(BackendError::InvalidDeviceSet {
                reason: "the list of devices is empty; give at least one Gpu".into(),
            });
        }
        for (i, gpu) in gpus.iter().enumerate() {
            if let Some(j) = gpus.iter().take(i).position(|g| g.id() == gpu.id()) {
                return Err(BackendError::InvalidDeviceSet {
                    reason: format!(
                        "devices {j} and {i} are the same Gpu (id {}); a clone of a Gpu is the same device: open another with `Gpu::new` or `Gpus::open` (several devices of one adapter: `GpuFilter::with_devices_per_adapter`)",
                        gpu.id()
                    ),
                });
            }
        }
        Ok(Gpus { gpus })
    }

    /// A set of these devices, unchecked (a graph set's current devices).
    pub(crate) fn of(gpus: Vec<Gpu>) -> Gpus {
        Gpus { gpus }
    }

    /// How many devices.
    #[must_use]
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Whether there are none (never, for a set made by [`Gpus::open`] or
    /// [`Gpus::from_gpus`]).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// Device `index`.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&Gpu> {
        self.gpus.get(index)
    }

    /// The devices in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Gpu> {
        self.gpus.iter()
    }

    /// The index of the device whose [`Gpu::id`] is `id`.
    #[must_use]
    pub fn position(&self, id: u64) -> Option<usize> {
        self.gpus.iter().position(|g| g.id() == id)
    }
}

impl<'a> IntoIterator for &'a Gpus {
    type Item = &'a Gpu;
    type IntoIter = std::slice::Iter<'a, Gpu>;

    fn into_iter(self) -> Self::IntoIter {
        self.gpus.iter()
    }
}
