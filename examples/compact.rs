//! Stream compaction: keep the values of 16M `u32`s that are below a
//! threshold, into an append buffer. **Order is not preserved.**
//!
//! The predicate is `value < threshold`, with the threshold a uniform
//! (default 2^30: a quarter of the u32 range, so about a quarter of uniform
//! random values are kept). The output is `append kept[n];`: a buffer that
//! can hold every value (the capacity `n`) with a count the kernel adds to
//! atomically; the host gets `kept` back truncated to that count.
//!
//! The kernel (`examples/kernels/compact/keep.wgsl`) counts a workgroup's
//! kept values in workgroup memory, reserves the workgroup's range of
//! `kept` with one global `atomicAdd`, and writes each value into its slot
//! of that range: 1/256 of the global atomics of appending value by value.
//! The cost is the order: ranges are reserved in whatever order workgroups
//! run, so `kept` holds the right values in no particular order (a stable
//! compaction needs a prefix sum, see the `prefix_sum` example). The check
//! is therefore: the count equals the CPU's, and the GPU's values sorted
//! equal the CPU's sorted, element by element.
//!
//! ```text
//! cargo run --release --example compact             # 16,777,216 values
//! cargo run --release --example compact -- 100000   # 100,000 values
//! ```

mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle, graph};

graph! {
    /// Every value below `params.threshold`, in no particular order.
    pub struct Compact;

    kernel keep = file "examples/kernels/compact/keep.wgsl";

    input values[n];
    uniform params;
    // Room for every value; the count says how many were kept.
    append kept[n];

    node keep(values: values, params: params, kept: kept) over n;
}

/// Keep values below this: a quarter of the u32 range.
const THRESHOLD: u32 = 1 << 30;

/// Deterministic pseudo-random u32s (SplitMix64), so the run needs no
/// dependency and is the same every time.
fn random_u32s(len: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u32
        })
        .collect()
}

/// The CPU reference, in input order.
fn cpu_compact(values: &[u32], threshold: u32) -> Vec<u32> {
    values.iter().copied().filter(|&v| v < threshold).collect()
}

/// Whether the GPU kept the same values as the CPU, in any order; prints
/// the first difference.
fn same_values(label: &str, mut got: Vec<u32>, mut want: Vec<u32>) -> bool {
    if got.len() != want.len() {
        eprintln!(
            "{label}: the GPU kept {} values, the CPU {}",
            got.len(),
            want.len()
        );
        return false;
    }
    got.sort_unstable();
    want.sort_unstable();
    if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
        eprintln!(
            "{label}: sorted, value {i} is {} on the GPU and {} on the CPU",
            got[i], want[i]
        );
        return false;
    }
    true
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the value count `{arg}` is not a number: {e}"))?,
        None => 1 << 24,
    };
    if n == 0 {
        return Err("the value count must be at least 1".into());
    }

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let compact = Compact::new(&gpu)?;
    common::write_dot("compact", &compact.to_dot())?;

    // The edges first, on 1,000 values: nothing kept (a count of 0), one
    // value kept, and everything kept (a count of exactly the capacity; no
    // random value here is u32::MAX).
    let mut small = random_u32s(1000, 1);
    small[0] = 0;
    let mut counts = Vec::new();
    for threshold in [0, 1, u32::MAX] {
        let params = Params { threshold };
        let kept = compact.run(&small, &params)?.kept;
        counts.push(kept.len());
        let label = format!("threshold {threshold}");
        if !same_values(&label, kept, cpu_compact(&small, threshold)) {
            return Ok(false);
        }
    }
    println!(
        "1,000 values (capacity 1,000): thresholds 0, 1 and u32::MAX keep {counts:?}, as the CPU does"
    );

    let values = random_u32s(n, 0xc0ff_ee00);
    let params = Params {
        threshold: THRESHOLD,
    };
    let start = Instant::now();
    let expected = cpu_compact(&values, THRESHOLD);
    let cpu_time = start.elapsed();

    // The values stay on the device between runs, so the timing is the
    // compaction and the readback of what was kept, not the upload.
    let resident = GpuBufferHandle::from_slice(&gpu, &values)?;
    let (gpu_time, out) = median_time(7, || compact.run(&resident, &params))?;
    if !same_values("16M run", out.kept.clone(), expected.clone()) {
        return Ok(false);
    }
    let in_order = out.kept == expected;
    println!(
        "{n} values, {} kept (value < {THRESHOLD}): the same values as the CPU's (compared sorted; \
         the GPU's order {} the input order: order is not preserved)",
        out.kept.len(),
        if in_order {
            "happens to match"
        } else {
            "differs from"
        }
    );

    // GPU time of the pass alone, from timestamp queries where the adapter
    // has them.
    let profile = DispatchConfig::default().with_profile(true);
    let mut pass_ns: Vec<u64> = (0..7)
        .filter_map(|_| {
            compact
                .run_reported(&profile, &resident, &params)
                .ok()?
                .1
                .gpu_ns
        })
        .collect();
    pass_ns.sort_unstable();
    let per_second = |seconds: f64| n as f64 / seconds;
    println!(
        "GPU graph run (median of 7, input resident, kept values read back): {:.2} ms, {:.3e} elements/s",
        gpu_time.as_secs_f64() * 1e3,
        per_second(gpu_time.as_secs_f64())
    );
    if let Some(&ns) = pass_ns.get(pass_ns.len() / 2) {
        println!(
            "GPU pass alone (timestamps, median of {}): {:.3} ms, {:.3e} elements/s",
            pass_ns.len(),
            ns as f64 / 1e6,
            per_second(ns as f64 / 1e9)
        );
    }
    println!(
        "CPU reference (filter, in order): {:.2} ms, {:.3e} elements/s",
        cpu_time.as_secs_f64() * 1e3,
        per_second(cpu_time.as_secs_f64())
    );
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
