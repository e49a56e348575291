//! Every untyped way to run a graph (`Graph::run` with host or device
//! sinks, `run_async`, `record` into an encoder, `run_batch`, `run_many`),
//! each giving the outputs' bytes (an append output cut to its items) and,
//! where the run reports them, what its loops did; and the problem sizes
//! and inputs of a case.

use vyre_graph::{BackendError, DispatchConfig, Feed, Graph, Instance, LoopBound, RunReport, Sink};

use crate::case::{Case, In};
use crate::compare::{Outputs, items, outputs};
use crate::grammar::rng::Rng;

/// Each loop's iterations that did work and whether it stopped.
pub type Loops = Vec<(u32, bool)>;

/// A run's outputs and, where the mode reports them, its loops.
pub type Ran = Result<(Outputs, Option<Loops>), BackendError>;

/// The last size one dimension of a 64-wide grid holds, and past it.
pub const FOLD: [u64; 2] = [4_194_240, 4_194_305];

pub fn sizes(case: &Case, round: u64) -> Vec<u64> {
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
            In::Struct => (0..n)
                .flat_map(|_| {
                    let w = [r.word() as u32, r.word() as u32, float(&mut r).to_bits()];
                    w.into_iter().flat_map(u32::to_le_bytes)
                })
                .collect(),
            In::Uniform => [r.word() as u32, r.word() as u32, float(&mut r).to_bits(), 0]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect(),
        })
        .collect()
}

/// The error itself, out of a batch's wrapper.
pub fn root(e: &BackendError) -> &BackendError {
    match e {
        BackendError::BatchInstance { source, .. } => root(source),
        e => e,
    }
}

/// `f`, and once more when it failed with an overflow of a `grow` append
/// buffer that has grown for `n` since (the untyped API leaves that repeat
/// to its caller).
pub fn again<T>(
    graph: &Graph,
    n: u64,
    f: impl Fn() -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    match f() {
        Err(e) if graph.grew_for(root(&e), n) => f(),
        r => r,
    }
}

/// Zeroed host outputs of the sizes the graph's plan for `n` has now.
fn empty_outputs(graph: &Graph, n: u64) -> Result<Outputs, BackendError> {
    outputs(graph)
        .into_iter()
        .map(|b| Ok(vec![0u8; graph.buffer_bytes(b, n)? as usize]))
        .collect()
}

fn feeds(inputs: &[Vec<u8>]) -> Vec<Feed<'_>> {
    inputs.iter().map(|b| Feed::Host(b)).collect()
}

fn loops(report: &RunReport) -> Loops {
    report
        .loops
        .iter()
        .map(|l| (l.iterations, l.stopped))
        .collect()
}

/// `Graph::run` into host sinks under `config`.
pub fn run(graph: &Graph, n: u64, inputs: &[Vec<u8>], config: &DispatchConfig) -> Ran {
    again(graph, n, || {
        let mut out = empty_outputs(graph, n)?;
        let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
        let report = graph.run(config, n, &feeds(inputs), &mut sinks)?;
        drop(sinks);
        Ok((items(graph, out), Some(loops(&report))))
    })
}

/// `Graph::run` with every loop recorded whole.
pub fn run_full(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Ran {
    let config = DispatchConfig::default().with_loop_bound(LoopBound::Full);
    run(graph, n, inputs, &config)
}

pub fn run_async(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Ran {
    again(graph, n, || {
        let mut out = empty_outputs(graph, n)?;
        let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
        let config = DispatchConfig::default();
        let report = pollster::block_on(graph.run_async(&config, n, &feeds(inputs), &mut sinks))?;
        drop(sinks);
        Ok((items(graph, out), Some(loops(&report))))
    })
}

/// Outputs into resident buffers (`create_buffer`, `Sink::Device`), read.
pub fn resident(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Ran {
    again(graph, n, || {
        let handles = outputs(graph)
            .into_iter()
            .map(|b| graph.create_buffer(b, n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sinks: Vec<Sink<'_>> = handles.iter().map(Sink::Device).collect();
        graph.run(&DispatchConfig::default(), n, &feeds(inputs), &mut sinks)?;
        let raw = handles
            .iter()
            .map(|h| h.read(graph.gpu()))
            .collect::<Result<Outputs, _>>()?;
        Ok((items(graph, raw), None))
    })
}

/// `Graph::record` into an encoder, submitted, then `RecordedRun::read`.
pub fn record(graph: &Graph, n: u64, inputs: &[Vec<u8>]) -> Ran {
    again(graph, n, || {
        let gpu = graph.gpu();
        let mut out = empty_outputs(graph, n)?;
        let mut sinks: Vec<Sink<'_>> = out.iter_mut().map(|o| Sink::Host(o)).collect();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        let config = DispatchConfig::default();
        let recorded = graph.record(&mut encoder, &config, n, &feeds(inputs), &sinks)?;
        let submission = gpu.queue().submit([encoder.finish()]);
        let report = recorded.read(submission, &mut sinks)?;
        drop(sinks);
        Ok((items(graph, out), Some(loops(&report))))
    })
}

/// `instances` as one `run_batch` (`many: None`) or a `run_many` stream of
/// that depth; each instance's outputs or error. Run once more when an
/// instance's `grow` buffer overflowed and has grown since (the same
/// batch then fits).
pub fn batch(
    graph: &Graph,
    instances: &[(u64, Vec<Vec<u8>>)],
    many: Option<usize>,
) -> Vec<Result<Outputs, BackendError>> {
    let first = batch_once(graph, instances, many);
    let grew = first.iter().zip(instances).any(|(r, (n, _))| {
        r.as_ref()
            .err()
            .is_some_and(|e| graph.grew_for(root(e), *n))
    });
    if grew {
        batch_once(graph, instances, many)
    } else {
        first
    }
}

fn batch_once(
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
        None => match graph.run_batch(&config, &mut batch) {
            Ok(report) => report.runs,
            Err(e) => return vec![Err(e)],
        },
        Some(depth) => graph.run_many(&config, depth, &mut batch),
    };
    drop(batch);
    results
        .into_iter()
        .zip(outs)
        .map(|(r, out)| r.map(|_| items(graph, out)))
        .collect()
}
