//! Helpers shared by the examples.

use std::time::{Duration, Instant};

/// The median of `runs` timed calls of `f`, after one untimed warm-up call,
/// with the last call's result.
pub fn median_time<T, E>(
    runs: usize,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<(Duration, T), E> {
    let mut result = f()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        result = f()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((
        times.get(times.len() / 2).copied().unwrap_or_default(),
        result,
    ))
}
