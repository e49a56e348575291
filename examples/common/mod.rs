//! Helpers shared by the examples.
// Each example uses some of them.
#![allow(dead_code)]

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

/// The example's arguments without `--trace PATH` (which [`trace_path`]
/// reads).
pub fn args() -> Vec<String> {
    let mut out = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--trace" {
            args.next();
        } else {
            out.push(a);
        }
    }
    out
}

/// Where to write a trace of the example's runs: `--trace PATH`, else the
/// `VYRE_TRACE` environment variable (see docs/profiling.md).
pub fn trace_path() -> Option<std::path::PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--trace")
        .and_then(|i| args.get(i + 1))
        .map(Into::into)
        .or_else(|| std::env::var_os("VYRE_TRACE").map(Into::into))
}

/// Write a graph's `to_dot()` to `$VYRE_DOT_DIR/<name>.dot` when that
/// variable is set (`docs/pictures/graphs.sh` draws them).
pub fn write_dot(name: &str, dot: &str) -> std::io::Result<()> {
    match std::env::var_os("VYRE_DOT_DIR") {
        Some(dir) => std::fs::write(std::path::Path::new(&dir).join(format!("{name}.dot")), dot),
        None => Ok(()),
    }
}
