//! What flows into and out of a run, on the host side: untyped feeds and
//! sinks ([`Feed`], [`Sink`], [`OwnedFeed`]), their typed forms for
//! `graph!`'s generated API ([`Input`], [`Headed`], [`HeadedInput`]), the
//! seed API's [`GpuResource`], and the host-side helpers the generated code
//! reads back through (`resize_vec`, `append_scratch`, `read_appended`).

use bytemuck::Pod;

use super::buffer::GpuBufferHandle;
use super::texture_handle::GpuTextureHandle;
use super::transfer::{Copier, Receive, Source, receive_vec};
use crate::spec::error::{BackendError, Result};

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
    Texture(&'a GpuTextureHandle),
}

impl Feed<'_> {
    /// Bytes this feed provides.
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Feed::Host(b) => b.len() as u64,
            Feed::Device(h) => h.size(),
            Feed::Texture(h) => {
                let texel = h.texture().format().block_copy_size(None).unwrap_or(0);
                h.extent()
                    .into_iter()
                    .fold(u64::from(texel), |acc, side| acc * u64::from(side))
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
    /// Read back into this host slice (exactly the output's size). For an
    /// append output read by its count (see
    /// [`TransferOptions::count_first_min_bytes`](crate::TransferOptions::count_first_min_bytes)),
    /// only its header and the items counted are written; the bytes after
    /// them keep what they held.
    Host(&'a mut [u8]),
    /// Read back into a vector, replacing its contents (`Sink::from(&mut
    /// vec)`, see [`VecSink`]): the output's elements, written straight
    /// into the vector's memory with no zero-filling first; for an append
    /// output, only as many as its count.
    Vector(VecSink<'a>),
    /// Copied on the device into this resident buffer.
    Device(&'a GpuBufferHandle),
    /// Copied on the device into this resident texture.
    Texture(&'a GpuTextureHandle),
    /// Not needed: nothing is copied or read back.
    Skip,
}

impl Sink<'_> {
    /// Whether it is read back to the host.
    pub(crate) fn is_host(&self) -> bool {
        matches!(self, Sink::Host(_) | Sink::Vector(_))
    }
}

/// A host vector that an output is read back into ([`Sink::Vector`]): made
/// with `Sink::from` from a `&mut Vec<T>` (the output's elements) or a
/// `&mut Headed<H, T>` (its header too), `T` an element type of the
/// output's size or one that divides it (e.g. `u8`). The vector's
/// contents are replaced and its capacity kept when it suffices, so a
/// loop that reuses one vector allocates nothing on the host.
///
/// ```no_run
/// # fn f(graph: &vyre_graph::Graph, x: &[u32]) -> vyre_graph::Result<()> {
/// use vyre_graph::{DispatchConfig, Feed, Sink};
/// let mut y: Vec<u32> = Vec::new();
/// let feeds = [Feed::Host(bytemuck::cast_slice(x))];
/// graph.run(&DispatchConfig::default(), x.len() as u64, &feeds, &mut [Sink::from(&mut y)])?;
/// # Ok(()) }
/// ```
pub struct VecSink<'a> {
    pub(crate) target: &'a mut (dyn Receive + 'static),
}

impl VecSink<'_> {
    /// Bytes of one element of the vector it reads into.
    #[must_use]
    pub fn element_size(&self) -> usize {
        self.target.element_size()
    }

    /// Bytes of the header it keeps (0 for a plain vector; a
    /// [`Headed`]'s header otherwise).
    #[must_use]
    pub fn header_size(&self) -> usize {
        self.target.header_size()
    }

    /// Fills the vector with an output read elsewhere, as a run would:
    /// `header` ([`VecSink::header_size`] bytes), then `body`'s elements
    /// (a whole number of [`VecSink::element_size`]). For an engine that
    /// runs instances in another process and ships their outputs back as
    /// bytes (`vyre-mpi`); the vector's capacity is kept when it suffices.
    ///
    /// ```
    /// use vyre_graph::Sink;
    /// let mut y: Vec<u32> = vec![9; 10];
    /// let mut sink = Sink::from(&mut y);
    /// if let Sink::Vector(v) = &mut sink {
    ///     v.fill(&[], bytemuck::cast_slice(&[1u32, 2, 3]))?;
    /// }
    /// drop(sink);
    /// assert_eq!(y, [1, 2, 3]);
    /// # Ok::<(), vyre_graph::BackendError>(())
    /// ```
    ///
    /// # Errors
    /// [`BackendError::SinkTypeMismatch`] when `header` is not the header's
    /// size or `body` not a whole number of elements;
    /// [`BackendError::HostAllocationFailed`] when the host cannot allocate
    /// the vector.
    pub fn fill(&mut self, header: &[u8], body: &[u8]) -> Result<()> {
        let size = self.target.element_size().max(1);
        if header.len() != self.target.header_size() || !body.len().is_multiple_of(size) {
            return Err(BackendError::SinkTypeMismatch {
                buffer: "filled by `VecSink::fill`".into(),
                reason: format!(
                    "the vector takes a {}-byte header and a whole number of {size}-byte elements, not a {}-byte header and {} bytes: pass the output's bytes as a run at the same size would read them",
                    self.target.header_size(),
                    header.len(),
                    body.len()
                ),
            });
        }
        let pool = super::transfer::TransferPool::new(0);
        let copier = Copier {
            pool: &pool,
            options: crate::spec::transfer::TransferOptions::default().with_threads(0),
        };
        self.target
            .receive(&copier, header, Source::Plain(body), body.len() / size)
            .map_err(|bytes| BackendError::HostAllocationFailed {
                buffer: "the vector sink".into(),
                bytes,
            })
    }
}

impl std::fmt::Debug for VecSink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VecSink")
            .field("element_size", &self.target.element_size())
            .field("header_size", &self.target.header_size())
            .finish()
    }
}

impl<'a, T: Pod + Send + Sync> From<&'a mut Vec<T>> for Sink<'a> {
    fn from(v: &'a mut Vec<T>) -> Self {
        Sink::Vector(VecSink { target: v })
    }
}

impl<'a, H: Pod + Send + Sync, T: Pod + Send + Sync> From<&'a mut Headed<H, T>> for Sink<'a> {
    fn from(h: &'a mut Headed<H, T>) -> Self {
        Sink::Vector(VecSink { target: h })
    }
}

impl<'a> From<&'a GpuBufferHandle> for Sink<'a> {
    fn from(h: &'a GpuBufferHandle) -> Self {
        Sink::Device(h)
    }
}

impl<'a> From<&'a GpuTextureHandle> for Sink<'a> {
    fn from(h: &'a GpuTextureHandle) -> Self {
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
    Texture(&'a GpuTextureHandle),
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

impl<'a, T: Pod> From<&'a GpuTextureHandle> for Input<'a, T> {
    fn from(h: &'a GpuTextureHandle) -> Self {
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

impl<H: Pod + Send + Sync, T: Pod + Send + Sync> Receive for Headed<H, T> {
    fn element_size(&self) -> usize {
        size_of::<T>()
    }

    fn header_size(&self) -> usize {
        size_of::<H>()
    }

    fn receive(
        &mut self,
        copier: &Copier<'_>,
        header: &[u8],
        body: Source<'_>,
        elements: usize,
    ) -> std::result::Result<(), u64> {
        let head = bytemuck::bytes_of_mut(&mut self.header);
        let len = head.len().min(header.len());
        head[..len].copy_from_slice(&header[..len]);
        receive_vec(&mut self.elements, copier, body, elements)
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
    Texture(&'a GpuTextureHandle),
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

/// Zeroed host bytes to read an append buffer of `bytes` bytes back into.
///
/// # Errors
/// [`BackendError::HostAllocationFailed`] when the host cannot hold them.
#[doc(hidden)]
pub fn append_scratch(bytes: u64, buffer: &str) -> Result<Vec<u8>> {
    let failed = || BackendError::HostAllocationFailed {
        buffer: buffer.to_string(),
        bytes,
    };
    let len = usize::try_from(bytes).map_err(|_| failed())?;
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(len).map_err(|_| failed())?;
    v.resize(len, 0);
    Ok(v)
}

/// Replaces `items` with the items of an append buffer read back as `bytes`
/// (the count first, the items after `header_bytes`): `min(count,
/// capacity)` of them. Keeps the vector's capacity.
#[doc(hidden)]
pub fn read_appended<T: Pod>(items: &mut Vec<T>, bytes: &[u8], header_bytes: usize) {
    items.clear();
    let Some(count) = bytes.get(..4).map(bytemuck::pod_read_unaligned::<u32>) else {
        return;
    };
    let body = bytes.get(header_bytes..).unwrap_or(&[]);
    let size = std::mem::size_of::<T>().max(1);
    items.extend(
        body.chunks_exact(size)
            .take(count as usize)
            .map(bytemuck::pod_read_unaligned::<T>),
    );
}

#[cfg(test)]
mod tests {
    use super::read_appended;

    #[test]
    fn read_back_items_stop_at_the_count_and_at_the_capacity() {
        let mut bytes = vec![0u8; 4 + 4 * 3];
        bytes[..4].copy_from_slice(&2u32.to_ne_bytes());
        for (i, v) in [7u32, 8, 9].iter().enumerate() {
            bytes[4 + 4 * i..8 + 4 * i].copy_from_slice(&v.to_ne_bytes());
        }
        let mut items: Vec<u32> = vec![1; 10];
        read_appended(&mut items, &bytes, 4);
        assert_eq!(items, [7, 8]);
        bytes[..4].copy_from_slice(&99u32.to_ne_bytes());
        read_appended(&mut items, &bytes, 4);
        assert_eq!(
            items,
            [7, 8, 9],
            "an overflowing count stops at the capacity"
        );
        bytes[..4].copy_from_slice(&0u32.to_ne_bytes());
        read_appended(&mut items, &bytes, 4);
        assert!(items.is_empty());
    }
}
