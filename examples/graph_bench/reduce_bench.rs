//! `--reduce`: the built-in reductions and scans against hand-written WGSL
//! run through plain wgpu, in GPU time from timestamp queries (medians of
//! interleaved repetitions, one pass each):
//! - `sum_f32`: `reduce sum` of 2^26 f32 (2^20 with `--quick`) against a
//!   plain two-pass reduction (2,048 workgroups of 256, each invocation
//!   striding over `vec4<f32>` loads, a tree in workgroup memory, then one
//!   workgroup over the 2,048 partial sums);
//! - `affine_sum`: `(a·x + b)²` then `reduce sum`, fused on read and
//!   unfused (`fuse off;`), against the plain sum above;
//! - `scan_u32`: `scan exclusive sum` of 2^26 u32 against the `prefix_sum`
//!   example's hand-written three-level scan;
//! - `softmax`: 4,096 rows of 1,024 (256 rows with `--quick`) with
//!   `reduce max` and `reduce sum` per row;
//! - the sum at 2^24 too, and the graph's own sum and scan kernels and
//!   grids through plain wgpu (`kernels plain`);
//! - the graph's runs time their pass only
//!   (`DispatchConfig::with_dispatch_times(false)`), as the baselines do;
//!   the `dispatch times` variants add a timestamp before each dispatch,
//!   to show what that costs;
//! - `chain64_index_spelling`: chain64 at 2^20 (2^16 with `--quick`)
//!   indexed with `g.x` and with the fold-safe `g.x + g.y * nwg.x * 256u`
//!   (both fused).
//!
//! - `read_ceiling_f32` and `copy_ceiling_f32`: the machine's ceilings in
//!   the same run, `vec4` reads of every element with nothing combined but
//!   a xor, and `vec4` copies (one read and one write each, a scan's last
//!   pass).
//!
//! Inputs are resident, so the pass's timestamps see the kernels alone.
//! Each row has the median and the fastest of 41 samples (5 with
//! `--quick`, `GRAPH_BENCH_REPS` to choose).
//! Each sample starts on a busy GPU (copies just before it), after three
//! discarded warm-up rounds.
//! Every variant's result is checked against the CPU first. The hand
//! baselines run through `hand::HandGraph` (plain wgpu, one pass).

use vyre_graph::{DispatchConfig, Gpu, GpuBufferHandle};

use crate::hand::HandGraph;
use crate::measure::{median, order, random_u32};

#[allow(dead_code)]
pub(crate) mod graphs {
    use vyre_graph::graph;

    graph! { pub struct Sum; input x[n]; output s[1]; node total = reduce sum<f32>(x) -> s; }
    graph! {
        pub struct SumSubgroups;
        features [subgroups];
        input x[n];
        output s[1];
        node total = reduce sum<f32>(x) -> s;
    }
    graph! {
        pub struct Affine;
        kernel affine = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<f32>;
            @group(0) @binding(1) var<storage, read_write> y: array<f32>;
            @compute @workgroup_size(256)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&y) { let t = 0.5 * x[g.x] + 0.25; y[g.x] = t * t; }
            }
        };
        input x[n];
        intermediate y[n];
        output s[1];
        node affine(x: x, y: y) over n;
        node total = reduce sum(y) -> s;
    }
    graph! {
        pub struct AffineUnfused;
        fuse off;
        kernel affine = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<f32>;
            @group(0) @binding(1) var<storage, read_write> y: array<f32>;
            @compute @workgroup_size(256)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&y) { let t = 0.5 * x[g.x] + 0.25; y[g.x] = t * t; }
            }
        };
        input x[n];
        intermediate y[n];
        output s[1];
        node affine(x: x, y: y) over n;
        node total = reduce sum(y) -> s;
    }
    graph! {
        /// The plain two-pass sum: `x` as `n / 4` vec4s.
        pub struct HandSum;
        kernel partial = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
            @group(0) @binding(1) var<storage, read_write> part: array<f32>;
            var<workgroup> t: array<f32, 256>;
            @compute @workgroup_size(256)
            fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
                var acc = 0.0;
                for (var i = w.x * 256u + l.x; i < arrayLength(&x); i += 2048u * 256u) {
                    let v = x[i];
                    acc += (v.x + v.y) + (v.z + v.w);
                }
                t[l.x] = acc;
                workgroupBarrier();
                for (var s = 128u; s > 0u; s >>= 1u) {
                    if l.x < s { t[l.x] += t[l.x + s]; }
                    workgroupBarrier();
                }
                if l.x == 0u { part[w.x] = t[0]; }
            }
        };
        kernel finish = wgsl {
            @group(0) @binding(0) var<storage, read> part: array<f32>;
            @group(0) @binding(1) var<storage, read_write> s: array<f32>;
            var<workgroup> t: array<f32, 256>;
            @compute @workgroup_size(256)
            fn main(@builtin(local_invocation_id) l: vec3<u32>) {
                var acc = 0.0;
                for (var i = l.x; i < arrayLength(&part); i += 256u) { acc += part[i]; }
                t[l.x] = acc;
                workgroupBarrier();
                for (var s = 128u; s > 0u; s >>= 1u) {
                    if l.x < s { t[l.x] += t[l.x + s]; }
                    workgroupBarrier();
                }
                if l.x == 0u { s[0] = t[0]; }
            }
        };
        input x[n / 4];
        intermediate part[2048];
        output s[1];
        node partial(x: x, part: part) grid [2048, 1, 1];
        node finish(part: part, s: s) grid [1, 1, 1];
    }
    graph! {
        /// The `prefix_sum` example's hand-written scan (the same kernel files).
        pub struct HandPrefixSum;
        kernel scan = file "examples/kernels/prefix_sum/scan_blocks.wgsl";
        kernel add = file "examples/kernels/prefix_sum/add_offsets.wgsl";
        input x[n];
        output y[n];
        intermediate sums1[n / 1024];
        intermediate offsets1[n / 1024];
        intermediate sums2[n / 1048576];
        intermediate offsets2[n / 1048576];
        intermediate total[n / 1073741824];
        node scan0 = scan(src: x, dst: y, sums: sums1) over n / 4;
        node scan1 = scan(src: sums1, dst: offsets1, sums: sums2) over n / 4096;
        node scan2 = scan(src: sums2, dst: offsets2, sums: total) over n / 4194304;
        node add1 = add(data: offsets1, offsets: offsets2) over n / 1024;
        node add0 = add(data: y, offsets: offsets1) over n;
    }
    graph! { pub struct Scan; input x[n]; output y[n]; node p = scan exclusive sum<u32>(x) -> y; }
    graph! {
        /// The machine's read ceiling: every element read once as a
        /// `vec4`, 8 coalesced loads in flight per invocation, combined by
        /// a xor only (written only if it hits a constant, to keep the
        /// loads). No reduction can read faster.
        pub struct ReadCeiling;
        kernel read = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
            @group(0) @binding(1) var<storage, read_write> s: array<vec4<u32>>;
            @compute @workgroup_size(256)
            fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
                let n = arrayLength(&x);
                let i = w.x * 2048u + l.x;
                var a = vec4<u32>(0u);
                if i + 1792u < n {
                    a = x[i] ^ x[i + 256u] ^ x[i + 512u] ^ x[i + 768u] ^ x[i + 1024u] ^ x[i + 1280u] ^ x[i + 1536u] ^ x[i + 1792u];
                } else {
                    for (var j = i; j < n; j += 256u) { a ^= x[j]; }
                }
                if all(a == vec4<u32>(0x9e3779b9u)) { s[0] = a; }
            }
        };
        input x[n / 4];
        output s[1];
        node read(x: x, s: s) grid [n / 8192, 1, 1];
    }
    graph! {
        /// The machine's copy ceiling (one read and one write of every
        /// element, what a scan's last pass does): `vec4` copies, 8 in
        /// flight per invocation.
        pub struct CopyCeiling;
        kernel copy = wgsl {
            @group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
            @group(0) @binding(1) var<storage, read_write> y: array<vec4<u32>>;
            @compute @workgroup_size(256)
            fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
                let n = arrayLength(&x);
                let i = w.x * 2048u + l.x;
                for (var j = i; j < min(i + 2048u, n); j += 256u) { y[j] = x[j]; }
            }
        };
        input x[n / 4];
        output y[n / 4];
        node copy(x: x, y: y) grid [n / 8192, 1, 1];
    }
    graph! {
        pub struct Softmax;
        kernel exp_shift = file "examples/kernels/mlp/softmax.wgsl" entry "exp_shift";
        kernel normalise = file "examples/kernels/mlp/softmax.wgsl" entry "normalise";
        input x[1024 * n];
        intermediate row_max[n];
        intermediate exps[1024 * n];
        intermediate row_sum[n];
        output probs[1024 * n];
        node max_per_row = reduce max<f32>(x) over [n, 1024] -> row_max;
        node exp_shift(logits: x, row: row_max, out: exps) over 1024 * n with { CLASSES = 1024 };
        node sum_per_row = reduce sum(exps) over [n, 1024] -> row_sum;
        node normalise(logits: exps, row: row_sum, out: probs) over 1024 * n with { CLASSES = 1024 };
    }
}

/// A graph's run on a resident input into a resident output (its other
/// outputs skipped), at one problem size.
struct Resident<'g> {
    graph: &'g vyre_graph::Graph,
    n: u64,
    out: usize,
    handle: GpuBufferHandle,
}

impl<'g> Resident<'g> {
    fn new(
        graph: &'g vyre_graph::Graph,
        output: &str,
        n: u64,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let buffer = graph
            .spec()
            .buffers
            .iter()
            .position(|b| b.name == output)
            .ok_or("no such output")?;
        let out = graph
            .spec()
            .buffers
            .iter()
            .take(buffer)
            .filter(|b| b.class.is_read_back())
            .count();
        let handle = graph.create_resident(buffer, n, &DispatchConfig::default())?;
        Ok(Resident {
            graph,
            n,
            out,
            handle,
        })
    }

    /// The run's GPU µs.
    fn gpu_us(
        &self,
        input: &GpuBufferHandle,
        config: &DispatchConfig,
    ) -> Result<Option<f64>, Box<dyn std::error::Error>> {
        let outputs = self
            .graph
            .spec()
            .buffers
            .iter()
            .filter(|b| b.class.is_read_back())
            .count();
        let mut sinks: Vec<vyre_graph::Sink<'_>> =
            (0..outputs).map(|_| vyre_graph::Sink::Skip).collect();
        if let Some(sink) = sinks.get_mut(self.out) {
            *sink = vyre_graph::Sink::Device(&self.handle);
        }
        let report = self.graph.run(
            config,
            self.n,
            &[vyre_graph::Feed::Device(input)],
            &mut sinks,
        )?;
        Ok(report.gpu_ns.map(|t| t as f64 / 1e3))
    }
}

/// One measured variant: GPU µs per run (median).
pub struct ReduceRow {
    pub workload: &'static str,
    pub n: u64,
    pub variant: &'static str,
    /// Median GPU µs.
    pub gpu_us: f64,
    /// Fastest GPU µs: the figure when nothing else slowed the GPU.
    pub min_us: f64,
}

fn floats(n: usize) -> Vec<f32> {
    random_u32(n, 7)
        .into_iter()
        .map(|v| (v >> 8) as f32 / (1 << 24) as f32)
        .collect()
}

fn close(got: f32, want: f64, what: &str) -> Result<(), String> {
    let bound = 64.0 * f64::from(f32::EPSILON) * want.abs() + 1e-3;
    if (f64::from(got) - want).abs() > bound {
        return Err(format!("{what}: {got} vs CPU {want}"));
    }
    Ok(())
}

/// Runs every workload; `reps` interleaved repetitions each. Inputs are
/// resident (a `GpuBufferHandle` for the graphs, uploaded once for the
/// hand baselines), so the pass's timestamps see the kernels alone.
pub fn run(gpu: &Gpu, quick: bool) -> Result<Vec<ReduceRow>, Box<dyn std::error::Error>> {
    if !gpu.has_timestamps() {
        return Err("--reduce needs timestamp queries (GPU time); this adapter has none".into());
    }
    let n: usize = if quick { 1 << 20 } else { 1 << 26 };
    let small_n: usize = if quick { 1 << 18 } else { 1 << 24 };
    // GRAPH_BENCH_REPS: more samples, more chances of the fastest ones on
    // a GPU that other work slows now and then.
    let reps = std::env::var("GRAPH_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if quick { 5 } else { 41 });
    // The graph's GPU time is its pass's (two timestamps), as the hand
    // baselines'; one variant also times each dispatch, to show the cost.
    let profile = DispatchConfig::default()
        .with_profile(true)
        .with_dispatch_times(false);
    let each = DispatchConfig::default().with_profile(true);
    let x = floats(n);
    let xs = &x[..small_n];
    let hx = GpuBufferHandle::from_slice(gpu, &x)?;
    let hxs = GpuBufferHandle::from_slice(gpu, xs)?;
    let sum = graphs::Sum::new(gpu)?;
    let affine = graphs::Affine::new(gpu)?;
    let affine_unfused = graphs::AffineUnfused::new(gpu)?;
    let hand_sum = HandGraph::new(gpu, &graphs::HandSum::SPEC, n as u64);
    let hand_small = HandGraph::new(gpu, &graphs::HandSum::SPEC, small_n as u64);
    // The graph's own kernels and grids, run through plain wgpu with pass
    // timestamps only (no timestamp between dispatches).
    let plain_sum = HandGraph::new(gpu, &graphs::Sum::SPEC, n as u64);
    let plain_small = HandGraph::new(gpu, &graphs::Sum::SPEC, small_n as u64);
    let plain_scan = HandGraph::new(gpu, &graphs::Scan::SPEC, n as u64);

    let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let exact_small: f64 = xs.iter().map(|&v| f64::from(v)).sum();
    let exact_affine: f64 = x
        .iter()
        .map(|&v| {
            let t = f64::from(0.5 * v + 0.25);
            t * t
        })
        .sum();
    let mut out1 = [0f32; 1];
    plain_sum.run(
        &[bytemuck::cast_slice(&x)],
        &mut [bytemuck::cast_slice_mut(&mut out1)],
    );
    close(out1[0], exact, "graph kernels through plain wgpu")?;
    plain_small.run(
        &[bytemuck::cast_slice(xs)],
        &mut [bytemuck::cast_slice_mut(&mut out1)],
    );
    close(
        out1[0],
        exact_small,
        "graph kernels through plain wgpu (small)",
    )?;
    close(sum.run(&hx)?.s[0], exact, "sum")?;
    close(sum.run(&hxs)?.s[0], exact_small, "sum (small)")?;
    close(affine.run(&hx)?.s[0], exact_affine, "affine fused")?;
    close(
        affine_unfused.run(&hx)?.s[0],
        exact_affine,
        "affine unfused",
    )?;
    for (hand, input, want) in [(&hand_sum, &x[..], exact), (&hand_small, xs, exact_small)] {
        let mut out = [0f32; 1];
        hand.run(
            &[bytemuck::cast_slice(input)],
            &mut [bytemuck::cast_slice_mut(&mut out)],
        );
        close(out[0], want, "hand sum")?;
    }

    let u = random_u32(n, 3);
    let hu = GpuBufferHandle::from_slice(gpu, &u)?;
    let scan = graphs::Scan::new(gpu)?;
    let hand_scan = HandGraph::new(gpu, &graphs::HandPrefixSum::SPEC, n as u64);
    let mut acc = 0u32;
    let want: Vec<u32> = u
        .iter()
        .map(|&v| {
            let b = acc;
            acc = acc.wrapping_add(v);
            b
        })
        .collect();
    if scan.run(&hu)?.y != want {
        return Err("scan: differs from the CPU".into());
    }
    let mut hand_y = vec![0u32; n];
    hand_scan.run(
        &[bytemuck::cast_slice(&u)],
        &mut [bytemuck::cast_slice_mut(&mut hand_y)],
    );
    if hand_y
        .iter()
        .zip(&want)
        .any(|(a, b)| a.wrapping_sub(*b) != hand_y[0].wrapping_sub(want[0]))
    {
        return Err("hand scan: differs from the CPU".into());
    }
    let mut plain_y = vec![0u32; n];
    plain_scan.run(
        &[bytemuck::cast_slice(&u)],
        &mut [bytemuck::cast_slice_mut(&mut plain_y)],
    );
    if plain_y != want {
        return Err("the scan's kernels through plain wgpu: differ from the CPU".into());
    }
    let rows = if quick { 256 } else { 4096 };
    let logits: Vec<f32> = floats(rows * 1024).into_iter().map(|v| v * 8.0).collect();
    let hl = GpuBufferHandle::from_slice(gpu, &logits)?;
    let softmax = graphs::Softmax::new(gpu)?;
    check_softmax(&logits, &softmax.run(&hl)?.probs)?;

    let names = [
        "sum graph",
        "sum hand",
        "sum graph 2^24",
        "sum hand 2^24",
        "affine fused",
        "affine unfused",
        "scan graph",
        "scan hand",
        "softmax graph",
        "sum kernels plain",
        "sum kernels plain 2^24",
        "scan kernels plain",
        "chain64 g.x",
        "chain64 fold-safe index",
        "sum graph subgroups",
        "sum graph subgroups 2^24",
        "sum graph 2^24, dispatch times",
        "scan graph, dispatch times",
        "read ceiling",
        "copy ceiling",
        "read ceiling 2^24",
    ];
    // The ceilings, on the sum's floats (loaded once).
    let read_ceiling = HandGraph::new(gpu, &graphs::ReadCeiling::SPEC, n as u64);
    let copy_ceiling = HandGraph::new(gpu, &graphs::CopyCeiling::SPEC, n as u64);
    let read_small = HandGraph::new(gpu, &graphs::ReadCeiling::SPEC, small_n as u64);
    read_small.run(
        &[bytemuck::cast_slice(xs)],
        &mut [bytemuck::cast_slice_mut(&mut out1[..])],
    );
    let mut copied = vec![0f32; n];
    read_ceiling.run(
        &[bytemuck::cast_slice(&x)],
        &mut [bytemuck::cast_slice_mut(&mut out1[..])],
    );
    copy_ceiling.run(
        &[bytemuck::cast_slice(&x)],
        &mut [bytemuck::cast_slice_mut(&mut copied)],
    );
    if copied != x {
        return Err("copy ceiling: the copy differs".into());
    }
    let sum_sub = graphs::SumSubgroups::new(gpu).ok();
    if let Some(g) = &sum_sub {
        close(g.run(&hx)?.s[0], exact, "sum with subgroups")?;
    }
    // chain64 at 1M with its two spellings of the index (both fused).
    let chain_n = if quick { 65_536 } else { 1 << 20 };
    let chain_x = random_u32(chain_n, 5);
    let hc = GpuBufferHandle::from_slice(gpu, &chain_x)?;
    let chain = crate::chains::Chain64::new(gpu)?;
    let fold = crate::chains::Chain64Fold::new(gpu)?;
    if chain.run(&hc)?.y != fold.run(&hc)?.y {
        return Err("chain64: the two spellings differ".into());
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    // The graphs run on resident inputs into resident outputs (nothing read
    // back to the host between samples: a long read-back leaves the GPU
    // idle, and an idle H200 drops its clocks).
    let sum_out = Resident::new(sum.graph(), "s", n as u64)?;
    let sum_small_out = Resident::new(sum.graph(), "s", small_n as u64)?;
    let affine_out = Resident::new(affine.graph(), "s", n as u64)?;
    let unfused_out = Resident::new(affine_unfused.graph(), "s", n as u64)?;
    let scan_out = Resident::new(scan.graph(), "y", n as u64)?;
    let softmax_out = Resident::new(softmax.graph(), "probs", rows as u64)?;
    let chain_out = Resident::new(chain.graph(), "y", chain_n as u64)?;
    let fold_out = Resident::new(fold.graph(), "y", chain_n as u64)?;
    let sub_out = match &sum_sub {
        Some(g) => Some((
            Resident::new(g.graph(), "s", n as u64)?,
            Resident::new(g.graph(), "s", small_n as u64)?,
        )),
        None => None,
    };
    // Every sample starts on a busy GPU (a few hundred microseconds of
    // copies just before it), and the first rounds only warm it up: on the
    // H200 the same kernel measured up to 2.4 times slower in a cold round.
    let scratch = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("warm-up"),
        size: if quick { 1 << 22 } else { 256 << 20 },
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let settle = if quick { 1 } else { 3 };
    for rep in 0..settle + reps {
        for v in order(names.len(), rep) {
            crate::reduce_probe::warm_up(gpu, &scratch);
            let t = match v {
                0 => sum_out.gpu_us(&hx, &profile)?,
                1 => hand_sum.gpu_ns_per_node(gpu, &[]).map(|t| t * 2.0 / 1e3),
                2 => sum_small_out.gpu_us(&hxs, &profile)?,
                3 => hand_small.gpu_ns_per_node(gpu, &[]).map(|t| t * 2.0 / 1e3),
                4 => affine_out.gpu_us(&hx, &profile)?,
                5 => unfused_out.gpu_us(&hx, &profile)?,
                6 => scan_out.gpu_us(&hu, &profile)?,
                7 => hand_scan.gpu_ns_per_node(gpu, &[]).map(|t| t * 5.0 / 1e3),
                8 => softmax_out.gpu_us(&hl, &profile)?,
                9 => plain_sum.gpu_ns_per_node(gpu, &[]).map(|t| t * 2.0 / 1e3),
                10 => plain_small.gpu_ns_per_node(gpu, &[]).map(|t| t * 2.0 / 1e3),
                11 => plain_scan.gpu_ns_per_node(gpu, &[]).map(|t| t * 3.0 / 1e3),
                12 => chain_out.gpu_us(&hc, &profile)?,
                13 => fold_out.gpu_us(&hc, &profile)?,
                14 | 15 => match &sub_out {
                    Some((big, small)) if v == 14 => big.gpu_us(&hx, &profile)?,
                    Some((_, small)) => small.gpu_us(&hxs, &profile)?,
                    None => None,
                },
                16 => sum_small_out.gpu_us(&hxs, &each)?,
                17 => scan_out.gpu_us(&hu, &each)?,
                18 => read_ceiling.gpu_ns_per_node(gpu, &[]).map(|t| t / 1e3),
                19 => copy_ceiling.gpu_ns_per_node(gpu, &[]).map(|t| t / 1e3),
                _ => read_small.gpu_ns_per_node(gpu, &[]).map(|t| t / 1e3),
            };
            if rep >= settle {
                times[v].extend(t);
            }
        }
    }
    let workload = |v: usize| match v {
        0 | 1 => ("sum_f32", n as u64),
        2 | 3 => ("sum_f32", small_n as u64),
        4 | 5 => ("affine_sum_f32", n as u64),
        6 | 7 | 11 => ("exclusive_scan_u32", n as u64),
        9 => ("sum_f32", n as u64),
        10 => ("sum_f32", small_n as u64),
        12 | 13 => ("chain64_index_spelling", chain_n as u64),
        14 => ("sum_f32", n as u64),
        15 | 16 => ("sum_f32", small_n as u64),
        17 => ("exclusive_scan_u32", n as u64),
        18 => ("read_ceiling_f32", n as u64),
        19 => ("copy_ceiling_f32", n as u64),
        20 => ("read_ceiling_f32", small_n as u64),
        _ => ("softmax_rows_x1024", rows as u64),
    };
    Ok(names
        .iter()
        .enumerate()
        .map(|(v, name)| ReduceRow {
            workload: workload(v).0,
            n: workload(v).1,
            variant: name,
            min_us: times[v].iter().copied().fold(f64::INFINITY, f64::min),
            gpu_us: median(&mut times[v]),
        })
        .collect())
}

fn check_softmax(logits: &[f32], probs: &[f32]) -> Result<(), String> {
    for (r, row) in logits.chunks(1024).enumerate().step_by(17) {
        let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let total: f32 = row.iter().map(|v| (v - top).exp()).sum();
        for (c, &v) in row.iter().enumerate() {
            let want = (v - top).exp() / total;
            if (probs[r * 1024 + c] - want).abs() > 1e-5 {
                return Err(format!(
                    "softmax row {r} column {c}: {} vs {want}",
                    probs[r * 1024 + c]
                ));
            }
        }
    }
    Ok(())
}

/// The rows as a table, with bandwidth for the whole-buffer workloads.
pub fn print(rows: &[ReduceRow]) {
    println!(
        "{:<22} {:>10} {:<16} {:>12} {:>10} {:>12}",
        "workload", "n", "variant", "GPU µs", "GB/s", "fastest µs"
    );
    for r in rows {
        let bytes = match r.workload {
            "sum_f32" | "affine_sum_f32" | "read_ceiling_f32" => r.n as f64 * 4.0,
            "exclusive_scan_u32" | "chain64_index_spelling" | "copy_ceiling_f32" => {
                r.n as f64 * 8.0
            }
            _ => r.n as f64 * 1024.0 * 4.0 * 2.0,
        };
        println!(
            "{:<22} {:>10} {:<16} {:>12.1} {:>10.1} {:>12.1}",
            r.workload,
            r.n,
            r.variant,
            r.gpu_us,
            bytes / (r.gpu_us * 1e3),
            r.min_us
        );
    }
}

/// The rows as JSON.
pub fn json(gpu: &Gpu, quick: bool, rows: &[ReduceRow]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "    {{\"workload\": \"{}\", \"n\": {}, \"variant\": \"{}\", \"gpu_us\": {:.3}, \"min_us\": {:.3}}}",
                r.workload, r.n, r.variant, r.gpu_us, r.min_us
            )
        })
        .collect();
    format!(
        "{{\n  \"mode\": \"reduce\",\n  \"adapter\": \"{}\",\n  \"quick\": {quick},\n  \"rows\": [\n{}\n  ]\n}}\n",
        crate::measure::json_escape(&gpu.adapter().to_string()),
        items.join(",\n")
    )
}
