//! Binding one run's inputs to its launch plan: host bytes are uploaded
//! into the plan's buffers and textures (they land before the run's
//! submission; large ones through the plan's staging buffers,
//! `staging.rs`), resident `Input` handles are bound in place (bind groups
//! rebuilt only when the handle changes), other resident feeds are handed
//! to the recording to copy; and the plan's per-run extras: the pass timer
//! and the stamp of a recorded run.

use smallvec::SmallVec;

use super::launch::LaunchPlan;
use super::program::Program;
use super::staging::Staging;
use super::stamp::Stamp;
use super::timer::PassTimer;
use crate::device::buffer::{GpuBufferHandle, round4, upload};
use crate::device::gpu::Gpu;
use crate::device::io::Feed;
use crate::device::texture::extent;
use crate::device::transfer::{Pieces, Stacked};
use crate::spec::config::DispatchConfig;
use crate::spec::transfer::TransferOptions;
use crate::spec::{BufferClass, TextureShape};

impl LaunchPlan {
    /// Bind this run's inputs: resident `Input` handles are bound in place
    /// (bind groups rebuilt only when the handle changes); host bytes are
    /// uploaded into the plan's buffers, large ones through the plan's
    /// staging buffers when `staging` gives the run's options (the run
    /// submits its commands itself and maps them again after), the others
    /// through the queue; other resident feeds are returned, to be copied
    /// by the recording. A stacked run gives `stacked`: for each host
    /// input, its instances' bytes in order, uploaded one after another
    /// straight into the buffer's upload path (its feeds are then only
    /// placeholders).
    pub(crate) fn bind_feeds<'f>(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        feeds: &'f [Feed<'f>],
        stacked: Option<&Stacked<'_>>,
        staging: Option<&TransferOptions>,
    ) -> SmallVec<[(usize, &'f GpuBufferHandle); 4]> {
        let mut copies = SmallVec::new();
        for (k, (feed, &b)) in feeds.iter().zip(&program.host_inputs).enumerate() {
            let class = program.spec.buffers[b].class;
            match feed {
                Feed::Device(h) if class == BufferClass::Input => {
                    self.bind_input(gpu, program, b, Some(h));
                }
                Feed::Device(h) => {
                    self.bind_input(gpu, program, b, None);
                    copies.push((b, *h));
                }
                // Copied by the recording (`run/encode.rs`).
                Feed::Texture(_) => self.bind_input(gpu, program, b, None),
                Feed::Host(bytes) => {
                    self.bind_input(gpu, program, b, None);
                    let spec = &program.spec.buffers[b];
                    match (spec.texture_shape(), self.texture_of(program, b)) {
                        (Some(shape), Some(texture)) => {
                            upload_texture(gpu, texture, shape, self.n, bytes);
                        }
                        _ => {
                            let parts = match stacked.and_then(|s| s.get(k)) {
                                Some(parts) => &parts[..],
                                None => std::slice::from_ref(bytes),
                            };
                            let src = Pieces::new(parts);
                            let staged = staging.is_some_and(|t| {
                                let dst = self.buffer_of(program, b).clone();
                                self.stage(gpu, k, b, &dst, src, t)
                            });
                            if !staged {
                                match parts {
                                    [bytes] => upload(gpu, self.buffer_of(program, b), bytes),
                                    _ => upload_pieces(gpu, self.buffer_of(program, b), src),
                                }
                            }
                        }
                    }
                }
            }
        }
        copies
    }

    /// A run recorded into the caller's `encoder`: stamp it (see
    /// [`Stamp`]), making the stamp on first use.
    /// `None` forgets the stamp of an earlier run (a run the runtime
    /// submits itself needs none).
    pub(crate) fn stamp(&mut self, gpu: &Gpu, encoder: Option<&mut wgpu::CommandEncoder>) {
        match encoder {
            Some(encoder) => self
                .stamp
                .get_or_insert_with(|| Stamp::new(gpu))
                .record(gpu, encoder),
            None => {
                if let Some(stamp) = &mut self.stamp {
                    stamp.expected = None;
                }
            }
        }
    }

    /// The pass timer when this run profiles (`config.profile`), made on
    /// first use, set to time each dispatch (`config.dispatch_times`, where
    /// it can) or only the pass.
    pub(crate) fn timer(&mut self, gpu: &Gpu, config: &DispatchConfig) {
        if !config.profile {
            return;
        }
        if self.timer.is_none() {
            self.timer = PassTimer::new(gpu, self.grids.len());
        }
        if let Some(t) = &mut self.timer {
            t.written = if config.dispatch_times && t.per_dispatch {
                t.count
            } else {
                2
            };
        }
    }

    /// Point input `b`'s bindings at `handle` (or back at the plan's own
    /// buffer), rebuilding only the bind groups of nodes that use it, and
    /// only when it changed.
    fn bind_input(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        b: usize,
        handle: Option<&GpuBufferHandle>,
    ) {
        let same = match (&self.bound_handles[b], handle) {
            (None, None) => true,
            (Some(old), Some(new)) => new.is(old),
            _ => false,
        };
        if same {
            return;
        }
        self.bound_handles[b] = handle.map(GpuBufferHandle::bound);
        for node in 0..program.dispatches.len() {
            if program
                .dispatch(node)
                .bindings
                .iter()
                .any(|nb| nb.buffer == b)
            {
                self.bind_groups[node] = self.make_bind_groups(gpu, program, node);
            }
        }
        super::control_block::rebind(gpu, program, self, b);
    }
}

/// Upload bytes in parts through the queue, one after another from the
/// buffer's start: one staging allocation of the queue, each part copied
/// into it once (a stacked run's instances, never gathered first).
fn upload_pieces(gpu: &Gpu, buffer: &wgpu::Buffer, src: Pieces<'_, '_>) {
    let len = src.len();
    let Some(size) = wgpu::BufferSize::new(round4(len as u64)) else {
        return;
    };
    if let Some(mut view) = gpu.queue().write_buffer_with(buffer, 0, size) {
        src.each_part(0, len, |at, bytes| {
            view.slice(at..at + bytes.len()).copy_from_slice(bytes);
        });
        view.slice(len..).fill(0);
        gpu.count_uploaded(len as u64);
    }
}

/// Upload tightly packed host texels (`width * texel_bytes` per row,
/// `height` rows per layer or z slice) into `texture`; it lands before the
/// run's submission.
fn upload_texture(gpu: &Gpu, texture: &wgpu::Texture, shape: &TextureShape, n: u64, bytes: &[u8]) {
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

impl LaunchPlan {
    /// Upload `src` into host input `k`'s buffer `dst` (graph buffer `b`)
    /// through its staging buffers, made on first use; `false` when the
    /// caller must write them through the queue instead (the input is
    /// small, or a staging buffer is not mapped again yet).
    pub(crate) fn stage(
        &mut self,
        gpu: &Gpu,
        k: usize,
        b: usize,
        dst: &wgpu::Buffer,
        src: Pieces<'_, '_>,
        options: &TransferOptions,
    ) -> bool {
        let len = src.len();
        if (len as u64) < options.staging_min_bytes || len == 0 {
            return false;
        }
        let size = round4(self.bytes[b]);
        let Some(chunks) = self.staging.get_mut(k) else {
            return false;
        };
        let layout = Staging::layout(size, options.overlap_chunk_bytes);
        let same = chunks.len() == layout.clone().count()
            && chunks.iter().zip(layout.clone()).all(|(s, (offset, len))| {
                s.offset == offset && s.buffer.size() == len && !s.failed()
            });
        if !same {
            // First use, another chunk size, or a mapping that failed: new
            // buffers, mapped.
            for old in chunks.drain(..) {
                gpu.free_buffer(&old.buffer);
            }
            chunks.extend(layout.map(|(offset, len)| Staging::new(gpu, offset, len)));
        }
        if chunks.iter().any(|s| s.armed || !s.mapped(gpu)) {
            gpu.count_staged(false);
            return false;
        }
        let copier = gpu.copier(Some(*options));
        let alone = chunks.len() > 1;
        for s in chunks.iter_mut() {
            let start = usize::try_from(s.offset).unwrap_or(usize::MAX).min(len);
            let end = start
                .saturating_add(usize::try_from(s.buffer.size()).unwrap_or(usize::MAX))
                .min(len);
            if copier.fill(&s.buffer, src, start..end).is_err() {
                // Not mapped after all: the queue takes the whole input
                // (after any chunk already copied), and the next run maps
                // these again.
                gpu.count_staged(false);
                return false;
            }
            s.buffer.unmap();
            s.armed = true;
            if alone {
                // Copied now, while the host fills the next chunk.
                let mut encoder = gpu.device().create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(&s.buffer, 0, dst, s.offset, s.buffer.size());
                gpu.submit(encoder.finish());
                s.submitted = true;
            }
        }
        gpu.count_staged(true);
        gpu.count_uploaded(len as u64);
        true
    }

    /// Record the copies of this run's staged inputs into their buffers
    /// (before the pass); chunks submitted on their own already are not.
    pub(crate) fn encode_staged(&self, encoder: &mut wgpu::CommandEncoder, program: &Program) {
        for (chunks, &b) in self.staging.iter().zip(&program.host_inputs) {
            for s in chunks.iter().filter(|s| s.armed && !s.submitted) {
                let dst = self.buffer_of(program, b);
                encoder.copy_buffer_to_buffer(&s.buffer, 0, dst, s.offset, s.buffer.size());
            }
        }
    }

    /// Submissions this run made for chunks of its inputs.
    pub(crate) fn staged_submissions(&self) -> u32 {
        let chunks = self.staging.iter().flatten().filter(|s| s.submitted);
        u32::try_from(chunks.count()).unwrap_or(u32::MAX)
    }

    /// After the run's submission: map every staging buffer it used again,
    /// for the next run.
    pub(crate) fn remap_staging(&mut self) {
        for s in self.staging.iter_mut().flatten() {
            if s.armed {
                s.remap();
            }
        }
    }

    /// The staging buffers, to free with the plan.
    pub(crate) fn staging_buffers(&self) -> impl Iterator<Item = &wgpu::Buffer> {
        self.staging.iter().flatten().map(|s| &s.buffer)
    }
}
