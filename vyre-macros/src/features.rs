//! Device features a graph may declare (`features [shader_int64, ...];`),
//! and the naga capabilities kernels are validated with.
//!
//! Without `features`, kernels are validated with exactly the capabilities
//! wgpu grants every WebGPU-compliant adapter (wgpu-core derives them from
//! the device's features and downlevel flags:
//! `wgpu_naga_bridge::features_to_naga_capabilities`). Each declared
//! feature adds the capabilities wgpu grants for it, and the runtime
//! (`GraphSpec::features`) refuses a device that was not opened with it.

use naga::valid::Capabilities;

/// One feature `graph!` knows.
pub struct Feature {
    /// Its name in `features [...]`.
    pub name: &'static str,
    /// The `vyre_graph::spec::Feature` variant.
    pub variant: &'static str,
    /// The naga capabilities wgpu grants with it.
    pub capabilities: Capabilities,
    /// What it enables, for messages.
    pub enables: &'static str,
}

/// Every feature, in `vyre_graph::spec::Feature::ALL` order.
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "shader_f16",
        variant: "ShaderF16",
        capabilities: Capabilities::SHADER_FLOAT16,
        enables: "`f16` (`enable f16;`)",
    },
    Feature {
        name: "shader_f64",
        variant: "ShaderF64",
        capabilities: Capabilities::FLOAT64,
        enables: "`f64`",
    },
    Feature {
        name: "shader_int64",
        variant: "ShaderInt64",
        capabilities: Capabilities::SHADER_INT64,
        enables: "`u64` and `i64`",
    },
    Feature {
        name: "shader_int64_atomic_min_max",
        variant: "ShaderInt64AtomicMinMax",
        capabilities: Capabilities::SHADER_INT64_ATOMIC_MIN_MAX,
        enables: "`atomicMin`/`atomicMax` on `atomic<u64>`/`atomic<i64>`",
    },
    Feature {
        name: "shader_int64_atomic_all_ops",
        // wgpu grants min/max with all ops.
        variant: "ShaderInt64AtomicAllOps",
        capabilities: Capabilities::SHADER_INT64_ATOMIC_ALL_OPS
            .union(Capabilities::SHADER_INT64_ATOMIC_MIN_MAX),
        enables: "every atomic operation on `atomic<u64>`/`atomic<i64>`",
    },
    Feature {
        name: "shader_float32_atomic",
        variant: "ShaderFloat32Atomic",
        capabilities: Capabilities::SHADER_FLOAT32_ATOMIC,
        enables: "`atomic<f32>`",
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
pub fn by_name(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

/// The capabilities to validate with, given the declared features.
pub fn capabilities(declared: &[&Feature]) -> Capabilities {
    declared
        .iter()
        .fold(WEBGPU, |caps, f| caps.union(f.capabilities))
}

/// Every feature's name, for messages.
pub fn names() -> String {
    FEATURES
        .iter()
        .map(|f| format!("`{}`", f.name))
        .collect::<Vec<_>>()
        .join(", ")
}
