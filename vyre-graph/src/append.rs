//! Append buffers on the host side: their sizes (a capacity that `grow`
//! may have raised for a problem size) and reading them back as their items,
//! truncated to the count. The device side (counts reset, overflow status)
//! is `indirect.rs`.

use bytemuck::Pod;

use crate::error::{BackendError, Result};
use crate::graph::Graph;

impl Graph {
    /// Bytes of buffer `buffer` at problem size `n`: its header, then its
    /// elements (for an append buffer, its capacity).
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] for an unknown buffer index.
    pub fn buffer_bytes(&self, buffer: usize, n: u64) -> Result<u64> {
        let spec =
            self.program
                .spec
                .buffers
                .get(buffer)
                .ok_or_else(|| BackendError::InvalidProgram {
                    graph: self.program.spec.name.to_string(),
                    reason: format!(
                        "buffer index {buffer} is out of range ({} buffers)",
                        self.program.spec.buffers.len()
                    ),
                })?;
        Ok(spec.bytes(n))
    }
}

/// Zeroed host bytes to read an append buffer of `bytes` bytes back into.
///
/// # Errors
/// [`BackendError::HostAllocationFailed`] when the host cannot hold them.
#[doc(hidden)]
pub fn append_scratch(bytes: u64, buffer: &str) -> Result<Vec<u8>> {
    let failed = || BackendError::HostAllocationFailed {
        buffer: buffer.to_string(),
        bytes,
    };
    let len = usize::try_from(bytes).map_err(|_| failed())?;
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(len).map_err(|_| failed())?;
    v.resize(len, 0);
    Ok(v)
}

/// Replaces `items` with the items of an append buffer read back as `bytes`
/// (the count first, the items after `header_bytes`): `min(count,
/// capacity)` of them. Keeps the vector's capacity.
#[doc(hidden)]
pub fn read_appended<T: Pod>(items: &mut Vec<T>, bytes: &[u8], header_bytes: usize) {
    items.clear();
    let Some(count) = bytes.get(..4).map(bytemuck::pod_read_unaligned::<u32>) else {
        return;
    };
    let body = bytes.get(header_bytes..).unwrap_or(&[]);
    let size = std::mem::size_of::<T>().max(1);
    items.extend(
        body.chunks_exact(size)
            .take(count as usize)
            .map(bytemuck::pod_read_unaligned::<T>),
    );
}

#[cfg(test)]
mod tests {
    use super::read_appended;

    #[test]
    fn read_back_items_stop_at_the_count_and_at_the_capacity() {
        let mut bytes = vec![0u8; 4 + 4 * 3];
        bytes[..4].copy_from_slice(&2u32.to_ne_bytes());
        for (i, v) in [7u32, 8, 9].iter().enumerate() {
            bytes[4 + 4 * i..8 + 4 * i].copy_from_slice(&v.to_ne_bytes());
        }
        let mut items: Vec<u32> = vec![1; 10];
        read_appended(&mut items, &bytes, 4);
        assert_eq!(items, [7, 8]);
        bytes[..4].copy_from_slice(&99u32.to_ne_bytes());
        read_appended(&mut items, &bytes, 4);
        assert_eq!(
            items,
            [7, 8, 9],
            "an overflowing count stops at the capacity"
        );
        bytes[..4].copy_from_slice(&0u32.to_ne_bytes());
        read_appended(&mut items, &bytes, 4);
        assert!(items.is_empty());
    }
}
