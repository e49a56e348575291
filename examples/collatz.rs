//! Collatz stopping times on the GPU: for every input, how many steps of
//! `n -> n / 2` (n even) and `n -> 3n + 1` (n odd) take it to 1.
//!
//! The smallest useful `graph!`: one kernel, written inline, one input, one
//! output, one node launched with one invocation per element (`over n`). The
//! kernel works in u32 and guards against overflow by switching to 64-bit
//! arithmetic (a pair of u32 words) when `3n + 1` would not fit (see its
//! comments). The result is checked against a CPU reference in u64.
//!
//! ```text
//! cargo run --release --example collatz            # inputs 1..=1,048,576
//! cargo run --release --example collatz -- 10000   # inputs 1..=10,000
//! ```
//!
//! Without a GPU, Mesa's software Vulkan driver (lavapipe) runs it too.

mod common;
use common::median_time;

use std::process::ExitCode;
use std::time::Instant;

use vyre_graph::{Gpu, graph};

graph! {
    /// The Collatz stopping time of every input (`u32::MAX` for an input of
    /// 0, which never reaches 1).
    pub struct Collatz;

    // WGSL written inline as Rust tokens: compile errors point at the exact
    // token. (A `file "..."` or a string literal works the same.)
    kernel collatz = wgsl {
        // Collatz stopping time: how many `n -> n / 2` (n even) and `n -> 3n + 1`
        // (n odd) steps take each input to 1.
        //
        // Overflow guard: trajectories leave u32 early (the one from 159,487 peaks
        // at 17,202,377,752), so the walk runs in u32 while `3n + 1` fits and
        // continues in 64 bits (a hi:lo pair of u32) when it does not. An input
        // of 0 (which never reaches 1) or a trajectory that would leave 64 bits
        // gives FAILED (0xffffffff) instead of looping forever.

        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> steps: array<u32>;

        const WG: u32 = 256u;
        const FAILED: u32 = 0xffffffffu;
        // The largest n with 3n + 1 <= 0xffffffff.
        const MAX_U32_ODD: u32 = 0x55555554u;

        fn stopping_time(start: u32) -> u32 {
            if start == 0u {
                return FAILED;
            }
            var lo = start;
            var count = 0u;
            // Fast path: plain u32.
            loop {
                if lo == 1u {
                    return count;
                }
                if (lo & 1u) == 0u {
                    lo = lo >> 1u;
                } else if lo <= MAX_U32_ODD {
                    lo = 3u * lo + 1u;
                } else {
                    break;
                }
                count += 1u;
            }
            // Wide path: the value is hi * 2^32 + lo, and lo is odd here.
            var hi = 0u;
            loop {
                if hi == 0u && lo == 1u {
                    return count;
                }
                if (lo & 1u) == 0u {
                    lo = (lo >> 1u) | (hi << 31u);
                    hi = hi >> 1u;
                } else {
                    // 3n + 1 = n + 2n + 1, with carries; fail when it leaves 64 bits.
                    if hi > 0x55555555u || (hi == 0x55555555u && lo > 0x55555554u) {
                        return FAILED;
                    }
                    let lo2 = lo << 1u;
                    let hi2 = (hi << 1u) | (lo >> 31u);
                    let sum = lo + lo2;
                    var carry = select(0u, 1u, sum < lo);
                    let next = sum + 1u;
                    carry += select(0u, 1u, next < sum);
                    hi = hi + hi2 + carry;
                    lo = next;
                }
                count += 1u;
            }
            return FAILED;
        }

        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            // Linear index of a grid folded into y and z past 65,535 workgroups.
            let i = gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
            if i >= arrayLength(&x) {
                return;
            }
            steps[i] = stopping_time(x[i]);
        }
    };

    input x[n];
    output steps[n];

    node collatz(x: x, steps: steps) over n;
}

/// What the kernel writes when an input never reaches 1 (0) or its
/// trajectory leaves 64 bits.
const FAILED: u32 = u32::MAX;

/// The CPU reference: the same walk in checked u64 arithmetic.
fn stopping_time(start: u32) -> u32 {
    if start == 0 {
        return FAILED;
    }
    let mut value = u64::from(start);
    let mut steps = 0;
    while value != 1 {
        value = if value % 2 == 0 {
            value / 2
        } else {
            match value.checked_mul(3).and_then(|v| v.checked_add(1)) {
                Some(v) => v,
                None => return FAILED,
            }
        };
        steps += 1;
    }
    steps
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let n: u32 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("the input count `{arg}` is not a u32: {e}"))?,
        None => 1 << 20,
    };
    if n == 0 {
        return Err("the input count must be at least 1".into());
    }

    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter());
    let collatz = Collatz::new(&gpu)?;
    common::write_dot("collatz", &collatz.to_dot())?;

    // The textbook values first.
    let small = collatz.run(&[1u32, 2, 3, 4][..])?.steps;
    if small != [0, 1, 7, 2] {
        eprintln!("inputs 1, 2, 3, 4 gave {small:?}, expected [0, 1, 7, 2]");
        return Ok(false);
    }
    println!("inputs 1, 2, 3, 4 take {small:?} steps");

    let x: Vec<u32> = (1..=n).collect();
    let (gpu_time, out) = median_time(5, || collatz.run(&x))?;

    let start = Instant::now();
    let expected: Vec<u32> = x.iter().map(|&v| stopping_time(v)).collect();
    let cpu_time = start.elapsed();

    if let Some(i) = out
        .steps
        .iter()
        .zip(&expected)
        .position(|(got, want)| got != want)
    {
        eprintln!(
            "mismatch: input {} took {} steps on the GPU, {} on the CPU",
            x[i], out.steps[i], expected[i]
        );
        return Ok(false);
    }
    let (longest, steps) = x
        .iter()
        .zip(&out.steps)
        .max_by_key(|&(_, &steps)| steps)
        .map_or((0, 0), |(&x, &steps)| (x, steps));
    println!(
        "{n} inputs match the CPU reference; the longest walk starts at {longest} ({steps} steps)"
    );
    println!(
        "GPU graph run (median of 5): {:.2} ms; CPU reference: {:.2} ms",
        gpu_time.as_secs_f64() * 1e3,
        cpu_time.as_secs_f64() * 1e3
    );
    Ok(true)
}

fn main() -> ExitCode {
    common::exit_code(run())
}
