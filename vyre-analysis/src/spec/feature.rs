//! [`Feature`]: the device features a graph may declare, and their wgpu
//! names.

/// A device feature a kernel needs beyond what every WebGPU adapter offers,
/// declared in `graph!` with `features [shader_int64, ...];`.
///
/// The runtime maps each to its `wgpu::Features` flag (named by
/// [`Feature::wgpu_name`]).
///
/// ```
/// use vyre_analysis::spec::Feature;
/// assert_eq!(Feature::ShaderInt64.wgpu_name(), "SHADER_INT64");
/// assert_eq!(Feature::ShaderF16.name(), "shader_f16");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// `f16` (`enable f16;`): `wgpu::Features::SHADER_F16`.
    ShaderF16,
    /// `f64`: `wgpu::Features::SHADER_F64`.
    ShaderF64,
    /// `u64`, `i64`: `wgpu::Features::SHADER_INT64`.
    ShaderInt64,
    /// `atomicMin`/`atomicMax` on 64-bit integers:
    /// `wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX`.
    ShaderInt64AtomicMinMax,
    /// Every atomic operation on 64-bit integers:
    /// `wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS`.
    ShaderInt64AtomicAllOps,
    /// `atomic<f32>`: `wgpu::Features::SHADER_FLOAT32_ATOMIC`.
    ShaderFloat32Atomic,
    /// `bgra8unorm` write-only storage textures:
    /// `wgpu::Features::BGRA8UNORM_STORAGE`.
    Bgra8UnormStorage,
    /// `linear` samplers on `r32float`, `rg32float` and `rgba32float`:
    /// `wgpu::Features::FLOAT32_FILTERABLE`.
    Float32Filterable,
    /// The 16-bit normalised formats (`r16unorm`, ..., `rgba16snorm`):
    /// `wgpu::Features::TEXTURE_FORMAT_16BIT_NORM`.
    TextureFormat16BitNorm,
    /// Storage bindings the adapter allows beyond WebGPU's guarantees
    /// (`r8unorm`, `rg16float`, ... storage textures; `read_write` access
    /// to formats other than `r32*`):
    /// `wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`.
    TextureAdapterSpecificFormatFeatures,
    /// Subgroup operations in compute shaders (`subgroupAdd`, ...), used
    /// by the kernels of built-in reductions and scans:
    /// `wgpu::Features::SUBGROUP`.
    Subgroups,
}

impl Feature {
    /// Every feature vyre maps: the runtime's `Gpu::new` requests each one
    /// the adapter has.
    pub const ALL: [Feature; 11] = [
        Feature::ShaderF16,
        Feature::ShaderF64,
        Feature::ShaderInt64,
        Feature::ShaderInt64AtomicMinMax,
        Feature::ShaderInt64AtomicAllOps,
        Feature::ShaderFloat32Atomic,
        Feature::Bgra8UnormStorage,
        Feature::Float32Filterable,
        Feature::TextureFormat16BitNorm,
        Feature::TextureAdapterSpecificFormatFeatures,
        Feature::Subgroups,
    ];

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
            Feature::Bgra8UnormStorage => "BGRA8UNORM_STORAGE",
            Feature::Float32Filterable => "FLOAT32_FILTERABLE",
            Feature::TextureFormat16BitNorm => "TEXTURE_FORMAT_16BIT_NORM",
            Feature::TextureAdapterSpecificFormatFeatures => {
                "TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES"
            }
            Feature::Subgroups => "SUBGROUP",
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
            Feature::Bgra8UnormStorage => "bgra8unorm_storage",
            Feature::Float32Filterable => "float32_filterable",
            Feature::TextureFormat16BitNorm => "texture_format_16bit_norm",
            Feature::TextureAdapterSpecificFormatFeatures => {
                "texture_adapter_specific_format_features"
            }
            Feature::Subgroups => "subgroups",
        }
    }

    /// The feature called `name` in `features [...]`.
    ///
    /// ```
    /// use vyre_analysis::spec::Feature;
    /// assert_eq!(Feature::by_name("shader_f64"), Some(Feature::ShaderF64));
    /// assert_eq!(Feature::by_name("shader_int128"), None);
    /// ```
    #[must_use]
    pub fn by_name(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.name() == name)
    }
}
