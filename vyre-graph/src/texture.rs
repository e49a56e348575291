//! Textures and samplers of a launch plan: the checks of a texture binding
//! against its graph resource, bind group layout entries, creation,
//! uploads (`Queue::write_texture`, tightly packed host rows) and the copy
//! to a readback buffer whose rows are padded to wgpu's 256-byte
//! `COPY_BYTES_PER_ROW_ALIGNMENT` (stripped again when read back, never
//! seen by the user).

use crate::error::{BackendError, Result};
use crate::gpu::Gpu;
use crate::spec::{
    AddressMode, BindingKind, BindingSpec, BufferSpec, Filter, SampleType, SamplerSpec,
    TextureAccess, TextureResource, TextureShape,
};

/// A texture of a launch plan and its one view.
pub(crate) struct TextureSlot {
    pub(crate) texture: wgpu::Texture,
    pub(crate) view: wgpu::TextureView,
}

/// Why kernel binding `b` cannot bind graph resource `buffer`, if it
/// cannot (a texture binding needs a texture or sampler of the right kind
/// and format; a buffer binding needs a buffer).
pub(crate) fn check_binding(b: &BindingSpec, buffer: &BufferSpec) -> Option<String> {
    match (b.kind, &buffer.texture) {
        (BindingKind::Sampler { filtering }, Some(TextureResource::Sampler(s))) => {
            (filtering != (s.filter == Filter::Linear)).then(|| {
                format!(
                    "`{}` is laid out as a {} sampler but sampler `{}` is {:?}; make the layout match the sampler",
                    b.name,
                    if filtering { "filtering" } else { "non-filtering" },
                    buffer.name,
                    s.filter
                )
            })
        }
        (BindingKind::SampledTexture { sample }, Some(TextureResource::Texture(shape))) => {
            let fits = match (sample, shape.format.sample_type()) {
                (SampleType::Float { filterable }, SampleType::Float { filterable: can }) => {
                    !filterable || can
                }
                (a, f) => a == f,
            };
            (!fits).then(|| {
                format!(
                    "`{}` reads texels as {sample:?} but texture `{}` is {}; declare the texture with a format of that sample type",
                    b.name,
                    buffer.name,
                    shape.format.name()
                )
            })
        }
        (BindingKind::StorageTexture { format, .. }, Some(TextureResource::Texture(shape))) => {
            (format != shape.format).then(|| {
                format!(
                    "`{}` is texture_storage_2d<{}> but texture `{}` is {}; declare the texture as {} or change the kernel's format",
                    b.name,
                    format.name(),
                    buffer.name,
                    shape.format.name(),
                    format.name()
                )
            })
        }
        (kind, Some(_)) if !kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is a texture or sampler; bind a buffer",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        (kind, None) if kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is a buffer; bind a graph texture or sampler",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        (kind, Some(_)) if kind.is_texture() => Some(format!(
            "`{}` is {} but `{}` is the other kind of texture resource; bind a texture to texture bindings and a sampler to sampler bindings",
            b.name,
            kind.wgsl(),
            buffer.name
        )),
        _ => None,
    }
}

/// The bind group layout type of a texture or sampler binding (`None` for a
/// buffer binding).
pub(crate) fn binding_type(kind: BindingKind) -> Option<wgpu::BindingType> {
    Some(match kind {
        BindingKind::SampledTexture { sample } => wgpu::BindingType::Texture {
            sample_type: match sample {
                SampleType::Float { filterable } => wgpu::TextureSampleType::Float { filterable },
                SampleType::Uint => wgpu::TextureSampleType::Uint,
                SampleType::Sint => wgpu::TextureSampleType::Sint,
            },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        BindingKind::StorageTexture { format, access } => wgpu::BindingType::StorageTexture {
            access: match access {
                TextureAccess::Read => wgpu::StorageTextureAccess::ReadOnly,
                TextureAccess::Write => wgpu::StorageTextureAccess::WriteOnly,
                TextureAccess::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            },
            format: format.wgpu(),
            view_dimension: wgpu::TextureViewDimension::D2,
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

/// Bytes of a readback buffer for the texture: padded rows.
pub(crate) fn readback_bytes(shape: &TextureShape, n: u64) -> u64 {
    padded_row(shape, n).saturating_mul(shape.height.eval(n))
}

fn extent(shape: &TextureShape, n: u64) -> wgpu::Extent3d {
    let [w, h] = shape.size(n);
    wgpu::Extent3d {
        width: u32::try_from(w).unwrap_or(u32::MAX),
        height: u32::try_from(h).unwrap_or(u32::MAX),
        depth_or_array_layers: 1,
    }
}

/// The usages of a graph texture: it may be sampled and stored (its
/// kernels decide which), copied in and out.
fn usage() -> wgpu::TextureUsages {
    wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::STORAGE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST
}

/// A texture for `shape` at problem size `n`, and its view.
pub(crate) fn create(gpu: &Gpu, label: &str, shape: &TextureShape, n: u64) -> TextureSlot {
    let texture = gpu.device().create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: extent(shape, n),
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: shape.format.wgpu(),
        usage: usage(),
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    TextureSlot { texture, view }
}

/// The sampler of each resource of `spec` that is a sampler (`None` for the
/// others), made once per graph.
pub(crate) fn create_samplers(
    gpu: &Gpu,
    spec: &crate::spec::GraphSpec,
) -> Vec<Option<wgpu::Sampler>> {
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

/// Upload tightly packed host texels (`width * texel_bytes` per row) into
/// `texture`; it lands before the run's submission.
pub(crate) fn upload(
    gpu: &Gpu,
    texture: &wgpu::Texture,
    shape: &TextureShape,
    n: u64,
    bytes: &[u8],
) {
    let size = extent(shape, n);
    gpu.queue().write_texture(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        bytes,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(size.width.saturating_mul(shape.format.texel_bytes())),
            rows_per_image: Some(size.height),
        },
        size,
    );
}

/// Record the copy of `texture` into `buffer`, rows padded to 256 bytes.
pub(crate) fn copy_out(
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    buffer: &wgpu::Buffer,
    shape: &TextureShape,
    n: u64,
) {
    let size = extent(shape, n);
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(u32::try_from(padded_row(shape, n)).unwrap_or(u32::MAX)),
                rows_per_image: Some(size.height),
            },
        },
        size,
    );
}

/// Copy padded rows (`padded` bytes apart) into tightly packed `dst` rows of
/// `row` bytes.
pub(crate) fn strip_rows(src: &[u8], dst: &mut [u8], row: usize, padded: usize) {
    if row == 0 {
        return;
    }
    for (i, out) in dst.chunks_mut(row).enumerate() {
        let start = i * padded;
        if let Some(src) = src.get(start..start + out.len()) {
            out.copy_from_slice(src);
        }
    }
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

/// A texture on the device, usable as a graph texture's input or output
/// (the texture counterpart of [`crate::GpuBufferHandle`]): made by
/// [`crate::Graph::create_texture`] or `graph!`'s `run_resident`, or
/// imported with [`GpuTextureHandle::from_wgpu`]. Clones share the texture.
///
/// A run copies an input handle into the graph's texture and the graph's
/// output texture into an output handle, on the device, in the run's one
/// submission; the format and size must be the graph texture's.
///
/// ```no_run
/// # fn f(gpu: &vyre_graph::Gpu, texture: vyre_graph::wgpu::Texture) -> vyre_graph::Result<()> {
/// use vyre_graph::GpuTextureHandle;
/// let handle = GpuTextureHandle::from_wgpu(gpu, texture);
/// let texels: Vec<u8> = handle.read(gpu)?; // tightly packed rows
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct GpuTextureHandle {
    texture: wgpu::Texture,
    gpu_id: u64,
}

impl GpuTextureHandle {
    /// Wrap an application's texture made on `gpu`'s device. To feed a
    /// graph it needs `TextureUsages::COPY_SRC`, to receive an output
    /// `COPY_DST` (and `COPY_SRC` to [`read`](Self::read) it).
    #[must_use]
    pub fn from_wgpu(gpu: &Gpu, texture: wgpu::Texture) -> Self {
        GpuTextureHandle {
            texture,
            gpu_id: gpu.id(),
        }
    }

    /// The wgpu texture.
    #[must_use]
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// `[width, height]` in texels.
    #[must_use]
    pub fn size(&self) -> [u32; 2] {
        [self.texture.width(), self.texture.height()]
    }

    /// Read the texture back as tightly packed rows of texels (one
    /// submission and a wait).
    ///
    /// # Errors
    /// [`BackendError::InvalidHandle`] for a handle of another `Gpu`, a
    /// format without a fixed texel size or a texture without `COPY_SRC`;
    /// [`BackendError::ReadbackFailed`] when mapping fails.
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        let invalid = |reason: &str| BackendError::InvalidHandle {
            buffer: "texture".into(),
            reason: reason.into(),
        };
        if self.gpu_id != gpu.id() {
            return Err(invalid("it belongs to another Gpu; read it with its own"));
        }
        if !self.texture.usage().contains(wgpu::TextureUsages::COPY_SRC) {
            return Err(invalid(
                "it lacks TextureUsages::COPY_SRC; create it with that usage to read it back",
            ));
        }
        let Some(texel) = self.texture.format().block_copy_size(None) else {
            return Err(invalid("its format has no fixed texel size"));
        };
        let [w, h] = self.size();
        let row = u64::from(w) * u64::from(texel);
        let padded = row.next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
        let staging = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre texture read"),
            size: padded * u64::from(h),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_texture_to_buffer(
            self.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(u32::try_from(padded).unwrap_or(u32::MAX)),
                    rows_per_image: Some(h),
                },
            },
            self.texture.size(),
        );
        let index = gpu.submit(encoder.finish());
        let mut padded_bytes = vec![0u8; usize::try_from(padded * u64::from(h)).unwrap_or(0)];
        let read = crate::readback::map_and_copy(
            gpu,
            &crate::readback::MapSlots::new(1),
            Some(index),
            None,
            &mut crate::readback::Targets::one(&staging, &mut padded_bytes[..]),
        );
        gpu.free_buffer(&staging);
        read?;
        let mut out = vec![0u8; usize::try_from(row * u64::from(h)).unwrap_or(0)];
        strip_rows(
            &padded_bytes,
            &mut out,
            usize::try_from(row).unwrap_or(0),
            usize::try_from(padded).unwrap_or(0),
        );
        Ok(out)
    }

    /// Check that the handle fits graph texture `name` of `shape` at `n`
    /// on `gpu`, with `usage`.
    pub(crate) fn check(
        &self,
        gpu: &Gpu,
        name: &str,
        shape: &TextureShape,
        n: u64,
        usage: wgpu::TextureUsages,
    ) -> Result<()> {
        let invalid = |reason: String| BackendError::InvalidHandle {
            buffer: name.to_string(),
            reason,
        };
        if self.gpu_id != gpu.id() {
            return Err(invalid(
                "the texture belongs to another Gpu; make or import it with the graph's Gpu".into(),
            ));
        }
        if self.texture.format() != shape.format.wgpu() {
            return Err(invalid(format!(
                "the texture is {:?} but the graph texture is {}; make it with the graph texture's format",
                self.texture.format(),
                shape.format.name()
            )));
        }
        let [w, h] = shape.size(n);
        let [tw, th] = self.size();
        if (u64::from(tw), u64::from(th)) != (w, h) || self.texture.depth_or_array_layers() != 1 {
            return Err(invalid(format!(
                "the texture is {tw} x {th} but the graph texture is {w} x {h} at problem size {n}; make it that size"
            )));
        }
        if !self.texture.usage().contains(usage) {
            return Err(invalid(format!(
                "the texture lacks {usage:?} (the run copies it that way); create it with that usage"
            )));
        }
        Ok(())
    }
}

/// Record a copy of a whole texture into another of the same size.
pub(crate) fn copy_texture(
    encoder: &mut wgpu::CommandEncoder,
    from: &wgpu::Texture,
    to: &wgpu::Texture,
) {
    encoder.copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), from.size());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_stripped_of_their_padding() {
        let src: Vec<u8> = (0..12).collect();
        let mut dst = [0u8; 6];
        strip_rows(&src, &mut dst, 3, 4);
        assert_eq!(dst, [0, 1, 2, 4, 5, 6]);
    }

    #[test]
    fn padded_rows() {
        use crate::spec::{Extent, TexelFormat};
        let shape = |w| TextureShape {
            format: TexelFormat::Rgba8Unorm,
            width: Extent::constant(w),
            height: Extent::constant(2),
        };
        assert_eq!(padded_row(&shape(1), 0), 256);
        assert_eq!(padded_row(&shape(64), 0), 256);
        assert_eq!(padded_row(&shape(65), 0), 512);
        assert_eq!(readback_bytes(&shape(1000), 0), 4096 * 2);
    }
}
