//! Scratch: tests kernels through the runtime API until graph! exists. Deleted later.
#![allow(clippy::all)]
use std::borrow::Cow;
use std::time::Instant;
use vyre_graph::spec::*;
use vyre_graph::*;

fn b(name: &str, binding: u32, kind: BindingKind, elem: u32) -> BindingSpec {
    BindingSpec {
        name: Cow::Owned(name.into()),
        group: 0,
        binding,
        kind,
        element_size: elem,
        min_binding_size: 0,
        access: match kind {
            BindingKind::ReadWriteStorage if name == "data" => Access::ReadWrite,
            BindingKind::ReadWriteStorage => Access::Write,
            _ => Access::Read,
        },
        wgsl_type: "".into(),
    }
}
const R: BindingKind = BindingKind::ReadOnlyStorage;
const W: BindingKind = BindingKind::ReadWriteStorage;
const U: BindingKind = BindingKind::Uniform;
fn k(label: &str, src: &str, entry: &str, wg: [u32; 3], bs: Vec<BindingSpec>) -> KernelSpec {
    KernelSpec {
        label: label.to_owned().into(),
        source: src.to_owned().into(),
        entry_point: entry.to_owned().into(),
        workgroup_size: wg,
        bindings: bs.into(),
    }
}
fn buf(name: &str, class: BufferClass, elem: u32, len: Extent) -> BufferSpec {
    BufferSpec {
        name: name.to_owned().into(),
        class,
        element_size: elem,
        len,
    }
}
fn nd(
    label: &str,
    kernel: usize,
    bufs: &[usize],
    size: DispatchSize,
    ov: &[(&str, f64)],
) -> NodeSpec {
    NodeSpec {
        label: label.to_owned().into(),
        kernel,
        bindings: bufs
            .iter()
            .enumerate()
            .map(|(i, &buffer)| NodeBinding {
                group: 0,
                binding: i as u32,
                buffer,
            })
            .collect::<Vec<_>>()
            .into(),
        overrides: ov
            .iter()
            .map(|(n, v)| OverrideValue {
                name: n.to_string().into(),
                value: *v,
            })
            .collect::<Vec<_>>()
            .into(),
        workgroup_size: None,
        size,
    }
}
fn over(e: Extent) -> DispatchSize {
    DispatchSize::Invocations(e)
}
fn sc(mul: u64, div: u64, add: u64) -> Extent {
    Extent::scaled(mul, div, add)
}
fn data(len: usize, seed: u64) -> Vec<u32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_add(0x9E3779B97F4A7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
            (z ^ (z >> 31)) as u32
        })
        .collect()
}
fn run_u32(g: &Graph, n: u64, feeds: &[&[u32]], outs: &mut [Vec<u32>]) -> f64 {
    let feeds: Vec<Feed> = feeds
        .iter()
        .map(|f| Feed::Host(bytemuck::cast_slice(f)))
        .collect();
    let mut sinks: Vec<Sink> = outs
        .iter_mut()
        .map(|o| Sink::Host(bytemuck::cast_slice_mut(o)))
        .collect();
    let t = Instant::now();
    g.run(n, &feeds, &mut sinks, &DispatchConfig::default())
        .unwrap();
    t.elapsed().as_secs_f64() * 1e3
}

fn collatz_cpu(x: u32) -> u32 {
    if x == 0 {
        return u32::MAX;
    }
    let mut v = x as u64;
    let mut c = 0;
    while v != 1 {
        v = if v % 2 == 0 {
            v / 2
        } else {
            match v.checked_mul(3).and_then(|t| t.checked_add(1)) {
                Some(t) => t,
                None => return u32::MAX,
            }
        };
        c += 1;
    }
    c
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let gpu = Gpu::new().unwrap();
    println!("adapter: {}", gpu.adapter());
    match which.as_str() {
        "collatz" => {
            let spec = GraphSpec {
                name: "collatz".into(),
                kernels: vec![k(
                    "collatz",
                    include_str!("kernels/collatz/collatz.wgsl"),
                    "main",
                    [256, 1, 1],
                    vec![b("x", 0, R, 4), b("steps", 1, W, 4)],
                )]
                .into(),
                buffers: vec![
                    buf("x", BufferClass::Input, 4, Extent::N),
                    buf("steps", BufferClass::Output, 4, Extent::N),
                ]
                .into(),
                nodes: vec![nd("collatz", 0, &[0, 1], over(Extent::N), &[])].into(),
            };
            let g = Graph::new(&gpu, spec).unwrap();
            let mut o = vec![vec![0u32; 4]];
            run_u32(&g, 4, &[&[1, 2, 3, 4]], &mut o);
            println!("{:?}", o[0]);
            let x: Vec<u32> = (1..=n as u32).collect();
            let mut o = vec![vec![0u32; n]];
            for _ in 0..3 {
                println!("gpu {:.2} ms", run_u32(&g, n as u64, &[&x], &mut o));
            }
            let t = Instant::now();
            let want: Vec<u32> = x.iter().map(|&v| collatz_cpu(v)).collect();
            println!("cpu {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
            let bad = o[0].iter().zip(&want).filter(|(a, b)| a != b).count();
            println!("mismatches {bad}; max {:?}", want.iter().max());
        }
        "scan" => {
            let scan = k(
                "scan",
                include_str!("kernels/prefix_sum/scan_blocks.wgsl"),
                "main",
                [256, 1, 1],
                vec![b("src", 0, R, 4), b("dst", 1, W, 4), b("sums", 2, W, 4)],
            );
            let add = k(
                "add",
                include_str!("kernels/prefix_sum/add_offsets.wgsl"),
                "main",
                [256, 1, 1],
                vec![b("data", 0, W, 4), b("offsets", 1, R, 4)],
            );
            let I = BufferClass::Intermediate;
            let spec = GraphSpec {
                name: "scan".into(),
                kernels: vec![scan, add].into(),
                buffers: vec![
                    buf("x", BufferClass::Input, 4, Extent::N),
                    buf("y", BufferClass::Output, 4, Extent::N),
                    buf("s1", I, 4, sc(1, 1024, 0)),
                    buf("s1x", I, 4, sc(1, 1024, 0)),
                    buf("s2", I, 4, sc(1, 1 << 20, 0)),
                    buf("s2x", I, 4, sc(1, 1 << 20, 0)),
                    buf("s3", I, 4, sc(1, 1 << 30, 0)),
                ]
                .into(),
                nodes: vec![
                    nd("scan0", 0, &[0, 1, 2], over(sc(1, 4, 0)), &[]),
                    nd("scan1", 0, &[2, 3, 4], over(sc(1, 4096, 0)), &[]),
                    nd("scan2", 0, &[4, 5, 6], over(sc(1, 4 << 20, 0)), &[]),
                    nd("add1", 1, &[3, 5], over(sc(1, 1024, 0)), &[]),
                    nd("add0", 1, &[1, 3], over(Extent::N), &[]),
                ]
                .into(),
            };
            let g = Graph::new(&gpu, spec).unwrap();
            for &n in &[1usize, 5, 1023, 1024, 1025, 4097, 1 << 20, 1_048_577, n] {
                let x = data(n, 7);
                let mut o = vec![vec![0u32; n]];
                let mut ms = 0.0;
                for _ in 0..2 {
                    ms = run_u32(&g, n as u64, &[&x], &mut o);
                }
                let mut acc = 0u32;
                let want: Vec<u32> = x
                    .iter()
                    .map(|&v| {
                        let r = acc;
                        acc = acc.wrapping_add(v);
                        r
                    })
                    .collect();
                let bad = o[0].iter().zip(&want).position(|(a, b)| a != b);
                println!("n={n} first mismatch {bad:?} gpu {ms:.2} ms");
            }
        }
        "radix" | "radixkv" => {
            let kv = which == "radixkv";
            let hist = k(
                "hist",
                include_str!("kernels/radix_sort/histogram.wgsl"),
                "main",
                [256, 1, 1],
                vec![b("keys", 0, R, 4), b("counts", 1, W, 4)],
            );
            let scan = k(
                "scan",
                include_str!("kernels/prefix_sum/scan_blocks.wgsl"),
                "main",
                [256, 1, 1],
                vec![b("src", 0, R, 4), b("dst", 1, W, 4), b("sums", 2, W, 4)],
            );
            let scat = if kv {
                k(
                    "scatter",
                    include_str!("kernels/radix_sort/scatter_pairs.wgsl"),
                    "main",
                    [256, 1, 1],
                    vec![
                        b("src_keys", 0, R, 4),
                        b("src_values", 1, R, 4),
                        b("dst_keys", 2, W, 4),
                        b("dst_values", 3, W, 4),
                        b("offsets", 4, R, 4),
                        b("block_offsets", 5, R, 4),
                    ],
                )
            } else {
                k(
                    "scatter",
                    include_str!("kernels/radix_sort/scatter.wgsl"),
                    "main",
                    [256, 1, 1],
                    vec![
                        b("src", 0, R, 4),
                        b("dst", 1, W, 4),
                        b("offsets", 2, R, 4),
                        b("block_offsets", 3, R, 4),
                    ],
                )
            };
            let I = BufferClass::Intermediate;
            // 0 keys 1 tmp 2 counts 3 offsets 4 bsums 5 boffs 6 total 7 values 8 tmpv
            let mut bufs = vec![
                buf("keys", BufferClass::InOut, 4, Extent::N),
                buf("tmp", I, 4, Extent::N),
                buf("counts", I, 4, sc(1, 64, 16)),
                buf("offsets", I, 4, sc(1, 64, 16)),
                buf("bsums", I, 4, sc(1, 65536, 1)),
                buf("boffs", I, 4, sc(1, 65536, 1)),
                buf("total", I, 4, Extent::constant(1)),
            ];
            if kv {
                bufs.push(buf("values", BufferClass::InOut, 4, Extent::N));
                bufs.push(buf("tmpv", I, 4, Extent::N));
            }
            let mut nodes = vec![];
            let prof = std::env::var("PROF").unwrap_or_default();
            for i in 0..8u32 {
                let (s, d) = if i % 2 == 0 || !prof.is_empty() {
                    (0, 1)
                } else {
                    (1, 0)
                };
                let (sv, dv) = if i % 2 == 0 { (7, 8) } else { (8, 7) };
                let sh = [("SHIFT", (i * 4) as f64)];
                nodes.push(nd("hist", 0, &[s, 2], over(sc(1, 4, 0)), &sh));
                if prof == "hist" {
                    continue;
                }
                nodes.push(nd("scan", 1, &[2, 3, 4], over(sc(1, 256, 4)), &[]));
                nodes.push(nd("scantop", 1, &[4, 5, 6], over(sc(1, 262144, 1)), &[]));
                if prof == "scan" {
                    continue;
                }
                if kv {
                    nodes.push(nd(
                        "scatter",
                        2,
                        &[s, sv, d, dv, 3, 5],
                        over(sc(1, 4, 0)),
                        &sh,
                    ));
                } else {
                    nodes.push(nd("scatter", 2, &[s, d, 3, 5], over(sc(1, 4, 0)), &sh));
                }
            }
            let spec = GraphSpec {
                name: "radix".into(),
                kernels: vec![hist, scan, scat].into(),
                buffers: bufs.into(),
                nodes: nodes.into(),
            };
            let mut spec = spec;
            if !prof.is_empty() {
                let mut b = spec.buffers.to_vec();
                b[0].class = BufferClass::Input;
                b[2].class = BufferClass::Output;
                if kv {
                    b[7].class = BufferClass::Input;
                    b[8].class = BufferClass::Output;
                }
                spec.buffers = b.into();
            }
            let g = Graph::new(&gpu, spec).unwrap();
            println!("pipelines {}", g.pipeline_count());
            if !prof.is_empty() {
                let keys = data(n, 3);
                let mut o = vec![vec![0u32; n / 64 + 16]];
                for _ in 0..2 {
                    println!("{prof}: {:.2}", run_u32(&g, n as u64, &[&keys], &mut o));
                }
                return;
            }
            for &n in &[1usize, 5, 1023, 1025, 4097, 1 << 20, n] {
                let keys: Vec<u32> = if kv {
                    data(n, 3).iter().map(|v| v % (n as u32 / 4 + 1)).collect()
                } else {
                    data(n, 3)
                };
                let vals: Vec<u32> = (0..n as u32).collect();
                let mut o = if kv {
                    vec![vec![0u32; n], vec![0u32; n]]
                } else {
                    vec![vec![0u32; n]]
                };
                let mut ms = 0.0;
                for _ in 0..2 {
                    ms = if kv {
                        run_u32(&g, n as u64, &[&keys, &vals], &mut o)
                    } else {
                        run_u32(&g, n as u64, &[&keys], &mut o)
                    };
                }
                let mut want = keys.clone();
                let t = Instant::now();
                want.sort_unstable();
                let cpu = t.elapsed().as_secs_f64() * 1e3;
                let bad = o[0].iter().zip(&want).position(|(a, b)| a != b);
                let mut kvok = true;
                if kv {
                    let mut idx: Vec<u32> = (0..n as u32).collect();
                    idx.sort_by_key(|&i| keys[i as usize]);
                    kvok = idx == o[1];
                }
                println!(
                    "n={n} first mismatch {bad:?} kv ok {kvok} gpu {ms:.2} ms cpu {cpu:.2} ms"
                );
            }
        }
        "blur" => {
            let w = n;
            let h = n * 3 / 4;
            let px = w * h;
            let src = include_str!("kernels/blur/blur.wgsl");
            let mut rows_r = b("rows", 2, W, 16);
            rows_r.access = Access::Read;
            let hk = k(
                "horizontal",
                src,
                "horizontal",
                [256, 1, 1],
                vec![
                    b("params", 0, U, 80),
                    b("image", 1, R, 4),
                    b("rows", 2, W, 16),
                ],
            );
            let vk = k(
                "vertical",
                src,
                "vertical",
                [256, 1, 1],
                vec![b("params", 0, U, 80), rows_r, b("blurred", 3, W, 16)],
            );
            let spec = GraphSpec {
                name: "blur".into(),
                kernels: vec![hk, vk].into(),
                buffers: vec![
                    buf("image", BufferClass::Input, 4, Extent::N),
                    buf("params", BufferClass::Uniform, 80, Extent::constant(1)),
                    buf("rows", BufferClass::Intermediate, 16, Extent::N),
                    buf("blurred", BufferClass::Output, 16, Extent::N),
                ]
                .into(),
                nodes: vec![
                    nd("h", 0, &[1, 0, 2], over(Extent::N), &[]),
                    nd("v", 1, &[1, 2, 3], over(Extent::N), &[]),
                ]
                .into(),
            };
            let spec = GraphSpec {
                nodes: spec
                    .nodes
                    .iter()
                    .cloned()
                    .map(|mut n| {
                        let bs: Vec<NodeBinding> = n
                            .bindings
                            .iter()
                            .enumerate()
                            .map(|(i, nb)| NodeBinding {
                                binding: if n.kernel == 1 && i > 0 {
                                    i as u32 + 1
                                } else {
                                    i as u32
                                },
                                ..*nb
                            })
                            .collect();
                        n.bindings = bs.into();
                        n
                    })
                    .collect::<Vec<_>>()
                    .into(),
                ..spec
            };
            let g = Graph::new(&gpu, spec).unwrap();
            let radius = 8usize;
            let sigma = 3.0f32;
            let mut wts: Vec<f32> = (0..=radius)
                .map(|k| (-(k as f32).powi(2) / (2.0 * sigma * sigma)).exp())
                .collect();
            let sum: f32 = wts[0] + 2.0 * wts[1..].iter().sum::<f32>();
            for x in &mut wts {
                *x /= sum;
            }
            let mut params = vec![0u32; 20];
            params[0] = w as u32;
            params[1] = h as u32;
            params[2] = radius as u32;
            for (i, x) in wts.iter().enumerate() {
                params[4 + i] = x.to_bits();
            }
            let image: Vec<u32> = (0..px)
                .map(|i| {
                    let (x, y) = (i % w, i / w);
                    if ((x / 64) + (y / 64)) % 2 == 0 {
                        0xff20_40e0
                    } else {
                        0xff00_ff00 | ((x * 255 / w) as u32)
                    }
                })
                .collect();
            let mut out = vec![0f32; px * 4];
            let feeds = [
                Feed::Host(bytemuck::cast_slice(&image)),
                Feed::Host(bytemuck::cast_slice(&params)),
            ];
            for _ in 0..2 {
                let t = Instant::now();
                g.run(
                    px as u64,
                    &feeds,
                    &mut [Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                    &DispatchConfig::default(),
                )
                .unwrap();
                println!("gpu {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            // cpu
            let unpack = |p: u32| {
                [
                    (p & 255) as f32 / 255.0,
                    ((p >> 8) & 255) as f32 / 255.0,
                    ((p >> 16) & 255) as f32 / 255.0,
                    (p >> 24) as f32 / 255.0,
                ]
            };
            let mut rows = vec![[0f32; 4]; px];
            for y in 0..h {
                for x in 0..w {
                    let mut acc = unpack(image[y * w + x]).map(|c| c * wts[0]);
                    for k in 1..=radius {
                        let l = unpack(image[y * w + x.saturating_sub(k)]);
                        let r = unpack(image[y * w + (x + k).min(w - 1)]);
                        for c in 0..4 {
                            acc[c] += wts[k] * (l[c] + r[c]);
                        }
                    }
                    rows[y * w + x] = acc;
                }
            }
            let mut maxerr = 0f32;
            for y in 0..h {
                for x in 0..w {
                    let mut acc = rows[y * w + x].map(|c| c * wts[0]);
                    for k in 1..=radius {
                        let u = rows[y.saturating_sub(k) * w + x];
                        let d = rows[(y + k).min(h - 1) * w + x];
                        for c in 0..4 {
                            acc[c] += wts[k] * (u[c] + d[c]);
                        }
                    }
                    for c in 0..4 {
                        maxerr = maxerr.max((acc[c] - out[(y * w + x) * 4 + c]).abs());
                    }
                }
            }
            println!("max err {maxerr:e}");
        }
        "mlp" => {
            let dense = k(
                "dense",
                include_str!("kernels/mlp/dense.wgsl"),
                "main",
                [16, 16, 1],
                vec![
                    b("x", 0, R, 4),
                    b("w", 1, R, 4),
                    b("b", 2, R, 4),
                    b("y", 3, W, 4),
                ],
            );
            let soft = k(
                "softmax",
                include_str!("kernels/mlp/softmax.wgsl"),
                "main",
                [64, 1, 1],
                vec![b("logits", 0, R, 4), b("probs", 1, W, 4)],
            );
            let I = BufferClass::Input;
            let c = Extent::constant;
            let spec = GraphSpec {
                name: "mlp".into(),
                kernels: vec![dense, soft].into(),
                buffers: vec![
                    buf("x", I, 4, sc(784, 1, 0)),
                    buf("w1", I, 4, c(784 * 256)),
                    buf("b1", I, 4, c(256)),
                    buf("w2", I, 4, c(256 * 128)),
                    buf("b2", I, 4, c(128)),
                    buf("w3", I, 4, c(1280)),
                    buf("b3", I, 4, c(10)),
                    buf("h1", BufferClass::Intermediate, 4, sc(256, 1, 0)),
                    buf("h2", BufferClass::Intermediate, 4, sc(128, 1, 0)),
                    buf("logits", BufferClass::Output, 4, sc(10, 1, 0)),
                    buf("probs", BufferClass::Output, 4, sc(10, 1, 0)),
                ]
                .into(),
                nodes: vec![
                    nd(
                        "l1",
                        0,
                        &[0, 1, 2, 7],
                        DispatchSize::Workgroups([c(16), sc(1, 16, 0), c(1)]),
                        &[("IN", 784.0), ("OUT", 256.0)],
                    ),
                    nd(
                        "l2",
                        0,
                        &[7, 3, 4, 8],
                        DispatchSize::Workgroups([c(8), sc(1, 16, 0), c(1)]),
                        &[("IN", 256.0), ("OUT", 128.0)],
                    ),
                    nd(
                        "l3",
                        0,
                        &[8, 5, 6, 9],
                        DispatchSize::Workgroups([c(1), sc(1, 16, 0), c(1)]),
                        &[("IN", 128.0), ("OUT", 10.0), ("RELU", 0.0)],
                    ),
                    nd("sm", 1, &[9, 10], over(Extent::N), &[]),
                ]
                .into(),
            };
            let g = Graph::new(&gpu, spec).unwrap();
            let batch = n;
            let f = |len: usize, seed: u64, scale: f32| -> Vec<f32> {
                data(len, seed)
                    .iter()
                    .map(|&v| (v as f32 / u32::MAX as f32 * 2.0 - 1.0) * scale)
                    .collect()
            };
            let x: Vec<f32> = data(784 * batch, 1)
                .iter()
                .map(|&v| v as f32 / u32::MAX as f32)
                .collect();
            let (w1, b1, w2, b2, w3, b3) = (
                f(784 * 256, 2, (6.0f32 / 784.0).sqrt()),
                f(256, 3, 0.1),
                f(256 * 128, 4, (6.0f32 / 256.0).sqrt()),
                f(128, 5, 0.1),
                f(1280, 6, (6.0f32 / 128.0).sqrt()),
                f(10, 7, 0.1),
            );
            let mut logits = vec![0f32; 10 * batch];
            let mut probs = vec![0f32; 10 * batch];
            let ins: [&[f32]; 7] = [&x, &w1, &b1, &w2, &b2, &w3, &b3];
            let feeds: Vec<Feed> = ins
                .iter()
                .map(|v| Feed::Host(bytemuck::cast_slice(v)))
                .collect();
            for _ in 0..3 {
                let t = Instant::now();
                g.run(
                    batch as u64,
                    &feeds,
                    &mut [
                        Sink::Host(bytemuck::cast_slice_mut(&mut logits)),
                        Sink::Host(bytemuck::cast_slice_mut(&mut probs)),
                    ],
                    &DispatchConfig::default(),
                )
                .unwrap();
                println!("gpu {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            let dense =
                |x: &[f32], w: &[f32], b: &[f32], inn: usize, out: usize, relu: bool| -> Vec<f32> {
                    let rows = x.len() / inn;
                    let mut y = vec![0f32; rows * out];
                    for r in 0..rows {
                        for c in 0..out {
                            let mut acc = 0f32;
                            for k in 0..inn {
                                acc += x[r * inn + k] * w[k * out + c];
                            }
                            let v = acc + b[c];
                            y[r * out + c] = if relu { v.max(0.0) } else { v };
                        }
                    }
                    y
                };
            let t = Instant::now();
            let h1 = dense(&x, &w1, &b1, 784, 256, true);
            let h2 = dense(&h1, &w2, &b2, 256, 128, true);
            let lg = dense(&h2, &w3, &b3, 128, 10, false);
            println!("cpu {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
            let mut e = 0f32;
            for (a, b) in lg.iter().zip(&logits) {
                e = e.max((a - b).abs());
            }
            println!("logit err {e:e} sample {:?}", &logits[..10]);
            let mut pe = 0f32;
            for r in 0..batch {
                let row = &lg[r * 10..r * 10 + 10];
                let m = row.iter().cloned().fold(f32::MIN, f32::max);
                let s: f32 = row.iter().map(|v| (v - m).exp()).sum();
                for c in 0..10 {
                    pe = pe.max(((row[c] - m).exp() / s - probs[r * 10 + c]).abs());
                }
            }
            println!("prob err {pe:e}");
        }
        _ => println!("?"),
    }
}
