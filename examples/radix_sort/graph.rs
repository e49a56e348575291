//! The radix sort graphs of the `radix_sort` example, in a file of their own
//! so that other examples and benchmarks can include them:
//!
//! ```ignore
//! #[path = "../radix_sort/graph.rs"]
//! mod radix;
//! let sorted = radix::RadixSort::new(&gpu)?.run(&keys)?.keys;
//! ```
//!
//! Both sort u32 keys least significant digit first, 4 bits a pass, so 8
//! passes; each pass is a `repeat` iteration of four nodes:
//!
//! 1. `histogram[i]`: every block of 1,024 keys counts its 16 digit values
//!    (digit-major: `counts[digit * blocks + block]`);
//! 2. `scan_counts[i]`, `scan_blocks[i]`: an exclusive scan of those counts
//!    (the `prefix_sum` example's block-scan kernel, at two levels), which
//!    says where each block's keys of each digit go;
//! 3. `scatter[i]`: every block ranks its keys within the block, stably (a
//!    workgroup-wide scan of per-thread digit counts), and writes them to
//!    their place.
//!
//! The digit's shift is a pipeline-overridable constant set per iteration
//! (`with { SHIFT = i * 4 }`), and keys move between `keys` and `tmp` with
//! `ping`/`pong`; after the even number of passes they are back in `keys`.
//!
//! Sizes: any `n` from 1 to 67,043,328 keys (the block totals of the counts
//! must fit one 1,024-item block, see [`MAX_KEYS`]). Device memory is about
//! `12 * n` bytes for keys (`24 * n` for pairs, readback buffers included)
//! plus `n / 8` for the counts.

use vyre_graph::graph;

graph! {
    /// Sorts u32 keys in place (an LSD radix sort, 4 bits a pass, 8 passes).
    /// At most 67,043,328 keys.
    pub struct RadixSort;

    kernel histogram = file "examples/kernels/radix_sort/histogram.wgsl";
    kernel scan = file "examples/kernels/prefix_sum/scan_blocks.wgsl";
    kernel scatter = file "examples/kernels/radix_sort/scatter.wgsl" entry "main";

    inout keys[n];
    intermediate tmp[n];
    // 16 counts per block of 1,024 keys (n / 64 + 16 >= 16 * ceil(n / 1024)),
    // their scan, the scan's block totals and their scan.
    intermediate counts[n / 64 + 16];
    intermediate offsets[n / 64 + 16];
    intermediate block_sums[n / 65536 + 1];
    intermediate block_offsets[n / 65536 + 1];
    intermediate total[1];

    repeat 8 as i {
        node histogram(keys: ping(keys, tmp), counts: counts) over n / 4 with { SHIFT = i * 4 };
        node scan_counts = scan(src: counts, dst: offsets, sums: block_sums) over n / 256 + 4;
        node scan_blocks = scan(src: block_sums, dst: block_offsets, sums: total) over n / 262144 + 1;
        node scatter(
            src: ping(keys, tmp),
            dst: pong(keys, tmp),
            offsets: offsets,
            block_offsets: block_offsets,
        ) over n / 4 with { SHIFT = i * 4 };
    }
}

graph! {
    /// Sorts (key, value) pairs by key, stably: pairs with equal keys keep
    /// their order. u32 keys and values, at most 67,043,328 pairs.
    pub struct RadixSortPairs;

    kernel histogram = file "examples/kernels/radix_sort/histogram.wgsl";
    kernel scan = file "examples/kernels/prefix_sum/scan_blocks.wgsl";
    kernel scatter = file "examples/kernels/radix_sort/scatter.wgsl" entry "pairs";

    inout keys[n];
    inout values[n];
    intermediate tmp_keys[n];
    intermediate tmp_values[n];
    intermediate counts[n / 64 + 16];
    intermediate offsets[n / 64 + 16];
    intermediate block_sums[n / 65536 + 1];
    intermediate block_offsets[n / 65536 + 1];
    intermediate total[1];

    repeat 8 as i {
        node histogram(keys: ping(keys, tmp_keys), counts: counts) over n / 4 with { SHIFT = i * 4 };
        node scan_counts = scan(src: counts, dst: offsets, sums: block_sums) over n / 256 + 4;
        node scan_blocks = scan(src: block_sums, dst: block_offsets, sums: total) over n / 262144 + 1;
        node scatter(
            src: ping(keys, tmp_keys),
            src_values: ping(values, tmp_values),
            dst: pong(keys, tmp_keys),
            dst_values: pong(values, tmp_values),
            offsets: offsets,
            block_offsets: block_offsets,
        ) over n / 4 with { SHIFT = i * 4 };
    }
}

/// The most keys the graphs sort: the block totals of the digit counts
/// (`n / 65536 + 1`) must fit one 1,024-item scan block.
#[allow(dead_code, reason = "not every file that includes this one checks it")]
pub const MAX_KEYS: usize = 1023 * 65536;
