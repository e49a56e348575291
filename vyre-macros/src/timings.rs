//! Opt-in expansion timings: with `VYRE_MACRO_TIMINGS=1` in the environment
//! of the build, each successful `graph!` prints how long it took to parse,
//! validate, reflect, analyse and expand, and the time per kernel (a
//! failing one how long it took to find its errors). For
//! finding out what a graph costs the build; nothing is printed otherwise.

use std::time::Instant;

/// Measures one invocation when timings are on.
pub struct Timer {
    start: Option<Instant>,
}

impl Timer {
    /// Start measuring if `VYRE_MACRO_TIMINGS` is set to anything but `0`.
    pub fn start() -> Self {
        let on = std::env::var_os("VYRE_MACRO_TIMINGS").is_some_and(|v| v != "0");
        Timer {
            start: on.then(Instant::now),
        }
    }

    /// Print the time since `start` for graph `name` with `kernels` kernels.
    pub fn report(&self, name: &str, kernels: usize) {
        if let Some(start) = self.start {
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let plural = if kernels == 1 { "" } else { "s" };
            eprintln!(
                "vyre graph! `{name}`: {kernels} kernel{plural} expanded in {ms:.2} ms ({:.2} ms per kernel)",
                ms / kernels.max(1) as f64
            );
        }
    }

    /// Print the time since `start` for graph `name`, which failed with
    /// `errors` errors.
    pub fn report_failed(&self, name: &str, errors: usize) {
        if let Some(start) = self.start {
            let ms = start.elapsed().as_secs_f64() * 1e3;
            eprintln!("vyre graph! `{name}`: {errors} errors reported in {ms:.2} ms");
        }
    }

    /// The time now, when timings are on (the start of a stage).
    pub fn lap(&self) -> Option<Instant> {
        self.start.map(|_| Instant::now())
    }

    /// Print how long stage `stage` of graph `name`, started at `started`,
    /// took.
    pub fn report_stage(&self, name: &str, stage: &str, started: Option<Instant>) {
        if let Some(started) = started {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            eprintln!("vyre graph! `{name}`: {stage} took {ms:.2} ms");
        }
    }
}
