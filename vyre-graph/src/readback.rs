//! Mapping readback buffers: every buffer of a run is mapped after a single
//! wait, copied out, and unmapped.

use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

use crate::error::{BackendError, Result};
use crate::gpu::Gpu;

type MapResults =
    Arc<Mutex<SmallVec<[Option<std::result::Result<(), wgpu::BufferAsyncError>>; 4]>>>;

/// Map the first `dst.len()` bytes of each staging buffer after
/// `submission` completes, copy them into `dst`, and unmap. One wait for all.
pub(crate) fn map_and_copy(
    gpu: &Gpu,
    submission: Option<wgpu::SubmissionIndex>,
    timeout: Option<std::time::Duration>,
    targets: &mut [(&wgpu::Buffer, &mut [u8])],
) -> Result<()> {
    if targets.is_empty() {
        return Ok(());
    }
    let results: MapResults = Arc::new(Mutex::new(SmallVec::from_elem(None, targets.len())));
    for (i, (buffer, dst)) in targets.iter().enumerate() {
        let results = Arc::clone(&results);
        buffer
            .slice(..map_len(dst.len()))
            .map_async(wgpu::MapMode::Read, move |r| {
                if let Ok(mut slots) = results.lock() {
                    slots[i] = Some(r);
                }
            });
    }
    gpu.wait(submission, timeout)?;
    let failure = match results.lock() {
        Err(_) => Some("a map callback panicked".to_string()),
        Ok(slots) => slots.iter().find_map(|slot| match slot {
            Some(Ok(())) => None,
            Some(Err(e)) => Some(e.to_string()),
            None => Some("the buffer was not mapped after the wait".to_string()),
        }),
    };
    if let Some(reason) = failure {
        // Leave no buffer mapped, so the next run can map it again.
        if let Ok(slots) = results.lock() {
            for ((buffer, _), slot) in targets.iter().zip(slots.iter()) {
                if matches!(slot, Some(Ok(()))) {
                    buffer.unmap();
                }
            }
        }
        return Err(BackendError::ReadbackFailed { reason });
    }
    let mut total = 0u64;
    for (buffer, dst) in targets.iter_mut() {
        {
            let view = buffer
                .slice(..map_len(dst.len()))
                .get_mapped_range()
                .map_err(|e| BackendError::ReadbackFailed {
                    reason: e.to_string(),
                })?;
            dst.copy_from_slice(&view[..dst.len()]);
        }
        buffer.unmap();
        total += dst.len() as u64;
    }
    gpu.count_read_back(total);
    Ok(())
}

/// Mapped ranges must be a multiple of 4 bytes.
fn map_len(len: usize) -> u64 {
    (len as u64).max(4).next_multiple_of(4)
}
