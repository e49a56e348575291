//! [`GpuBufferHandle`]: a buffer that lives on the device between runs
//! (made by vyre, or an application's own), the plan-side reference to one
//! ([`BoundHandle`]), and uploads into device buffers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use bytemuck::Pod;

use super::gpu::Gpu;
use super::map::{Body, Dest, Waiting};
use crate::spec::error::{BackendError, Result};

#[derive(Debug)]
struct HandleInner {
    buffer: wgpu::Buffer,
    size: u64,
    gpu: Gpu,
    released: AtomicBool,
    /// Made by vyre (freed when the last handle goes), or the
    /// application's (never freed by vyre).
    owned: bool,
    /// The name errors give it ([`GpuBufferHandle::from_wgpu_with_label`]).
    label: Option<String>,
}

impl Drop for HandleInner {
    fn drop(&mut self) {
        // The last handle is gone: free the device memory now, even where a
        // cached launch plan's bind groups still name the buffer (they are
        // rebuilt before the plan uses another handle).
        if self.owned && !*self.released.get_mut() {
            self.gpu.free_buffer(&self.buffer);
        }
    }
}

/// A launch plan's reference to the resident input its bind groups point
/// at: it does not keep the handle's memory alive, and it tells the same
/// handle from a new one at the same address (the `Weak` keeps the address
/// taken).
#[derive(Debug)]
pub(crate) struct BoundHandle {
    inner: Weak<HandleInner>,
    buffer: wgpu::Buffer,
}

impl BoundHandle {
    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

/// A buffer that lives on the device between runs, so that graphs chain on
/// the GPU without a host round trip. Cheap to clone (reference counted).
///
/// ```no_run
/// let gpu = vyre_graph::Gpu::new()?;
/// let handle = vyre_graph::GpuBufferHandle::from_slice(&gpu, &[1u32, 2, 3])?;
/// assert_eq!(handle.read_as::<u32>(&gpu)?, vec![1, 2, 3]);
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuBufferHandle {
    inner: Arc<HandleInner>,
}

impl GpuBufferHandle {
    /// A zeroed device buffer of `size` bytes (rounded up to 4; 0 makes an
    /// empty buffer, see [`GpuBufferHandle::size`]).
    ///
    /// # Errors
    /// [`BackendError::BufferTooLarge`] over the device's buffer limit.
    pub fn zeroed(gpu: &Gpu, size: u64) -> Result<Self> {
        Self::zeroed_with_usage(gpu, size, wgpu::BufferUsages::empty())
    }

    /// As [`GpuBufferHandle::zeroed`], with `usage` added to
    /// `STORAGE | COPY_SRC | COPY_DST` (e.g. `VERTEX` to draw from it).
    ///
    /// # Errors
    /// As [`GpuBufferHandle::zeroed`].
    pub(crate) fn zeroed_with_usage(
        gpu: &Gpu,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<Self> {
        // An empty buffer stays empty (`size()` 0, read back as nothing),
        // backed by one word: wgpu makes no empty storage buffer.
        let logical = size.next_multiple_of(4);
        let size = logical.max(4);
        let max = gpu.limits().max_buffer_size;
        if size > max {
            return Err(BackendError::BufferTooLarge {
                buffer: "resident buffer".into(),
                bytes: size,
                limit: "the device's `max_buffer_size`",
                max,
            });
        }
        let buffer = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre resident"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST
                | usage,
            mapped_at_creation: false,
        });
        Ok(GpuBufferHandle {
            inner: Arc::new(HandleInner {
                buffer,
                size: logical,
                gpu: gpu.clone(),
                released: AtomicBool::new(false),
                owned: true,
                label: None,
            }),
        })
    }

    /// Use an application's buffer as a resident buffer: a graph input (bound
    /// in place, no copy), an `inout` feed, or a [`Sink::Device`](crate::Sink::Device) that
    /// receives an output. The application keeps owning it: vyre never
    /// destroys it.
    ///
    /// Each run checks the usage its role needs (`STORAGE` for an input,
    /// `COPY_SRC` for a copied feed, `COPY_DST` for a sink) and the size the
    /// graph declares.
    ///
    /// ```no_run
    /// # fn f(gpu: &vyre_graph::Gpu) -> Result<(), vyre_graph::BackendError> {
    /// use vyre_graph::wgpu;
    /// let vertices = gpu.device().create_buffer(&wgpu::BufferDescriptor {
    ///     label: Some("vertices"),
    ///     size: 4096,
    ///     usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    ///     mapped_at_creation: false,
    /// });
    /// let handle = vyre_graph::GpuBufferHandle::from_wgpu(gpu, vertices)?;
    /// # Ok(()) }
    /// ```
    ///
    /// The buffer must come from `gpu`'s device: wgpu offers no way to check
    /// that (a buffer of another device is a wgpu validation error at the
    /// first run; one of another wgpu `Instance` can make wgpu itself panic).
    ///
    /// # Errors
    /// [`BackendError::InvalidHandle`] when the buffer's size is not a
    /// multiple of 4 bytes or it has neither `STORAGE` nor a copy usage.
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer) -> Result<Self> {
        Self::import(gpu, buffer, None)
    }

    /// As [`GpuBufferHandle::from_wgpu`], naming the buffer `label` in
    /// every error about it (wgpu does not tell a buffer's label, so pass
    /// the one you gave it).
    ///
    /// ```no_run
    /// # fn f(gpu: &vyre_graph::Gpu, vertices: vyre_graph::wgpu::Buffer) -> Result<(), vyre_graph::BackendError> {
    /// let handle = vyre_graph::GpuBufferHandle::from_wgpu_with_label(gpu, vertices, "vertices")?;
    /// assert_eq!(handle.label(), Some("vertices"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`GpuBufferHandle::from_wgpu`].
    pub fn from_wgpu_with_label(
        gpu: &Gpu,
        buffer: wgpu::Buffer,
        label: impl Into<String>,
    ) -> Result<Self> {
        Self::import(gpu, buffer, Some(label.into()))
    }

    fn import(gpu: &Gpu, buffer: wgpu::Buffer, label: Option<String>) -> Result<Self> {
        let subject = match &label {
            Some(label) => format!("the buffer `{label}`"),
            None => "a buffer".to_string(),
        };
        // No graph resource to name: the reason is the whole message.
        let invalid = |why: String| BackendError::InvalidHandle {
            buffer: String::new(),
            reason: format!("`GpuBufferHandle::from_wgpu` cannot import {subject}: {why}"),
        };
        let size = buffer.size();
        if size == 0 || !size.is_multiple_of(4) {
            return Err(invalid(format!(
                "it is {size} bytes; a storage buffer holds whole 4-byte words (at least one)"
            )));
        }
        let usable = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        if !buffer.usage().intersects(usable) {
            return Err(invalid(format!(
                "its usage {} has none of STORAGE, COPY_SRC, COPY_DST, so no graph can read or write it; add STORAGE (and COPY_DST to receive outputs)",
                usage_names(buffer.usage())
            )));
        }
        Ok(GpuBufferHandle {
            inner: Arc::new(HandleInner {
                buffer,
                size,
                gpu: gpu.clone(),
                released: AtomicBool::new(false),
                owned: false,
                label,
            }),
        })
    }

    /// Upload `data` into a new device buffer.
    ///
    /// # Errors
    /// As [`GpuBufferHandle::zeroed`].
    pub fn from_slice<T: Pod>(gpu: &Gpu, data: &[T]) -> Result<Self> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let handle = Self::zeroed(gpu, bytes.len() as u64)?;
        upload(gpu, &handle.inner.buffer, bytes);
        Ok(handle)
    }

    /// The plan-side reference to this handle.
    pub(crate) fn bound(&self) -> BoundHandle {
        BoundHandle {
            inner: Arc::downgrade(&self.inner),
            buffer: self.inner.buffer.clone(),
        }
    }

    /// Whether `bound` refers to this handle.
    pub(crate) fn is(&self, bound: &BoundHandle) -> bool {
        Weak::ptr_eq(&bound.inner, &Arc::downgrade(&self.inner))
    }

    /// Size in bytes: what the buffer holds. A buffer made empty
    /// ([`GpuBufferHandle::zeroed`] with 0 bytes, an output at problem size
    /// 0) has size 0 and reads back as nothing, though a 4-byte allocation
    /// backs it ([`GpuBufferHandle::buffer`]).
    #[must_use]
    pub fn size(&self) -> u64 {
        self.inner.size
    }

    /// The label it was imported with
    /// ([`GpuBufferHandle::from_wgpu_with_label`]), which errors name it by.
    #[must_use]
    pub fn label(&self) -> Option<&str> {
        self.inner.label.as_deref()
    }

    /// How an error names it: its label, else what it is.
    fn subject(&self) -> String {
        match (&self.inner.label, self.inner.owned) {
            (Some(label), true) => format!("the resident buffer `{label}`"),
            (Some(label), false) => format!("the imported buffer `{label}`"),
            (None, true) => "the resident buffer".to_string(),
            (None, false) => "an imported buffer (no label)".to_string(),
        }
    }

    /// The id of the [`Gpu`] that owns it.
    #[must_use]
    pub fn gpu_id(&self) -> u64 {
        self.inner.gpu.id()
    }

    /// The wgpu buffer, for interop.
    #[must_use]
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.inner.buffer
    }

    /// Free the device memory now, for every clone of this handle. Later
    /// uses are [`BackendError::InvalidHandle`] errors. A buffer imported
    /// with [`GpuBufferHandle::from_wgpu`] belongs to the application and is
    /// only marked released, never destroyed.
    pub fn release(&self) {
        if !self.inner.released.swap(true, Ordering::AcqRel) && self.inner.owned {
            self.inner.gpu.free_buffer(&self.inner.buffer);
        }
    }

    /// Whether [`GpuBufferHandle::release`] was called.
    #[must_use]
    pub fn is_released(&self) -> bool {
        self.inner.released.load(Ordering::Acquire)
    }

    /// Check that the handle is usable on `gpu` for graph buffer `buffer`
    /// of a run, holds at least `needed` bytes and has `usage`.
    pub(crate) fn check(
        &self,
        gpu: &Gpu,
        buffer: &str,
        needed: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<()> {
        self.check_use(gpu, HandleUse::Run(buffer), needed, usage)
    }

    /// [`GpuBufferHandle::check`] for `what`: a run that passes it for a
    /// graph buffer, or a call of its own.
    fn check_use(
        &self,
        gpu: &Gpu,
        what: HandleUse<'_>,
        needed: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<()> {
        let invalid = |why: String| match what {
            // The message names the graph buffer; say which handle it is
            // when the handle has a name of its own or is the application's.
            HandleUse::Run(buffer) => BackendError::InvalidHandle {
                buffer: buffer.to_string(),
                reason: if self.inner.label.is_some() || !self.inner.owned {
                    format!("it is {}, and {why}", self.subject())
                } else {
                    why
                },
            },
            // No graph buffer: the reason is the whole message.
            HandleUse::Call(call) => BackendError::InvalidHandle {
                buffer: String::new(),
                reason: format!(
                    "`GpuBufferHandle::{call}` cannot use {}: {why}",
                    self.subject()
                ),
            },
        };
        if self.gpu_id() != gpu.id() {
            return Err(invalid(format!(
                "it belongs to another Gpu (gpu {}, this is gpu {}); make or import it with the graph's Gpu (clones of a Gpu share handles)",
                self.gpu_id(),
                gpu.id()
            )));
        }
        let has = self.inner.buffer.usage();
        if !has.contains(usage) {
            return Err(invalid(format!(
                "its wgpu buffer has usage {}, which lacks {} ({}); create it with `BufferUsages::{}` added",
                usage_names(has),
                usage_names(usage),
                what.needs(usage),
                usage_names(usage)
            )));
        }
        if self.is_released() {
            return Err(invalid(format!(
                "it was released; keep the handle alive until {}",
                match what {
                    HandleUse::Run(_) => "every run that uses it",
                    HandleUse::Call(_) => "it is read",
                }
            )));
        }
        if self.size() < needed {
            return Err(invalid(format!(
                "it holds {} bytes but {needed} are needed; make it with the size the graph declares",
                self.size()
            )));
        }
        Ok(())
    }

    /// Read the whole buffer back to the host (one submission and a wait).
    ///
    /// Not on wasm32: use [`GpuBufferHandle::read_async`].
    ///
    /// # Errors
    /// [`BackendError::InvalidHandle`] for a released or foreign handle,
    /// [`BackendError::ReadbackFailed`] when mapping fails,
    /// [`BackendError::HostAllocationFailed`] when the host cannot hold it.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        let waiting = Waiting::Block(None);
        super::map::block_on(self.read_for(gpu, "read", waiting))
    }

    /// As [`GpuBufferHandle::read`], as a future that never blocks (the
    /// way to read a resident buffer in a browser).
    ///
    /// ```no_run
    /// # async fn f(gpu: &vyre_graph::Gpu) -> vyre_graph::Result<()> {
    /// let handle = vyre_graph::GpuBufferHandle::from_slice(gpu, &[1u32, 2, 3])?;
    /// assert_eq!(handle.read_as_async::<u32>(gpu).await?, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`GpuBufferHandle::read`].
    pub async fn read_async(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        self.read_for(gpu, "read_async", Waiting::Async).await
    }

    /// Read the buffer back as elements of `T` (trailing bytes that do not
    /// make a whole element are dropped), straight into the vector's
    /// memory.
    ///
    /// Not on wasm32: use [`GpuBufferHandle::read_as_async`].
    ///
    /// # Errors
    /// As [`GpuBufferHandle::read`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_as<T: Pod + Send + Sync>(&self, gpu: &Gpu) -> Result<Vec<T>> {
        let waiting = Waiting::Block(None);
        super::map::block_on(self.read_for(gpu, "read_as", waiting))
    }

    /// As [`GpuBufferHandle::read_as`], as a future that never blocks.
    ///
    /// # Errors
    /// As [`GpuBufferHandle::read`].
    pub async fn read_as_async<T: Pod + Send + Sync>(&self, gpu: &Gpu) -> Result<Vec<T>> {
        self.read_for(gpu, "read_as_async", Waiting::Async).await
    }

    /// [`GpuBufferHandle::read_as`] for the method `call` (which its errors
    /// name), waiting as `waiting` says.
    async fn read_for<T: Pod + Send + Sync>(
        &self,
        gpu: &Gpu,
        call: &str,
        waiting: Waiting,
    ) -> Result<Vec<T>> {
        let what = HandleUse::Call(call);
        self.check_use(gpu, what, 0, wgpu::BufferUsages::COPY_SRC)?;
        if self.size() == 0 {
            return Ok(Vec::new());
        }
        let staging = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre readback"),
            size: self.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("vyre readback"),
            });
        encoder.copy_buffer_to_buffer(self.buffer(), 0, &staging, 0, self.size());
        let index = gpu.submit(encoder.finish());
        let bytes = usize::try_from(self.size()).unwrap_or(usize::MAX);
        let whole = bytes - bytes % size_of::<T>().max(1);
        let mut out: Vec<T> = Vec::new();
        let dest = Dest::Vec {
            sink: &mut out,
            header: 0,
            body: Body::Bytes(whole),
            name: "resident buffer",
        };
        let read = super::map::read_staging(gpu, &staging, index, dest, waiting).await;
        gpu.free_buffer(&staging);
        read.map(|_| out)
    }
}

/// What a handle is checked for: a run that passes it for a graph buffer,
/// or a method of the handle (`read`, `read_as`).
#[derive(Clone, Copy)]
enum HandleUse<'a> {
    Run(&'a str),
    Call(&'a str),
}

impl HandleUse<'_> {
    /// Why this use needs `usage`.
    fn needs(self, usage: wgpu::BufferUsages) -> String {
        match self {
            HandleUse::Run(buffer) if usage == wgpu::BufferUsages::STORAGE => {
                format!("the run binds it in place as input `{buffer}`")
            }
            HandleUse::Run(buffer) if usage == wgpu::BufferUsages::COPY_DST => {
                format!("the run copies output `{buffer}` into it")
            }
            HandleUse::Run(buffer) => format!("the run copies it into `{buffer}`"),
            HandleUse::Call(call) => {
                format!("`{call}` copies it into a staging buffer to read it back")
            }
        }
    }
}

/// Write `bytes` at the start of `buffer`, padding a ragged tail to the
/// 4-byte copy alignment.
pub(crate) fn upload(gpu: &Gpu, buffer: &wgpu::Buffer, bytes: &[u8]) {
    let whole = bytes.len() - bytes.len() % 4;
    if whole > 0 {
        gpu.write_buffer(buffer, 0, &bytes[..whole]);
    }
    if whole < bytes.len() {
        let mut tail = [0u8; 4];
        tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        gpu.write_buffer(buffer, whole as u64, &tail);
    }
}

/// `STORAGE | COPY_DST`, as written in code.
fn usage_names(usage: wgpu::BufferUsages) -> String {
    let names: Vec<&str> = usage.iter_names().map(|(name, _)| name).collect();
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(" | ")
    }
}

/// Buffer sizes are whole 4-byte words, at least one.
pub(crate) fn round4(bytes: u64) -> u64 {
    // Saturating: an absurd size stays absurd (and is refused), never wraps.
    bytes
        .max(4)
        .checked_next_multiple_of(4)
        .unwrap_or(u64::MAX - 3)
}
