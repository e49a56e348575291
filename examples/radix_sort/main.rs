//! Sorting 16M u32 keys, and (key, value) pairs, with a GPU radix sort.
//!
//! It shows a `repeat` block driving eight passes of a four-node pass with
//! ping-pong buffers and a per-pass override constant (`SHIFT = i * 4`), a
//! kernel shared with another example (the block scan of `prefix_sum`), and
//! a stable scatter through workgroup-local ranking. The graphs themselves
//! are in `graph.rs` beside this file. The results are checked against the
//! standard library's sorts, and both timings are printed.
//!
//! ```text
//! cargo run --release --example radix_sort             # 16,777,216 keys
//! cargo run --release --example radix_sort -- 100000   # 100,000 keys
//! ```

mod graph;

#[path = "../common/mod.rs"]
mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use graph::{MAX_KEYS, RadixSort, RadixSortPairs};
use vyre_graph::Gpu;

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

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

/// Sorts `n` random keys on the GPU and with `sort_unstable`.
fn sort_keys(gpu: &Gpu, n: usize) -> Result<bool, Box<dyn std::error::Error>> {
    let sort = RadixSort::new(gpu)?;
    common::write_dot("radix_sort", &sort.to_dot())?;
    // Ragged sizes first (partial blocks, one key, the benchmark's size).
    for len in [1, 5, 1023, 1025, 4097, 1 << 20] {
        let keys = random_u32s(len, len as u64);
        let mut expected = keys.clone();
        expected.sort_unstable();
        if sort.run(&keys)?.keys != expected {
            eprintln!("keys: mismatch for {len} keys");
            return Ok(false);
        }
    }

    let keys = random_u32s(n, 1);
    let (gpu_time, out) = median_time(3, || sort.run(&keys))?;
    let mut expected = keys.clone();
    let start = Instant::now();
    expected.sort_unstable();
    let cpu_time = start.elapsed();
    if let Some(i) = out
        .keys
        .iter()
        .zip(&expected)
        .position(|(got, want)| got != want)
    {
        eprintln!(
            "keys: mismatch at {i}: the GPU says {}, the CPU {}",
            out.keys[i], expected[i]
        );
        return Ok(false);
    }
    println!("keys: {n} u32 sorted, matches sort_unstable (and 6 ragged sizes do)");
    println!(
        "keys: GPU graph run (median of 3, with upload and readback): {:.2} ms; CPU sort_unstable: {:.2} ms",
        ms(gpu_time),
        ms(cpu_time)
    );
    Ok(true)
}

/// Sorts `n` (key, index) pairs with many equal keys, and checks that every
/// value stayed with its key and equal keys kept their order.
fn sort_pairs(gpu: &Gpu, n: usize) -> Result<bool, Box<dyn std::error::Error>> {
    let sort = RadixSortPairs::new(gpu)?;
    common::write_dot("radix_sort_pairs", &sort.to_dot())?;
    // About 8 copies of every key, so that stability matters.
    let distinct = u32::try_from(n / 8).unwrap_or(u32::MAX).max(1);
    let keys: Vec<u32> = random_u32s(n, 2).iter().map(|k| k % distinct).collect();
    let values: Vec<u32> = (0..).take(n).collect();

    let (gpu_time, out) = median_time(3, || sort.run(&keys, &values))?;
    let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    let start = Instant::now();
    expected.sort_by_key(|&(key, _)| key); // stable
    let cpu_time = start.elapsed();

    let got = out.keys.iter().copied().zip(out.values.iter().copied());
    if let Some((i, (got, want))) = got
        .zip(&expected)
        .enumerate()
        .find(|(_, (got, want))| got != *want)
    {
        let what = if got.0 != want.0 {
            "keys out of order"
        } else if keys[got.1 as usize] != got.0 {
            "value separated from its key"
        } else {
            "equal keys reordered (not stable)"
        };
        eprintln!("pairs: {what} at {i}: the GPU says {got:?}, the CPU {want:?}");
        return Ok(false);
    }
    println!(
        "pairs: {n} (key, value) pairs sorted, stable, values with their keys ({distinct} distinct keys)"
    );
    println!(
        "pairs: GPU graph run (median of 3, with upload and readback): {:.2} ms; CPU stable sort_by_key: {:.2} ms",
        ms(gpu_time),
        ms(cpu_time)
    );
    Ok(true)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the key count `{arg}` is not a number: {e}"))?,
        None => 1 << 24,
    };
    if n == 0 || n > MAX_KEYS {
        return Err(format!("the key count must be between 1 and {MAX_KEYS}, not {n}").into());
    }
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    Ok(sort_keys(&gpu, n)? && sort_pairs(&gpu, n)?)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
