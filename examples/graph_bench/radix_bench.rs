//! The `radix_sort` workload (`examples/radix_sort`'s graph on 1M keys,
//! checked against `sort_unstable`), and `GRAPH_BENCH_PROBE=radix`: where
//! the typed sort's time goes beyond untyped runs of the same spec.

use std::cell::RefCell;
use std::hint::black_box;

use vyre_graph::{DispatchConfig, Gpu};

use crate::measure::{Row, Workload, measure, median, order, random_u32, time_ms, unfused};
use crate::radix::{RadixSort, RadixSortOutputs};

/// The radix sort of 1,048,576 random keys.
pub fn row(gpu: &Gpu, sorter: &RadixSort, quick: bool) -> Result<Row, Box<dyn std::error::Error>> {
    let n = 1_048_576u64;
    let x = random_u32(n as usize, 99);
    let mut expected = x.clone();
    expected.sort_unstable();
    let outputs = RefCell::new(RadixSortOutputs::default());
    let run = |x: &[u32], want: bool, config: &DispatchConfig| {
        let mut out = outputs.borrow_mut();
        let report = sorter.run_into(config, &mut out, x).expect("radix run");
        (want.then(|| out.keys.clone()), report)
    };
    let radix_unfused = vyre_graph::Graph::new(gpu, unfused(&RadixSort::SPEC))?;
    let row = measure(
        gpu,
        &Workload {
            name: "radix_sort",
            n,
            spec: &RadixSort::SPEC,
            input: &x,
            expected: &expected,
            run_graph: &run,
            unfused: &radix_unfused,
            hand_fused: None,
        },
        if quick { 6 } else { 24 },
    );
    println!("measured radix_sort n={n}");
    Ok(row)
}

/// `GRAPH_BENCH_PROBE=radix`: where the typed radix sort's time goes
/// beyond an untyped run of the same spec.
pub fn probe_radix(gpu: &Gpu) -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::var("GRAPH_BENCH_PROBE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let x = random_u32(n as usize, 99);
    let mut expected = x.clone();
    expected.sort_unstable();
    let sorter = RadixSort::new(gpu)?;
    let other = vyre_graph::Graph::new(gpu, RadixSort::SPEC)?;
    let config = DispatchConfig::default();
    let mut outputs = RadixSortOutputs::default();
    let mut out = vec![0u32; n as usize];
    let input: &[u8] = bytemuck::cast_slice(&x);
    sorter.run_into(&config, &mut outputs, &x)?;
    assert_eq!(outputs.keys, expected);
    // The typed API's host work before `Graph::run`, alone (no GPU).
    let feeds = [vyre_graph::Feed::Host(input)];
    let calls = 20_000;
    let pre = time_ms(|| {
        for _ in 0..calls {
            let graph = sorter.graph();
            let m = graph.infer_problem_size(black_box(&feeds)).expect("n");
            graph.check_problem_size(&config, m).expect("size");
            let len = graph.buffer_len(0, m).expect("len");
            vyre_graph::__private::resize_vec(&mut outputs.keys, len, "keys").expect("resize");
        }
    }) * 1e3
        / f64::from(calls);
    println!("probe radix n={n}: typed host work before Graph::run: {pre:.3} µs per run");
    let names = [
        "typed run_into",
        "same graph, untyped run",
        "second graph, untyped run",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut phases: Vec<[Vec<f64>; 7]> = (0..names.len()).map(|_| Default::default()).collect();
    let reps = if n >= 1 << 20 { 30 } else { 90 };
    for rep in 0..reps {
        for v in order(names.len(), rep) {
            let mut report = None;
            let t = time_ms(|| {
                report = Some(match v {
                    0 => sorter.run_into(&config, &mut outputs, &x).expect("typed"),
                    1 => sorter
                        .graph()
                        .run(
                            &config,
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                        )
                        .expect("untyped"),
                    _ => other
                        .run(
                            &config,
                            n,
                            &[vyre_graph::Feed::Host(input)],
                            &mut [vyre_graph::Sink::Host(bytemuck::cast_slice_mut(&mut out))],
                        )
                        .expect("second"),
                });
            });
            times[v].push(t);
            if let Some(r) = report {
                let p = r.phases;
                let values = [
                    p.check_ns,
                    p.plan_ns,
                    p.bind_ns,
                    p.encode_ns,
                    p.submit_ns,
                    p.wait_ns,
                    p.copy_ns,
                ];
                for (value, list) in values.iter().zip(&mut phases[v]) {
                    list.push(*value as f64 / 1e3);
                }
            }
        }
    }
    assert_eq!(out, expected);
    assert_eq!(outputs.keys, expected);
    for (k, name) in names.iter().enumerate() {
        let [check, plan, bind, encode, submit, wait, copy] =
            std::mem::take(&mut phases[k]).map(|mut v| median(&mut v));
        println!(
            "probe radix n={n}: {name:<27} median {:.3} ms; phases µs: check {check:.1}, plan {plan:.1}, bind {bind:.1}, encode {encode:.1}, submit {submit:.1}, wait {wait:.1}, copy {copy:.1}",
            median(&mut times[k])
        );
    }
    Ok(())
}
