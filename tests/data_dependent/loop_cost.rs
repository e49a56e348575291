//! What a self-stopping loop costs against the same work unrolled on the
//! host: `repeat up to 10 .. until zero(flag)` stopping after 3 iterations
//! against `repeat 3`, checked equal element by element, timed (medians of
//! 20 runs after 5 warm-ups; printed, not judged). Run with
//! `cargo test --release --test data_dependent loop_cost -- --nocapture`.

use crate::common;
use common::*;
use std::time::Instant;
use vyre_graph::DispatchConfig;

mod g {
    use vyre_graph::graph;
    graph! {
        /// Decrements to 0; stops when nothing is left (at most 10).
        pub struct Looped;
        kernel dec = wgsl {
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };
        inout v[n];
        intermediate flag[1];
        repeat up to 10 as i until zero(flag) { node dec(v: v, flag: flag) over n; }
    }
}
mod h {
    use vyre_graph::graph;
    graph! {
        /// Decrements three times.
        pub struct Fixed;
        kernel dec = wgsl {
            @group(0) @binding(0) var<storage, read_write> v: array<u32>;
            @group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&v) {
                    let left = max(v[g.x], 1u) - 1u;
                    v[g.x] = left;
                    if left > 0u { atomicMax(&flag[0], 1u); }
                }
            }
        };
        inout v[n];
        inout flag[1];
        repeat 3 as i { node dec(v: v, flag: flag) over n unfused; }
    }
}

/// The CPU reference: three decrements, saturating at 0.
fn out2_reference(v: &[u32]) -> Vec<u32> {
    v.iter().map(|&x| x.saturating_sub(3)).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("run"));
    v[v.len() / 2]
}

#[test]
fn a_loop_stopping_after_3_of_10_against_repeat_3() {
    let _serial = serial();
    let gpu = gpu();
    let looped = g::Looped::new(&gpu).expect("run");
    let fixed = h::Fixed::new(&gpu).expect("run");
    for n in [1024usize, 65536, 1 << 20] {
        let v: Vec<u32> = (0..n as u32).map(|i| i % 4).collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let cfg = DispatchConfig::default();
        for rep in 0..25 {
            let t = Instant::now();
            let (out, rep_l) = looped.run_reported(&cfg, &v).expect("run");
            let ta = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let out2 = fixed.run(&v, &[0u32][..]).expect("run");
            let tb = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(out.v, out2.v);
            assert_eq!(rep_l.loops[0].iterations, 3);
            if rep >= 5 {
                a.push(ta);
                b.push(tb);
            }
        }
        println!(
            "n = {n}: loop up to 10 stopping after 3: {:.3} ms median; fixed repeat 3: {:.3} ms median",
            median(a),
            median(b)
        );
        // Where the time goes: the recording on the host, and the GPU time
        // of the pass (medians of 9 profiled runs; none where the device
        // has no timestamps).
        let profiled = DispatchConfig::default().with_profile(true);
        let (mut record, mut pass) = (Vec::new(), Vec::new());
        for _ in 0..9 {
            let (out, rep_l) = looped.run_reported(&profiled, &v).expect("run");
            assert_eq!(out.v, out2_reference(&v));
            record.push(rep_l.record_ns as f64 / 1e3);
            if let Some(ns) = rep_l.gpu_ns {
                pass.push(ns as f64 / 1e3);
            }
        }
        let gpu = if pass.is_empty() {
            "no timestamps".to_string()
        } else {
            format!("{:.1} us", median(pass))
        };
        println!(
            "n = {n}: loop up to 10 stopping after 3: recording {:.1} us, GPU pass {gpu} (median of 9 profiled runs)",
            median(record)
        );
    }
}
