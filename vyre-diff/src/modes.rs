//! Every way to run a graph, each compared with the oracle and (bit for
//! bit, `-0.0` equal to `0.0`) with the unfused graph's `run`: the typed
//! `run`, `Graph::run`, `run_async`, resident outputs, `record` into an
//! encoder, `run_batch` at mixed sizes and stacked, `run_many`.

use vyre_graph::{BackendError, DispatchConfig, Feed, Graph, Instance, Sink};

use crate::case::{Case, Expected, In};
use crate::ctx::Ctx;
use crate::grammar::random::Rng;

/// One run's outputs, in declaration order.
pub type Outputs = Vec<Vec<u8>>;

pub type Typed<'a> = &'a dyn Fn(&[Vec<u8>]) -> Result<Outputs, BackendError>;
pub type Oracle<'a> = &'a dyn Fn(usize, &[Vec<u8>]) -> Vec<Expected>;

/// The last size one dimension of a 64-wide grid holds, and past it.
const FOLD: [u64; 2] = [4_194_240, 4_194_305];

fn sizes(case: &Case, round: u64) -> Vec<u64> {
    let h = case
        .name
        .bytes()
        .fold(round, |a, b| a.wrapping_mul(31) ^ u64::from(b));
    vec![0, 1, 63, 64, 65, 1000 + h % 3000]
}

/// Host inputs of `case` at size `n`, from a seed of its name, `n` and the
/// soak's round.
pub fn inputs(case: &Case, n: u64, round: u64) -> Vec<Vec<u8>> {
    let seed = case
        .name
        .bytes()
        .fold(n ^ (round << 40), |a, b| a.wrapping_mul(131) ^ u64::from(b));
    let mut r = Rng::new(seed);
    let float = |r: &mut Rng| (r.below(65) as f32 - 32.0) / 8.0;
    case.inputs
        .iter()
        .map(|kind| match kind {
            In::U32 => (0..n)
                .flat_map(|_| (r.word() as u32).to_le_bytes())
                .collect(),
            In::I32 => (0..n)
                .flat_map(|_| (r.word() as i32).to_le_bytes())
                .collect(),
            In::F32 => (0..n).flat_map(|_| float(&mut r).to_le_bytes()).collect(),
            In::Uniform => [r.word() as u32, r.word() as u32, float(&mut r).to_bits(), 0]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect(),
        })
        .collect()
}

/// The host outputs' buffer indices.
fn outputs(graph: &Graph) -> Vec<usize> {
    graph.spec().host_outputs().collect()
}

fn empty_outputs(graph: &Graph, n: u64) -> Result<Outputs, BackendError> {
    outputs(graph)
        .into_iter()
        .map(|b| {
            let size = graph.spec().buffers[b].element_size as usize;
            Ok(vec![0u8; graph.buffer_len(b, n)? * size])
        })
        .collect()
}

fn feeds(inputs: &[Vec<u8>]) -> Vec<Feed<'_>> {
    inputs.iter().map(|b| Feed::Host(b)).collect()
}

fn run(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Result<Outputs, BackendError> {
    let mut out = empty_outputs(graph, n)?;
    let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
    graph.run(n, &feeds(inputs), &mut sinks, &DispatchConfig::default())?;
    Ok(out)
}

fn run_async(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Result<Outputs, BackendError> {
    let mut out = empty_outputs(graph, n)?;
    let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
    let config = DispatchConfig::default();
    pollster::block_on(graph.run_async(n, &feeds(inputs), &mut sinks, &config))?;
    Ok(out)
}

fn resident(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Result<Outputs, BackendError> {
    let handles = outputs(graph)
        .into_iter()
        .map(|b| graph.create_buffer(b, n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sinks: Vec<Sink<'_>> = handles.iter().map(Sink::Device).collect();
    graph.run(n, &feeds(inputs), &mut sinks, &DispatchConfig::default())?;
    handles.iter().map(|h| h.read(graph.gpu())).collect()
}

fn record(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Result<Outputs, BackendError> {
    let gpu = graph.gpu();
    let mut out = empty_outputs(graph, n)?;
    let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let config = DispatchConfig::default();
    let recorded = graph.record(&mut encoder, n, &feeds(inputs), &sinks, &config)?;
    let submission = gpu.queue().submit([encoder.finish()]);
    recorded.read(submission, &mut sinks)?;
    drop(sinks);
    Ok(out)
}

/// `instances` as one `run_batch` (`many: None`) or a `run_many` stream of
/// that depth; each instance's outputs or error.
fn batch(
    graph: &Graph,
    instances: &[(u64, Vec<Vec<u8>>)],
    many: Option<usize>,
) -> Vec<Result<Outputs, BackendError>> {
    let mut outs: Vec<Outputs> = match instances
        .iter()
        .map(|(n, _)| empty_outputs(graph, *n))
        .collect()
    {
        Ok(o) => o,
        Err(e) => return vec![Err(e)],
    };
    let mut batch: Vec<Instance<'_>> = instances
        .iter()
        .zip(outs.iter_mut())
        .map(|((n, inputs), out)| {
            let sinks = out.iter_mut().map(|o| Sink::Host(o)).collect();
            Instance::new(*n, feeds(inputs), sinks)
        })
        .collect();
    let config = DispatchConfig::default();
    let results = match many {
        None => match graph.run_batch(&mut batch, &config) {
            Ok(report) => report.runs,
            Err(e) => return vec![Err(e)],
        },
        Some(depth) => graph.run_many(&mut batch, depth, &config),
    };
    drop(batch);
    results
        .into_iter()
        .zip(outs)
        .map(|(r, out)| r.map(|_| out))
        .collect()
}

/// The first difference between `got` and `want`, if any.
fn differs(got: &Outputs, want: &[Expected], names: &[String]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} outputs, want {}", got.len(), want.len()));
    }
    for ((g, w), name) in got.iter().zip(want).zip(names) {
        let elems = |b: &[u8]| b.len() / 4;
        let word = |b: &[u8], i: usize| {
            u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
        };
        match w {
            Expected::Exact { bytes, float } => {
                if g.len() != bytes.len() {
                    return Some(format!(
                        "`{name}` has {} elements, want {}",
                        elems(g),
                        elems(bytes)
                    ));
                }
                for i in 0..elems(g) {
                    let (a, b) = (word(g, i), word(bytes, i));
                    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                    // As numbers for floats: -0.0 equals 0.0, and a NaN any
                    // NaN (WGSL does not say which NaN an operation gives).
                    let same = a == b || (*float && (x == y || (x.is_nan() && y.is_nan())));
                    if !same {
                        return Some(describe(name, i, a, b, *float));
                    }
                }
            }
            Expected::Near { want, tol } => {
                if elems(g) != want.len() {
                    return Some(format!(
                        "`{name}` has {} elements, want {}",
                        elems(g),
                        want.len()
                    ));
                }
                for i in 0..want.len() {
                    let a = f64::from(f32::from_bits(word(g, i)));
                    if (a - want[i]).abs() > tol[i] || a.is_nan() {
                        return Some(format!(
                            "`{name}`[{i}] is {a}, want {} within {}",
                            want[i], tol[i]
                        ));
                    }
                }
            }
        }
    }
    None
}

fn describe(name: &str, i: usize, got: u32, want: u32, float: bool) -> String {
    if float {
        format!(
            "`{name}`[{i}] is {}, want {}",
            f32::from_bits(got),
            f32::from_bits(want)
        )
    } else {
        format!(
            "`{name}`[{i}] is {got} ({} as i32), want {want} ({} as i32)",
            got as i32, want as i32
        )
    }
}

/// The unfused run's bits, as what a fused mode must give exactly.
fn same_bits(base: &Outputs, want: &[Expected]) -> Vec<Expected> {
    base.iter()
        .zip(want)
        .map(|(b, w)| Expected::Exact {
            bytes: b.clone(),
            float: w.is_float(),
        })
        .collect()
}

pub fn check(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    unfused: &Graph,
    typed: Typed<'_>,
    oracle: Oracle<'_>,
) {
    let names: Vec<String> = outputs(fused)
        .into_iter()
        .map(|b| fused.spec().buffers[b].name.to_string())
        .collect();
    let mut all = sizes(case, ctx.round);
    if case.large {
        all.extend(FOLD);
    }
    let mut instances = Vec::new();
    for &n in &all {
        let inputs = inputs(case, n, ctx.round);
        if n == 0 && case.refuses_zero {
            refused_at_zero(ctx, case, fused, unfused, typed, &inputs);
            continue;
        }
        let want = oracle(n as usize, &inputs);
        let compare =
            |ctx: &mut Ctx, mode: &str, got: Result<Outputs, BackendError>, want: &[Expected]| {
                ctx.runs += 1;
                let what = match got {
                    Ok(got) => differs(&got, want, &names),
                    Err(e) => Some(format!("error where the oracle has results: {e}")),
                };
                if let Some(what) = what {
                    ctx.fail(case, mode, n, what);
                }
            };
        let base = run(unfused, n, &inputs);
        let bits = base.as_ref().ok().map(|b| same_bits(b, &want));
        compare(ctx, "unfused run", base, &want);
        let large = FOLD.contains(&n);
        let mut modes: Vec<(&str, Result<Outputs, BackendError>)> = vec![
            ("typed run", typed(&inputs)),
            ("run", run(fused, n, &inputs)),
        ];
        if !large {
            modes.push(("run_async", run_async(fused, n, &inputs)));
            modes.push(("resident", resident(fused, n, &inputs)));
            modes.push(("record", record(fused, n, &inputs)));
            instances.push((n, inputs.clone()));
        }
        for (mode, got) in modes {
            let ok = got.as_ref().ok().cloned();
            compare(ctx, mode, got, &want);
            if let (Some(got), Some(bits)) = (ok, &bits) {
                compare(ctx, &format!("{mode} against unfused"), Ok(got), bits);
            }
        }
    }
    streams(ctx, case, fused, oracle, &names, &instances);
}

/// Every way to run a graph that has no value at `n = 0` refuses it.
fn refused_at_zero(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    unfused: &Graph,
    typed: Typed<'_>,
    inputs: &[Vec<u8>],
) {
    let modes = [
        ("unfused run", run(unfused, 0, inputs)),
        ("typed run", typed(inputs)),
        ("run", run(fused, 0, inputs)),
        ("run_async", run_async(fused, 0, inputs)),
        ("resident", resident(fused, 0, inputs)),
        ("record", record(fused, 0, inputs)),
    ];
    for (mode, got) in modes {
        ctx.runs += 1;
        match got {
            Err(BackendError::InvalidProblemSize { .. }) => {}
            Err(e) => ctx.fail(
                case,
                mode,
                0,
                format!("refused n = 0 with another error: {e}"),
            ),
            Ok(_) => ctx.fail(
                case,
                mode,
                0,
                "ran at n = 0, where an output has no value".into(),
            ),
        }
    }
}

/// `run_batch` and `run_many` over the small sizes at once, and a batch
/// of one size (which stacks when the graph may).
fn streams(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    oracle: Oracle<'_>,
    names: &[String],
    instances: &[(u64, Vec<Vec<u8>>)],
) {
    let same: Vec<(u64, Vec<Vec<u8>>)> = (0..3u64)
        .map(|k| (65, inputs(case, 65, ctx.round + 1 + k)))
        .collect();
    let runs = [
        (
            "run_batch mixed sizes",
            batch(fused, instances, None),
            instances,
        ),
        ("run_batch one size", batch(fused, &same, None), &same[..]),
        ("run_many", batch(fused, instances, Some(3)), instances),
    ];
    for (mode, results, given) in runs {
        if results.len() != given.len() {
            let what = match results.into_iter().next() {
                Some(Err(e)) => format!("the batch failed: {e}"),
                _ => "results for another number of instances".to_owned(),
            };
            ctx.fail(case, mode, 0, what);
            continue;
        }
        for ((n, inputs), got) in given.iter().zip(results) {
            ctx.runs += 1;
            let want = oracle(*n as usize, inputs);
            let what = match got {
                Ok(got) => differs(&got, &want, names),
                Err(e) => Some(format!("error where the oracle has results: {e}")),
            };
            if let Some(what) = what {
                ctx.fail(case, mode, *n, what);
            }
        }
    }
}
