//! How a kernel's texture and sampler bindings are reflected from naga:
//! their kind, dimension, format and sample type, or why graph! refuses
//! them; and naga's spelling of formats and dimensions.

use naga::{ImageClass, ImageDimension, ScalarKind, StorageAccess, StorageFormat, TypeInner};
use vyre_analysis::spec::{SampleType, TexelFormat, TextureAccess, TextureDimension};

use crate::diag::refused::Refused;
use crate::model::texture::{format_names, texel_type};
use crate::model::{BindingKind, Prim, RustTy};

/// What graph textures and bindings accept, for messages.
fn supported() -> String {
    format!(
        "graph! binds `texture_1d<T>`, `texture_2d<T>`, `texture_2d_array<T>` and `texture_3d<T>` (T = f32, u32 or i32), `texture_storage_1d|2d|2d_array|3d<F, read|write|read_write>` with F one of {}, and `sampler`",
        format_names()
    )
}

/// The kind of a `Handle`-space global (a texture or a sampler) as graph!
/// binds it, or why it is refused.
pub fn reflect_kind(inner: &TypeInner, wgsl: &str) -> Result<BindingKind, String> {
    let refuse = |why: Refused| Err(format!("`{wgsl}` is {}", why.why()));
    let (dim, arrayed, class) = match inner {
        TypeInner::Sampler { comparison: true } => return refuse(Refused::ComparisonSampler),
        TypeInner::Sampler { comparison: false } => {
            return Ok(BindingKind::Sampler { filtering: true });
        }
        TypeInner::Image {
            dim,
            arrayed,
            class,
        } => (*dim, *arrayed, class),
        _ => {
            return Err(format!(
                "`{wgsl}` is not a texture or sampler; {}",
                supported()
            ));
        }
    };
    match class {
        ImageClass::Sampled { multi: true, .. } | ImageClass::Depth { multi: true } => {
            return refuse(Refused::Multisampled);
        }
        ImageClass::External => return refuse(Refused::External),
        _ => {}
    }
    let Some(dimension) = dimension_from_naga(dim, arrayed) else {
        return refuse(Refused::Cube);
    };
    match class {
        ImageClass::Depth { .. } => refuse(Refused::Depth),
        // Whether a sampled float texture is filterable is decided by the
        // graph texture bound to it (`check.rs`).
        ImageClass::Sampled { kind, .. } => Ok(BindingKind::SampledTexture {
            sample: match kind {
                ScalarKind::Uint => SampleType::Uint,
                ScalarKind::Sint => SampleType::Sint,
                _ => SampleType::Float { filterable: true },
            },
            dimension,
        }),
        ImageClass::Storage { format, access } => {
            let Some(format) = format_from_naga(*format) else {
                return Err(format!(
                    "`{wgsl}` is a storage texture of format {format:?}, which graph textures do not have; {}",
                    supported()
                ));
            };
            let access = match (
                access.contains(StorageAccess::LOAD),
                access.contains(StorageAccess::STORE),
            ) {
                (true, true) => TextureAccess::ReadWrite,
                (true, false) => TextureAccess::Read,
                _ => TextureAccess::Write,
            };
            Ok(BindingKind::StorageTexture {
                format,
                access,
                dimension,
            })
        }
        _ => Err(format!("`{wgsl}`: {}", supported())),
    }
}

/// The element type and size a texture binding gives its resource: the
/// storage format's texel, else a placeholder the graph's format replaces.
pub fn binding_element(kind: BindingKind) -> (RustTy, u32) {
    match kind {
        BindingKind::StorageTexture { format, .. } => (texel_type(format), format.texel_bytes()),
        _ => (RustTy::Prim(Prim::U32), 4),
    }
}

/// A format from naga's storage format of the same name (`None` for one
/// graph textures do not have, such as `r64uint`).
pub fn format_from_naga(format: StorageFormat) -> Option<TexelFormat> {
    let wanted = format!("{format:?}");
    TexelFormat::ALL
        .iter()
        .copied()
        .find(|f| format!("{f:?}") == wanted)
}

/// A dimension from naga's image dimension; `None` for a cube.
pub fn dimension_from_naga(dim: ImageDimension, arrayed: bool) -> Option<TextureDimension> {
    match (dim, arrayed) {
        (ImageDimension::D1, _) => Some(TextureDimension::D1),
        (ImageDimension::D2, false) => Some(TextureDimension::D2),
        (ImageDimension::D2, true) => Some(TextureDimension::D2Array),
        (ImageDimension::D3, _) => Some(TextureDimension::D3),
        (ImageDimension::Cube, _) => None,
    }
}
