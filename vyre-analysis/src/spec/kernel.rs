//! How a kernel binds one resource ([`BindingKind`]) and how it finds its
//! position in a folded grid ([`GridFold`]).

use super::texel::{SampleType, TexelFormat, TextureAccess, TextureDimension};

/// How a kernel binds one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingKind {
    /// `var<storage, read>`: the kernel only reads it.
    ReadOnlyStorage,
    /// `var<storage, read_write>`: the kernel may write it.
    ReadWriteStorage,
    /// `var<uniform>`: small, read-only parameters.
    Uniform,
    /// `texture_2d<T>` (or `texture_1d<T>`, `texture_2d_array<T>`,
    /// `texture_3d<T>`): a sampled texture (read with `textureSampleLevel`
    /// or `textureLoad`).
    SampledTexture {
        /// What a texel reads as.
        sample: SampleType,
        /// Its dimension.
        dimension: TextureDimension,
    },
    /// `texture_storage_2d<format, access>` (or `texture_storage_1d`,
    /// `texture_storage_2d_array`, `texture_storage_3d`).
    StorageTexture {
        /// The texel format the kernel declares.
        format: TexelFormat,
        /// `read`, `write` or `read_write`.
        access: TextureAccess,
        /// Its dimension.
        dimension: TextureDimension,
    },
    /// `sampler`.
    Sampler {
        /// Whether the graph's sampler filters linearly (a `linear` sampler
        /// needs a filterable texture).
        filtering: bool,
    },
}

impl BindingKind {
    /// The WGSL spelling of the address space and access mode.
    #[must_use]
    pub fn wgsl(self) -> &'static str {
        match self {
            BindingKind::ReadOnlyStorage => "var<storage, read>",
            BindingKind::ReadWriteStorage => "var<storage, read_write>",
            BindingKind::Uniform => "var<uniform>",
            BindingKind::SampledTexture { dimension, .. } => match dimension {
                TextureDimension::D1 => "var texture_1d",
                TextureDimension::D2 => "var texture_2d",
                TextureDimension::D2Array => "var texture_2d_array",
                TextureDimension::D3 => "var texture_3d",
            },
            BindingKind::StorageTexture { dimension, .. } => match dimension {
                TextureDimension::D1 => "var texture_storage_1d",
                TextureDimension::D2 => "var texture_storage_2d",
                TextureDimension::D2Array => "var texture_storage_2d_array",
                TextureDimension::D3 => "var texture_storage_3d",
            },
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

    /// Whether it binds a storage buffer (read-only or read-write).
    #[must_use]
    pub fn is_storage_buffer(self) -> bool {
        matches!(
            self,
            BindingKind::ReadOnlyStorage | BindingKind::ReadWriteStorage
        )
    }
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
/// use vyre_analysis::spec::GridFold;
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
    /// need a folded grid fails with the runtime's
    /// `BackendError::GridNotFoldable` before anything is submitted.
    #[default]
    XOnly,
}
