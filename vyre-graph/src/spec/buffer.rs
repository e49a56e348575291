//! Graph buffers ([`BufferSpec`]) and what makes one an append buffer
//! ([`AppendSpec`]).

use std::borrow::Cow;

use vyre_analysis::BufferClass;
use vyre_analysis::spec::Extent;
use vyre_analysis::spec::{TextureResource, TextureShape};

/// A graph buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufferSpec {
    /// Its name in the graph.
    pub name: Cow<'static, str>,
    /// What it is for: who writes it, who reads it.
    pub class: BufferClass,
    /// Bytes per element.
    pub element_size: u32,
    /// Elements, as a function of the problem size.
    pub len: Extent,
    /// Bytes before the first element (0 for a plain array): the offset of
    /// the runtime-sized array in a WGSL struct such as
    /// `struct Particles { count: u32, items: array<Particle> }`, whose
    /// leading fields are the buffer's header.
    pub header_bytes: u32,
    /// `Some` for a texture or a sampler (`None`: a buffer).
    pub texture: Option<TextureResource>,
    /// Set for an append buffer (`append hits[CAP];` in `graph!`): its
    /// header starts with a `u32` count and `len` is its capacity. See
    /// [`AppendSpec`].
    pub append: Option<AppendSpec>,
    /// The bytes of one element that every element of this output holds
    /// at problem size 0, when the graph determines it there without
    /// running: the identity of the `reduce` that writes it (`graph!` sets
    /// it for a reduction's destination whose source is empty at n = 0 and
    /// that nothing else writes). A graph runs at n = 0 only when each
    /// output is empty there or has this value; see
    /// [`Graph::run`](crate::Graph::run).
    pub empty_value: Option<Cow<'static, [u8]>>,
}

/// What makes a buffer an *append buffer*: kernels bind it as a struct whose
/// first member is `count: atomic<u32>` (writers) or `count: u32` (readers)
/// and whose last member is the runtime-sized array of items, and append
/// with `let slot = atomicAdd(&b.count, 1u); if slot < arrayLength(&b.items)
/// { b.items[slot] = v; }`.
///
/// The runtime sets the count to 0 at the start of every run, and again
/// before a node appends when some node read the buffer since the last
/// append (a reader consumes it; consecutive appenders accumulate). After
/// the run a count beyond the capacity ([`BufferSpec::len`]) is
/// [`BackendError::AppendOverflow`](crate::BackendError::AppendOverflow);
/// with `grow` the plan's capacity for that size also grows, within the
/// device's limits and the run's budget (see `Graph::grew_for`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AppendSpec {
    /// `grow`: on overflow, the capacity of this problem size's plan grows
    /// to fit the count (the typed API repeats the run once).
    pub grow: bool,
}

impl BufferSpec {
    /// Bytes for problem size `n`: the header, then `len(n)` elements
    /// (saturating); a texture's tightly packed texels; 0 for a sampler.
    #[must_use]
    pub fn bytes(&self, n: u64) -> u64 {
        self.elements(n)
            .saturating_mul(u64::from(self.element_size))
            .saturating_add(u64::from(self.header_bytes))
    }

    /// Elements for problem size `n`: `len(n)`, a texture's
    /// `width * height` texels, 0 for a sampler.
    #[must_use]
    pub(crate) fn elements(&self, n: u64) -> u64 {
        match &self.texture {
            None => self.len.eval(n),
            Some(TextureResource::Texture(shape)) => shape.texels(n),
            Some(TextureResource::Sampler(_)) => 0,
        }
    }

    /// The texture's shape, if it is a texture.
    #[must_use]
    pub(crate) fn texture_shape(&self) -> Option<&TextureShape> {
        match &self.texture {
            Some(TextureResource::Texture(shape)) => Some(shape),
            _ => None,
        }
    }

    /// Whether it is a sampler.
    #[must_use]
    pub fn is_sampler(&self) -> bool {
        matches!(self.texture, Some(TextureResource::Sampler(_)))
    }
}
