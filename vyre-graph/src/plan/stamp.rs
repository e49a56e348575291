//! [`Stamp`]: how a run recorded into a caller's encoder proves, when it is
//! read, that its commands ran.

use crate::device::gpu::Gpu;

/// Proof that the commands of a run recorded into a caller's encoder
/// ([`Graph::record`](crate::Graph::record)) ran before it is read: each
/// such run writes a new number into `source` through the queue, and its
/// own commands copy it into `read`, which is read back with the outputs.
/// The queue delivers the write at the next submission of any work, but
/// the copy runs only with the caller's encoder: a dropped encoder, or a
/// submission of other work only, leaves an older number in `read`.
/// Made by the first recorded run of a plan; two 4-byte buffers.
pub(crate) struct Stamp {
    source: wgpu::Buffer,
    /// Read back with the run's outputs.
    pub(crate) read: wgpu::Buffer,
    /// The latest number written (never 0, what a new buffer holds).
    seq: u32,
    /// The number this run's read must find: set when the run recorded a
    /// copy, `None` for a run submitted by the runtime itself.
    pub(crate) expected: Option<u32>,
}

impl Stamp {
    pub(crate) fn new(gpu: &Gpu) -> Self {
        let buffer = |usage| {
            gpu.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vyre run stamp"),
                size: 4,
                usage,
                mapped_at_creation: false,
            })
        };
        Stamp {
            source: buffer(wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST),
            read: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            seq: 0,
            expected: None,
        }
    }

    /// Writes the next number and records its copy at the end of this
    /// run's commands in `encoder`.
    pub(crate) fn record(&mut self, gpu: &Gpu, encoder: &mut wgpu::CommandEncoder) {
        self.seq = self.seq.wrapping_add(1).max(1);
        gpu.write_buffer(&self.source, 0, &self.seq.to_ne_bytes());
        encoder.copy_buffer_to_buffer(&self.source, 0, &self.read, 0, 4);
        self.expected = Some(self.seq);
    }

    /// Its buffers, to free with the plan.
    pub(crate) fn buffers(&self) -> [&wgpu::Buffer; 2] {
        [&self.source, &self.read]
    }
}
