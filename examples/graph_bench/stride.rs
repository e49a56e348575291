//! `GRAPH_BENCH_STRIDE=1`: fused groups on their plain grid against
//! grid-stride loops on fewer workgroups, per workload and size.
//!
//! Each workload runs with `GridStride::Never`, `Auto`, `Always` and fixed
//! workgroup counts, in a new shuffled order every repetition; every mode's
//! output is first checked byte for byte against `Never`'s (itself checked
//! against the CPU for chain64). Reported: median host time of a whole run
//! (upload and readback included), median GPU time of the pass (timestamps,
//! where the adapter has them) and the workgroups the largest dispatch
//! launched.

use std::cell::RefCell;

use vyre_graph::{DispatchConfig, Gpu, GridStride, RunReport};

use crate::chains::{Chain64, Chain64Outputs, chain_reference};
use crate::image;
use crate::measure::{median, order, random_u32, time_ms};

/// One mode's medians on one workload.
struct Measured {
    workload: &'static str,
    n: u64,
    mode: GridStride,
    worker_groups: u32,
    host_ms: f64,
    gpu_ms: Option<f64>,
}

type Run<'a> = dyn Fn(&DispatchConfig) -> (Vec<u8>, RunReport) + 'a;

fn modes() -> Vec<GridStride> {
    let counts: Vec<u32> = std::env::var("GRAPH_BENCH_STRIDE_WORKGROUPS")
        .ok()
        .map(|s| s.split(',').filter_map(|c| c.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![8, 64, 512]);
    let mut modes = vec![GridStride::Never, GridStride::Auto, GridStride::Always];
    modes.extend(counts.into_iter().map(GridStride::Workgroups));
    modes
}

fn measure(workload: &'static str, n: u64, reps: usize, run: &Run<'_>) -> Vec<Measured> {
    let modes = modes();
    let configs: Vec<DispatchConfig> = modes
        .iter()
        .map(|&m| DispatchConfig::default().with_grid_stride(m))
        .collect();
    let (plain, _) = run(&configs[0]);
    for (mode, config) in modes.iter().zip(&configs) {
        let (got, _) = run(config);
        assert!(
            got == plain,
            "{workload} n={n}: {mode:?} differs from Never"
        );
    }
    let mut host: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut gpu: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut worker_groups = vec![0; modes.len()];
    for rep in 0..reps {
        for k in order(modes.len(), rep) {
            host[k].push(time_ms(|| {
                let (_, report) = run(&configs[k]);
                worker_groups[k] = report.plan.worker_groups;
            }));
        }
    }
    // GPU time in runs of its own (profiling adds queries and a resolve).
    for rep in 0..reps.min(9) {
        for k in order(modes.len(), rep) {
            let (_, report) = run(&configs[k].clone().with_profile(true));
            if let Some(ns) = report.gpu_ns {
                gpu[k].push(ns as f64 / 1e6);
            }
        }
    }
    modes
        .iter()
        .enumerate()
        .map(|(k, &mode)| Measured {
            workload,
            n,
            mode,
            worker_groups: worker_groups[k],
            host_ms: median(&mut host[k]),
            gpu_ms: (!gpu[k].is_empty()).then(|| median(&mut gpu[k])),
        })
        .collect()
}

/// The image pipeline's input at `pixels` pixels (512 wide).
fn picture(pixels: usize) -> Vec<[f32; 4]> {
    (0..pixels)
        .map(|i| {
            let x = (i % 512) as f32 / 512.0;
            let y = (i / 512) as f32 / (pixels / 512).max(1) as f32;
            [x, y, (x * 7.0 + y * 3.0).fract(), 1.0]
        })
        .collect()
}

pub fn run(gpu: &Gpu, quick: bool, json: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "grid-stride workgroups on this adapter (Auto): {} at workgroup size 64, {} at 256",
        gpu.grid_stride_workgroups(64),
        gpu.grid_stride_workgroups(256)
    );
    let mut rows = Vec::new();
    let sizes: &[u64] = if quick {
        &[65_536, 1_048_576]
    } else {
        &[1024, 65_536, 1_048_576, 4_194_304]
    };
    for &n in sizes {
        let reps = if n >= 1 << 20 { 7 } else { 31 };
        let reps = if quick { reps.min(7) } else { reps };
        let x = random_u32(n as usize, n);
        let chain = Chain64::new(gpu)?;
        let outputs = RefCell::new(Chain64Outputs::default());
        let run = |config: &DispatchConfig| {
            let mut out = outputs.borrow_mut();
            let report = chain.run_into(config, &mut out, &x).expect("chain run");
            (bytemuck::cast_slice(&out.y).to_vec(), report)
        };
        let (plain, _) = run(&DispatchConfig::default().with_grid_stride(GridStride::Never));
        assert!(
            plain == bytemuck::cast_slice::<u32, u8>(&chain_reference(&x)),
            "chain64: plain differs from the CPU"
        );
        rows.extend(measure("chain64", n, reps, &run));
        println!("measured chain64 n={n}");

        let pixels = (n as usize / 512).max(1) * 512;
        let pipeline = image::Pipeline::new(gpu)?;
        let input = picture(pixels);
        let tone = image::Tone {
            brightness: 0.05,
            contrast: 1.2,
            gamma: 2.2,
            width: 512,
        };
        let run = |config: &DispatchConfig| {
            let (out, report) = pipeline
                .run_reported(config, &input, &tone)
                .expect("image run");
            (bytemuck::cast_slice(&out.out).to_vec(), report)
        };
        rows.extend(measure("image", pixels as u64, reps, &run));
        println!("measured image n={pixels}");
    }
    println!();
    println!(
        "{:<8} {:>9} {:<18} {:>8} {:>10} {:>10} {:>12}",
        "workload", "n", "mode", "wgroups", "host ms", "gpu ms", "host/Never"
    );
    for r in &rows {
        let never = rows
            .iter()
            .find(|o| o.workload == r.workload && o.n == r.n && o.mode == GridStride::Never)
            .map_or(f64::NAN, |o| o.host_ms);
        println!(
            "{:<8} {:>9} {:<18} {:>8} {:>10.3} {:>10} {:>12.3}",
            r.workload,
            r.n,
            format!("{:?}", r.mode),
            r.worker_groups,
            r.host_ms,
            r.gpu_ms
                .map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}")),
            r.host_ms / never
        );
    }
    if let Some(path) = json {
        let mut text = String::from("{\n");
        text.push_str(&format!(
            "  \"adapter\": \"{}\",\n  \"quick\": {quick},\n  \"grid_stride\": [\n",
            crate::measure::json_escape(&gpu.adapter().to_string())
        ));
        for (i, r) in rows.iter().enumerate() {
            text.push_str(&format!(
                "    {{\"workload\": \"{}\", \"n\": {}, \"mode\": \"{:?}\", \"worker_groups\": {}, \"host_ms\": {:.4}, \"gpu_ms\": {}}}{}\n",
                r.workload,
                r.n,
                r.mode,
                r.worker_groups,
                r.host_ms,
                r.gpu_ms
                    .map_or_else(|| "null".to_string(), |v| format!("{v:.4}")),
                if i + 1 < rows.len() { "," } else { "" }
            ));
        }
        text.push_str("  ]\n}\n");
        std::fs::write(path, text)?;
        println!("wrote {path}");
    }
    Ok(())
}
