//! Graph textures and samplers on the device: their creation (one view
//! each, of the shape's dimension), bind group layout types, the checks of
//! an extent against the device's `max_texture_*` limits (each error in the
//! limit's own unit) before anything is created, what the device allows of
//! a format, and the layout of a texture copied into a buffer: rows padded
//! to wgpu's 256-byte `COPY_BYTES_PER_ROW_ALIGNMENT` (stripped again when
//! read back, never seen by the user; `map.rs`). 1D, 2D, 2D array and 3D
//! textures alike: host texels run x fastest, then y, then layer or z; a
//! layer (or z slice) is `height` padded rows.

use super::gpu::Gpu;
use crate::spec::error::{BackendError, Result};
use crate::spec::{
    AddressMode, BindingKind, BufferSpec, Filter, GraphSpec, SampleType, SamplerSpec,
    TextureDimension, TextureResource, TextureShape,
};
use crate::spec::{ToWgpu, ViewDimension};

/// A texture of a launch plan and its one view.
pub(crate) struct TextureSlot {
    pub(crate) texture: wgpu::Texture,
    pub(crate) view: wgpu::TextureView,
}

/// The bind group layout type of a texture or sampler binding (`None` for a
/// buffer binding).
pub(crate) fn binding_type(kind: BindingKind) -> Option<wgpu::BindingType> {
    Some(match kind {
        BindingKind::SampledTexture { sample, dimension } => wgpu::BindingType::Texture {
            sample_type: match sample {
                SampleType::Float { filterable } => wgpu::TextureSampleType::Float { filterable },
                SampleType::Uint => wgpu::TextureSampleType::Uint,
                SampleType::Sint => wgpu::TextureSampleType::Sint,
            },
            view_dimension: dimension.view(),
            multisampled: false,
        },
        BindingKind::StorageTexture {
            format,
            access,
            dimension,
        } => wgpu::BindingType::StorageTexture {
            access: access.wgpu(),
            format: format.wgpu(),
            view_dimension: dimension.view(),
        },
        BindingKind::Sampler { filtering } => wgpu::BindingType::Sampler(if filtering {
            wgpu::SamplerBindingType::Filtering
        } else {
            wgpu::SamplerBindingType::NonFiltering
        }),
        _ => return None,
    })
}

/// Bytes of one row of `width` texels in a buffer that is copied to or from
/// a texture: padded to `COPY_BYTES_PER_ROW_ALIGNMENT` (256).
pub(crate) fn padded_row(shape: &TextureShape, n: u64) -> u64 {
    let row = shape
        .width
        .eval(n)
        .saturating_mul(u64::from(shape.format.texel_bytes()));
    row.next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT))
}

/// Bytes of a readback buffer for the texture: padded rows, `height` of
/// them per layer or z slice.
pub(crate) fn readback_bytes(shape: &TextureShape, n: u64) -> u64 {
    let [_, h, d] = shape.size(n);
    padded_row(shape, n).saturating_mul(h).saturating_mul(d)
}

pub(crate) fn extent(shape: &TextureShape, n: u64) -> wgpu::Extent3d {
    let [w, h, d] = shape.size(n).map(|s| u32::try_from(s).unwrap_or(u32::MAX));
    wgpu::Extent3d {
        width: w,
        height: h,
        depth_or_array_layers: d,
    }
}

/// The usages of a graph texture on `gpu`: sampled and copied in and out
/// always, stored when the device stores its format at all (a kernel that
/// stores it was checked against the device by [`check_formats`]).
fn usage(gpu: &Gpu, shape: &TextureShape) -> wgpu::TextureUsages {
    let base = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST;
    if format_features(gpu, shape.format.wgpu())
        .allowed_usages
        .contains(wgpu::TextureUsages::STORAGE_BINDING)
    {
        base | wgpu::TextureUsages::STORAGE_BINDING
    } else {
        base
    }
}

/// A texture for `shape` at problem size `n`, and its view (of the
/// shape's dimension, so a 2D array of one layer is still an array).
pub(crate) fn create(gpu: &Gpu, label: &str, shape: &TextureShape, n: u64) -> TextureSlot {
    let texture = gpu.device().create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: extent(shape, n),
        mip_level_count: 1,
        sample_count: 1,
        dimension: shape.dimension.wgpu(),
        format: shape.format.wgpu(),
        usage: usage(gpu, shape),
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(shape.dimension.view()),
        ..Default::default()
    });
    TextureSlot { texture, view }
}

/// The sampler of each resource of `spec` that is a sampler (`None` for the
/// others), made once per graph.
pub(crate) fn create_samplers(gpu: &Gpu, spec: &GraphSpec) -> Vec<Option<wgpu::Sampler>> {
    spec.buffers
        .iter()
        .map(|b| match &b.texture {
            Some(TextureResource::Sampler(s)) => Some(create_sampler(gpu, &b.name, s)),
            _ => None,
        })
        .collect()
}

/// The graph's sampler `s`.
fn create_sampler(gpu: &Gpu, label: &str, s: &SamplerSpec) -> wgpu::Sampler {
    let address = match s.address {
        AddressMode::Clamp => wgpu::AddressMode::ClampToEdge,
        AddressMode::Repeat => wgpu::AddressMode::Repeat,
        AddressMode::Mirror => wgpu::AddressMode::MirrorRepeat,
    };
    let filter = match s.filter {
        Filter::Nearest => wgpu::FilterMode::Nearest,
        Filter::Linear => wgpu::FilterMode::Linear,
    };
    gpu.device().create_sampler(&wgpu::SamplerDescriptor {
        label: Some(label),
        address_mode_u: address,
        address_mode_v: address,
        address_mode_w: address,
        mag_filter: filter,
        min_filter: filter,
        ..Default::default()
    })
}

/// `(row bytes, padded row bytes)` of a texture read back into the host.
pub(crate) fn row_layout(buffer: &BufferSpec, n: u64) -> Option<(usize, usize)> {
    let shape = buffer.texture_shape()?;
    let row = shape.width.eval(n) * u64::from(shape.format.texel_bytes());
    Some((
        usize::try_from(row).ok()?,
        usize::try_from(padded_row(shape, n)).ok()?,
    ))
}

/// A texture's bytes at `n` (tightly packed), checked for emptiness and
/// against the device's limits for its dimension: 1D sides against
/// `max_texture_dimension_1d`, 2D and 2D array sides against
/// `max_texture_dimension_2d`, layers against `max_texture_array_layers`,
/// 3D sides against `max_texture_dimension_3d`.
pub(crate) fn checked_bytes(gpu: &Gpu, name: &str, shape: &TextureShape, n: u64) -> Result<u64> {
    let size = shape.size(n);
    if size.contains(&0) {
        return Err(BackendError::InvalidProblemSize {
            reason: format!(
                "texture `{name}` ({} {}) is {} for problem size {n}; choose n so that every texture has at least one texel on every side",
                shape.dimension.keyword(),
                shape.declared(),
                shape.describe(n)
            ),
        });
    }
    let [w, h, d] = size;
    if gpu.adapter().backend == wgpu::Backend::Gl
        && shape.dimension == TextureDimension::D2Array
        && (d == 1 || (w == h && d.is_multiple_of(6)))
    {
        return Err(BackendError::UnsupportedTexture {
            texture: name.to_string(),
            reason: format!(
                "it is a `texture_2d_array` of {}, and wgpu's OpenGL backend guesses a 2D texture's kind from its layers (one layer: a plain 2D texture; square with a multiple of 6 layers: a cube map), which an array binding then reads wrong; choose n so that it has another layer count, or run on Vulkan",
                shape.describe(n)
            ),
        });
    }
    let limits = gpu.limits();
    let per_side = "texels per side";
    let checks: &[(u64, &'static str, u32, &'static str)] = match shape.dimension {
        TextureDimension::D1 => &[(
            w,
            "max_texture_dimension_1d",
            limits.max_texture_dimension_1d,
            "texels",
        )],
        TextureDimension::D2 => &[(
            w.max(h),
            "max_texture_dimension_2d",
            limits.max_texture_dimension_2d,
            per_side,
        )],
        TextureDimension::D2Array => &[
            (
                w.max(h),
                "max_texture_dimension_2d",
                limits.max_texture_dimension_2d,
                per_side,
            ),
            (
                d,
                "max_texture_array_layers",
                limits.max_texture_array_layers,
                "layers",
            ),
        ],
        TextureDimension::D3 => &[(
            w.max(h).max(d),
            "max_texture_dimension_3d",
            limits.max_texture_dimension_3d,
            per_side,
        )],
    };
    if let Some(&(_, limit, max, unit)) = checks.iter().find(|(v, _, max, _)| *v > u64::from(*max))
    {
        return Err(BackendError::TextureTooLarge {
            texture: name.to_string(),
            extent: shape.describe(n),
            limit,
            max: u64::from(max),
            unit,
        });
    }
    Ok(shape
        .texels(n)
        .saturating_mul(u64::from(shape.format.texel_bytes())))
}

/// What the device allows of `format`, as wgpu-core decides it: the
/// adapter's own format features when the device has
/// `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES` (or the adapter is not
/// WebGPU-compliant), else what WebGPU guarantees given the device's
/// features. Without a known adapter, the guarantees.
pub(crate) fn format_features(
    gpu: &Gpu,
    format: wgpu::TextureFormat,
) -> wgpu::TextureFormatFeatures {
    let features = gpu.device().features();
    if let Some(adapter) = gpu.wgpu_adapter() {
        let compliant = adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::WEBGPU_TEXTURE_FORMAT_SUPPORT);
        if features.contains(wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES) || !compliant
        {
            return adapter.get_texture_format_features(format);
        }
    }
    format.guaranteed_format_features(features)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_rows() {
        use crate::spec::{Extent, TexelFormat, TextureDimension};
        let shape = |w| {
            TextureShape::d2(
                TexelFormat::Rgba8Unorm,
                Extent::constant(w),
                Extent::constant(2),
            )
        };
        assert_eq!(padded_row(&shape(1), 0), 256);
        assert_eq!(padded_row(&shape(64), 0), 256);
        assert_eq!(padded_row(&shape(65), 0), 512);
        assert_eq!(readback_bytes(&shape(1000), 0), 4096 * 2);
        // Three layers of two padded rows each.
        let layered = TextureShape {
            dimension: TextureDimension::D2Array,
            depth_or_array_layers: Extent::constant(3),
            ..shape(65)
        };
        assert_eq!(readback_bytes(&layered, 0), 512 * 2 * 3);
    }
}
