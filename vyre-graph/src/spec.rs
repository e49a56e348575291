//! The static description of a graph: kernels, buffers and nodes.
//!
//! `graph!` emits one [`GraphSpec`] per graph as plain data (every string and
//! slice is [`Cow::Borrowed`] from `'static` memory), and code that builds
//! graphs by hand fills the same types with owned data. The runtime consumes
//! nothing else: validation, analysis, planning and recording all start from a
//! `GraphSpec`.

use std::borrow::Cow;

pub use vyre_analysis::{Access, BufferClass};

/// How a kernel binds one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingKind {
    /// `var<storage, read>`: the kernel only reads it.
    ReadOnlyStorage,
    /// `var<storage, read_write>`: the kernel may write it.
    ReadWriteStorage,
    /// `var<uniform>`: small, read-only parameters.
    Uniform,
    /// `texture_2d<T>`: a sampled texture (read with `textureSampleLevel`
    /// or `textureLoad`).
    SampledTexture {
        /// What a texel reads as.
        sample: SampleType,
    },
    /// `texture_storage_2d<format, access>`.
    StorageTexture {
        /// The texel format the kernel declares.
        format: TexelFormat,
        /// `read`, `write` or `read_write`.
        access: TextureAccess,
    },
    /// `sampler`.
    Sampler {
        /// Whether the graph's sampler filters linearly (a `linear` sampler
        /// needs a filterable texture).
        filtering: bool,
    },
}

/// What a sampled texture's texels read as in WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleType {
    /// `texture_2d<f32>`; `filterable` when the bound format may be
    /// filtered linearly without extra features.
    Float {
        /// Whether a `linear` sampler may filter it.
        filterable: bool,
    },
    /// `texture_2d<u32>`.
    Uint,
    /// `texture_2d<i32>`.
    Sint,
}

/// The access mode of a `texture_storage_2d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureAccess {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `read_write` (WebGPU allows it only for `r32float` and `r32uint`
    /// here).
    ReadWrite,
}

/// A graph texture's texel format.
///
/// ```
/// use vyre_graph::spec::TexelFormat;
/// assert_eq!(TexelFormat::Rgba8Unorm.texel_bytes(), 4);
/// assert_eq!(TexelFormat::Rgba32Float.name(), "rgba32float");
/// assert!(TexelFormat::Rgba16Float.filterable());
/// assert!(!TexelFormat::R32Float.filterable());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    /// Four 8-bit channels read as `f32` in `[0, 1]`; host texel `[u8; 4]`.
    Rgba8Unorm,
    /// Four `f16` channels; host texel `[half::f16; 4]`.
    Rgba16Float,
    /// Four `f32` channels; host texel `[f32; 4]`.
    Rgba32Float,
    /// One `f32` channel; host texel `f32`.
    R32Float,
    /// One `u32` channel; host texel `u32`.
    R32Uint,
}

impl TexelFormat {
    /// Every format a graph texture may have.
    pub const ALL: [TexelFormat; 5] = [
        TexelFormat::Rgba8Unorm,
        TexelFormat::Rgba16Float,
        TexelFormat::Rgba32Float,
        TexelFormat::R32Float,
        TexelFormat::R32Uint,
    ];

    /// Its WGSL (and `graph!`) spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TexelFormat::Rgba8Unorm => "rgba8unorm",
            TexelFormat::Rgba16Float => "rgba16float",
            TexelFormat::Rgba32Float => "rgba32float",
            TexelFormat::R32Float => "r32float",
            TexelFormat::R32Uint => "r32uint",
        }
    }

    /// The wgpu format.
    #[must_use]
    pub fn wgpu(self) -> wgpu::TextureFormat {
        match self {
            TexelFormat::Rgba8Unorm => wgpu::TextureFormat::Rgba8Unorm,
            TexelFormat::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
            TexelFormat::Rgba32Float => wgpu::TextureFormat::Rgba32Float,
            TexelFormat::R32Float => wgpu::TextureFormat::R32Float,
            TexelFormat::R32Uint => wgpu::TextureFormat::R32Uint,
        }
    }

    /// Bytes per texel.
    #[must_use]
    pub fn texel_bytes(self) -> u32 {
        match self {
            TexelFormat::Rgba8Unorm | TexelFormat::R32Float | TexelFormat::R32Uint => 4,
            TexelFormat::Rgba16Float => 8,
            TexelFormat::Rgba32Float => 16,
        }
    }

    /// Whether a `linear` sampler may filter it on every WebGPU device
    /// (32-bit float formats need the `float32-filterable` feature).
    #[must_use]
    pub fn filterable(self) -> bool {
        matches!(self, TexelFormat::Rgba8Unorm | TexelFormat::Rgba16Float)
    }

    /// What its texels read as in a `texture_2d<T>`.
    #[must_use]
    pub fn sample_type(self) -> SampleType {
        match self {
            TexelFormat::R32Uint => SampleType::Uint,
            f => SampleType::Float {
                filterable: f.filterable(),
            },
        }
    }
}

/// Width and height of a graph texture, as functions of the problem size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureShape {
    /// Its texel format.
    pub format: TexelFormat,
    /// Texels per row.
    pub width: Extent,
    /// Rows.
    pub height: Extent,
}

impl TextureShape {
    /// `[width, height]` for problem size `n`.
    #[must_use]
    pub fn size(&self, n: u64) -> [u64; 2] {
        [self.width.eval(n), self.height.eval(n)]
    }

    /// Texels for problem size `n` (saturating).
    #[must_use]
    pub fn texels(&self, n: u64) -> u64 {
        self.width.eval(n).saturating_mul(self.height.eval(n))
    }

    /// The problem size whose `width * height` is `texels`, when one side
    /// is a constant and the other is `K * n`.
    ///
    /// ```
    /// use vyre_graph::spec::{Extent, TexelFormat, TextureShape};
    /// let s = TextureShape { format: TexelFormat::R32Float, width: Extent::N, height: Extent::constant(3) };
    /// assert_eq!(s.solve(30), Some(10));
    /// assert_eq!(s.solve(31), None);
    /// ```
    #[must_use]
    pub fn solve(&self, texels: u64) -> Option<u64> {
        let (fixed, free) = match (self.width.depends_on_n(), self.height.depends_on_n()) {
            (true, false) => (self.height.eval(0), self.width),
            (false, true) => (self.width.eval(0), self.height),
            _ => return None,
        };
        if fixed == 0 || !texels.is_multiple_of(fixed) {
            return None;
        }
        free.solve(texels / fixed)
    }
}

/// How a sampler filters between texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// The nearest texel.
    Nearest,
    /// Bilinear interpolation of the four nearest texels.
    Linear,
}

/// What a sampler reads outside `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// The edge texel.
    Clamp,
    /// Wraps around.
    Repeat,
    /// Wraps around, mirrored every other time.
    Mirror,
}

/// A graph sampler (`sampler lin = linear clamp;`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerSpec {
    /// Minification and magnification filter.
    pub filter: Filter,
    /// Address mode in both directions.
    pub address: AddressMode,
}

/// What a graph resource is when it is not a plain buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureResource {
    /// A 2D texture: `element_size` is the texel size, `len` the width.
    Texture(TextureShape),
    /// A sampler (class [`BufferClass::Input`], never a host input).
    Sampler(SamplerSpec),
}

impl BindingKind {
    /// The WGSL spelling of the address space and access mode.
    #[must_use]
    pub fn wgsl(self) -> &'static str {
        match self {
            BindingKind::ReadOnlyStorage => "var<storage, read>",
            BindingKind::ReadWriteStorage => "var<storage, read_write>",
            BindingKind::Uniform => "var<uniform>",
            BindingKind::SampledTexture { .. } => "var texture_2d",
            BindingKind::StorageTexture { .. } => "var texture_storage_2d",
            BindingKind::Sampler { .. } => "var sampler",
        }
    }

    /// Whether it binds a texture or a sampler rather than a buffer.
    #[must_use]
    pub fn is_texture(self) -> bool {
        matches!(
            self,
            BindingKind::SampledTexture { .. }
                | BindingKind::StorageTexture { .. }
                | BindingKind::Sampler { .. }
        )
    }
}

/// One resource binding a kernel declares, as reflected from its WGSL.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindingSpec {
    /// The WGSL global's name.
    pub name: Cow<'static, str>,
    /// `@group(..)`.
    pub group: u32,
    /// `@binding(..)`.
    pub binding: u32,
    /// Address space and access mode.
    pub kind: BindingKind,
    /// Bytes per element: the array stride for `array<T>`, else the size of
    /// the whole type (a struct, a scalar, a fixed-size array).
    pub element_size: u32,
    /// The smallest binding the kernel accepts, in bytes (`0` = no minimum).
    /// For a runtime-sized array this is the size of everything before the
    /// array plus one element.
    pub min_binding_size: u64,
    /// What the entry point actually does with it: a `read_write` buffer the
    /// kernel only reads is [`Access::Read`].
    pub access: Access,
    /// The WGSL type, for messages and `describe()` (e.g. `array<f32>`).
    pub wgsl_type: Cow<'static, str>,
}

/// A compute kernel: WGSL source, its entry point and its interface.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    /// A name for labels and messages.
    pub label: Cow<'static, str>,
    /// The WGSL module source.
    pub source: Cow<'static, str>,
    /// The `@compute` entry point to run.
    pub entry_point: Cow<'static, str>,
    /// `@workgroup_size` of the entry point. When the size comes from
    /// `override` constants, this is the size with the module's defaults,
    /// and nodes that set overrides carry their own in
    /// [`NodeSpec::workgroup_size`].
    pub workgroup_size: [u32; 3],
    /// Every resource the entry point's module declares.
    pub bindings: Cow<'static, [BindingSpec]>,
    /// Whether the kernel sees the right position when an `over` size is
    /// folded into a grid of several dimensions (past the device's
    /// `max_compute_workgroups_per_dimension`, 65,535 workgroups).
    pub fold: GridFold,
}

/// How a kernel finds its position in the grid, which decides whether an
/// `over` size past the per-dimension workgroup limit may be folded into y
/// and z.
///
/// A size of `over n` launches `ceil(n / workgroup_size_x)` workgroups. One
/// dimension holds at most 65,535 (`max_compute_workgroups_per_dimension`),
/// so past that the runtime folds the workgroups into y and z. A kernel that
/// indexes with `global_invocation_id.x` alone then covers only part of the
/// data. `graph!` wraps the entry point of every `over` kernel so that it
/// sees one linear index in `global_invocation_id.x` (and a linear
/// `workgroup_id.x` and `num_workgroups.x`) whatever the grid's shape, and
/// marks it [`GridFold::Linear`]; a hand-built kernel says which it is.
///
/// ```
/// use vyre_graph::spec::GridFold;
/// // Unless a kernel says otherwise, a size that needs a fold is refused
/// // with `BackendError::GridNotFoldable` before anything runs.
/// assert_eq!(GridFold::default(), GridFold::XOnly);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GridFold {
    /// The kernel computes its position from every dimension (for example
    /// `g.x + g.y * nwg.x * 64u` with `@builtin(num_workgroups) nwg`), or
    /// `graph!` wrapped it: a folded grid reaches every element.
    Linear,
    /// The kernel may read `global_invocation_id.x` alone: a run that would
    /// need a folded grid fails with
    /// [`BackendError::GridNotFoldable`](crate::BackendError::GridNotFoldable)
    /// before anything is submitted.
    #[default]
    XOnly,
}

/// Element count of a buffer, or invocation count of a node, as a function of
/// the problem size `n`: `ceil(n * mul / div) + add`.
///
/// ```
/// use vyre_graph::spec::Extent;
/// assert_eq!(Extent::N.eval(10), 10);
/// assert_eq!(Extent::constant(4).eval(10), 4);
/// assert_eq!(Extent::scaled(3, 256, 1).eval(1000), 13); // ceil(3000/256)+1
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Multiplier of `n` (0 for a constant).
    pub mul: u64,
    /// Divisor of `n * mul`, rounding up (never 0).
    pub div: u64,
    /// Constant added.
    pub add: u64,
}

impl Extent {
    /// Exactly `n`.
    pub const N: Extent = Extent {
        mul: 1,
        div: 1,
        add: 0,
    };

    /// A size that does not depend on `n`.
    #[must_use]
    pub const fn constant(value: u64) -> Self {
        Extent {
            mul: 0,
            div: 1,
            add: value,
        }
    }

    /// `ceil(n * mul / div) + add`. A `div` of 0 is read as 1.
    #[must_use]
    pub const fn scaled(mul: u64, div: u64, add: u64) -> Self {
        Extent {
            mul,
            div: if div == 0 { 1 } else { div },
            add,
        }
    }

    /// Evaluate for problem size `n`, saturating instead of overflowing.
    #[must_use]
    pub const fn eval(&self, n: u64) -> u64 {
        let div = if self.div == 0 { 1 } else { self.div };
        let scaled = (n as u128) * (self.mul as u128);
        let q = scaled.div_ceil(div as u128);
        let v = q + self.add as u128;
        if v > u64::MAX as u128 {
            u64::MAX
        } else {
            v as u64
        }
    }

    /// Whether the value depends on `n`.
    #[must_use]
    pub const fn depends_on_n(&self) -> bool {
        self.mul != 0
    }

    /// The largest `n` with `eval(n) == len`, when one exists and this extent
    /// is exactly `n * mul` (no division, no constant): how a run infers its
    /// problem size from an input's length.
    #[must_use]
    pub const fn solve(&self, len: u64) -> Option<u64> {
        if self.mul == 0 || self.div != 1 || self.add != 0 || !len.is_multiple_of(self.mul) {
            return None;
        }
        Some(len / self.mul)
    }
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.mul, self.div, self.add) {
            (0, _, a) => write!(f, "{a}"),
            (m, d, a) => {
                if m == 1 {
                    write!(f, "n")?;
                } else {
                    write!(f, "{m}*n")?;
                }
                if d != 1 {
                    write!(f, "/{d}")?;
                }
                if a != 0 {
                    write!(f, "+{a}")?;
                }
                Ok(())
            }
        }
    }
}

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
/// with `grow` the runtime grows the plan's capacity for that problem size
/// instead (see `Graph::run`).
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
    pub fn elements(&self, n: u64) -> u64 {
        match &self.texture {
            None => self.len.eval(n),
            Some(TextureResource::Texture(shape)) => shape.texels(n),
            Some(TextureResource::Sampler(_)) => 0,
        }
    }

    /// The texture's shape, if it is a texture.
    #[must_use]
    pub fn texture_shape(&self) -> Option<&TextureShape> {
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

    /// Whole elements in `bytes` bytes of this buffer (the header first),
    /// `None` when `bytes` is shorter than the header or not whole elements.
    #[must_use]
    pub fn elements_in(&self, bytes: u64) -> Option<u64> {
        let body = bytes.checked_sub(u64::from(self.header_bytes))?;
        let size = u64::from(self.element_size.max(1));
        body.is_multiple_of(size).then_some(body / size)
    }
}

/// A device feature a kernel needs beyond what every WebGPU adapter offers,
/// declared in `graph!` with `features [shader_int64, ...];`.
///
/// ```
/// use vyre_graph::spec::Feature;
/// assert_eq!(Feature::ShaderInt64.wgpu(), vyre_graph::wgpu::Features::SHADER_INT64);
/// assert_eq!(Feature::ShaderF16.name(), "shader_f16");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// `f16` (`enable f16;`): [`wgpu::Features::SHADER_F16`].
    ShaderF16,
    /// `f64`: [`wgpu::Features::SHADER_F64`].
    ShaderF64,
    /// `u64`, `i64`: [`wgpu::Features::SHADER_INT64`].
    ShaderInt64,
    /// `atomicMin`/`atomicMax` on 64-bit integers:
    /// [`wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX`].
    ShaderInt64AtomicMinMax,
    /// Every atomic operation on 64-bit integers:
    /// [`wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS`].
    ShaderInt64AtomicAllOps,
    /// `atomic<f32>`: [`wgpu::Features::SHADER_FLOAT32_ATOMIC`].
    ShaderFloat32Atomic,
}

impl Feature {
    /// Every feature vyre maps: [`crate::Gpu::new`] requests each one the
    /// adapter has.
    pub const ALL: [Feature; 6] = [
        Feature::ShaderF16,
        Feature::ShaderF64,
        Feature::ShaderInt64,
        Feature::ShaderInt64AtomicMinMax,
        Feature::ShaderInt64AtomicAllOps,
        Feature::ShaderFloat32Atomic,
    ];

    /// The wgpu feature.
    #[must_use]
    pub fn wgpu(self) -> wgpu::Features {
        match self {
            Feature::ShaderF16 => wgpu::Features::SHADER_F16,
            Feature::ShaderF64 => wgpu::Features::SHADER_F64,
            Feature::ShaderInt64 => wgpu::Features::SHADER_INT64,
            Feature::ShaderInt64AtomicMinMax => wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX,
            Feature::ShaderInt64AtomicAllOps => wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS,
            Feature::ShaderFloat32Atomic => wgpu::Features::SHADER_FLOAT32_ATOMIC,
        }
    }

    /// The name of the wgpu feature constant (`SHADER_INT64`).
    #[must_use]
    pub fn wgpu_name(self) -> &'static str {
        match self {
            Feature::ShaderF16 => "SHADER_F16",
            Feature::ShaderF64 => "SHADER_F64",
            Feature::ShaderInt64 => "SHADER_INT64",
            Feature::ShaderInt64AtomicMinMax => "SHADER_INT64_ATOMIC_MIN_MAX",
            Feature::ShaderInt64AtomicAllOps => "SHADER_INT64_ATOMIC_ALL_OPS",
            Feature::ShaderFloat32Atomic => "SHADER_FLOAT32_ATOMIC",
        }
    }

    /// Its name in `graph!`'s `features [...]` (WebGPU's spelling where
    /// WebGPU has the feature).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Feature::ShaderF16 => "shader_f16",
            Feature::ShaderF64 => "shader_f64",
            Feature::ShaderInt64 => "shader_int64",
            Feature::ShaderInt64AtomicMinMax => "shader_int64_atomic_min_max",
            Feature::ShaderInt64AtomicAllOps => "shader_int64_atomic_all_ops",
            Feature::ShaderFloat32Atomic => "shader_float32_atomic",
        }
    }

    /// Every vyre feature in `features`, as wgpu features.
    #[must_use]
    pub fn all_wgpu() -> wgpu::Features {
        Feature::ALL
            .iter()
            .fold(wgpu::Features::empty(), |acc, f| acc | f.wgpu())
    }
}

/// How many workgroups a node launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DispatchSize {
    /// One invocation per item: workgroups are `ceil(invocations / workgroup
    /// size x)`, folded into y and z when x exceeds the device limit.
    Invocations(Extent),
    /// An explicit workgroup grid.
    Workgroups([Extent; 3]),
    /// `over count(b)`: one invocation per item of append buffer `b` (an
    /// index into [`GraphSpec::buffers`]), `min(count, capacity)`, read on
    /// the device: a runtime-generated step writes the indirect arguments
    /// right before the dispatch (no host round trip; zero items launch no
    /// workgroup; past 65,535 workgroups folded into y and z, so the
    /// kernel must be [`GridFold::Linear`]).
    Count(usize),
    /// `grid indirect(b)`: the grid is the first three `u32` of buffer `b`,
    /// written by an earlier node; a dimension over the device limit is
    /// reported after the run ([`BackendError::GridTooLarge`](crate::BackendError::GridTooLarge)), never silently skipped.
    Indirect(usize),
}

impl DispatchSize {
    /// The buffer whose contents size this dispatch on the device, if any.
    #[must_use]
    pub fn device_source(&self) -> Option<usize> {
        match *self {
            DispatchSize::Count(b) | DispatchSize::Indirect(b) => Some(b),
            _ => None,
        }
    }
}

/// A node binds one of its kernel's bindings to a graph buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeBinding {
    /// `@group(..)` of the kernel's binding.
    pub group: u32,
    /// `@binding(..)` of the kernel's binding.
    pub binding: u32,
    /// Index into [`GraphSpec::buffers`].
    pub buffer: usize,
}

/// A pipeline-overridable constant set for one node.
#[derive(Clone, Debug, PartialEq)]
pub struct OverrideValue {
    /// The `override` declaration's name (or its `@id` as decimal text).
    pub name: Cow<'static, str>,
    /// The value (wgpu passes every override as `f64`).
    pub value: f64,
}

/// One dispatch of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// A name for labels, messages and `describe()`.
    pub label: Cow<'static, str>,
    /// Index into [`GraphSpec::kernels`].
    pub kernel: usize,
    /// Every binding of the kernel, bound to a graph buffer.
    pub bindings: Cow<'static, [NodeBinding]>,
    /// Pipeline-overridable constants for this node.
    pub overrides: Cow<'static, [OverrideValue]>,
    /// The node's workgroup size when its overrides change it; `None` means
    /// the kernel's [`KernelSpec::workgroup_size`].
    pub workgroup_size: Option<[u32; 3]>,
    /// How many workgroups it launches.
    pub size: DispatchSize,
}

/// The schedule worked out from a graph's nodes in program order: `graph!`
/// computes it at compile time (with `vyre-analysis`, the same code the
/// runtime uses) and emits it as static data, so it can be inspected without
/// a GPU (`Name::SPEC.schedule`). [`crate::Graph::new`] checks it against
/// its own analysis of the spec and refuses a schedule that disagrees (a
/// spec from another version of the macro, or edited by hand).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScheduleSpec {
    /// Dependency level of each node: nodes of one level are independent.
    pub levels: Cow<'static, [u32]>,
    /// Device slot of each buffer: buffers with the same slot share memory.
    pub slots: Cow<'static, [usize]>,
}

/// Consecutive nodes that run as one dispatch of one fused kernel.
///
/// `graph!` fuses chains of element-wise nodes (every access of a buffer
/// that the chain writes is at the invocation's own index, all over the
/// same size and workgroup size) into one kernel that runs each node's code
/// in turn for one element: the results are those of the nodes run one
/// after another, without a barrier and a dispatch between them. The nodes
/// stay in [`GraphSpec::nodes`] (the analysis, the schedule and messages
/// name them); the runtime records [`FusedGroup::dispatch`] where the first
/// member would run and skips the others.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedGroup {
    /// Indices into [`GraphSpec::nodes`]: at least two, consecutive,
    /// ascending.
    pub nodes: Cow<'static, [usize]>,
    /// The one dispatch that replaces them: its `kernel` is the fused
    /// kernel, its bindings bind every buffer of the members (a buffer once
    /// when any member writes it), its overrides are the members' own,
    /// renamed.
    pub dispatch: NodeSpec,
    /// An entry point of the fused kernel that runs the same per-element
    /// code as a grid-stride loop (`graph!` adds one when the group may
    /// loop), so the runtime may launch fewer workgroups than the plain
    /// grid has: see [`crate::GridStride`]. It loops over the plain grid's
    /// invocations, whose count it reads from `.x` of a 16-byte uniform at
    /// binding 0 of group [`GRID_STRIDE_GROUP`], which the runtime binds.
    /// `None`: the group always runs on its plain grid.
    pub grid_stride_entry: Option<Cow<'static, str>>,
}

/// The bind group of the invocation count a fused kernel's grid-stride
/// entry point ([`FusedGroup::grid_stride_entry`]) reads; fused kernels
/// bind group 0 only.
pub const GRID_STRIDE_GROUP: u32 = 1;

/// A whole graph: what `graph!` emits and what [`crate::Graph::new`] takes.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphSpec {
    /// The graph's name.
    pub name: Cow<'static, str>,
    /// Kernels, each compiled once.
    pub kernels: Cow<'static, [KernelSpec]>,
    /// Buffers, in declaration order.
    pub buffers: Cow<'static, [BufferSpec]>,
    /// Nodes, in program order.
    pub nodes: Cow<'static, [NodeSpec]>,
    /// Device features the kernels need (`features [...]` in `graph!`):
    /// [`crate::Graph::new`] refuses a device without one of them.
    pub features: Cow<'static, [Feature]>,
    /// The schedule `graph!` computed, if any; hand-built specs leave it
    /// `None` and the runtime works it out.
    pub schedule: Option<ScheduleSpec>,
    /// Groups of nodes that run as one fused dispatch each (empty: every
    /// node is its own dispatch).
    pub fused: Cow<'static, [FusedGroup]>,
    /// Loops that stop themselves on the device (`repeat up to K as i
    /// until ..` in `graph!`; empty: none).
    pub loops: Cow<'static, [LoopSpec]>,
}

/// When a [`LoopSpec`] stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Until {
    /// `until empty(b)`: before each iteration (the first included), stop
    /// when append buffer `b`'s count is 0.
    Empty,
    /// `until zero(f)`: do-while on a `u32` flag: the runtime sets `f` to 0
    /// before each iteration that runs, the body writes non-zero to go on,
    /// and the loop stops after an iteration that left it 0.
    Zero,
}

/// One unrolled iteration of a [`LoopSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopIteration {
    /// Its first node (an index into [`GraphSpec::nodes`]).
    pub first_node: usize,
    /// How many nodes it has (consecutive, at least one).
    pub nodes: usize,
    /// The buffer its condition reads (the `empty` buffer or the `zero`
    /// flag of this iteration, after `ping`/`pong`).
    pub buffer: usize,
}

/// `repeat up to K as i until ..`: up to `K` unrolled iterations whose
/// dispatches become empty (indirect dispatches of zero workgroups) once the
/// condition says so, decided on the device by one small "gate" dispatch at
/// the start of each iteration. The run reports how many iterations did
/// work ([`RunReport::loops`](crate::RunReport::loops)).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopSpec {
    /// A name for messages and `describe()`.
    pub label: Cow<'static, str>,
    /// The stopping condition.
    pub until: Until,
    /// The iterations, in order (`K` of them).
    pub iterations: Cow<'static, [LoopIteration]>,
}

impl LoopSpec {
    /// The loop containing node `node`, and the iteration, if any.
    #[must_use]
    pub fn iteration_of(&self, node: usize) -> Option<usize> {
        self.iterations
            .iter()
            .position(|it| (it.first_node..it.first_node + it.nodes).contains(&node))
    }
}

impl GraphSpec {
    /// The effective workgroup size of node `node` (out of range: `[1, 1, 1]`).
    #[must_use]
    pub fn node_workgroup_size(&self, node: usize) -> [u32; 3] {
        let Some(n) = self.nodes.get(node) else {
            return [1, 1, 1];
        };
        n.workgroup_size
            .or_else(|| self.kernels.get(n.kernel).map(|k| k.workgroup_size))
            .unwrap_or([1, 1, 1])
    }

    /// The key that decides which intermediates may share a device slot
    /// ([`vyre_analysis::analyse_keyed`]): 0 for every buffer; for a
    /// texture, one more than the index of the first texture of the same
    /// format, width and height (a texture never shares with a buffer);
    /// `u64::MAX - i` for append buffer `i`, which never shares (the runtime
    /// clears its count when the run starts and reads it after the pass, so
    /// its memory must hold nothing else in the meantime).
    #[must_use]
    pub fn alias_keys(&self) -> Vec<u64> {
        let sharing: Vec<vyre_analysis::Sharing<&TextureResource>> = self
            .buffers
            .iter()
            .map(|b| match &b.texture {
                Some(t) => vyre_analysis::Sharing::Shape(t),
                None if b.append.is_some() => vyre_analysis::Sharing::Alone,
                None => vyre_analysis::Sharing::Buffer,
            })
            .collect();
        vyre_analysis::alias_keys(&sharing)
    }

    /// Index of the buffer called `name`.
    #[must_use]
    pub fn buffer_index(&self, name: &str) -> Option<usize> {
        self.buffers.iter().position(|b| b.name == name)
    }

    /// Buffers the host provides before a run ([`BufferClass::Input`],
    /// [`BufferClass::InOut`] and [`BufferClass::Uniform`]), in declaration
    /// order: the order of a run's inputs.
    pub fn host_inputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers.iter().enumerate().filter_map(|(i, b)| {
            (matches!(
                b.class,
                BufferClass::Input | BufferClass::InOut | BufferClass::Uniform
            ) && !b.is_sampler())
            .then_some(i)
        })
    }

    /// Buffers a run can read back ([`BufferClass::Output`] and
    /// [`BufferClass::InOut`]), in declaration order: the order of a run's
    /// outputs.
    pub fn host_outputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers.iter().enumerate().filter_map(|(i, b)| {
            matches!(b.class, BufferClass::Output | BufferClass::InOut).then_some(i)
        })
    }
}
