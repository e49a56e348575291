//! Append buffers on the host side: their sizes (a capacity that `grow`
//! may have raised for a problem size) and reading them back as their items,
//! truncated to the count. The device side (counts reset, overflow status)
//! is `indirect.rs`.

use std::sync::{Mutex, PoisonError};

use bytemuck::Pod;

use crate::error::{BackendError, Result};
use crate::graph::Graph;
use crate::program::Program;

/// Capacities grown by `grow`: `(n, buffer, capacity)`.
#[derive(Debug, Default)]
pub(crate) struct Grown(Mutex<Vec<(u64, usize, u64)>>);

impl Grown {
    fn get(&self, n: u64, buffer: usize) -> Option<u64> {
        let grown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        grown
            .iter()
            .find(|&&(m, b, _)| m == n && b == buffer)
            .map(|&(_, _, c)| c)
    }

    fn set(&self, n: u64, buffer: usize, capacity: u64) {
        let mut grown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        grown.retain(|&(m, b, _)| !(m == n && b == buffer));
        grown.push((n, buffer, capacity));
    }
}

/// The capacity `grow` gives an append buffer that received `count` items:
/// a quarter more, so that a count that creeps up does not grow every run.
fn grown_capacity(count: u64) -> u64 {
    count.saturating_add(count / 4).max(1)
}

impl Program {
    /// Elements of buffer `b` at problem size `n` (an append buffer's grown
    /// capacity, when it grew).
    pub(crate) fn buffer_elements(&self, b: usize, n: u64) -> u64 {
        let spec = &self.spec.buffers[b];
        match spec.append.and_then(|_| self.grown.get(n, b)) {
            Some(capacity) => capacity.max(spec.len.eval(n)),
            None => spec.len.eval(n),
        }
    }

    /// Bytes of buffer `b` at problem size `n`, header included.
    pub(crate) fn buffer_bytes(&self, b: usize, n: u64) -> u64 {
        let spec = &self.spec.buffers[b];
        self.buffer_elements(b, n)
            .saturating_mul(u64::from(spec.element_size))
            .saturating_add(u64::from(spec.header_bytes))
    }

    /// After `error` in a run of size `n`: when it is an overflow of a
    /// `grow` buffer, grows that buffer's capacity for `n` and says so.
    pub(crate) fn grow_on(&self, n: u64, error: &BackendError) -> bool {
        let BackendError::AppendOverflow { buffer, count, .. } = error else {
            return false;
        };
        let Some(b) = self.spec.buffer_index(buffer) else {
            return false;
        };
        if !self.spec.buffers[b].append.is_some_and(|a| a.grow) {
            return false;
        }
        self.grown.set(n, b, grown_capacity(*count));
        true
    }
}

impl Graph {
    /// Bytes of buffer `buffer` at problem size `n`: its header, then its
    /// elements (for an append buffer, its capacity, which `grow` may have
    /// raised for `n`).
    ///
    /// # Errors
    /// [`BackendError::InvalidProgram`] for an unknown buffer index.
    pub fn buffer_bytes(&self, buffer: usize, n: u64) -> Result<u64> {
        if buffer >= self.program.spec.buffers.len() {
            return Err(BackendError::InvalidProgram {
                graph: self.program.spec.name.to_string(),
                reason: format!(
                    "buffer index {buffer} is out of range ({} buffers)",
                    self.program.spec.buffers.len()
                ),
            });
        }
        Ok(self.program.buffer_bytes(buffer, n))
    }

    /// Whether `error`, from a run of problem size `n`, is an overflow of an
    /// append buffer declared `grow` whose capacity for `n` has since grown
    /// to hold the count: then the same run, with outputs sized anew
    /// ([`Graph::buffer_bytes`]), fits. The typed API of `graph!` repeats
    /// such a run once by itself.
    ///
    /// ```no_run
    /// # fn f(graph: &vyre_graph::Graph, e: &vyre_graph::BackendError) {
    /// if graph.grew_for(e, 1000) { /* size the sinks anew and run again */ }
    /// # }
    /// ```
    #[must_use]
    pub fn grew_for(&self, error: &BackendError, n: u64) -> bool {
        let BackendError::AppendOverflow { buffer, count, .. } = error else {
            return false;
        };
        let Some(b) = self.program.spec.buffer_index(buffer) else {
            return false;
        };
        self.program.spec.buffers[b].append.is_some_and(|a| a.grow)
            && self.program.buffer_elements(b, n) >= *count
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
