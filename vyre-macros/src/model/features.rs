//! Device features a graph may declare (`features [shader_int64, ...];`),
//! and the naga capabilities kernels are validated with.
//!
//! Without `features`, kernels are validated with exactly the capabilities
//! wgpu grants every WebGPU-compliant adapter (wgpu-core derives them from
//! the device's features and downlevel flags:
//! `wgpu_naga_bridge::features_to_naga_capabilities`). Each declared
//! feature (a [`Feature`], defined in `vyre-analysis`) adds the
//! capabilities wgpu grants for it, and the runtime
//! (`GraphSpec::features`) refuses a device that was not opened with it.

use naga::valid::Capabilities;
use vyre_analysis::spec::Feature;

/// One feature `graph!` knows, with what it means for naga.
pub struct FeatureRow {
    /// The feature (its name in `features [...]` is [`Feature::name`]).
    pub feature: Feature,
    /// The naga capabilities wgpu grants with it.
    pub capabilities: Capabilities,
    /// What it enables, for messages.
    pub enables: &'static str,
}

impl FeatureRow {
    /// Its name in `features [...]`.
    pub fn name(&self) -> &'static str {
        self.feature.name()
    }
}

/// Every feature that grants shader capabilities.
pub const FEATURES: &[FeatureRow] = &[
    FeatureRow {
        feature: Feature::ShaderF16,
        capabilities: Capabilities::SHADER_FLOAT16,
        enables: "`f16` (`enable f16;`)",
    },
    FeatureRow {
        feature: Feature::ShaderF64,
        capabilities: Capabilities::FLOAT64,
        enables: "`f64`",
    },
    FeatureRow {
        feature: Feature::ShaderInt64,
        capabilities: Capabilities::SHADER_INT64,
        enables: "`u64` and `i64`",
    },
    FeatureRow {
        feature: Feature::ShaderInt64AtomicMinMax,
        capabilities: Capabilities::SHADER_INT64_ATOMIC_MIN_MAX,
        enables: "`atomicMin`/`atomicMax` on `atomic<u64>`/`atomic<i64>`",
    },
    FeatureRow {
        // wgpu grants min/max with all ops.
        feature: Feature::ShaderInt64AtomicAllOps,
        capabilities: Capabilities::SHADER_INT64_ATOMIC_ALL_OPS
            .union(Capabilities::SHADER_INT64_ATOMIC_MIN_MAX),
        enables: "every atomic operation on `atomic<u64>`/`atomic<i64>`",
    },
    FeatureRow {
        feature: Feature::ShaderFloat32Atomic,
        capabilities: Capabilities::SHADER_FLOAT32_ATOMIC,
        enables: "`atomic<f32>`",
    },
    FeatureRow {
        feature: Feature::TextureFormat16BitNorm,
        capabilities: Capabilities::STORAGE_TEXTURE_16BIT_NORM_FORMATS,
        enables: "the r16unorm, r16snorm, rg16unorm, rg16snorm, rgba16unorm and rgba16snorm texture formats",
    },
    FeatureRow {
        feature: Feature::Subgroups,
        capabilities: Capabilities::SUBGROUP,
        enables: "subgroup operations (`subgroupAdd`, `subgroup_size`, ...) in compute shaders",
    },
];

/// Features that grant no shader capability, only texture format uses
/// (`analyse/textures.rs` decides which a graph needs): kept apart from
/// [`FEATURES`], whose capabilities validation tries one at a time.
pub const TEXTURE_FEATURES: &[FeatureRow] = &[
    FeatureRow {
        feature: Feature::Bgra8UnormStorage,
        capabilities: Capabilities::empty(),
        enables: "`texture_storage_*<bgra8unorm, write>`",
    },
    FeatureRow {
        feature: Feature::Float32Filterable,
        capabilities: Capabilities::empty(),
        enables: "`linear` samplers on r32float, rg32float and rgba32float",
    },
    FeatureRow {
        feature: Feature::TextureAdapterSpecificFormatFeatures,
        capabilities: Capabilities::empty(),
        enables: "storage textures the adapter allows beyond WebGPU (r8unorm, rg16float, ...; `read_write` beyond r32*)",
    },
];

/// What wgpu grants a WebGPU-compliant adapter without optional features:
/// `DownlevelFlags::compliant()` gives `SHADER_FLOAT16_IN_FLOAT32`
/// (`pack2x16float`, `unpack2x16float`), `MULTISAMPLED_SHADING` and
/// `CUBE_ARRAY_TEXTURES`; every other capability needs a feature.
pub const WEBGPU: Capabilities = Capabilities::SHADER_FLOAT16_IN_FLOAT32
    .union(Capabilities::MULTISAMPLED_SHADING)
    .union(Capabilities::CUBE_ARRAY_TEXTURES);

/// The feature called `name`.
pub fn by_name(name: &str) -> Option<&'static FeatureRow> {
    FEATURES
        .iter()
        .chain(TEXTURE_FEATURES)
        .find(|f| f.name() == name)
}

/// The capabilities to validate with, given the declared features.
pub fn capabilities(declared: &[&FeatureRow]) -> Capabilities {
    declared
        .iter()
        .fold(WEBGPU, |caps, f| caps.union(f.capabilities))
}

/// Every feature's name, for messages.
pub fn names() -> String {
    FEATURES
        .iter()
        .chain(TEXTURE_FEATURES)
        .map(|f| format!("`{}`", f.name()))
        .collect::<Vec<_>>()
        .join(", ")
}
