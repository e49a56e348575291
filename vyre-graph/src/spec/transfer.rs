//! [`TransferOptions`]: how a run moves data between the host and the
//! device: which path each upload and read-back takes, and how many threads
//! copy. Plain data; the paths themselves are `device/transfer.rs` (the
//! host copies), `plan/staging.rs` (the staging buffers) and `run/` (the
//! order of submissions).

/// How a run moves data in and out. The defaults come from measurements
/// (see `docs/performance.md`); each threshold can be changed for a whole
/// [`Gpu`](crate::Gpu) ([`GpuOptions::transfer`](crate::GpuOptions::transfer))
/// or for one run ([`DispatchConfig::transfer`](crate::DispatchConfig::transfer)),
/// so that one program can measure several settings.
///
/// ```
/// use vyre_graph::{DispatchConfig, TransferOptions};
/// // Copy on the calling thread only, and upload everything through
/// // `Queue::write_buffer`.
/// let plain = TransferOptions::default()
///     .with_threads(0)
///     .with_staging_min_bytes(u64::MAX);
/// let config = DispatchConfig::default().with_transfer(plain);
/// assert_eq!(config.transfer.map(|t| t.threads), Some(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TransferOptions {
    /// The most threads one host copy (into a mapped staging buffer, out of
    /// a mapped read-back buffer) is split over. `0` and `1` copy on the
    /// calling thread. In [`GpuOptions::transfer`](crate::GpuOptions::transfer)
    /// it also sizes the [`Gpu`](crate::Gpu)'s own worker pool (made on
    /// the first copy that splits, never when this is 0 or 1); a run's
    /// value above the pool's size gets the pool's size. Default: the
    /// machine's hardware threads, at most 8 (on the H200 machine one
    /// thread filled mapped memory at 8.6 GB/s, eight at 27 GB/s).
    pub threads: usize,
    /// Host inputs of at least this many bytes are uploaded through the
    /// launch plan's own staging buffers (filled by the transfer threads,
    /// copied on the device in the run's command buffer); smaller ones
    /// through `Queue::write_buffer`, which is cheaper for them.
    /// `u64::MAX` never stages. Default [`TransferOptions::STAGING_MIN_BYTES`].
    pub staging_min_bytes: u64,
    /// Copies of at least this many bytes are split over
    /// [`TransferOptions::threads`] threads (each taking at least
    /// [`TransferOptions::piece_bytes`]); smaller ones run on the calling
    /// thread. Default [`TransferOptions::PARALLEL_MIN_BYTES`].
    pub parallel_min_bytes: u64,
    /// The least bytes one thread copies when a copy is split. Default
    /// [`TransferOptions::PIECE_BYTES`].
    pub piece_bytes: u64,
    /// An append output whose capacity reads back at least this many bytes
    /// is read by its count: the run's submission copies the counts, then a
    /// second, small submission copies only the items written. Below it
    /// the whole capacity is read in the run's one submission (and only the
    /// counted items are copied out). `u64::MAX` always reads in one
    /// submission. Default [`TransferOptions::COUNT_FIRST_MIN_BYTES`].
    pub count_first_min_bytes: u64,
    /// A staged host input larger than this is staged in chunks of this
    /// many bytes (rounded up to 256), each copied on the device in a
    /// submission of its own as soon as it is filled, so that the device
    /// copies one chunk while the host fills the next. Default `u64::MAX`:
    /// never (see `docs/performance.md`: on lavapipe it did not pay).
    pub overlap_chunk_bytes: u64,
}

impl TransferOptions {
    /// Default of [`TransferOptions::staging_min_bytes`]: 256 KiB.
    pub const STAGING_MIN_BYTES: u64 = 256 << 10;
    /// Default of [`TransferOptions::parallel_min_bytes`]: 1 MiB.
    pub const PARALLEL_MIN_BYTES: u64 = 1 << 20;
    /// Default of [`TransferOptions::piece_bytes`]: 256 KiB.
    pub const PIECE_BYTES: u64 = 256 << 10;
    /// Default of [`TransferOptions::count_first_min_bytes`]: 1 MiB.
    pub const COUNT_FIRST_MIN_BYTES: u64 = 1 << 20;
    /// [`TransferOptions::parallel_min_bytes`] on a CPU adapter: 16 MiB.
    pub const CPU_PARALLEL_MIN_BYTES: u64 = 16 << 20;
    /// [`TransferOptions::count_first_min_bytes`] on a CPU adapter: 4 MiB.
    pub const CPU_COUNT_FIRST_MIN_BYTES: u64 = 4 << 20;

    /// Split copies over at most `threads` threads (0 or 1: the calling
    /// thread only).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Stage host inputs of at least `bytes` bytes.
    #[must_use]
    pub fn with_staging_min_bytes(mut self, bytes: u64) -> Self {
        self.staging_min_bytes = bytes;
        self
    }

    /// Split copies of at least `bytes` bytes over the threads.
    #[must_use]
    pub fn with_parallel_min_bytes(mut self, bytes: u64) -> Self {
        self.parallel_min_bytes = bytes;
        self
    }

    /// Give each thread of a split copy at least `bytes` bytes.
    #[must_use]
    pub fn with_piece_bytes(mut self, bytes: u64) -> Self {
        self.piece_bytes = bytes;
        self
    }

    /// Read append outputs of at least `bytes` bytes of capacity by count.
    #[must_use]
    pub fn with_count_first_min_bytes(mut self, bytes: u64) -> Self {
        self.count_first_min_bytes = bytes;
        self
    }

    /// Stage host inputs larger than `bytes` bytes in chunks of that many
    /// (see [`TransferOptions::overlap_chunk_bytes`]).
    #[must_use]
    pub fn with_overlap_chunk_bytes(mut self, bytes: u64) -> Self {
        self.overlap_chunk_bytes = bytes;
        self
    }

    /// How many pieces a copy of `bytes` bytes is split into (1: the
    /// calling thread copies it all).
    ///
    /// ```
    /// use vyre_graph::TransferOptions;
    /// let t = TransferOptions::default()
    ///     .with_threads(4)
    ///     .with_parallel_min_bytes(1 << 20)
    ///     .with_piece_bytes(256 << 10);
    /// assert_eq!(t.pieces((1 << 20) - 1), 1);
    /// assert_eq!(t.pieces(1 << 20), 4);
    /// assert_eq!(t.pieces(1 << 30), 4);
    /// assert_eq!(t.with_threads(0).pieces(1 << 30), 1);
    /// ```
    #[must_use]
    pub fn pieces(&self, bytes: u64) -> usize {
        if bytes < self.parallel_min_bytes || self.threads < 2 {
            return 1;
        }
        let most = usize::try_from(bytes.div_ceil(self.piece_bytes.max(1))).unwrap_or(usize::MAX);
        self.threads.min(most).max(1)
    }
}

impl TransferOptions {
    /// The defaults for an adapter of `device_type`: [`Default`] for a GPU;
    /// on a CPU adapter (lavapipe), whose "device" runs on the same cores
    /// as the copies, copies split only from
    /// [`TransferOptions::CPU_PARALLEL_MIN_BYTES`] and append outputs are
    /// read by count only from [`TransferOptions::CPU_COUNT_FIRST_MIN_BYTES`]
    /// (measured on lavapipe, see `docs/performance.md`). A
    /// [`Gpu`](crate::Gpu) opened without
    /// [`GpuOptions::transfer`](crate::GpuOptions::transfer) takes these.
    ///
    /// ```
    /// use vyre_graph::TransferOptions;
    /// use vyre_graph::wgpu::DeviceType;
    /// let cpu = TransferOptions::for_adapter(DeviceType::Cpu);
    /// assert_eq!(cpu.parallel_min_bytes, TransferOptions::CPU_PARALLEL_MIN_BYTES);
    /// assert_eq!(TransferOptions::for_adapter(DeviceType::DiscreteGpu), TransferOptions::default());
    /// ```
    #[must_use]
    pub fn for_adapter(device_type: wgpu::DeviceType) -> Self {
        let options = TransferOptions::default();
        match device_type {
            wgpu::DeviceType::Cpu => options
                .with_parallel_min_bytes(Self::CPU_PARALLEL_MIN_BYTES)
                .with_count_first_min_bytes(Self::CPU_COUNT_FIRST_MIN_BYTES),
            _ => options,
        }
    }
}

impl Default for TransferOptions {
    fn default() -> Self {
        TransferOptions {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            staging_min_bytes: Self::STAGING_MIN_BYTES,
            parallel_min_bytes: Self::PARALLEL_MIN_BYTES,
            piece_bytes: Self::PIECE_BYTES,
            count_first_min_bytes: Self::COUNT_FIRST_MIN_BYTES,
            overlap_chunk_bytes: u64::MAX,
        }
    }
}
