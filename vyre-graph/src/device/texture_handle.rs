//! [`GpuTextureHandle`]: a texture on the device that a run takes as an
//! input or fills as an output, and its read-back to the host.

use super::gpu::Gpu;
use super::map::Waiting;
use crate::spec::ToWgpu;
use crate::spec::error::{BackendError, Result};
use crate::spec::{TextureDimension, TextureShape};

/// A texture on the device, usable as a graph texture's input or output
/// (the texture counterpart of [`crate::GpuBufferHandle`]): made by
/// [`crate::Graph::create_texture`] or `graph!`'s `run_resident`, or
/// imported with [`GpuTextureHandle::from_wgpu`]. Clones share the texture.
///
/// A run copies an input handle into the graph's texture and the graph's
/// output texture into an output handle, on the device, in the run's one
/// submission; the format, dimension and extent must be the graph
/// texture's.
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

    /// The id of the [`Gpu`] it belongs to ([`Gpu::id`]): a run on another
    /// `Gpu` refuses it, and a device set runs an instance that uses it on
    /// this one.
    #[must_use]
    pub fn gpu_id(&self) -> u64 {
        self.gpu_id
    }

    /// The wgpu texture.
    #[must_use]
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// `[width, height]` in texels (see [`extent`](Self::extent) for
    /// layers and depth).
    #[must_use]
    pub fn size(&self) -> [u32; 2] {
        [self.texture.width(), self.texture.height()]
    }

    /// `[width, height, depth or layers]` in texels (1 where the dimension
    /// has no such side).
    #[must_use]
    pub fn extent(&self) -> [u32; 3] {
        [
            self.texture.width(),
            self.texture.height(),
            self.texture.depth_or_array_layers(),
        ]
    }

    /// Read the texture back as tightly packed texels: x fastest, then y,
    /// then layer or z (one submission and a wait).
    ///
    /// Not on wasm32: use [`GpuTextureHandle::read_async`].
    ///
    /// # Errors
    /// [`BackendError::InvalidTexture`] for a handle of another `Gpu`, a
    /// format without a fixed texel size or a texture without `COPY_SRC`;
    /// [`BackendError::ReadbackFailed`] when mapping fails.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        super::map::block_on(self.read_with(gpu, Waiting::Block(None)))
    }

    /// As [`GpuTextureHandle::read`], as a future that never blocks (the
    /// way to read a resident texture in a browser).
    ///
    /// # Errors
    /// As [`GpuTextureHandle::read`].
    pub async fn read_async(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        self.read_with(gpu, Waiting::Async).await
    }

    /// [`GpuTextureHandle::read`], waiting as `waiting` says.
    async fn read_with(&self, gpu: &Gpu, waiting: Waiting) -> Result<Vec<u8>> {
        let invalid = |reason: &str| BackendError::InvalidTexture {
            buffer: String::new(),
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
        let [w, h, d] = self.extent().map(u64::from);
        let row = w * u64::from(texel);
        let padded = row.next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
        let staging = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vyre texture read"),
            size: padded * h * d,
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
                    rows_per_image: Some(self.texture.height()),
                },
            },
            self.texture.size(),
        );
        let index = gpu.submit(encoder.finish());
        let mut padded_bytes = vec![0u8; usize::try_from(padded * h * d).unwrap_or(0)];
        let read = super::map::read_staging(
            gpu,
            &staging,
            index,
            super::map::Dest::Bytes(&mut padded_bytes),
            waiting,
        )
        .await;
        gpu.free_buffer(&staging);
        read?;
        let mut out = vec![0u8; usize::try_from(row * h * d).unwrap_or(0)];
        super::map::strip_rows(
            &padded_bytes,
            &mut out,
            usize::try_from(row).unwrap_or(0),
            usize::try_from(padded).unwrap_or(0),
        );
        Ok(out)
    }

    /// The dimension the texture is, as a graph texture would declare it
    /// (`None` for a cube or other view it cannot be).
    fn dimension(&self) -> Option<TextureDimension> {
        match self.texture.dimension() {
            wgpu::TextureDimension::D1 => Some(TextureDimension::D1),
            wgpu::TextureDimension::D2 => None,
            wgpu::TextureDimension::D3 => Some(TextureDimension::D3),
        }
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
        let invalid = |reason: String| BackendError::InvalidTexture {
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
        // A 2D texture of any layer count fits a 2D or 2D array graph
        // texture of that many layers: copies go layer by layer.
        let dimension_fits = match self.dimension() {
            Some(d) => d == shape.dimension,
            None => matches!(
                shape.dimension,
                TextureDimension::D2 | TextureDimension::D2Array
            ),
        };
        let want = shape.size(n);
        let have = self.extent().map(u64::from);
        if !dimension_fits || have != want {
            let sides = |s: [u64; 3]| match self.texture.dimension() {
                wgpu::TextureDimension::D1 => format!("{}", s[0]),
                wgpu::TextureDimension::D2 if s[2] == 1 => format!("{} x {}", s[0], s[1]),
                wgpu::TextureDimension::D2 => format!("{} x {} x {} layers", s[0], s[1], s[2]),
                wgpu::TextureDimension::D3 => format!("{} x {} x {}", s[0], s[1], s[2]),
            };
            return Err(invalid(format!(
                "the texture is {}{} but the graph texture is {} ({}) at problem size {n}; make it that size",
                if dimension_fits {
                    String::new()
                } else {
                    format!("a {:?} texture of ", self.texture.dimension())
                },
                sides(have),
                shape.describe(n),
                shape.dimension.keyword()
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
