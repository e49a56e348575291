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

/// The process exit code for an example's `run`: success when its result
/// matched the CPU, failure (with the error printed) otherwise.
pub fn exit_code(result: Result<bool, Box<dyn std::error::Error>>) -> std::process::ExitCode {
    match result {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
