//! Moving data in and out (`TransferOptions`): uploads through a launch
//! plan's staging buffers, host copies split over the transfer threads,
//! outputs read straight into vectors, append outputs read by their count.
//!
//! The thresholds are made tiny through the options, so that every path
//! and every crossover (± one element) is reached with a few hundred bytes:
//! staging from 256 bytes, split copies from 128 bytes in pieces of at
//! least 64 bytes over 3 threads, append outputs by count from 256 bytes of
//! capacity. Every output is checked element by element against the input
//! or a CPU reference; after every error the same graph runs correctly
//! again.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{buffer, gpu, graph_spec, kernel, node, read, serial, write};
use vyre_graph::half::f16;
use vyre_graph::spec::{BufferClass, DispatchSize, Extent};
use vyre_graph::{
    BackendError, DispatchConfig, Feed, Gpu, GpuBufferHandle, GpuOptions, Graph, Sink,
    TransferOptions, graph, wgpu,
};

/// Every path reachable with small inputs: staging from 256 bytes, split
/// copies from 128 bytes (pieces of 64 bytes, 3 threads), append outputs by
/// count from 256 bytes of capacity.
fn small() -> TransferOptions {
    TransferOptions::default()
        .with_threads(3)
        .with_staging_min_bytes(256)
        .with_parallel_min_bytes(128)
        .with_piece_bytes(64)
        .with_count_first_min_bytes(256)
}

/// Nothing staged, nothing split, nothing read by count.
fn plain() -> TransferOptions {
    TransferOptions::default()
        .with_threads(0)
        .with_staging_min_bytes(u64::MAX)
        .with_count_first_min_bytes(u64::MAX)
}

fn with(t: TransferOptions) -> DispatchConfig {
    DispatchConfig::default().with_transfer(t)
}

/// Byte counts around every crossover of [`small`] (256: staging and
/// count-first; 128: splitting; 64: a piece), odd ones included.
const BYTE_SIZES: &[usize] = &[
    1, 2, 3, 5, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 383, 384, 385, 1001,
];

/// A graph over 1-byte elements: `y = x` word by word, so that an odd byte
/// count is uploaded, copied and read back with a ragged last word.
fn byte_copy(gpu: &Gpu) -> Graph {
    const COPY: &str = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x]; }
        }";
    let spec = graph_spec(
        "bytes",
        vec![kernel(
            "copy",
            COPY,
            [64, 1, 1],
            &[read("src", 0, 0, 1), write("dst", 0, 1, 1)],
        )],
        vec![
            buffer("x", BufferClass::Input, 1, Extent::N),
            buffer("y", BufferClass::Output, 1, Extent::N),
        ],
        vec![node(
            "copy",
            0,
            &[(0, 0, 0), (0, 1, 1)],
            DispatchSize::Invocations(Extent::N),
        )],
    );
    Graph::new(gpu, spec).expect("byte graph")
}

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt) ^ (i >> 8) as u8)
        .collect()
}

/// Odd byte counts around every crossover, with the pool, without it and
/// with the defaults, into a slice and into a vector, from host bytes and
/// from a resident buffer: every byte comes back.
#[test]
fn bytes_round_trip_at_every_crossover() {
    let _serial = serial();
    let gpu = gpu();
    let graph = byte_copy(&gpu);
    let before = gpu.counters();
    for (k, options) in [
        small(),
        small().with_threads(0),
        small().with_overlap_chunk_bytes(256),
        TransferOptions::default(),
    ]
    .into_iter()
    .enumerate()
    {
        let config = with(options);
        for &len in BYTE_SIZES {
            let x = pattern(len, k as u8);
            let n = len as u64;
            let mut slice = vec![0xAAu8; len];
            graph
                .run(&config, n, &[Feed::Host(&x)], &mut [Sink::Host(&mut slice)])
                .expect("run into a slice");
            assert_eq!(slice, x, "{len} bytes into a slice, options {k}");
            let mut vec: Vec<u8> = vec![9; 3];
            graph
                .run(&config, n, &[Feed::Host(&x)], &mut [Sink::from(&mut vec)])
                .expect("run into a vector");
            assert_eq!(vec, x, "{len} bytes into a vector, options {k}");
            let resident = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
            let mut again: Vec<u8> = Vec::with_capacity(len * 2);
            graph
                .run(
                    &config,
                    n,
                    &[Feed::Device(&resident)],
                    &mut [Sink::from(&mut again)],
                )
                .expect("run from a handle");
            assert_eq!(again, x, "{len} bytes from a handle, options {k}");
            assert!(again.capacity() >= len * 2, "the vector's capacity is kept");
        }
    }
    let delta = gpu.counters().since(&before);
    assert!(delta.staged_uploads > 0, "{delta:?}");
    assert!(delta.split_copies > 0, "{delta:?}");
}

graph! {
    /// `y = x` over `u32`.
    pub struct CopyU32;
    kernel copy = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x]; }
        }
    };
    input x[n];
    output y[n];
    node copy(src: x, dst: y) over n;
}

graph! {
    /// `y = -x` over `i32`.
    pub struct NegI32;
    kernel neg = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<i32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<i32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = -src[g.x]; }
        }
    };
    input x[n];
    output y[n];
    node neg(src: x, dst: y) over n;
}

graph! {
    /// `y = 2x` over `f32`.
    pub struct TwiceF32;
    kernel twice = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * 2.0; }
        }
    };
    input x[n];
    output y[n];
    node twice(src: x, dst: y) over n;
}

graph! {
    /// `y = x` over `f16` (2-byte elements: odd element counts leave a
    /// ragged last word).
    pub struct CopyF16;
    features [shader_f16];
    kernel copy = wgsl {
        enable f16;
        @group(0) @binding(0) var<storage, read> src: array<f16>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f16>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x]; }
        }
    };
    input x[n];
    output y[n];
    node copy(src: x, dst: y) over n;
}

graph! {
    /// `y = x + 2^32` over `u64`.
    pub struct AddU64;
    features [shader_int64];
    kernel add = wgsl {
        @group(0) @binding(0) var<storage, read> src: array<u64>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u64>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + (1lu << 32u); }
        }
    };
    input x[n];
    output y[n];
    node add(src: x, dst: y) over n;
}

graph! {
    /// 12-byte structs: `(a, b, c) -> (c, a, b + 1)`.
    pub struct Rotate;
    kernel rotate = wgsl {
        struct Triple { a: u32, b: u32, c: u32 }
        @group(0) @binding(0) var<storage, read> src: array<Triple>;
        @group(0) @binding(1) var<storage, read_write> dst: array<Triple>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) {
                let t = src[g.x];
                dst[g.x] = Triple(t.c, t.a, t.b + 1u);
            }
        }
    };
    input x[n];
    output y[n];
    node rotate(src: x, dst: y) over n;
}

graph! {
    /// A header struct with elements: `count` items scaled by `scale`,
    /// the header copied and `count` doubled.
    pub struct Scaled;
    kernel scale = wgsl {
        struct Block { count: u32, scale: u32, items: array<u32> }
        @group(0) @binding(0) var<storage, read> src: Block;
        @group(0) @binding(1) var<storage, read_write> dst: Block;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x == 0u { dst.count = src.count * 2u; dst.scale = src.scale; }
            if g.x < arrayLength(&src.items) { dst.items[g.x] = src.items[g.x] * src.scale; }
        }
    };
    input x[n];
    output y[n];
    node scale(src: x, dst: y) over n;
}

/// Element counts whose bytes land around every crossover of [`small`] for
/// elements of `size` bytes: 64, 128 and 256 bytes, ± one element.
fn counts(size: usize) -> Vec<usize> {
    let mut counts = vec![1, 2, 3];
    for bytes in [64, 128, 192, 256, 384, 1024] {
        let at = bytes / size;
        counts.extend([at.saturating_sub(1), at, at + 1]);
    }
    counts.retain(|&c| c > 0);
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// `check(n, options)` for every count of elements of `size` bytes and
/// every option set.
fn each(size: usize, mut check: impl FnMut(usize, &DispatchConfig)) {
    for options in [
        small(),
        small().with_threads(0),
        plain(),
        TransferOptions::default(),
    ] {
        let config = with(options);
        for n in counts(size) {
            check(n, &config);
        }
    }
}

#[test]
fn u32_i32_and_f32_through_the_typed_api() {
    let _serial = serial();
    let gpu = gpu();
    let copy = CopyU32::new(&gpu).expect("graph");
    let neg = NegI32::new(&gpu).expect("graph");
    let twice = TwiceF32::new(&gpu).expect("graph");
    let mut reused = CopyU32Outputs::default();
    each(4, |n, config| {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        // `&[T]`, `&Vec<T>` and a resident handle.
        assert_eq!(
            copy.run_with(config, &x[..]).expect("slice").y,
            x,
            "u32 n={n}"
        );
        copy.run_into(config, &mut reused, &x).expect("vec");
        assert_eq!(reused.y, x, "u32 n={n} into reused outputs");
        let h = GpuBufferHandle::from_slice(&gpu, &x).expect("handle");
        assert_eq!(
            copy.run_with(config, &h).expect("handle").y,
            x,
            "u32 n={n} handle"
        );

        let xi: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        let want: Vec<i32> = xi.iter().map(|v| v.wrapping_neg()).collect();
        assert_eq!(neg.run_with(config, &xi).expect("i32").y, want, "i32 n={n}");

        let xf: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 3.0).collect();
        let got = twice.run_with(config, &xf).expect("f32").y;
        assert_eq!(got.len(), n);
        for (i, (g, v)) in got.iter().zip(&xf).enumerate() {
            assert_eq!(g.to_bits(), (v * 2.0).to_bits(), "f32 n={n} at {i}");
        }
    });
}

#[test]
fn f16_u64_and_12_byte_structs_through_the_typed_api() {
    let _serial = serial();
    let gpu = gpu();
    let needs = wgpu::Features::SHADER_F16 | wgpu::Features::SHADER_INT64;
    assert!(
        gpu.device().features().contains(needs),
        "the adapter lacks {needs:?}, which this test needs"
    );
    let half = CopyF16::new(&gpu).expect("graph");
    let wide = AddU64::new(&gpu).expect("graph");
    let rotate = Rotate::new(&gpu).expect("graph");
    each(2, |n, config| {
        let x: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(i as f32 * 0.5 - 7.0))
            .collect();
        let got = half.run_with(config, &x).expect("f16").y;
        assert_eq!(got.len(), n, "f16 n={n}");
        for (i, (g, v)) in got.iter().zip(&x).enumerate() {
            assert_eq!(g.to_bits(), v.to_bits(), "f16 n={n} at {i}");
        }
    });
    each(8, |n, config| {
        let x: Vec<u64> = (0..n as u64).map(|i| i * 0x1_0000_0001).collect();
        let want: Vec<u64> = x.iter().map(|v| v + (1 << 32)).collect();
        assert_eq!(wide.run_with(config, &x).expect("u64").y, want, "u64 n={n}");
    });
    each(12, |n, config| {
        let x: Vec<Triple> = (0..n as u32)
            .map(|i| Triple {
                a: i,
                b: i * 3,
                c: !i,
            })
            .collect();
        let want: Vec<Triple> = x
            .iter()
            .map(|t| Triple {
                a: t.c,
                b: t.a,
                c: t.b + 1,
            })
            .collect();
        assert_eq!(
            rotate.run_with(config, &x).expect("struct").y,
            want,
            "struct n={n}"
        );
    });
}

#[test]
fn a_header_struct_with_elements_round_trips() {
    let _serial = serial();
    let gpu = gpu();
    let g = Scaled::new(&gpu).expect("graph");
    assert_eq!(Scaled::SPEC.buffers[0].header_bytes, 8);
    let mut reused = ScaledOutputs::default();
    each(4, |n, config| {
        let header = BlockHeader {
            count: n as u32,
            scale: 3,
        };
        let items: Vec<u32> = (0..n as u32).map(|i| i * 7 + 1).collect();
        let want: Vec<u32> = items.iter().map(|v| v * 3).collect();
        let out = g.run_with(config, (&header, &items)).expect("headed");
        assert_eq!((out.y.header.count, out.y.header.scale), (2 * n as u32, 3));
        assert_eq!(out.y.elements, want, "headed n={n}");
        g.run_into(config, &mut reused, &out.y)
            .expect("headed again");
        assert_eq!(reused.y.header.count, 4 * n as u32);
        let again: Vec<u32> = want.iter().map(|v| v * 3).collect();
        assert_eq!(reused.y.elements, again, "headed n={n} from a Headed");
    });
}

graph! {
    /// Every value below `params.threshold`, appended one by one.
    pub struct Below;
    kernel keep = wgsl {
        struct Params { threshold: u32 }
        struct Kept { count: atomic<u32>, items: array<u32> }
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<uniform> params: Params;
        @group(0) @binding(2) var<storage, read_write> kept: Kept;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) && x[g.x] < params.threshold {
                let slot = atomicAdd(&kept.count, 1u);
                if slot < arrayLength(&kept.items) { kept.items[slot] = x[g.x]; }
            }
        }
    };
    input x[n];
    uniform params;
    append kept[n / 2];
    node keep(x: x, params: params, kept: kept) over n;
}

/// Appended values sorted (their order is the device's).
fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

/// Counts 0, 1, the capacity exactly and over it (an error, then a correct
/// run), read by count (a second submission) and whole (one submission),
/// through the typed API, into a raw slice of the whole capacity, and into
/// a vector.
#[test]
fn append_outputs_are_read_by_their_count() {
    let _serial = serial();
    let gpu = gpu();
    let g = Below::new(&gpu).expect("graph");
    // 200 values: a capacity of 100 items, 404 bytes with the count.
    let x: Vec<u32> = (0..200u32).rev().collect();
    for (by_count, options) in [
        (true, small()),
        (false, plain()),
        (false, small().with_count_first_min_bytes(405)),
    ] {
        let config = with(options);
        for threshold in [0, 1, 100] {
            let before = gpu.counters();
            let (out, report) = g
                .run_reported(&config, &x, &Params { threshold })
                .expect("run");
            let delta = gpu.counters().since(&before);
            let want: Vec<u32> = (0..threshold).collect();
            assert_eq!(
                sorted(out.kept),
                want,
                "threshold {threshold}, by count {by_count}"
            );
            assert_eq!(report.submissions, 1 + u32::from(by_count));
            assert_eq!(delta.reads_by_count, u64::from(by_count), "{delta:?}");
            // Read by count, only the counted items come back.
            if by_count {
                assert_eq!(
                    delta.bytes_read_back,
                    4 + 4 * u64::from(threshold) + 4,
                    "{delta:?}"
                );
            }
        }
        // 150 values below the threshold, 100 slots: an overflow, then the
        // same graph runs correctly again.
        let over = g.run_with(&config, &x, &Params { threshold: 150 });
        assert!(
            matches!(
                over,
                Err(BackendError::AppendOverflow {
                    count: 150,
                    capacity: 100,
                    ..
                })
            ),
            "{over:?}"
        );
        let out = g
            .run_with(&config, &x, &Params { threshold: 7 })
            .expect("after overflow");
        assert_eq!(sorted(out.kept), (0..7).collect::<Vec<_>>());

        // Untyped, into a slice of the whole capacity: the count first,
        // then the items; read by count, the bytes after them are untouched.
        let graph = g.graph();
        let params = Params { threshold: 3 };
        let mut raw = vec![0xEEu8; 404];
        let feeds = [
            Feed::Host(bytemuck::cast_slice(&x)),
            Feed::Host(bytemuck::bytes_of(&params)),
        ];
        graph
            .run(&config, 200, &feeds, &mut [Sink::Host(&mut raw)])
            .expect("raw");
        let words: Vec<u32> = raw
            .chunks_exact(4)
            .map(bytemuck::pod_read_unaligned)
            .collect();
        assert_eq!(words[0], 3);
        assert_eq!(sorted(words[1..4].to_vec()), [0, 1, 2]);
        if by_count {
            assert!(
                raw[16..].iter().all(|&b| b == 0xEE),
                "untouched after the count"
            );
        }
        let mut items: Vec<u32> = vec![5; 1000];
        graph
            .run(&config, 200, &feeds, &mut [Sink::from(&mut items)])
            .expect("vec");
        assert_eq!(sorted(items.clone()), [0, 1, 2]);
        assert!(items.capacity() >= 1000, "the vector's capacity is kept");
    }
}

/// A run whose staged upload lands in the same submission as a device
/// error (a copy into a buffer the application destroyed) fails, and the
/// same graph then runs correctly, staging again.
#[test]
fn a_run_that_fails_after_staging_leaves_the_graph_usable() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small());
    let x: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    assert_eq!(g.run_with(&config, &x).expect("first").y, x);
    let target = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("destroyed by the application"),
        size: 4000,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let handle = GpuBufferHandle::from_wgpu(&gpu, target.clone()).expect("import");
    target.destroy();
    let before = gpu.counters();
    let feeds = [Feed::Host(bytemuck::cast_slice(&x))];
    let failed = g
        .graph()
        .run(&config, 1000, &feeds, &mut [Sink::Device(&handle)]);
    assert!(
        matches!(failed, Err(BackendError::DispatchFailed { .. })),
        "{failed:?}"
    );
    assert_eq!(
        gpu.counters().since(&before).staged_uploads,
        1,
        "the input was staged"
    );
    for salt in 0..3u32 {
        let y: Vec<u32> = x.iter().map(|v| v ^ salt).collect();
        assert_eq!(g.run_with(&config, &y).expect("after the failure").y, y);
    }
}

/// The steady state allocates nothing: no buffer, no bind group; every
/// run stages (its own wait maps the staging buffer again) and splits.
#[test]
fn a_steady_staged_run_allocates_nothing() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small());
    let x: Vec<u32> = (0..5000).collect();
    let mut out = CopyU32Outputs::default();
    g.run_into(&config, &mut out, &x).expect("warm");
    let before = gpu.counters();
    for _ in 0..5 {
        g.run_into(&config, &mut out, &x).expect("steady");
        assert_eq!(out.y, x);
    }
    let delta = gpu.counters().since(&before);
    assert_eq!(
        (delta.buffers_created, delta.bind_groups_created),
        (0, 0),
        "{delta:?}"
    );
    assert_eq!(delta.staged_uploads, 5, "{delta:?}");
    assert_eq!(delta.staging_fallbacks, 0, "{delta:?}");
    assert!(
        delta.split_copies >= 10,
        "uploads and reads split: {delta:?}"
    );
}

/// A run that reads nothing back does not wait, so the next run may find
/// the staging buffer not mapped again yet: it writes through the queue
/// instead of waiting, and both are correct. Async and recorded runs too.
#[test]
fn staging_falls_back_without_waiting_and_every_kind_of_run_is_correct() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small());
    let x: Vec<u32> = (0..3000).map(|i| i * 5).collect();
    let before = gpu.counters();
    for round in 0..4u32 {
        let y: Vec<u32> = x.iter().map(|v| v + round).collect();
        let resident = g.run_resident_with(&config, &y).expect("resident");
        assert_eq!(resident.y.read_as::<u32>(&gpu).expect("read"), y);
        assert_eq!(g.run_with(&config, &y).expect("host").y, y);
        let async_out = pollster::block_on(g.run_async(&config, &y)).expect("async");
        assert_eq!(async_out.y, y);
    }
    let delta = gpu.counters().since(&before);
    assert_eq!(
        delta.staged_uploads + delta.staging_fallbacks,
        12,
        "{delta:?}"
    );
    // Recorded into the caller's encoder: inputs go through the queue.
    let outputs = g.resident_outputs(&config, 3000).expect("outputs");
    let before = gpu.counters();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = g
        .record(&mut encoder, &config, &outputs, &x)
        .expect("record");
    let submission = gpu.queue().submit([encoder.finish()]);
    let _ = recorded.finish(&submission);
    assert_eq!(outputs.y.read_as::<u32>(&gpu).expect("read"), x);
    assert_eq!(gpu.counters().since(&before).staged_uploads, 0);
}

/// Several threads run one graph at once while rayon's global pool is
/// saturated by other work, and from inside that pool: the transfer pool
/// is the device's own, so nothing waits for the global one.
#[test]
fn many_threads_run_one_graph_while_the_global_pool_is_busy() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small());
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_secs(30);
    rayon::scope(|busy| {
        for _ in 0..rayon::current_num_threads() {
            busy.spawn(|_| {
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
            });
        }
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let (g, config) = (&g, &config);
                s.spawn(move || {
                    for i in 0..6u32 {
                        let n = 700 + 97 * t + i;
                        let x: Vec<u32> = (0..n).map(|v| v ^ (t << 20) ^ i).collect();
                        assert_eq!(
                            g.run_with(config, &x).expect("run").y,
                            x,
                            "thread {t} run {i}"
                        );
                    }
                });
            }
        });
        stop.store(true, Ordering::Relaxed);
    });
    // From inside the global pool.
    let results: Vec<bool> =
        rayon::iter::ParallelIterator::collect(rayon::iter::ParallelIterator::map(
            rayon::iter::IntoParallelIterator::into_par_iter(0..8u32),
            |i| {
                let x: Vec<u32> = (0..900 + i).map(|v| v * i).collect();
                g.run_with(&config, &x).expect("run in the pool").y == x
            },
        ));
    assert!(results.iter().all(|&ok| ok));
}

/// An application that disables the pool (0 threads) gets correct results
/// with every copy on the calling thread, staging still used.
#[test]
fn a_disabled_pool_copies_on_the_calling_thread() {
    let _serial = serial();
    let options = GpuOptions::default().with_transfer(small().with_threads(0));
    let gpu = Gpu::with_options(options).expect("gpu");
    assert_eq!(gpu.transfer_options().threads, 0);
    let g = CopyU32::new(&gpu).expect("graph");
    let before = gpu.counters();
    for n in [1u32, 63, 64, 65, 4000] {
        let x: Vec<u32> = (0..n).map(|v| v.rotate_left(7)).collect();
        assert_eq!(g.run(&x).expect("run").y, x, "n={n}");
        // A run asking for more threads than the device's pool has gets
        // the pool's size: none.
        assert_eq!(g.run_with(&with(small()), &x).expect("run").y, x, "n={n}");
    }
    let delta = gpu.counters().since(&before);
    assert_eq!(delta.split_copies, 0, "{delta:?}");
    assert!(delta.staged_uploads > 0, "{delta:?}");
}

/// An empty run gives an empty output; a vector of an element type that
/// does not divide the output's bytes is refused before anything runs; the
/// graph runs again after the error.
#[test]
fn refused_sizes_and_vectors_then_a_correct_run() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small());
    let empty: Vec<u32> = Vec::new();
    // Size 0: an empty output, nothing moved.
    assert!(g.run_with(&config, &empty).expect("n = 0").y.is_empty());
    let x: Vec<u32> = (0..10).collect();
    let feeds = [Feed::Host(bytemuck::cast_slice(&x))];
    let mut triples: Vec<[u8; 3]> = Vec::new();
    let wrong = g
        .graph()
        .run(&config, 10, &feeds, &mut [Sink::from(&mut triples)]);
    match wrong {
        Err(e @ BackendError::SinkTypeMismatch { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("`y`") && message.contains("3-byte"),
                "{message}"
            );
        }
        other => panic!("expected SinkTypeMismatch, got {other:?}"),
    }
    // 1-byte elements divide 4-byte ones: the output's bytes.
    let mut bytes: Vec<u8> = Vec::new();
    g.graph()
        .run(&config, 10, &feeds, &mut [Sink::from(&mut bytes)])
        .expect("bytes");
    assert_eq!(bytes, bytemuck::cast_slice::<u32, u8>(&x));
    assert_eq!(g.run_with(&config, &x).expect("after the errors").y, x);
}

/// An input larger than `overlap_chunk_bytes` is staged in chunks, each
/// copied in a submission of its own as soon as it is filled: one more
/// submission per chunk, the same results, and a steady state that still
/// allocates nothing.
#[test]
fn overlapped_chunks_are_copied_as_they_are_filled() {
    let _serial = serial();
    let gpu = gpu();
    let g = CopyU32::new(&gpu).expect("graph");
    let config = with(small().with_overlap_chunk_bytes(256));
    // 1,000 u32: 4,000 bytes in 16 chunks of 256 (the last of 160).
    let x: Vec<u32> = (0..1000).map(|i| i * 11 + 3).collect();
    let (out, report) = g.run_reported(&config, &x).expect("chunked");
    assert_eq!(out.y, x);
    assert_eq!(report.submissions, 1 + 16);
    let mut outputs = CopyU32Outputs::default();
    let before = gpu.counters();
    for salt in 0..3 {
        let y: Vec<u32> = x.iter().map(|v| v ^ salt).collect();
        g.run_into(&config, &mut outputs, &y).expect("steady");
        assert_eq!(outputs.y, y);
    }
    let delta = gpu.counters().since(&before);
    assert_eq!(
        (delta.buffers_created, delta.bind_groups_created),
        (0, 0),
        "{delta:?}"
    );
    assert_eq!(delta.submissions, 3 * 17, "{delta:?}");
    // Around the chunk size: one chunk, one more word, and back.
    for n in [63u32, 64, 65, 128, 129, 64] {
        let y: Vec<u32> = (0..n).map(|v| v.wrapping_mul(0x9e37_79b9)).collect();
        assert_eq!(g.run_with(&config, &y).expect("run").y, y, "n={n}");
    }
}
