//! Fusion is invisible in results: every graph here is built twice, as
//! written (fused where `graph!` can) and with `fuse off;`, run on the same
//! inputs, and the outputs compared byte for byte (and against a CPU
//! reference where there is one). The graphs are those of
//! `tests/macros/macro_graphs.rs` (Particles aside: its struct-typed buffers are
//! never fused), plus fixed random chains of element-wise kernels on u32,
//! i32 and f32 (generated once; see `random_chain_*`).

use crate::common;

/// Two copies of a graph in module `$m`: `Fused` as written and `Unfused`
/// with `fuse off;`.
macro_rules! both {
    ($m:ident { $($body:tt)* }) => {
        #[allow(dead_code)]
        mod $m {
            use vyre_graph::graph;
            graph! { pub struct Fused; $($body)* }
            graph! { pub struct Unfused; fuse off; $($body)* }
        }
    };
}

/// Byte-for-byte equality, with the first differing element on failure.
fn same_bytes<T: bytemuck::Pod + std::fmt::Debug>(fused: &[T], unfused: &[T], what: &str) {
    assert_eq!(fused.len(), unfused.len(), "{what}: length");
    let (a, b): (&[u8], &[u8]) = (bytemuck::cast_slice(fused), bytemuck::cast_slice(unfused));
    if a != b {
        let i = fused
            .iter()
            .zip(unfused)
            .position(|(x, y)| bytemuck::bytes_of(x) != bytemuck::bytes_of(y))
            .unwrap_or(0);
        panic!(
            "{what}: fused and unfused differ first at element {i}: {:?} vs {:?}",
            fused[i], unfused[i]
        );
    }
}

/// The member lists of a spec's fused groups.
fn groups(spec: &vyre_graph::spec::GraphSpec) -> Vec<Vec<usize>> {
    spec.fused.iter().map(|g| g.nodes.to_vec()).collect()
}

both!(chain {
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
});

#[test]
fn chain_fused_equals_unfused() {
    let gpu = common::gpu();
    assert_eq!(
        groups(&chain::Fused::SPEC),
        vec![(0..12).collect::<Vec<_>>()]
    );
    assert!(chain::Unfused::SPEC.fused.is_empty());
    let fused = chain::Fused::new(&gpu).expect("fused");
    let unfused = chain::Unfused::new(&gpu).expect("unfused");
    // Members get no pipeline of their own: one for the fused dispatch and
    // one for its grid-stride loop.
    assert_eq!(fused.graph().pipeline_count(), 2);
    assert_eq!(unfused.graph().pipeline_count(), 4);
    // Visible: describe() lists the group, DOT draws it as a cluster.
    let d = fused.describe();
    assert_eq!(d.nodes.len(), 12);
    assert_eq!(d.fused.len(), 1);
    assert!(d.to_string().contains("12 nodes in one dispatch"), "{d}");
    assert!(fused.to_dot().contains("subgraph cluster_fused0"));
    assert!(!unfused.to_dot().contains("cluster_fused"));
    // The intermediates `a` and `b` live in registers in the fused kernel:
    // its plan never allocates them (8 bytes of placeholders instead).
    let config = vyre_graph::DispatchConfig::default();
    let n = 100_003u64;
    let fused_bytes = fused
        .graph()
        .plan(&config, n)
        .expect("plan")
        .estimated_peak_device_bytes;
    let unfused_bytes = unfused
        .graph()
        .plan(&config, n)
        .expect("plan")
        .estimated_peak_device_bytes;
    assert_eq!(
        unfused_bytes - fused_bytes,
        2 * (n * 4).next_multiple_of(4) - 8
    );
    for n in [1usize, 63, 64, 1000, 100_003] {
        let x = common::data(n, n as u32);
        let a = fused.run(&x).expect("fused runs").y;
        let b = unfused.run(&x).expect("unfused runs").y;
        same_bytes(&a, &b, "chain");
        let want: Vec<u32> = x
            .iter()
            .map(|&v| {
                let mut v = v.wrapping_mul(3).wrapping_add(1);
                for i in 0..10u32 {
                    v = v.wrapping_mul(i % 3 + 2).wrapping_add(1);
                }
                v.wrapping_mul(3).wrapping_add(1)
            })
            .collect();
        common::assert_same(&a, &want, "chain");
    }
}

both!(diamond {
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
});

#[test]
fn diamond_fused_equals_unfused() {
    let gpu = common::gpu();
    assert!(!diamond::Fused::SPEC.fused.is_empty());
    let fused = diamond::Fused::new(&gpu).expect("fused");
    let unfused = diamond::Unfused::new(&gpu).expect("unfused");
    for n in [1usize, 100, 4097] {
        let x = common::data(n, 7);
        let a = fused.run(&x).expect("fused").out;
        let b = unfused.run(&x).expect("unfused").out;
        same_bytes(&a, &b, "diamond");
        let want: Vec<u32> = x.iter().map(|&v| v.wrapping_mul(16)).collect();
        common::assert_same(&a, &want, "diamond");
    }
}

both!(row_sort {
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
});

#[test]
fn row_sort_fuses_only_where_reads_are_own_index() {
    let gpu = common::gpu();
    // A pass reads its neighbour in a buffer the previous node writes: never
    // fused with it. The last pass and `store` are (the pass only reads `b`,
    // which nobody in that group writes).
    assert_eq!(groups(&row_sort::Fused::SPEC), vec![vec![8, 9]]);
    let fused = row_sort::Fused::new(&gpu).expect("fused");
    let unfused = row_sort::Unfused::new(&gpu).expect("unfused");
    let keys = common::data(8 * 1000, 3);
    let a = fused.run(&keys).expect("fused").sorted;
    let b = unfused.run(&keys).expect("unfused").sorted;
    same_bytes(&a, &b, "row sort");
    let mut want = keys.clone();
    want.chunks_mut(8).for_each(<[u32]>::sort_unstable);
    common::assert_same(&a, &want, "row sort");
}

both!(file_add {
    kernel add = file "tests/kernels/add_u32.wgsl";
    input a[n];
    input b[n];
    output c[n];
    node add(a: a, b: b, c: c) over n;
});

#[test]
fn one_node_is_never_a_group() {
    let gpu = common::gpu();
    assert!(file_add::Fused::SPEC.fused.is_empty());
    let fused = file_add::Fused::new(&gpu).expect("fused");
    let unfused = file_add::Unfused::new(&gpu).expect("unfused");
    let (x, y) = (common::data(999, 1), common::data(999, 2));
    same_bytes(
        &fused.run(&x, &y).expect("fused").c,
        &unfused.run(&x, &y).expect("unfused").c,
        "file add",
    );
}

both!(stages {
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
});

#[test]
fn stages_never_fuse_buffers_that_share_memory() {
    let gpu = common::gpu();
    let spec = &stages::Fused::SPEC;
    let slots = &spec.schedule.as_ref().expect("schedule").slots;
    for g in spec.fused.iter() {
        let mut used: Vec<usize> = g
            .dispatch
            .bindings
            .iter()
            .map(|b| slots[b.buffer])
            .collect();
        used.sort_unstable();
        let len = used.len();
        used.dedup();
        assert_eq!(used.len(), len, "group {:?} shares memory", g.nodes);
    }
    assert!(!spec.fused.is_empty());
    let fused = stages::Fused::new(&gpu).expect("fused");
    let unfused = stages::Unfused::new(&gpu).expect("unfused");
    let x = common::data(5000, 9);
    let a = fused.run(&x).expect("fused").y;
    same_bytes(&a, &unfused.run(&x).expect("unfused").y, "stages");
    let want: Vec<u32> = x
        .iter()
        .map(|&v| (0..7).fold(v, |v, _| (v ^ 0x9e37_79b9).wrapping_add(7)))
        .collect();
    common::assert_same(&a, &want, "stages");
}

both!(sized {
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
});

#[test]
fn sized_is_not_fused() {
    let gpu = common::gpu();
    assert!(sized::Fused::SPEC.fused.is_empty());
    let fused = sized::Fused::new(&gpu).expect("fused");
    let unfused = sized::Unfused::new(&gpu).expect("unfused");
    let x = common::data(3000, 4);
    same_bytes(
        &fused.run(&x).expect("fused").y,
        &unfused.run(&x).expect("unfused").y,
        "sized",
    );
}

both!(shrink {
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
});

#[test]
fn shrink_fused_equals_unfused() {
    let gpu = common::gpu();
    // `c` reads `mid` at another index (`g.x % len`), so `b` (which writes
    // it) and `c` stay apart; `c` and `d` fuse.
    assert_eq!(groups(&shrink::Fused::SPEC), vec![vec![2, 3]]);
    let fused = shrink::Fused::new(&gpu).expect("fused");
    let unfused = shrink::Unfused::new(&gpu).expect("unfused");
    let x = common::data(777, 5);
    let a = fused.run(&x).expect("fused").y;
    same_bytes(&a, &unfused.run(&x).expect("unfused").y, "shrink");
    let want: Vec<u32> = x.iter().map(|&v| 777 * 1000 + v + 3).collect();
    common::assert_same(&a, &want, "shrink");
}

// A fixed random chain (generated once): f32 and i32 steps, a multiply in
// one node and an add in the next (a compiler that contracted them into
// one fma across the fused nodes would change the bits), buffers reused.
both!(random_chain_mixed {
    kernel fmul = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = src[g.x] * 1.37; }
        }
    ";
    kernel fadd = "
        @group(0) @binding(0) var<storage, read> a: array<f32>;
        @group(0) @binding(1) var<storage, read> b: array<f32>;
        @group(0) @binding(2) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = a[g.x] + b[g.x] * 0.1; }
        }
    ";
    kernel tobits = "
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<i32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&dst) { dst[g.x] = bitcast<i32>(src[g.x]) * -3 + 11; }
        }
    ";
    input x[n];
    intermediate t0[n];
    intermediate t1[n];
    intermediate t2[n];
    output bits[n];
    node m1 = fmul(src: x, dst: t0) over n;
    node a1 = fadd(a: t0, b: x, dst: t1) over n;
    node m2 = fmul(src: t1, dst: t0) over n;
    node a2 = fadd(a: t0, b: t1, dst: t2) over n unfused;
    node a3 = fadd(a: t2, b: x, dst: t1) over n;
    node b = tobits(src: t1, dst: bits) over n;
});

#[test]
fn random_chain_mixed_is_bit_identical() {
    let gpu = common::gpu();
    assert_eq!(
        groups(&random_chain_mixed::Fused::SPEC),
        vec![vec![0, 1, 2], vec![4, 5]]
    );
    let fused = random_chain_mixed::Fused::new(&gpu).expect("fused");
    let unfused = random_chain_mixed::Unfused::new(&gpu).expect("unfused");
    let x: Vec<f32> = common::data(4099, 11)
        .iter()
        .map(|&v| (v as f32 / u32::MAX as f32 - 0.5) * 1e3)
        .collect();
    let a = fused.run(&x).expect("fused").bits;
    same_bytes(&a, &unfused.run(&x).expect("unfused").bits, "mixed chain");
    let want: Vec<i32> = x
        .iter()
        .map(|&v| {
            let t0 = v * 1.37;
            let t1 = t0 + v * 0.1;
            let t0 = t1 * 1.37;
            let t2 = t0 + t1 * 0.1;
            let t1 = t2 + v * 0.1;
            (t1.to_bits() as i32).wrapping_mul(-3).wrapping_add(11)
        })
        .collect();
    same_bytes(&a, &want, "mixed chain vs CPU");
}

// examples/image_pipeline.rs's graph: brightness and contrast fuse; the blur
// reads neighbours of t2, which no member of its group writes, so it fuses
// with gamma, clamp and sepia, with t3, t4 and t5 in registers, although t4
// shares device memory with t2, which the group reads from memory.
macro_rules! image_graph {
    ($name:ident $($fuse:tt)*) => {
        graph! {
            pub struct $name;
            $($fuse)*

            kernel brightness = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>(p.rgb + vec3<f32>(tone.brightness), p.a);
                    }
                }
            ";
            kernel contrast = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>((p.rgb - vec3<f32>(0.5)) * tone.contrast + vec3<f32>(0.5), p.a);
                    }
                }
            ";
            kernel blur = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    let i = g.x;
                    if i >= arrayLength(&src) { return; }
                    let w = tone.width;
                    let row = i / w;
                    let col = i32(i % w);
                    var sum = vec4<f32>(0.0);
                    var count = 0.0;
                    for (var d = -2; d <= 2; d++) {
                        let c = col + d;
                        if c >= 0 && c < i32(w) {
                            sum += src[row * w + u32(c)];
                            count += 1.0;
                        }
                    }
                    dst[i] = sum / count;
                }
            ";
            kernel gamma = "
                struct Tone { brightness: f32, contrast: f32, gamma: f32, width: u32 }
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<uniform> tone: Tone;
                @group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        dst[g.x] = vec4<f32>(pow(max(p.rgb, vec3<f32>(0.0)), vec3<f32>(1.0 / tone.gamma)), p.a);
                    }
                }
            ";
            kernel clamp01 = "
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        dst[g.x] = clamp(src[g.x], vec4<f32>(0.0), vec4<f32>(1.0));
                    }
                }
            ";
            kernel sepia = "
                @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&src) {
                        let p = src[g.x];
                        let r = 0.393 * p.r + 0.769 * p.g + 0.189 * p.b;
                        let gr = 0.349 * p.r + 0.686 * p.g + 0.168 * p.b;
                        let b = 0.272 * p.r + 0.534 * p.g + 0.131 * p.b;
                        dst[g.x] = vec4<f32>(r, gr, b, p.a);
                    }
                }
            ";

            input image[n];
            uniform tone;
            intermediate t1[n];
            intermediate t2[n];
            intermediate t3[n];
            intermediate t4[n];
            intermediate t5[n];
            output out[n];

            node brightness(src: image, tone: tone, dst: t1) over n;
            node contrast(src: t1, tone: tone, dst: t2) over n;
            node blur(src: t2, tone: tone, dst: t3) over n;
            node gamma(src: t3, tone: tone, dst: t4) over n;
            node clamp01(src: t4, dst: t5) over n;
            node sepia(src: t5, dst: out) over n;

        }
    };
}

#[allow(dead_code)]
mod image {
    use vyre_graph::graph;
    image_graph!(Fused);
    /// `fuse off;` (in a module of its own: each graph declares `Tone`).
    pub mod unfused {
        use vyre_graph::graph;
        image_graph!(Unfused fuse off;);
    }
}

#[test]
fn image_pipeline_fuses_into_two_dispatches() {
    let gpu = common::gpu();
    let spec = &image::Fused::SPEC;
    assert_eq!(groups(spec), vec![vec![0, 1], vec![2, 3, 4, 5]]);
    let slots = &spec.schedule.as_ref().expect("schedule").slots;
    // Buffers: image, tone, t1..t5, out. t2 (read by the second group, in
    // memory) and t4 (in a register) share a slot.
    assert_eq!(slots[3], slots[5], "slots {slots:?}");
    let bound: Vec<usize> = spec.fused[1]
        .dispatch
        .bindings
        .iter()
        .map(|b| b.buffer)
        .collect();
    assert!(bound.contains(&3), "{bound:?}");
    assert!(!bound.iter().any(|b| [4, 5, 6].contains(b)), "{bound:?}");
    let fused = image::Fused::new(&gpu).expect("fused");
    // describe(): t1, t3, t4 and t5 stay in registers, and t4's slot is
    // not a placeholder, since t2 in it is bound.
    let d = fused.describe();
    let in_registers: Vec<&str> = d
        .buffers
        .iter()
        .filter(|b| b.in_registers)
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(in_registers, ["t1", "t3", "t4", "t5"], "{d}");
    assert!(
        d.to_string().starts_with(
            "graph Fused: 6 nodes, 6 levels, 4 buffers in 4 device slots, 4 more kept in registers by fused dispatches (not allocated; 1 unbound placeholder slot of 32 bytes stands in their place)\n"
        ),
        "{d}"
    );
    assert_eq!((d.slot_count, d.placeholder_slots), (5, 1), "{d}");
    let unfused = image::unfused::Unfused::new(&gpu).expect("unfused");
    let tone = image::Tone {
        brightness: 0.05,
        contrast: 1.2,
        gamma: 2.2,
        width: 7,
    };
    let unfused_tone: image::unfused::Tone = bytemuck::cast(tone);
    for pixels in [1usize, 7, 63, 64, 65, 4097, 70_000] {
        let px: Vec<[f32; 4]> = common::data(pixels * 4, pixels as u32)
            .chunks(4)
            .map(|c| {
                let f = |v: u32| (v % 1000) as f32 / 999.0;
                [f(c[0]), f(c[1]), f(c[2]), f(c[3])]
            })
            .collect();
        let a = fused.run(&px, &tone).expect("fused").out;
        let b = unfused.run(&px, &unfused_tone).expect("unfused").out;
        same_bytes(&a, &b, &format!("image pipeline at {pixels} pixels"));
    }
}

// Fusion sees what an index is, not how it is spelled: chains indexed with
// the fold-safe `g.x + g.y * nwg.x * 256u` and with `wid.x * 64u + lid.x
// + ..` fuse like `g.x` chains, and give the CPU's results on a folded grid.
both!(fold_safe {
    kernel step = wgsl {
        override MUL: u32 = 3u;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(256)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            let i = g.x + g.y * nwg.x * 256u;
            if i >= arrayLength(&src) { return; }
            dst[i] = src[i] * MUL + 1u;
        }
    };
    input x[n];
    intermediate a[n];
    intermediate b[n];
    output y[n];
    node first = step(src: x, dst: a) over n;
    repeat 4 as i {
        node mid = step(src: ping(a, b), dst: pong(a, b)) over n with { MUL = i % 3 + 2 };
    }
    node last = step(src: a, dst: y) over n;
});

both!(wid_lid {
    kernel step = wgsl {
        fn index(wid: vec3<u32>, lid: vec3<u32>, nwg: vec3<u32>) -> u32 {
            return wid.x * 64u + lid.x + (wid.y * nwg.x) * 64u;
        }
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
            let i = index(wid, lid, nwg);
            // The wrapper's grid is one row: nwg.y and nwg.z are 1 whether
            // the launch folded or not, fused or not.
            if i < arrayLength(&dst) { dst[i] = (src[i] ^ 0x9e3779b9u) + nwg.y + nwg.z; }
        }
    };
    input x[n];
    intermediate a[n];
    output y[n];
    node first = step(src: x, dst: a) over n;
    node second = step(src: a, dst: y) over n;
});

/// Runs `fused` and `unfused` at `n` (plain and with a grid-stride loop)
/// and checks both element by element against `cpu`.
fn fold_safe_case<F, U>(n: usize, run: (F, U), cpu: impl Fn(u32) -> u32, what: &str)
where
    F: Fn(&[u32], &vyre_graph::DispatchConfig) -> Vec<u32>,
    U: Fn(&[u32]) -> Vec<u32>,
{
    let x = common::data(n, n as u32 ^ 0x51);
    let want: Vec<u32> = x.iter().map(|&v| cpu(v)).collect();
    let plain = vyre_graph::DispatchConfig::default();
    let looped = plain.clone().with_grid_stride(vyre_graph::GridStride::Auto);
    let fused = (run.0)(&x, &plain);
    common::assert_same(&fused, &want, &format!("{what} fused, n = {n}"));
    common::assert_same(
        &(run.0)(&x, &looped),
        &want,
        &format!("{what} fused, grid-stride, n = {n}"),
    );
    same_bytes(&fused, &(run.1)(&x), what);
}

#[test]
fn fold_safe_indexing_fuses_and_equals_the_cpu() {
    let gpu = common::gpu();
    assert_eq!(
        groups(&fold_safe::Fused::SPEC),
        vec![(0..6).collect::<Vec<_>>()]
    );
    let fused = fold_safe::Fused::new(&gpu).expect("fused");
    let unfused = fold_safe::Unfused::new(&gpu).expect("unfused");
    let d = fused.describe();
    assert_eq!(d.fused.len(), 1, "{d}");
    assert!(d.to_string().contains("6 nodes in one dispatch"), "{d}");
    let cpu = |v: u32| {
        let mut v = v.wrapping_mul(3).wrapping_add(1);
        for i in 0..4u32 {
            v = v.wrapping_mul(i % 3 + 2).wrapping_add(1);
        }
        v.wrapping_mul(3).wrapping_add(1)
    };
    // Past 65,535 workgroups of 256 the grid folds into y.
    for n in [1usize, 1000, 65_535 * 256 + 1] {
        let run = (
            |x: &[u32], c: &vyre_graph::DispatchConfig| fused.run_with(c, x).expect("fused").y,
            |x: &[u32]| unfused.run(x).expect("unfused").y,
        );
        fold_safe_case(n, run, cpu, "fold-safe chain");
    }
}

#[test]
fn workgroup_and_local_id_indexing_fuses_and_equals_the_cpu() {
    let gpu = common::gpu();
    assert_eq!(groups(&wid_lid::Fused::SPEC), vec![vec![0, 1]]);
    let fused = wid_lid::Fused::new(&gpu).expect("fused");
    let unfused = wid_lid::Unfused::new(&gpu).expect("unfused");
    assert_eq!(fused.describe().fused.len(), 1);
    let step = |v: u32| (v ^ 0x9e37_79b9).wrapping_add(2);
    for n in [1usize, 1000, 65_535 * 64 + 1] {
        let run = (
            |x: &[u32], c: &vyre_graph::DispatchConfig| fused.run_with(c, x).expect("fused").y,
            |x: &[u32]| unfused.run(x).expect("unfused").y,
        );
        fold_safe_case(n, run, |v| step(step(v)), "wid/lid chain");
    }
}
