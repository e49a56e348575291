//! What flows into and out of a run: host bytes, resident device buffers
//! ([`GpuBufferHandle`]), and their typed forms.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use bytemuck::Pod;

use crate::error::{BackendError, Result};
use crate::gpu::Gpu;

#[derive(Debug)]
struct HandleInner {
    buffer: wgpu::Buffer,
    size: u64,
    gpu: Gpu,
    released: AtomicBool,
    /// Made by vyre (freed when the last handle goes), or the
    /// application's (never freed by vyre).
    owned: bool,
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
    /// A zeroed device buffer of `size` bytes (rounded up to 4).
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
    pub fn zeroed_with_usage(gpu: &Gpu, size: u64, usage: wgpu::BufferUsages) -> Result<Self> {
        let size = size.max(4).next_multiple_of(4);
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
                size,
                gpu: gpu.clone(),
                released: AtomicBool::new(false),
                owned: true,
            }),
        })
    }

    /// Use an application's buffer as a resident buffer: a graph input (bound
    /// in place, no copy), an `inout` feed, or a [`Sink::Device`] that
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
        let invalid = |reason: String| BackendError::InvalidHandle {
            buffer: "imported buffer".to_string(),
            reason,
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

    /// Size in bytes.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.inner.size
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

    /// Check that the handle is usable on `gpu` for `buffer`, holds at
    /// least `needed` bytes and has `usage`.
    pub(crate) fn check(
        &self,
        gpu: &Gpu,
        buffer: &str,
        needed: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<()> {
        let invalid = |reason: String| BackendError::InvalidHandle {
            buffer: buffer.to_string(),
            reason,
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
                "its wgpu buffer has usage {}, which lacks {} (this run binds or copies it that way); create it with `BufferUsages::{}` added",
                usage_names(has),
                usage_names(usage),
                usage_names(usage)
            )));
        }
        if self.is_released() {
            return Err(invalid(
                "it was released; keep the handle alive until every run that uses it".into(),
            ));
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
    /// # Errors
    /// [`BackendError::InvalidHandle`] for a released or foreign handle,
    /// [`BackendError::ReadbackFailed`] when mapping fails.
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        self.check(gpu, "resident buffer", 0, wgpu::BufferUsages::COPY_SRC)?;
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
        let mut out = vec![0u8; self.size() as usize];
        let read = crate::readback::map_and_copy(
            gpu,
            &crate::readback::MapSlots::new(1),
            Some(index),
            None,
            &mut crate::readback::Targets::one(&staging, &mut out[..]),
        );
        gpu.free_buffer(&staging);
        read.map(|_| out)
    }

    /// Read the buffer back as elements of `T` (trailing bytes that do not
    /// make a whole element are dropped).
    ///
    /// # Errors
    /// As [`GpuBufferHandle::read`].
    pub fn read_as<T: Pod>(&self, gpu: &Gpu) -> Result<Vec<T>> {
        let bytes = self.read(gpu)?;
        let whole = bytes.len() - bytes.len() % size_of::<T>().max(1);
        Ok(bytemuck::pod_collect_to_vec(&bytes[..whole]))
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

/// An op's input in the seed API: host bytes uploaded for the dispatch, or a
/// buffer already on the GPU used in place.
#[derive(Clone, Debug)]
pub enum GpuResource {
    /// Host bytes, uploaded for the dispatch.
    Borrowed(Vec<u8>),
    /// A resident device buffer, used in place (no copy).
    Resident(GpuBufferHandle),
}

impl From<Vec<u8>> for GpuResource {
    fn from(bytes: Vec<u8>) -> Self {
        GpuResource::Borrowed(bytes)
    }
}

impl From<GpuBufferHandle> for GpuResource {
    fn from(handle: GpuBufferHandle) -> Self {
        GpuResource::Resident(handle)
    }
}

/// One host input of a [`crate::Graph`] run, untyped.
#[derive(Clone, Copy, Debug)]
pub enum Feed<'a> {
    /// Bytes uploaded before the run.
    Host(&'a [u8]),
    /// A resident buffer copied on the device into the graph's buffer.
    Device(&'a GpuBufferHandle),
    /// A resident texture copied on the device into the graph's texture.
    Texture(&'a crate::GpuTextureHandle),
}

impl Feed<'_> {
    /// Bytes this feed provides.
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Feed::Host(b) => b.len() as u64,
            Feed::Device(h) => h.size(),
            Feed::Texture(h) => {
                let [w, h2] = h.size();
                let texel = h.texture().format().block_copy_size(None).unwrap_or(0);
                u64::from(w) * u64::from(h2) * u64::from(texel)
            }
        }
    }

    /// Whether it provides no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where one output of a [`crate::Graph`] run goes.
#[derive(Debug)]
pub enum Sink<'a> {
    /// Read back into this host slice (exactly the output's size).
    Host(&'a mut [u8]),
    /// Copied on the device into this resident buffer.
    Device(&'a GpuBufferHandle),
    /// Copied on the device into this resident texture.
    Texture(&'a crate::GpuTextureHandle),
    /// Not needed: nothing is copied or read back.
    Skip,
}

impl<'a> From<&'a GpuBufferHandle> for Sink<'a> {
    fn from(h: &'a GpuBufferHandle) -> Self {
        Sink::Device(h)
    }
}

impl<'a> From<&'a crate::GpuTextureHandle> for Sink<'a> {
    fn from(h: &'a crate::GpuTextureHandle) -> Self {
        Sink::Texture(h)
    }
}

/// A typed host input: a slice of `T` or a resident buffer. `graph!`'s
/// generated `run` takes `impl Into<Input<'_, T>>`, so both `&[T]`,
/// `&Vec<T>` and `&GpuBufferHandle` can be passed.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a, T: Pod> {
    /// Host data.
    Host(&'a [T]),
    /// A resident buffer.
    Device(&'a GpuBufferHandle),
    /// A resident texture (for a graph texture).
    Texture(&'a crate::GpuTextureHandle),
}

impl<'a, T: Pod> Input<'a, T> {
    /// The untyped feed.
    #[must_use]
    pub fn feed(self) -> Feed<'a> {
        match self {
            Input::Host(s) => Feed::Host(bytemuck::cast_slice(s)),
            Input::Device(h) => Feed::Device(h),
            Input::Texture(h) => Feed::Texture(h),
        }
    }
}

impl<'a, T: Pod> From<&'a [T]> for Input<'a, T> {
    fn from(s: &'a [T]) -> Self {
        Input::Host(s)
    }
}

impl<'a, T: Pod> From<&'a Vec<T>> for Input<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        Input::Host(s)
    }
}

impl<'a, T: Pod> From<&'a T> for Input<'a, T> {
    fn from(v: &'a T) -> Self {
        Input::Host(std::slice::from_ref(v))
    }
}

impl<'a, T: Pod> From<&'a crate::GpuTextureHandle> for Input<'a, T> {
    fn from(h: &'a crate::GpuTextureHandle) -> Self {
        Input::Texture(h)
    }
}

impl<'a, T: Pod> From<&'a GpuBufferHandle> for Input<'a, T> {
    fn from(h: &'a GpuBufferHandle) -> Self {
        Input::Device(h)
    }
}

/// A buffer whose WGSL type is a struct of leading fields (the header)
/// followed by a runtime-sized array, such as
/// `struct Particles { count: u32, items: array<Particle> }`: the header
/// (a struct `graph!` generates, `ParticlesHeader`) and the elements.
/// `graph!`'s generated `run` returns one for such an `output`/`inout`.
#[derive(Clone, Debug, PartialEq)]
pub struct Headed<H: Pod, T: Pod> {
    /// The fields before the array.
    pub header: H,
    /// The array's elements.
    pub elements: Vec<T>,
}

impl<H: Pod, T: Pod> Default for Headed<H, T> {
    fn default() -> Self {
        Headed {
            header: H::zeroed(),
            elements: Vec::new(),
        }
    }
}

impl<H: Pod, T: Pod> Headed<H, T> {
    /// A zeroed host image of the buffer with `len` elements (header
    /// first), to read back into. A failed allocation is an error.
    #[doc(hidden)]
    pub fn scratch(len: usize, buffer: &str) -> Result<Vec<u8>> {
        let bytes = len
            .checked_mul(size_of::<T>())
            .and_then(|b| b.checked_add(size_of::<H>()));
        let mut v: Vec<u8> = Vec::new();
        match bytes {
            Some(bytes) if v.try_reserve_exact(bytes).is_ok() => {
                v.extend(std::iter::repeat_n(0, bytes));
                Ok(v)
            }
            _ => Err(BackendError::HostAllocationFailed {
                buffer: buffer.to_string(),
                bytes: bytes.map_or(u64::MAX, |b| b as u64),
            }),
        }
    }

    /// Replaces the contents with a host image of the buffer (header
    /// first), keeping the vector's capacity.
    #[doc(hidden)]
    pub fn read_from(&mut self, bytes: &[u8]) {
        let split = size_of::<H>().min(bytes.len());
        let (head, body) = bytes.split_at(split);
        if head.len() == size_of::<H>() {
            self.header = bytemuck::pod_read_unaligned(head);
        }
        let size = size_of::<T>().max(1);
        self.elements.clear();
        self.elements.extend(
            body.chunks_exact(size)
                .map(bytemuck::pod_read_unaligned::<T>),
        );
    }
}

/// A typed host input for a buffer with a header (see [`Headed`]): a
/// `(&header, &[elements])` pair, a [`Headed`], or a resident buffer.
#[derive(Clone, Copy, Debug)]
pub enum HeadedInput<'a, H: Pod, T: Pod> {
    /// Host data: the header, then the elements.
    Host(&'a H, &'a [T]),
    /// A resident buffer (header included).
    Device(&'a GpuBufferHandle),
}

impl<'a, H: Pod, T: Pod> HeadedInput<'a, H, T> {
    /// The untyped feed, owning the host bytes (header, then elements).
    #[must_use]
    pub fn into_feed(self) -> OwnedFeed<'a> {
        match self {
            HeadedInput::Host(header, elements) => {
                let mut bytes =
                    Vec::with_capacity(size_of::<H>() + std::mem::size_of_val(elements));
                bytes.extend_from_slice(bytemuck::bytes_of(header));
                bytes.extend_from_slice(bytemuck::cast_slice(elements));
                OwnedFeed::Host(bytes)
            }
            HeadedInput::Device(h) => OwnedFeed::Device(h),
        }
    }
}

impl<'a, H: Pod, T: Pod> From<(&'a H, &'a [T])> for HeadedInput<'a, H, T> {
    fn from((header, elements): (&'a H, &'a [T])) -> Self {
        HeadedInput::Host(header, elements)
    }
}

impl<'a, H: Pod, T: Pod> From<(&'a H, &'a Vec<T>)> for HeadedInput<'a, H, T> {
    fn from((header, elements): (&'a H, &'a Vec<T>)) -> Self {
        HeadedInput::Host(header, elements)
    }
}

impl<'a, H: Pod, T: Pod, const N: usize> From<(&'a H, &'a [T; N])> for HeadedInput<'a, H, T> {
    fn from((header, elements): (&'a H, &'a [T; N])) -> Self {
        HeadedInput::Host(header, elements)
    }
}

impl<'a, H: Pod, T: Pod> From<&'a Headed<H, T>> for HeadedInput<'a, H, T> {
    fn from(h: &'a Headed<H, T>) -> Self {
        HeadedInput::Host(&h.header, &h.elements)
    }
}

impl<'a, H: Pod, T: Pod> From<&'a GpuBufferHandle> for HeadedInput<'a, H, T> {
    fn from(h: &'a GpuBufferHandle) -> Self {
        HeadedInput::Device(h)
    }
}

/// A [`Feed`] whose host bytes it owns (a header joined to its elements).
#[derive(Clone, Debug)]
pub enum OwnedFeed<'a> {
    /// Bytes uploaded before the run.
    Host(Vec<u8>),
    /// A resident buffer.
    Device(&'a GpuBufferHandle),
    /// A resident texture (for a graph texture).
    Texture(&'a crate::GpuTextureHandle),
}

impl OwnedFeed<'_> {
    /// The feed borrowing these bytes.
    #[must_use]
    pub fn feed(&self) -> Feed<'_> {
        match self {
            OwnedFeed::Host(bytes) => Feed::Host(bytes),
            OwnedFeed::Device(h) => Feed::Device(h),
            OwnedFeed::Texture(h) => Feed::Texture(h),
        }
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

/// Resize `v` to `len` elements, zero-filling new ones and keeping its
/// capacity (used by generated code to read back without reallocating).
/// A failed allocation is an error, not an abort.
#[doc(hidden)]
pub fn resize_vec<T: Pod>(v: &mut Vec<T>, len: usize, buffer: &str) -> Result<()> {
    if let Some(more) = len.checked_sub(v.len())
        && v.try_reserve_exact(more).is_err()
    {
        return Err(BackendError::HostAllocationFailed {
            buffer: buffer.to_string(),
            bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        });
    }
    v.resize(len, T::zeroed());
    Ok(())
}
