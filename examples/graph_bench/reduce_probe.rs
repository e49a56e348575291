//! `GRAPH_BENCH_PROBE=reduce`: candidate designs for the generated sum and
//! scan kernels, side by side in GPU time on resident buffers (plain wgpu,
//! pass timestamps, medians of interleaved repetitions), each result
//! checked against the CPU first. This is how the designs in
//! `docs/reductions.md` were chosen; the candidates stay so the choice can
//! be made again on another adapter.

use vyre_graph::{Gpu, GpuOptions};

use crate::measure::{median, order, random_u32};

/// One dispatch of a candidate.
struct Step {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    groups: u32,
}

/// A candidate: its dispatches in one pass, and the buffer to check.
struct Candidate {
    name: String,
    steps: Vec<Step>,
    out: wgpu::Buffer,
    out_len: u64,
}

fn storage(gpu: &Gpu, bytes: u64) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes.max(16),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn step(gpu: &Gpu, wgsl: &str, buffers: &[&wgpu::Buffer], groups: u32) -> Step {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    Step {
        pipeline,
        group,
        groups,
    }
}

/// Sum level 1: `g` workgroups of 256, grid-stride (`seg == false`) or a
/// contiguous segment per workgroup, `u` vec4 loads in flight per
/// invocation, a workgroup tree or subgroups at the end.
fn sum_level1(ty: &str, g: u32, u: u32, seg: u32, subgroups: bool) -> String {
    sum_level1_as(ty, g, u, seg, subgroups, false)
}

fn sum_level1_as(ty: &str, g: u32, u: u32, seg: u32, subgroups: bool, scalar: bool) -> String {
    let zero = if ty == "f32" { "0.0" } else { "0u" };
    let mut s = String::new();
    if subgroups {
        s.push_str("// naga 30 takes subgroup built-ins without `enable subgroups;`\n");
    }
    s.push_str(&format!(
        "@group(0) @binding(0) var<storage, read> x: array<{}>;\nfn ld(q: u32) -> vec4<{ty}> {{ {} }}\n@group(0) @binding(1) var<storage, read_write> part: array<{ty}>;\nvar<workgroup> t: array<{ty}, 256>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>",
        if scalar { ty.to_owned() } else { format!("vec4<{ty}>") },
        if scalar { format!("return vec4<{ty}>(x[4u * q], x[4u * q + 1u], x[4u * q + 2u], x[4u * q + 3u]);") } else { "return x[q];".to_owned() }
    ));
    if subgroups {
        s.push_str(", @builtin(subgroup_invocation_id) si: u32, @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) ns: u32, @builtin(subgroup_size) ss: u32");
    }
    s.push_str(if scalar {
        ") {\n    let n4 = arrayLength(&x) / 4u;\n"
    } else {
        ") {\n    let n4 = arrayLength(&x);\n"
    });
    if seg > 0 {
        s.push_str(&format!(
            "    let per = ((n4 + {g}u - 1u) / {g}u + {}u) / {seg}u * {seg}u;\n    let start = min(w.x * per, n4);\n    let end = min(start + per, n4);\n    let stride = 256u;\n    var i = start + l.x;\n",
            seg - 1
        ));
    } else {
        s.push_str(&format!(
            "    let end = n4;\n    let stride = {g}u * 256u;\n    var i = w.x * 256u + l.x;\n"
        ));
    }
    for k in 0..u {
        s.push_str(&format!("    var a{k} = vec4<{ty}>({zero});\n"));
    }
    s.push_str(&format!(
        "    loop {{\n        if i + {}u * stride >= end {{ break; }}\n",
        u - 1
    ));
    for k in 0..u {
        s.push_str(&format!("        a{k} += ld(i + {k}u * stride);\n"));
    }
    s.push_str(&format!(
        "        i += {u}u * stride;\n    }}\n    for (; i < end; i += stride) {{ a0 += ld(i); }}\n"
    ));
    s.push_str(&format!(
        "    let a = {};\n    let v = (a.x + a.y) + (a.z + a.w);\n",
        pairwise(u)
    ));
    if subgroups {
        s.push_str("    let r = subgroupAdd(v);\n    if si == 0u { t[sid] = r; }\n    workgroupBarrier();\n    if sid == 0u {\n        var q = ");
        s.push_str(zero);
        s.push_str(";\n        for (var j = si; j < ns; j += ss) { q += t[j]; }\n        q = subgroupAdd(q);\n        if si == 0u { part[w.x] = q; }\n    }\n}\n");
    } else {
        s.push_str("    t[l.x] = v;\n");
        s.push_str(WORKGROUP_TREE);
    }
    s
}

/// The end of a first level: the workgroup's binary tree over `t`, its
/// total to `part[w.x]`.
const WORKGROUP_TREE: &str = "    workgroupBarrier();\n    for (var s = 128u; s > 0u; s >>= 1u) {\n        if l.x < s { t[l.x] += t[l.x + s]; }\n        workgroupBarrier();\n    }\n    if l.x == 0u { part[w.x] = t[0]; }\n}\n";

/// `a0 .. a(u - 1)` added in a fixed pairwise tree.
fn pairwise(u: u32) -> String {
    let mut terms: Vec<String> = (0..u).map(|k| format!("a{k}")).collect();
    while terms.len() > 1 {
        terms = terms
            .chunks(2)
            .map(|c| {
                c.iter()
                    .cloned()
                    .reduce(|a, b| format!("({a} + {b})"))
                    .unwrap_or_default()
            })
            .collect();
    }
    terms.concat()
}

/// Sum level 1 with scalar, coalesced loads: workgroup `w` sums elements
/// `w * seg ..` at stride 256, `u` loads in flight per invocation.
fn sum_coalesced(seg: u32, u: u32) -> String {
    sum_segment(seg, u, false)
}

/// Sum level 1 over a segment of `seg` floats per workgroup, `u`
/// coalesced loads in flight per invocation, of single floats or
/// (`quads`) of `vec4`s (the read ceiling's shape, `vec4` lanes), then the
/// workgroup tree.
fn sum_segment(seg: u32, u: u32, quads: bool) -> String {
    let (ty, per, zero) = if quads {
        ("vec4<f32>", seg / 4, "vec4<f32>(0.0)")
    } else {
        ("f32", seg, "0.0")
    };
    let mut s = format!(
        "@group(0) @binding(0) var<storage, read> x: array<{ty}>;\n@group(0) @binding(1) var<storage, read_write> part: array<f32>;\nvar<workgroup> t: array<f32, 256>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {{\n    let n = arrayLength(&x);\n    let start = min(w.x * {per}u, n);\n    let end = min(start + {per}u, n);\n    var i = start + l.x;\n"
    );
    for k in 0..u {
        s.push_str(&format!("    var a{k} = {zero};\n"));
    }
    s.push_str(&format!(
        "    loop {{\n        if i + {}u * 256u >= end {{ break; }}\n",
        u - 1
    ));
    for k in 0..u {
        s.push_str(&format!("        a{k} += x[i + {k}u * 256u];\n"));
    }
    s.push_str(&format!(
        "        i += {u}u * 256u;\n    }}\n    for (; i < end; i += 256u) {{ a0 += x[i]; }}\n"
    ));
    if quads {
        s.push_str(&format!(
            "    let v = {};\n    t[l.x] = (v.x + v.y) + (v.z + v.w);\n",
            pairwise(u)
        ));
    } else {
        let terms: Vec<String> = (0..u).map(|k| format!("a{k}")).collect();
        s.push_str(&format!("    t[l.x] = {};\n", terms.join(" + ")));
    }
    s.push_str(WORKGROUP_TREE);
    s
}

/// Sum in one dispatch: [`sum_coalesced`]'s segments, then the workgroup
/// that finishes last (a ticket counter, after a device-scope barrier)
/// sums the partials in a fixed order and resets the counter.
fn sum_last_block(seg: u32, u: u32) -> String {
    let one = sum_coalesced(seg, u);
    let head = one
        .replace(
            "@group(0) @binding(1) var<storage, read_write> part: array<f32>;\n",
            "@group(0) @binding(1) var<storage, read_write> part: array<f32>;\n@group(0) @binding(2) var<storage, read_write> ticket: array<atomic<u32>>;\n@group(0) @binding(3) var<storage, read_write> s: array<f32>;\nvar<workgroup> last: u32;\n",
        )
        .replace(
            "@builtin(local_invocation_id) l: vec3<u32>) {",
            "@builtin(local_invocation_id) l: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {",
        );
    let body_end = head.rfind("}\n").unwrap_or(head.len());
    let mut s = head[..body_end].to_owned();
    s.push_str("    storageBarrier();\n    if l.x == 0u {\n        last = select(0u, 1u, atomicAdd(&ticket[0], 1u) == nw.x - 1u);\n    }\n    if workgroupUniformLoad(&last) == 1u {\n        storageBarrier();\n        var acc = 0.0;\n        for (var i = l.x; i < nw.x; i += 256u) { acc += part[i]; }\n        t[l.x] = acc;\n        workgroupBarrier();\n        for (var k = 128u; k > 0u; k >>= 1u) {\n            if l.x < k { t[l.x] += t[l.x + k]; }\n            workgroupBarrier();\n        }\n        if l.x == 0u { s[0] = t[0]; atomicStore(&ticket[0], 0u); }\n    }\n}\n");
    s
}

/// Sum level 2: one workgroup over the partials.
fn sum_level2(ty: &str) -> String {
    let zero = if ty == "f32" { "0.0" } else { "0u" };
    format!(
        "@group(0) @binding(0) var<storage, read> part: array<{ty}>;\n@group(0) @binding(1) var<storage, read_write> s: array<{ty}>;\nvar<workgroup> t: array<{ty}, 256>;\n@compute @workgroup_size(256)\nfn main(@builtin(local_invocation_id) l: vec3<u32>) {{\n    var acc = {zero};\n    for (var i = l.x; i < arrayLength(&part); i += 256u) {{ acc += part[i]; }}\n    t[l.x] = acc;\n    workgroupBarrier();\n    for (var k = 128u; k > 0u; k >>= 1u) {{\n        if l.x < k {{ t[l.x] += t[l.x + k]; }}\n        workgroupBarrier();\n    }}\n    if l.x == 0u {{ s[0] = t[0]; }}\n}}\n"
    )
}

/// Scan pass 2: one workgroup, an exclusive scan of `g` totals in place
/// into `offs`.
fn scan_offsets(g: u32) -> String {
    let per = g.div_ceil(256);
    format!(
        "@group(0) @binding(0) var<storage, read> tot: array<u32>;\n@group(0) @binding(1) var<storage, read_write> offs: array<u32>;\nvar<workgroup> t: array<u32, 256>;\n@compute @workgroup_size(256)\nfn main(@builtin(local_invocation_id) l: vec3<u32>) {{\n    var acc = 0u;\n    for (var k = 0u; k < {per}u; k++) {{ let j = l.x * {per}u + k; if j < {g}u {{ acc += tot[j]; }} }}\n    t[l.x] = acc;\n    workgroupBarrier();\n    for (var d = 1u; d < 256u; d <<= 1u) {{\n        var v = t[l.x];\n        if l.x >= d {{ v += t[l.x - d]; }}\n        workgroupBarrier();\n        t[l.x] = v;\n        workgroupBarrier();\n    }}\n    var run = 0u;\n    if l.x > 0u {{ run = t[l.x - 1u]; }}\n    for (var k = 0u; k < {per}u; k++) {{ let j = l.x * {per}u + k; if j < {g}u {{ offs[j] = run; run += tot[j]; }} }}\n}}\n"
    )
}

/// Scan pass 3: workgroup `w` scans its segment of `x` (as vec4s) from
/// `offs[w]`, `k` consecutive vec4s per invocation per tile; the 256
/// invocation totals combine with a Hillis-Steele scan or with subgroups.
#[allow(dead_code)]
fn scan_segments(g: u32, k: u32, subgroups: bool) -> String {
    scan_segments_as(g, k, subgroups, false)
}

fn scan_segments_as(g: u32, k: u32, subgroups: bool, scalar: bool) -> String {
    let mut s = String::new();
    if subgroups {
        s.push_str("// naga 30 takes subgroup built-ins without `enable subgroups;`\n");
    }
    if scalar {
        s.push_str("@group(0) @binding(0) var<storage, read> x: array<u32>;\n@group(0) @binding(2) var<storage, read_write> y: array<u32>;\nfn ld(q: u32) -> vec4<u32> { return vec4<u32>(x[4u * q], x[4u * q + 1u], x[4u * q + 2u], x[4u * q + 3u]); }\nfn st(q: u32, v: vec4<u32>) { y[4u * q] = v.x; y[4u * q + 1u] = v.y; y[4u * q + 2u] = v.z; y[4u * q + 3u] = v.w; }\nfn n_quads() -> u32 { return arrayLength(&x) / 4u; }\n");
    } else {
        s.push_str("@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;\n@group(0) @binding(2) var<storage, read_write> y: array<vec4<u32>>;\nfn ld(q: u32) -> vec4<u32> { return x[q]; }\nfn st(q: u32, v: vec4<u32>) { y[q] = v; }\nfn n_quads() -> u32 { return arrayLength(&x); }\n");
    }
    s.push_str("@group(0) @binding(1) var<storage, read> offs: array<u32>;\nvar<workgroup> t: array<u32, 256>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>");
    if subgroups {
        s.push_str(", @builtin(subgroup_invocation_id) si: u32, @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) ns: u32, @builtin(subgroup_size) ss: u32");
    }
    let tile = 256 * k;
    s.push_str(&format!(
        ") {{\n    let n4 = n_quads();\n    let per = ((n4 + {g}u - 1u) / {g}u + {t1}u) / {tile}u * {tile}u;\n    let start = min(w.x * per, n4);\n    let end = min(start + per, n4);\n    var carry = offs[w.x];\n    for (var base = start; base < end; base += {tile}u) {{\n        let i = base + l.x * {k}u;\n        var v: array<vec4<u32>, {k}>;\n        var tot = 0u;\n        for (var j = 0u; j < {k}u; j++) {{\n            var e = vec4<u32>(0u);\n            if i + j < end {{ e = ld(i + j); }}\n            e.x += tot;\n            e.y += e.x;\n            e.z += e.y;\n            e.w += e.z;\n            tot = e.w;\n            v[j] = e;\n        }}\n",
        t1 = tile - 1
    ));
    if subgroups {
        s.push_str("        let inc = subgroupInclusiveAdd(tot);\n        if si == ss - 1u { t[sid] = inc; }\n        workgroupBarrier();\n        var before = 0u;\n        var all = 0u;\n        for (var q = 0u; q < ns; q++) { let z = t[q]; if q < sid { before += z; } all += z; }\n        let ex = carry + before + inc - tot;\n        workgroupBarrier();\n");
    } else {
        s.push_str("        t[l.x] = tot;\n        workgroupBarrier();\n        for (var d = 1u; d < 256u; d <<= 1u) {\n            var q = t[l.x];\n            if l.x >= d { q += t[l.x - d]; }\n            workgroupBarrier();\n            t[l.x] = q;\n            workgroupBarrier();\n        }\n        let all = t[255];\n        let ex = carry + t[l.x] - tot;\n        workgroupBarrier();\n");
    }
    s.push_str(&format!("        for (var j = 0u; j < {k}u; j++) {{\n            let e = v[j];\n            var prev = ex;\n            if j > 0u {{ prev = ex + v[j - 1u].w; }}\n            if i + j < end {{ st(i + j, vec4<u32>(prev, ex + e.x, ex + e.y, ex + e.z)); }}\n        }}\n        carry += all;\n    }}\n}}\n"));
    s
}

/// The graph's scan pass in registers (one segment of `per` quads per
/// workgroup, tiles of `256 k` quads), with a ping-pong Hillis-Steele scan
/// of the invocation totals (one barrier a step instead of two) and/or the
/// next tile's loads issued before this tile's scan (`prefetch`).
fn scan_registers(g: u32, k: u32, pingpong: bool, prefetch: bool) -> String {
    let tile = 256 * k;
    let mut s = format!(
        "@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read> offs: array<u32>;\n@group(0) @binding(2) var<storage, read_write> y: array<vec4<u32>>;\nvar<workgroup> t: array<u32, 512>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {{\n    let n4 = arrayLength(&x);\n    let per = ((n4 + {g}u - 1u) / {g}u + {t1}u) / {tile}u * {tile}u;\n    let start = min(w.x * per, n4);\n    let end = min(start + per, n4);\n    var carry = offs[w.x];\n    var nv: array<vec4<u32>, {k}>;\n",
        t1 = tile - 1
    );
    let load = |at: &str| {
        format!(
            "        for (var j = 0u; j < {k}u; j++) {{ nv[j] = vec4<u32>(0u); if {at} + l.x * {k}u + j < end {{ nv[j] = x[{at} + l.x * {k}u + j]; }} }}\n"
        )
    };
    if prefetch {
        s.push_str(&load("start"));
    }
    s.push_str(&format!(
        "    for (var base = start; base < end; base += {tile}u) {{\n        let i = base + l.x * {k}u;\n"
    ));
    if prefetch {
        s.push_str("        var v = nv;\n");
        s.push_str(&load(&format!("(base + {tile}u)")));
    } else {
        s.push_str(&load("base"));
        s.push_str("        var v = nv;\n");
    }
    s.push_str(&format!(
        "        var tot = 0u;\n        for (var j = 0u; j < {k}u; j++) {{\n            var e = v[j];\n            e.x += tot;\n            e.y += e.x;\n            e.z += e.y;\n            e.w += e.z;\n            tot = e.w;\n            v[j] = e;\n        }}\n        t[l.x] = tot;\n        workgroupBarrier();\n"
    ));
    if pingpong {
        s.push_str("        var src = 0u;\n        for (var d = 1u; d < 256u; d <<= 1u) {\n            var q = t[src + l.x];\n            if l.x >= d { q += t[src + l.x - d]; }\n            t[256u - src + l.x] = q;\n            src = 256u - src;\n            workgroupBarrier();\n        }\n        let all = t[src + 255u];\n        let ex = carry + t[src + l.x] - tot;\n        workgroupBarrier();\n");
    } else {
        s.push_str("        for (var d = 1u; d < 256u; d <<= 1u) {\n            var q = t[l.x];\n            if l.x >= d { q += t[l.x - d]; }\n            workgroupBarrier();\n            t[l.x] = q;\n            workgroupBarrier();\n        }\n        let all = t[255];\n        let ex = carry + t[l.x] - tot;\n        workgroupBarrier();\n");
    }
    s.push_str(&format!(
        "        for (var j = 0u; j < {k}u; j++) {{\n            let e = v[j];\n            var prev = ex;\n            if j > 0u {{ prev = ex + v[j - 1u].w; }}\n            if i + j < end {{ y[i + j] = vec4<u32>(prev, ex + e.x, ex + e.y, ex + e.z); }}\n        }}\n        carry += all;\n    }}\n}}\n"
    ));
    s
}

/// The scan pass with coalesced `vec4` loads and stores: invocation `l`
/// takes quads `l` and `256 + l` of a tile of 512, a Hillis-Steele scan
/// of the 512 quad totals (u32: any order gives the same bits).
fn scan_coalesced(g: u32) -> String {
    format!(
        "@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read> offs: array<u32>;\n@group(0) @binding(2) var<storage, read_write> y: array<vec4<u32>>;\nvar<workgroup> t: array<u32, 512>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {{\n    let n4 = arrayLength(&x);\n    let per = ((n4 + {g}u - 1u) / {g}u + 511u) / 512u * 512u;\n    let start = min(w.x * per, n4);\n    let end = min(start + per, n4);\n    var carry = offs[w.x];\n    for (var base = start; base < end; base += 512u) {{\n        let qa = base + l.x;\n        let qb = base + 256u + l.x;\n        var a = vec4<u32>(0u);\n        var b = vec4<u32>(0u);\n        if qa < end {{ a = x[qa]; }}\n        if qb < end {{ b = x[qb]; }}\n        a.y += a.x; a.z += a.y; a.w += a.z;\n        b.y += b.x; b.z += b.y; b.w += b.z;\n        t[l.x] = a.w;\n        t[256u + l.x] = b.w;\n        workgroupBarrier();\n        for (var d = 1u; d < 512u; d <<= 1u) {{\n            var va = t[l.x];\n            if l.x >= d {{ va += t[l.x - d]; }}\n            var vb = t[256u + l.x];\n            if 256u + l.x >= d {{ vb += t[256u + l.x - d]; }}\n            workgroupBarrier();\n            t[l.x] = va;\n            t[256u + l.x] = vb;\n            workgroupBarrier();\n        }}\n        let pa = carry + t[l.x] - a.w;\n        let pb = carry + t[256u + l.x] - b.w;\n        if qa < end {{ y[qa] = vec4<u32>(pa, pa + a.x, pa + a.y, pa + a.z); }}\n        if qb < end {{ y[qb] = vec4<u32>(pb, pb + b.x, pb + b.y, pb + b.z); }}\n        carry += t[511];\n        workgroupBarrier();\n    }}\n}}\n"
    )
}

fn read(gpu: &Gpu, buf: &wgpu::Buffer, len: u64) -> Vec<u8> {
    let device = gpu.device();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: len,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut e = device.create_command_encoder(&Default::default());
    e.copy_buffer_to_buffer(buf, 0, &staging, 0, len);
    let index = gpu.queue().submit([e.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .expect("poll");
    staging
        .slice(..)
        .get_mapped_range()
        .expect("mapped")
        .to_vec()
}

/// Keeps the GPU busy for a few hundred microseconds ahead of a timed
/// submission (clears of a scratch buffer), so that the timed pass runs at
/// the clocks of a busy GPU rather than after an idle gap.
pub fn warm_up(gpu: &Gpu, scratch: &wgpu::Buffer) {
    let mut e = gpu.device().create_command_encoder(&Default::default());
    for _ in 0..4 {
        e.clear_buffer(scratch, 0, None);
    }
    gpu.queue().submit([e.finish()]);
}

fn time_ns(gpu: &Gpu, c: &Candidate) -> f64 {
    let device = gpu.device();
    let set = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut e = device.create_command_encoder(&Default::default());
    {
        let mut pass = e.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        for s in &c.steps {
            pass.set_pipeline(&s.pipeline);
            pass.set_bind_group(0, &s.group, &[]);
            pass.dispatch_workgroups(s.groups, 1, 1);
        }
    }
    e.resolve_query_set(&set, 0..2, &resolve, 0);
    gpu.queue().submit([e.finish()]);
    let bytes = read(gpu, &resolve, 16);
    let t: &[u64] = bytemuck::cast_slice(&bytes);
    t[1].saturating_sub(t[0]) as f64 * f64::from(gpu.queue().get_timestamp_period())
}

fn sum_candidates(gpu: &Gpu, x: &wgpu::Buffer, sub: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    // Earlier candidates (their results are in
    // `bench/results/2026-12-02-nvidia-h200-reduce-probe-designs.txt`) were
    // (g, u) in {512, 1024, 1056, 2048} x {1, 2, 4}, segmented and not,
    // and scalar quads.
    let mut configs = vec![(1024, 4, false, false)];
    if sub {
        configs.push((1024, 2, false, true));
    }
    let n = x.size() / 4;
    for seg in [16384u32, 32768] {
        let g = u32::try_from(n.div_ceil(u64::from(seg))).unwrap_or(u32::MAX);
        let part = storage(gpu, u64::from(g) * 4);
        let ticket = storage(gpu, 4);
        let s = storage(gpu, 4);
        let steps = vec![step(
            gpu,
            &sum_last_block(seg, 8),
            &[x, &part, &ticket, &s],
            g,
        )];
        out.push(Candidate {
            name: format!("sum seg{seg} u8 one dispatch"),
            steps,
            out: s,
            out_len: 4,
        });
    }
    {
        // The first level alone (its partials are checked by their sum).
        let g = u32::try_from(n.div_ceil(32768)).unwrap_or(u32::MAX);
        let part = storage(gpu, u64::from(g) * 4);
        out.push(Candidate {
            name: "sum seg32768 u8 level 1 only".to_owned(),
            steps: vec![step(gpu, &sum_coalesced(32768, 8), &[x, &part], g)],
            out: part,
            out_len: u64::from(g) * 4,
        });
    }
    for (seg, u) in [(8192u32, 8u32), (16384, 4), (32768, 8), (65536, 8)] {
        let g = u32::try_from(n.div_ceil(u64::from(seg))).unwrap_or(u32::MAX);
        let part = storage(gpu, u64::from(g) * 4);
        let s = storage(gpu, 4);
        let steps = vec![
            step(gpu, &sum_segment(seg, u, true), &[x, &part], g),
            step(gpu, &sum_level2("f32"), &[&part, &s], 1),
        ];
        out.push(Candidate {
            name: format!("sum seg{seg} vec4 u{u}"),
            steps,
            out: s,
            out_len: 4,
        });
    }
    for (seg, u) in [(16384u32, 8u32), (32768, 8)] {
        let n = x.size() / 4;
        let g = u32::try_from(n.div_ceil(u64::from(seg))).unwrap_or(u32::MAX);
        let part = storage(gpu, u64::from(g) * 4);
        let s = storage(gpu, 4);
        let steps = vec![
            step(gpu, &sum_coalesced(seg, u), &[x, &part], g),
            step(gpu, &sum_level2("f32"), &[&part, &s], 1),
        ];
        out.push(Candidate {
            name: format!("sum seg{seg} u{u} coalesced"),
            steps,
            out: s,
            out_len: 4,
        });
    }
    for (g, u, seg, sg) in configs {
        let part = storage(gpu, u64::from(g) * 4);
        let s = storage(gpu, 4);
        let steps = vec![
            step(
                gpu,
                &sum_level1("f32", g, u, if seg { 256 } else { 0 }, sg),
                &[x, &part],
                g,
            ),
            step(gpu, &sum_level2("f32"), &[&part, &s], 1),
        ];
        out.push(Candidate {
            name: format!(
                "sum g{g} u{u}{}{}",
                if seg { " seg" } else { " stride" },
                if sg { " subgroups" } else { "" }
            ),
            steps,
            out: s,
            out_len: 4,
        });
    }
    out
}

fn scan_candidates(gpu: &Gpu, x: &wgpu::Buffer, n: u64, sub: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    // Earlier: g in {1024, 2048}, k in {1, 2, 4}, with subgroups and
    // scalar quads (see the sum's note).
    let _ = sub;
    let configs: Vec<(u32, u32, bool, bool)> = vec![(2048, 2, false, false)];
    // Parts, not checked: the scan pass alone (offsets of 0), the same
    // without the workgroup's scan of its totals, and the copy and read
    // ceilings of the same buffers.
    {
        let g = 2048u32;
        let offs = storage(gpu, u64::from(g) * 4);
        let y = storage(gpu, n * 4);
        let pass = scan_registers(g, 2, false, false);
        let hs = "        for (var d = 1u; d < 256u; d <<= 1u) {\n            var q = t[l.x];\n            if l.x >= d { q += t[l.x - d]; }\n            workgroupBarrier();\n            t[l.x] = q;\n            workgroupBarrier();\n        }\n";
        let copy = "@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read_write> y: array<vec4<u32>>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {\n    let n = arrayLength(&x);\n    let i = w.x * 2048u + l.x;\n    for (var j = i; j < min(i + 2048u, n); j += 256u) { y[j] = x[j]; }\n}\n";
        let read = "@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read_write> s: array<vec4<u32>>;\n@compute @workgroup_size(256)\nfn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {\n    let n = arrayLength(&x);\n    let i = w.x * 2048u + l.x;\n    var a = vec4<u32>(0u);\n    for (var j = i; j < min(i + 2048u, n); j += 256u) { a ^= x[j]; }\n    if all(a == vec4<u32>(0x9e3779b9u)) { s[0] = a; }\n}\n";
        let groups = u32::try_from(n.div_ceil(8192)).unwrap_or(u32::MAX);
        let parts = [
            ("scan pass alone (part)", pass.clone(), vec![x, &offs, &y], g),
            ("scan pass without its workgroup scan (part)", pass.replace(hs, ""), vec![x, &offs, &y], g),
            ("copy ceiling (part)", copy.to_owned(), vec![x, &y], groups),
            (
                "copy in pairs (part)",
                copy.replace(
                    "    for (var j = i; j < min(i + 2048u, n); j += 256u) { y[j] = x[j]; }
",
                    "    let p = w.x * 2048u + 2u * l.x;
    for (var j = p; j < min(w.x * 2048u + 2048u, n); j += 512u) { y[j] = x[j]; y[j + 1u] = x[j + 1u]; }
",
                ),
                vec![x, &y],
                groups,
            ),
            ("scan pass coalesced alone (part)", scan_coalesced(g), vec![x, &offs, &y], g),
            ("read ceiling (part)", read.to_owned(), vec![x, &offs], groups),
        ];
        for (name, wgsl, buffers, groups) in parts {
            out.push(Candidate {
                name: name.to_owned(),
                steps: vec![step(gpu, &wgsl, &buffers, groups)],
                out: storage(gpu, 4),
                out_len: 4,
            });
        }
    }
    // Earlier: ping-pong and prefetch (no gain), 16 elements per
    // invocation (much slower); now segments of 8,192 and 16,384 too.
    for g in [2048u32, 4096] {
        let tot = storage(gpu, u64::from(g) * 4);
        let offs = storage(gpu, u64::from(g) * 4);
        let y = storage(gpu, n * 4);
        let steps = vec![
            step(gpu, &sum_level1("u32", g, 2, 512, false), &[x, &tot], g),
            step(gpu, &scan_offsets(g), &[&tot, &offs], 1),
            step(gpu, &scan_coalesced(g), &[x, &offs, &y], g),
        ];
        out.push(Candidate {
            name: format!("scan g{g} coalesced"),
            steps,
            out: y,
            out_len: n * 4,
        });
    }
    // Earlier: segments of 8,192 elements (slower).
    for (g, k, pingpong, prefetch) in [(2048u32, 2, false, false), (4096, 2, false, false)] {
        let tot = storage(gpu, u64::from(g) * 4);
        let offs = storage(gpu, u64::from(g) * 4);
        let y = storage(gpu, n * 4);
        let steps = vec![
            step(gpu, &sum_level1("u32", g, 2, 256 * k, false), &[x, &tot], g),
            step(gpu, &scan_offsets(g), &[&tot, &offs], 1),
            step(
                gpu,
                &scan_registers(g, k, pingpong, prefetch),
                &[x, &offs, &y],
                g,
            ),
        ];
        out.push(Candidate {
            name: format!(
                "scan g{g} k{k} registers{}{}",
                if pingpong { " pingpong" } else { "" },
                if prefetch { " prefetch" } else { "" }
            ),
            steps,
            out: y,
            out_len: n * 4,
        });
    }
    for (g, k, sg, scalar) in configs {
        let tot = storage(gpu, u64::from(g) * 4);
        let offs = storage(gpu, u64::from(g) * 4);
        let y = storage(gpu, n * 4);
        let steps = vec![
            step(gpu, &sum_level1("u32", g, 2, 256 * k, false), &[x, &tot], g),
            step(gpu, &scan_offsets(g), &[&tot, &offs], 1),
            step(gpu, &scan_segments_as(g, k, sg, scalar), &[x, &offs, &y], g),
        ];
        out.push(Candidate {
            name: format!(
                "scan g{g} k{k}{}{}",
                if sg { " subgroups" } else { "" },
                if scalar { " scalar-quads" } else { "" }
            ),
            steps,
            out: y,
            out_len: n * 4,
        });
    }
    out
}

/// Runs the probe at 2^24 and 2^26 elements.
pub fn probe(quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    // One device only: a second wgpu device open in the process made the
    // large kernels 2.5 times slower on the H200 (measured), so the plain
    // device is dropped before the one with subgroups is opened.
    let plain = Gpu::new()?;
    println!("adapter: {}", plain.adapter());
    let wanted = plain.adapter().backend != wgpu::Backend::Gl
        && std::env::var_os("GRAPH_BENCH_NOSUB").is_none();
    let features = plain.device().features() | wgpu::Features::SUBGROUP;
    let gpu = if wanted {
        drop(plain);
        Gpu::with_options(GpuOptions::default().with_features(features))?
    } else {
        plain
    };
    let gpu = &gpu;
    if !gpu.has_timestamps() {
        return Err("the reduce probe needs timestamp queries".into());
    }
    let sub = gpu.device().features().contains(wgpu::Features::SUBGROUP);
    println!("subgroups: {sub}");
    let sizes: &[u64] = if quick {
        &[1 << 16]
    } else {
        &[1 << 24, 1 << 26]
    };
    let reps = if quick { 3 } else { 25 };
    for &n in sizes {
        let u = random_u32(n as usize, 11);
        let f: Vec<f32> = u.iter().map(|&v| (v >> 8) as f32 / 16_777_216.0).collect();
        let xf = storage(gpu, n * 4);
        gpu.queue().write_buffer(&xf, 0, bytemuck::cast_slice(&f));
        let small: Vec<u32> = u.iter().map(|v| v & 0xffff).collect();
        let xu = storage(gpu, n * 4);
        gpu.queue()
            .write_buffer(&xu, 0, bytemuck::cast_slice(&small));
        let mut all = sum_candidates(gpu, &xf, sub);
        let sums = all.len();
        all.extend(scan_candidates(gpu, &xu, n, sub));
        // Check every candidate first.
        let exact: f64 = f.iter().map(|&v| f64::from(v)).sum();
        let mut want = Vec::with_capacity(n as usize);
        let mut acc = 0u32;
        for &v in &small {
            want.push(acc);
            acc = acc.wrapping_add(v);
        }
        for (i, c) in all.iter().enumerate() {
            time_ns(gpu, c);
            let got = read(gpu, &c.out, c.out_len);
            if c.name.ends_with("(part)") {
                continue;
            }
            if i < sums {
                let s: f64 = bytemuck::cast_slice::<u8, f32>(&got)
                    .iter()
                    .map(|&v| f64::from(v))
                    .sum();
                if (s - exact).abs() > 1e-5 * exact {
                    return Err(format!("{} at {n}: {s} vs {exact}", c.name).into());
                }
            } else if bytemuck::cast_slice::<u8, u32>(&got) != want.as_slice() {
                return Err(format!("{} at {n}: differs from the CPU", c.name).into());
            }
        }
        let mut times = vec![Vec::new(); all.len()];
        let scratch = storage(gpu, if quick { 4 << 20 } else { 256 << 20 });
        // Every sample on a busy GPU; the first rounds warm it up.
        for rep in 0..reps + 3 {
            for i in order(all.len(), rep) {
                warm_up(gpu, &scratch);
                let t = time_ns(gpu, &all[i]) / 1e3;
                if rep >= 3 {
                    times[i].push(t);
                }
            }
        }
        // Today's generated kernels through the graph, on resident inputs,
        // timing the pass only.
        let profile = vyre_graph::DispatchConfig::default()
            .with_profile(true)
            .with_dispatch_times(false);
        let sum = crate::reduce_bench::graphs::Sum::new(gpu)?;
        let scan = crate::reduce_bench::graphs::Scan::new(gpu)?;
        let hf = vyre_graph::GpuBufferHandle::from_slice(gpu, &f)?;
        let hu = vyre_graph::GpuBufferHandle::from_slice(gpu, &small)?;
        let (mut gs, mut gc) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            warm_up(gpu, &scratch);
            gs.extend(
                sum.run_reported(&profile, &hf)?
                    .1
                    .gpu_ns
                    .map(|t| t as f64 / 1e3),
            );
            warm_up(gpu, &scratch);
            gc.extend(
                scan.run_reported(&profile, &hu)?
                    .1
                    .gpu_ns
                    .map(|t| t as f64 / 1e3),
            );
        }
        let fastest = |t: &[f64]| t.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "probe n={n:<10} {:<28} {:>9.1} µs (fastest {:.1})",
            "graph sum (resident)",
            median(&mut gs),
            fastest(&gs)
        );
        println!(
            "probe n={n:<10} {:<28} {:>9.1} µs (fastest {:.1})",
            "graph scan (resident)",
            median(&mut gc),
            fastest(&gc)
        );
        for (i, c) in all.iter().enumerate() {
            let fast = fastest(&times[i]);
            let us = median(&mut times[i]);
            let bytes = if i < sums { n * 4 } else { n * 8 };
            println!(
                "probe n={n:<10} {:<28} {:>9.1} µs {:>8.1} GB/s  fastest {:>8.1} µs",
                c.name,
                us,
                bytes as f64 / (us * 1e3),
                fast
            );
        }
    }
    Ok(())
}
