//! An exclusive prefix sum (scan) of u32 values, wrapping on overflow,
//! written as one built-in node, beside the same scan written by hand.
//!
//! `PrefixSum` is one line: `node p = scan exclusive sum(x) -> y;`. The
//! macro generates the kernels and lowers it to five ordinary nodes (block
//! totals, their totals, a scan of those, the block offsets, the scan of `x`
//! from each block's offset; see docs/reductions.md).
//!
//! `HandPrefixSum` is the hand-written multi-level scan it replaces: one
//! kernel run by several nodes on different buffers, sizes that shrink level
//! by level (`n / 1024`, `n / 1048576`):
//!
//! 1. `scan0`: each workgroup scans a block of 1,024 items (256 threads, 4
//!    items each) and writes the block's total to `sums1`;
//! 2. `scan1`, `scan2`: the same kernel scans the block totals, then the
//!    totals of those (one block of 1,024 totals covers 2^20 items, so three
//!    levels cover 2^30);
//! 3. `add1`, `add0`: every block adds the scanned total of the blocks
//!    before it, from the top level down.
//!
//! Both are checked against the CPU, and both are timed.
//!
//! ```text
//! cargo run --release --example prefix_sum             # 16,000,003 items
//! cargo run --release --example prefix_sum -- 100000   # 100,000 items
//! ```

mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{Gpu, graph};

graph! {
    /// Exclusive prefix sum of `x` (wrapping u32 addition): `y[i]` is the
    /// sum of `x[..i]`, with the built-in scan.
    pub struct PrefixSum;

    input x[n];
    output y[n];

    node p = scan exclusive sum<u32>(x) -> y;
}

graph! {
    /// The same scan written by hand. Covers up to 2^30 items.
    pub struct HandPrefixSum;

    kernel scan = file "examples/kernels/prefix_sum/scan_blocks.wgsl";
    kernel add = file "examples/kernels/prefix_sum/add_offsets.wgsl";

    input x[n];
    output y[n];
    // Block totals per level, and their exclusive scans.
    intermediate sums1[n / 1024];
    intermediate offsets1[n / 1024];
    intermediate sums2[n / 1048576];
    intermediate offsets2[n / 1048576];
    // The total of everything (one element up to 2^30 items).
    intermediate total[n / 1073741824];

    // `over n / 4`: 4 items an invocation, so one 256-wide workgroup a block.
    node scan0 = scan(src: x, dst: y, sums: sums1) over n / 4;
    node scan1 = scan(src: sums1, dst: offsets1, sums: sums2) over n / 4096;
    node scan2 = scan(src: sums2, dst: offsets2, sums: total) over n / 4194304;
    node add1 = add(data: offsets1, offsets: offsets2) over n / 1024;
    node add0 = add(data: y, offsets: offsets1) over n;
}

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

/// The CPU reference: a sequential exclusive scan.
fn exclusive_scan(x: &[u32]) -> Vec<u32> {
    let mut sum = 0u32;
    x.iter()
        .map(|&v| {
            let before = sum;
            sum = sum.wrapping_add(v);
            before
        })
        .collect()
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the item count `{arg}` is not a number: {e}"))?,
        None => 16_000_003,
    };
    if n == 0 || n > 1 << 30 {
        return Err(format!("the item count must be between 1 and 2^30, not {n}").into());
    }

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let scan = PrefixSum::new(&gpu)?;
    let hand = HandPrefixSum::new(&gpu)?;
    common::write_dot("prefix_sum", &scan.to_dot())?;
    common::write_dot("prefix_sum_hand", &hand.to_dot())?;

    // Ragged sizes around the block boundaries first, then the real one.
    for len in [1, 5, 1023, 1024, 1025, 2047, 2048, 2049, 1_048_577] {
        let x = random_u32s(len, len as u64);
        let want = exclusive_scan(&x);
        if scan.run(&x)?.y != want || hand.run(&x)?.y != want {
            eprintln!("mismatch for {len} items");
            return Ok(false);
        }
    }

    let x = random_u32s(n, 42);
    let (gpu_time, out) = median_time(5, || scan.run(&x))?;
    let (hand_time, hand_out) = median_time(5, || hand.run(&x))?;
    let start = Instant::now();
    let expected = exclusive_scan(&x);
    let cpu_time = start.elapsed();

    for (what, y) in [
        ("built-in scan", &out.y),
        ("hand-written scan", &hand_out.y),
    ] {
        if let Some(i) = y.iter().zip(&expected).position(|(got, want)| got != want) {
            eprintln!(
                "{what}: mismatch at {i}: the GPU says {}, the CPU {}",
                y[i], expected[i]
            );
            return Ok(false);
        }
    }
    println!(
        "exclusive scan of {n} u32 matches the CPU reference (and 9 ragged sizes do), built-in and by hand"
    );
    println!(
        "GPU graph run (median of 5, with upload and readback): built-in scan {:.2} ms, hand-written {:.2} ms; CPU reference: {:.2} ms",
        gpu_time.as_secs_f64() * 1e3,
        hand_time.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
