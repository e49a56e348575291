//! Graphs written with `graph!`, run on the GPU (lavapipe in CI) and checked
//! against CPU references: a chain, a diamond, a repeat loop with ping-pong,
//! a struct-typed buffer, a file-included kernel, and resident chaining of
//! two generated types.

use crate::common;

use vyre_graph::spec::BufferClass;
use vyre_graph::{DispatchConfig, graph};

graph! {
    /// Twelve dependent steps through two intermediates.
    pub struct Chain;

    kernel step = wgsl {
        override MUL: u32 = 3u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * MUL + 1u; }
        }
    };

    input x[n];
    intermediate a[n];
    intermediate b[n];
    output y[n];

    node first = step(src: x, dst: a) over n;
    repeat 10 as i {
        node mid = step(src: ping(a, b), dst: pong(a, b)) over n with { MUL = i % 3 + 2 };
    }
    node last = step(src: a, dst: y) over n;
}

fn chain_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            let mut v = v.wrapping_mul(3).wrapping_add(1);
            for i in 0..10u32 {
                v = v.wrapping_mul(i % 3 + 2).wrapping_add(1);
            }
            v.wrapping_mul(3).wrapping_add(1)
        })
        .collect()
}

#[test]
fn chain_matches_cpu_in_one_submission() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let chain = Chain::new(&gpu).expect("chain compiles");
    let x: Vec<u32> = (0..100_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let before = gpu.counters();
    let out = chain.run(&x).expect("chain runs");
    assert_eq!(gpu.counters().since(&before).submissions, 1);
    assert_eq!(out.y, chain_reference(&x));

    // Twelve nodes: distinct override values make distinct pipelines.
    let d = chain.describe();
    assert_eq!(d.nodes.len(), 12);
    assert_eq!(d.level_count, 12, "a chain has one node per level");
    // The twelve element-wise steps are fused into one dispatch: one
    // pipeline, and one of its grid-stride loop (tests/codegen/fusion.rs checks the
    // four of the unfused graph: MUL 3 (default), 2, 3 (explicit), 4).
    assert_eq!(chain.graph().pipeline_count(), 2);
    assert_eq!(Chain::SPEC.fused.len(), 1);
    // The picture draws a `repeat` as its first copy, saying how many.
    let dot = chain.to_dot();
    assert!(dot.contains("mid[0]") && !dot.contains("mid[9]"), "{dot}");
    assert!(dot.contains("repeat: 10 times (the first shown)"), "{dot}");
}

graph! {
    /// a -> (b, c) -> d.
    pub struct Diamond;

    kernel scale = "
        override K: u32 = 1u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * K; }
        }
    ";
    kernel add = file "tests/kernels/add_u32.wgsl";

    input x[n];
    intermediate top[n];
    intermediate left[n];
    intermediate right[n];
    output out[n];

    node a = scale(src: x, dst: top) over n with { K = 2 };
    node b = scale(src: top, dst: left) over n with { K = 3 };
    node c = scale(src: top, dst: right) over n with { K = 5 };
    node d = add(a: left, b: right, c: out) over n;
}

#[test]
fn diamond_levels_and_result() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let diamond = Diamond::new(&gpu).expect("diamond compiles");
    let x: Vec<u32> = (0..5000).collect();
    let out = diamond.run(&x).expect("diamond runs");
    let expected: Vec<u32> = x.iter().map(|v| v * 2 * 3 + v * 2 * 5).collect();
    assert_eq!(out.out, expected);
    let d = diamond.describe();
    let levels: Vec<u32> = d.nodes.iter().map(|n| n.level).collect();
    assert_eq!(levels, [0, 1, 1, 2]);
    assert_eq!(d.nodes[3].depends_on, [1, 2]);
}

graph! {
    /// Odd-even transposition sort of each 8-element row, 8 passes through
    /// ping-ponged buffers; the pass parity comes from the repeat variable.
    pub struct RowSort;

    kernel pass = wgsl {
        override PHASE: u32 = 0u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let i = g.x;
            if i >= arrayLength(&src) { return; }
            let lane = i % 8u;
            let partner_lane = select(lane - 1u, lane + 1u, (lane % 2u) == PHASE);
            if partner_lane >= 8u {
                dst[i] = src[i];
                return;
            }
            let j = i - lane + partner_lane;
            let lo = min(src[i], src[j]);
            let hi = max(src[i], src[j]);
            dst[i] = select(hi, lo, lane < partner_lane);
        }
    };
    kernel copy = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x]; }
        }
    ";

    input keys[8 * n];
    intermediate a[8 * n];
    intermediate b[8 * n];
    output sorted[8 * n];

    node load = copy(src: keys, dst: a) over 8 * n;
    repeat 8 as i {
        node pass(src: ping(a, b), dst: pong(a, b)) over 8 * n with { PHASE = i % 2 };
    }
    node store = copy(src: a, dst: sorted) over 8 * n;
}

#[test]
fn repeat_with_ping_pong_sorts_rows() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let sorter = RowSort::new(&gpu).expect("row sort compiles");
    let keys: Vec<u32> = (0..8 * 1000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let out = sorter.run(&keys).expect("row sort runs");
    let mut expected = keys.clone();
    for row in expected.chunks_mut(8) {
        row.sort_unstable();
    }
    assert_eq!(out.sorted, expected);
    let spec = &RowSort::SPEC;
    assert_eq!(spec.nodes.len(), 10);
    assert_eq!(spec.nodes[1].label, "pass[0]");
    assert_eq!(spec.nodes[2].overrides[0].value, 1.0);
}

graph! {
    /// Particles as a WGSL struct: one Euler step, then kinetic energy.
    pub struct Particles;

    kernel step = wgsl {
        struct Particle { pos: vec3<f32>, mass: f32, vel: vec3<f32>, tag: u32 }
        struct Step { dt: f32, gravity: f32 }
        @group(0) @binding(0) var<storage, read> src: array<Particle>;
        @group(0) @binding(1) var<uniform> step: Step;
        @group(0) @binding(2) var<storage, read_write> dst: array<Particle>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&src) { return; }
            var p = src[g.x];
            p.vel.y = p.vel.y - step.gravity * step.dt;
            p.pos = p.pos + p.vel * step.dt;
            p.tag = p.tag + 1u;
            dst[g.x] = p;
        }
    };
    kernel energy = wgsl {
        struct Particle { pos: vec3<f32>, mass: f32, vel: vec3<f32>, tag: u32 }
        @group(0) @binding(0) var<storage, read> ps: array<Particle>;
        @group(0) @binding(1) var<storage, read_write> e: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= arrayLength(&ps) { return; }
            let p = ps[g.x];
            e[g.x] = 0.5 * p.mass * dot(p.vel, p.vel);
        }
    };

    input particles[n];
    uniform params;
    output moved[n];
    output energy[n];

    node step(src: particles, step: params, dst: moved) over n;
    node energy(ps: moved, e: energy) over n;
}

#[test]
fn struct_typed_buffers_round_trip() {
    let _serial = common::serial();
    let gpu = common::gpu();
    // naga's layout: vec3 at 0 (align 16), mass at 12, vel at 16, tag at 28.
    assert_eq!(std::mem::size_of::<Particle>(), 32);
    let graph = Particles::new(&gpu).expect("particles compile");
    let input: Vec<Particle> = (0..1000)
        .map(|i| Particle {
            pos: [i as f32, 0.0, 1.0],
            mass: 1.0 + (i % 4) as f32,
            vel: [1.0, 2.0 + (i % 3) as f32, 0.0],
            tag: i,
        })
        .collect();
    let params = Step {
        dt: 0.5,
        gravity: 2.0,
    };
    let out = graph.run(&input, &params).expect("particles run");
    for (i, (p, q)) in input.iter().zip(&out.moved).enumerate() {
        let vy = p.vel[1] - 2.0 * 0.5;
        assert_eq!(q.vel, [p.vel[0], vy, p.vel[2]], "particle {i}");
        assert_eq!(
            q.pos,
            [p.pos[0] + 0.5, p.pos[1] + vy * 0.5, p.pos[2]],
            "particle {i}"
        );
        assert_eq!(q.tag, p.tag + 1);
        assert_eq!(q.mass, p.mass);
        let e = 0.5 * q.mass * (q.vel[0] * q.vel[0] + q.vel[1] * q.vel[1]);
        assert!(
            (out.energy[i] - e).abs() <= 1e-5 * e.abs().max(1.0),
            "energy {i}"
        );
    }
}

graph! {
    /// c = a + b from a kernel in a file.
    pub struct FileAdd;
    kernel add = file "tests/kernels/add_u32.wgsl";
    input a[n];
    input b[n];
    output c[n];
    node add(a: a, b: b, c: c) over n;
}

#[test]
fn file_kernel_and_resident_chaining() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let add = FileAdd::new(&gpu).expect("file kernel compiles");
    let chain = Chain::new(&gpu).expect("chain compiles");
    let a: Vec<u32> = (0..4096).collect();
    let b: Vec<u32> = (0..4096).map(|i| 3 * i).collect();
    assert_eq!(FileAdd::SPEC.buffers[0].class, BufferClass::Input);

    // add -> chain on the device: the intermediate result never visits the host.
    let before = gpu.counters();
    let sum = add.run_resident(&a, &b).expect("resident add");
    let resident_read_back = gpu.counters().since(&before).bytes_read_back;
    assert_eq!(resident_read_back, 0, "a resident run reads nothing back");
    let out = chain.run(&sum.c).expect("chain from a resident buffer");
    let expected_sum: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(out.y, chain_reference(&expected_sum));
    assert_eq!(
        gpu.counters().since(&before).bytes_read_back,
        4 * 4096,
        "only the final output came back"
    );

    // A steady-state run of the same size allocates nothing.
    let before = gpu.counters();
    let (again, report) = add
        .run_reported(&DispatchConfig::default(), &a, &b)
        .expect("cached run");
    let delta = gpu.counters().since(&before);
    assert!(report.cache_hit);
    assert_eq!((delta.buffers_created, delta.bind_groups_created), (0, 0));
    assert_eq!(again.c, expected_sum);
}

graph! {
    /// Seven stages through six distinct intermediates, each dead two nodes
    /// after it is made: aliasing packs them into two device buffers.
    pub struct Stages;

    kernel step = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = (src[g.x] ^ 0x9e3779b9u) + 7u; }
        }
    ";

    input x[n];
    intermediate t1[n];
    intermediate t2[n];
    intermediate t3[n];
    intermediate t4[n];
    intermediate t5[n];
    intermediate t6[n];
    output y[n];

    node s1 = step(src: x, dst: t1) over n;
    node s2 = step(src: t1, dst: t2) over n;
    node s3 = step(src: t2, dst: t3) over n;
    node s4 = step(src: t3, dst: t4) over n;
    node s5 = step(src: t4, dst: t5) over n;
    node s6 = step(src: t5, dst: t6) over n;
    node s7 = step(src: t6, dst: y) over n;
}

#[test]
fn aliasing_shrinks_peak_device_bytes() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let stages = Stages::new(&gpu).expect("stages compile");
    let n: u64 = 1 << 20;
    let peak = stages.graph().peak_bytes(n);
    // x, y and six intermediates of 4n bytes; the intermediates alternate
    // between two slots.
    assert_eq!(peak.unaliased, 8 * 4 * n);
    assert_eq!(peak.aliased, 4 * 4 * n);
    assert_eq!(stages.describe().slot_count, 4);
    // And the shared buffers still give the right answer.
    let x: Vec<u32> = (0..n as u32).collect();
    let out = stages.run(&x).expect("stages run");
    let expected: Vec<u32> = x
        .iter()
        .map(|&v| (0..7).fold(v, |v, _| (v ^ 0x9e37_79b9).wrapping_add(7)))
        .collect();
    assert_eq!(out.y, expected);
    // The seven steps fuse into one dispatch whose intermediates live in
    // registers: the launch plan allocates x, y, a 4-byte placeholder for
    // each of the intermediates' two slots, and the readback buffer.
    assert_eq!(Stages::SPEC.fused.len(), 1);
    assert_eq!(Stages::SPEC.fused[0].nodes.len(), 7);
    let plan = stages
        .graph()
        .plan(&DispatchConfig::default(), n)
        .expect("plan");
    assert_eq!(plan.estimated_peak_device_bytes, 2 * 4 * n + 2 * 4 + 4 * n);
}

graph! {
    /// The workgroup size comes from an override, set per node: the grid of
    /// each node must follow its own size.
    pub struct Sized;

    kernel fill = "
        override WG: u32 = 64u;
        override ADD: u32 = 0u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(WG)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            let i = g.x + g.y * nwg.x * WG;
            if i < arrayLength(&src) { dst[i] = src[i] + ADD; }
        }
    ";

    input x[n];
    intermediate t[n];
    output y[n];

    node small = fill(src: x, dst: t) over n with { WG = 16, ADD = 1 };
    node large = fill(src: t, dst: y) over n with { WG = 256, ADD = 2 };
}

#[test]
fn override_workgroup_sizes_drive_each_nodes_grid() {
    let _serial = common::serial();
    let gpu = common::gpu();
    assert_eq!(Sized::SPEC.nodes[0].workgroup_size, Some([16, 1, 1]));
    assert_eq!(Sized::SPEC.nodes[1].workgroup_size, Some([256, 1, 1]));
    let graph = Sized::new(&gpu).expect("compiles");
    // Too few workgroups for WG = 16 (had the default 64 been used) would
    // leave three quarters of `t` unwritten.
    let x: Vec<u32> = (0..10_000).collect();
    let out = graph.run(&x).expect("runs");
    let expected: Vec<u32> = x.iter().map(|v| v + 3).collect();
    assert_eq!(out.y, expected);
    let plan = graph
        .graph()
        .plan(&DispatchConfig::default(), 10_000)
        .expect("plan");
    // The largest grid is the WG = 16 node's: ceil(10,000 / 16) workgroups.
    assert_eq!(plan.worker_groups, 625);
    assert_eq!(plan.workgroup_size_x, 16);
}

#[test]
fn profiled_runs_report_gpu_time_without_allocating_again() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let chain = Chain::new(&gpu).expect("chain compiles");
    let x: Vec<u32> = (0..50_000).collect();
    let profile = DispatchConfig::default().with_profile(true);
    let (_, plain) = chain
        .run_reported(&DispatchConfig::default(), &x)
        .expect("plain run");
    assert_eq!(plain.gpu_ns, None, "not asked for");
    let (out, first) = chain.run_reported(&profile, &x).expect("profiled run");
    assert_eq!(out.y, chain_reference(&x));
    if gpu.has_timestamps() {
        assert!(first.gpu_ns.is_some_and(|ns| ns > 0), "{first:?}");
    } else {
        assert_eq!(first.gpu_ns, None);
    }
    // The timer is made once per plan: the next profiled run allocates nothing.
    let before = gpu.counters();
    let (_, again) = chain.run_reported(&profile, &x).expect("profiled run");
    let delta = gpu.counters().since(&before);
    assert_eq!((delta.buffers_created, delta.bind_groups_created), (0, 0));
    assert_eq!(again.gpu_ns.is_some(), gpu.has_timestamps());
    // Per-node times where the device has timestamps inside passes (lavapipe
    // and the H200 do): one per node, shown by describe() and to_dot().
    let inside = gpu
        .device()
        .features()
        .contains(vyre_graph::wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
    if inside {
        // Chain's nodes are fused: fewer dispatches than nodes.
        let dispatches = Chain::SPEC.nodes.len() + Chain::SPEC.fused.len()
            - Chain::SPEC
                .fused
                .iter()
                .map(|g| g.nodes.len())
                .sum::<usize>();
        assert_eq!(again.dispatch_gpu_ns.len(), dispatches, "{again:?}");
        let sum: u64 = again.dispatch_gpu_ns.iter().sum();
        let pass = again.gpu_ns.expect("pass time");
        assert!(
            sum <= pass + pass / 10 + 1000,
            "nodes {sum} ns within the pass's {pass} ns"
        );
        let times = chain.graph().node_times();
        assert_eq!(times.len(), Chain::SPEC.nodes.len());
        assert!(times.iter().all(|&t| again.dispatch_gpu_ns.contains(&t)));
        let described = chain.describe();
        assert!(described.nodes.iter().all(|n| n.gpu_ns.is_some()));
        assert!(described.to_string().contains(" µs"), "{described}");
        assert!(chain.to_dot().contains(" µs\"]"), "{}", chain.to_dot());
        // Timing the pass only: its time, no dispatch times, none stale
        // from the run before; then each dispatch again.
        let pass_only = profile.clone().with_dispatch_times(false);
        let (out, whole) = chain.run_reported(&pass_only, &x).expect("pass only");
        assert_eq!(out.y, chain_reference(&x));
        assert!(whole.gpu_ns.is_some_and(|ns| ns > 0), "{whole:?}");
        assert!(whole.dispatch_gpu_ns.is_empty(), "{whole:?}");
        assert!(chain.graph().node_times().is_empty());
        let (_, each) = chain.run_reported(&profile, &x).expect("profiled run");
        assert_eq!(each.dispatch_gpu_ns.len(), dispatches, "{each:?}");
    } else {
        assert!(again.dispatch_gpu_ns.is_empty());
    }
    // Phases of the run are timed.
    assert!(
        again.phases.encode_ns > 0 && again.phases.wait_ns > 0,
        "{:?}",
        again.phases
    );
}

#[test]
fn the_schedule_is_static_data_computed_at_compile_time() {
    // No GPU needed: levels and aliasing slots are in the emitted SPEC.
    let diamond = Diamond::SPEC.schedule.expect("graph! emits a schedule");
    assert_eq!(*diamond.levels, [0, 1, 1, 2]);
    let stages = Stages::SPEC.schedule.expect("graph! emits a schedule");
    // Buffers x, t1..t6, y: the intermediates alternate between two slots.
    let s = &stages.slots;
    assert_eq!(s[1], s[3]);
    assert_eq!(s[3], s[5]);
    assert_eq!(s[2], s[4]);
    assert_eq!(s[4], s[6]);
    assert_ne!(s[1], s[2]);
    assert_ne!(s[0], s[1]);
    assert_ne!(s[7], s[1]);

    // The runtime refuses a schedule that disagrees with the nodes.
    let _serial = common::serial();
    let gpu = common::gpu();
    let mut tampered = Diamond::SPEC;
    tampered.schedule = Some(vyre_graph::spec::ScheduleSpec {
        levels: vec![0, 0, 0, 0].into(),
        slots: diamond.slots.clone(),
        stackable: diamond.stackable,
    });
    let err = vyre_graph::Graph::new(&gpu, tampered).expect_err("a wrong schedule");
    assert!(
        matches!(err, vyre_graph::BackendError::InvalidProgram { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("use matching versions"), "{err}");
}

graph! {
    /// `wide` (2n elements) dies before `narrow` (n elements) is made, so
    /// both live in one device buffer of 2n; `narrow` must still look n long
    /// to its kernels (`arrayLength`).
    pub struct Shrink;

    kernel fill = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x % arrayLength(&src)] + 1u; }
        }
    ";
    kernel measure = "
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = arrayLength(&src) * 1000u + src[g.x]; }
        }
    ";

    input x[n];
    intermediate wide[2 * n];
    intermediate mid[n];
    intermediate narrow[n];
    output y[n];

    node a = fill(src: x, dst: wide) over 2 * n;
    node b = fill(src: wide, dst: mid) over n;
    node c = fill(src: mid, dst: narrow) over n;
    node d = measure(src: narrow, dst: y) over n;
}

#[test]
fn an_aliased_smaller_buffer_keeps_its_own_length() {
    let _serial = common::serial();
    let gpu = common::gpu();
    let slots = &Shrink::SPEC.schedule.expect("schedule").slots;
    assert_eq!(
        slots[1], slots[3],
        "`wide` and `narrow` share a device buffer"
    );
    let graph = Shrink::new(&gpu).expect("compiles");
    let x: Vec<u32> = (0..300).collect();
    let out = graph.run(&x).expect("runs");
    let expected: Vec<u32> = x.iter().map(|v| 300 * 1000 + v + 3).collect();
    assert_eq!(out.y, expected);
}
