//! Device sets (`docs/device-sets.md`), measured two ways:
//!
//! - **one device**: the same batch through `Graph::run_batch` and through
//!   a `GraphSet` of that one device (same `Gpu`), interleaved in a new
//!   order every repetition; the median of each and the median ratio
//!   (set / graph, same repetition). Target: at most 1.05.
//! - **scaling**: one large batch on sets of 1, 2, 4 and 8 devices:
//!   different adapters when there are that many, else (one adapter)
//!   that many devices of the one adapter, labelled `shared`: on a CPU
//!   adapter such as lavapipe they share the same cores, so no speed-up is
//!   expected there; on a multi-GPU machine the goal is at least 0.9 × N
//!   times one device.
//!
//! Every result is checked against the CPU before timing.
//!
//! ```text
//! cargo run --release --example set_bench -- [--quick] [--reps 9] [--json PATH]
//! ```

use std::time::Instant;

use vyre_graph::{
    DispatchConfig, Engine, Feed, Gpu, GpuFilter, Gpus, GraphSet, Instance, Sink, graph,
};

graph! {
    /// Sixteen LCG steps per element: stackable, compute-bound enough to
    /// keep a device busy.
    pub struct Steps;

    kernel steps = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) {
                var v = x[g.x];
                for (var k = 0u; k < 16u; k++) { v = v * 1664525u + 1013904223u; }
                y[g.x] = v;
            }
        }
    };

    input x[n];
    output y[n];
    node steps(x: x, y: y) over n;
}

fn reference(x: u32) -> u32 {
    (0..16).fold(x, |v, _| {
        v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
    })
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// `b` inputs of `n` elements.
fn inputs(b: usize, n: usize) -> Vec<Vec<u32>> {
    (0..b)
        .map(|k| {
            (0..n as u32)
                .map(|i| i ^ (k as u32).wrapping_mul(2_654_435_761))
                .collect()
        })
        .collect()
}

/// Run `xs` as one batch on `engine` into `ys`; seconds.
fn batch<E: Engine>(
    engine: &E,
    xs: &[Vec<u32>],
    ys: &mut [Vec<u32>],
) -> Result<f64, vyre_graph::BackendError> {
    let mut instances: Vec<Instance<'_>> = xs
        .iter()
        .zip(ys.iter_mut())
        .map(|(x, y)| {
            Instance::new(
                x.len() as u64,
                vec![Feed::Host(bytemuck::cast_slice(x))],
                vec![Sink::from(y)],
            )
        })
        .collect();
    let start = Instant::now();
    let report = engine.run_batch(&DispatchConfig::default(), &mut instances)?;
    let seconds = start.elapsed().as_secs_f64();
    for run in report.runs {
        run?;
    }
    Ok(seconds)
}

fn check(xs: &[Vec<u32>], ys: &[Vec<u32>]) -> Result<(), String> {
    for (k, (x, y)) in xs.iter().zip(ys).enumerate() {
        if y.len() != x.len() {
            return Err(format!(
                "instance {k}: {} elements, expected {}",
                y.len(),
                x.len()
            ));
        }
        if let Some(i) = (0..x.len()).find(|&i| y[i] != reference(x[i])) {
            return Err(format!(
                "instance {k}, element {i}: {} but the CPU says {}",
                y[i],
                reference(x[i])
            ));
        }
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The device sets of the scaling part: `(devices, label, gpus)`.
fn scaling_sets(
    adapters: &Gpus,
) -> Result<Vec<(usize, &'static str, Gpus)>, vyre_graph::BackendError> {
    let mut sets = Vec::new();
    for n in [1usize, 2, 4, 8] {
        if n <= adapters.len() {
            let gpus: Vec<Gpu> = adapters.iter().take(n).cloned().collect();
            sets.push((n, "adapters", Gpus::from_gpus(gpus)?));
        } else if adapters.len() == 1 {
            let filter = GpuFilter::default().with_devices_per_adapter(n);
            sets.push((n, "shared", Gpus::open(&filter)?));
        }
    }
    Ok(sets)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let reps: usize = arg(&args, "--reps").map_or(Ok(if quick { 7 } else { 15 }), |s| s.parse())?;
    let adapters = Gpus::open(&GpuFilter::default())?;
    let gpu = adapters.get(0).ok_or("no device")?.clone();
    println!("adapter: {} ({} adapters)", gpu.adapter(), adapters.len());

    // One device: Graph::run_batch against a set of that device.
    let (b, n) = if quick { (64, 1024) } else { (256, 4096) };
    let graph = Steps::new(&gpu)?;
    let set = GraphSet::new(&Gpus::from_gpus(vec![gpu.clone()])?, Steps::SPEC)?;
    let xs = inputs(b, n);
    let mut ys = vec![Vec::new(); b];
    batch(graph.graph(), &xs, &mut ys)?;
    check(&xs, &ys)?;
    ys.iter_mut().for_each(Vec::clear);
    batch(&set, &xs, &mut ys)?;
    check(&xs, &ys)?;
    let (mut on_graph, mut on_set, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let (g, s) = if rep % 2 == 0 {
            let g = batch(graph.graph(), &xs, &mut ys)?;
            (g, batch(&set, &xs, &mut ys)?)
        } else {
            let s = batch(&set, &xs, &mut ys)?;
            (batch(graph.graph(), &xs, &mut ys)?, s)
        };
        on_graph.push(g * 1e3);
        on_set.push(s * 1e3);
        ratios.push(s / g);
    }
    let (graph_ms, set_ms, ratio) = (
        median(&mut on_graph),
        median(&mut on_set),
        median(&mut ratios),
    );
    println!(
        "one device, {b} instances of {n}: Graph::run_batch {graph_ms:.3} ms, GraphSet {set_ms:.3} ms, ratio {ratio:.3}"
    );

    // Scaling: one large batch on 1, 2, 4, 8 devices.
    let (b, n) = if quick { (32, 1 << 16) } else { (64, 1 << 20) };
    let xs = inputs(b, n);
    let mut rows = Vec::new();
    let mut one = f64::NAN;
    for (devices, label, gpus) in scaling_sets(&adapters)? {
        let set = GraphSet::new(&gpus, Steps::SPEC)?;
        let mut ys = vec![Vec::new(); b];
        batch(&set, &xs, &mut ys)?;
        check(&xs, &ys)?;
        let mut times: Vec<f64> = (0..reps.min(7))
            .map(|_| batch(&set, &xs, &mut ys))
            .collect::<Result<_, _>>()?;
        let ms = median(&mut times) * 1e3;
        let rate = (b * n) as f64 / (ms / 1e3);
        if devices == 1 {
            one = rate;
        }
        println!(
            "{devices} devices ({label}): {b} instances of {n}: {ms:.2} ms, {:.3e} elements/s, {:.2}x one device",
            rate,
            rate / one
        );
        rows.push(format!(
            "    {{ \"devices\": {devices}, \"kind\": \"{label}\", \"ms\": {ms:.3}, \"elements_per_second\": {rate:.0}, \"speedup\": {:.3} }}",
            rate / one
        ));
    }
    if let Some(path) = arg(&args, "--json") {
        let adapter = gpu
            .adapter()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let json = format!(
            "{{\n  \"adapter\": \"{adapter}\",\n  \"adapters\": {},\n  \"quick\": {quick},\n  \"repetitions\": {reps},\n  \"method\": \"one device: Graph::run_batch and a GraphSet of the same Gpu on the same batch, alternating order, medians; ratio = median of set/graph per repetition. scaling: median wall time of one batch; 'shared' = devices of one adapter (on a CPU adapter they share the cores)\",\n  \"one_device\": {{ \"instances\": {}, \"n\": {}, \"graph_ms\": {graph_ms:.4}, \"set_ms\": {set_ms:.4}, \"ratio\": {ratio:.4} }},\n  \"scaling\": {{ \"instances\": {b}, \"n\": {n}, \"rows\": [\n{}\n  ] }}\n}}\n",
            adapters.len(),
            if quick { 64 } else { 256 },
            if quick { 1024 } else { 4096 },
            rows.join(",\n")
        );
        std::fs::write(&path, json)?;
        println!("wrote {path}");
    }
    Ok(())
}
