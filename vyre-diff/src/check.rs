//! One case checked: every way to run at every size, each against the
//! oracle (results, the overflow it predicts, what the loops report) and,
//! bit for bit, against the unfused graph's `run`.

use vyre_graph::{BackendError, DispatchConfig, Graph};

use crate::case::{Case, Want};
use crate::compare::{Outputs, differs, items, outputs, same_bits};
use crate::ctx::Ctx;
use crate::modes::{
    FOLD, Loops, Ran, batch, inputs, record, resident, root, run, run_async, run_full, sizes,
};

/// A typed call of the generated graph's API at a size: outputs as bytes.
pub type TypedAt<'a> = &'a dyn Fn(u64, &[Vec<u8>]) -> Result<Outputs, BackendError>;
/// The typed `run_batch` over `(n, inputs)` instances.
pub type TypedBatch<'a> = &'a dyn Fn(&[(u64, Vec<Vec<u8>>)]) -> Result<Vec<Outputs>, BackendError>;
/// What a case's oracle says a run at `n` over `inputs` must give.
pub type Oracle<'a> = &'a dyn Fn(usize, &[Vec<u8>]) -> Want;

/// The typed API of a case's graph, as its module wraps it.
pub struct Api<'a> {
    /// `run`.
    pub run: TypedAt<'a>,
    /// `run_resident`, its handles read.
    pub resident: Option<TypedAt<'a>>,
    /// `resident_outputs`, `record` into an encoder, `finish`, read.
    pub record: Option<TypedAt<'a>>,
    /// `run_batch`.
    pub batch: Option<TypedBatch<'a>>,
}

/// One instance's result in a batch, `None` where it is not compared.
type Instanced = Option<Result<Outputs, BackendError>>;

/// What a run gave against what it must give: `None` when they agree.
fn verdict(got: &Ran, want: &Want, names: &[String], n: u64) -> Option<String> {
    if let Some((buffer, count)) = want.overflow {
        return match got {
            Err(e) => match root(e) {
                BackendError::AppendOverflow {
                    buffer: b,
                    count: c,
                    ..
                } if b == buffer && *c == count => None,
                e => Some(format!(
                    "{e}, where `{buffer}` overflows with {count} items"
                )),
            },
            Ok(_) => Some(format!(
                "results where `{buffer}` overflows with {count} items"
            )),
        };
    }
    match got {
        Ok((out, loops)) => differs(out, &want.outputs, names).or_else(|| {
            let loops = loops.as_ref().filter(|_| n > 0)?;
            (loops != &want.loops).then(|| {
                format!(
                    "loops reported (iterations, stopped) {loops:?}, want {:?}",
                    want.loops
                )
            })
        }),
        Err(e) => Some(format!("error where the oracle has results: {e}")),
    }
}

/// A typed call: `run` gives an append output's items already; the
/// resident calls give its buffer (`raw`), cut to the items here. Not
/// repeated after an overflow of a `grow` buffer: the typed calls repeat
/// such a run themselves, and the repeat must fit.
fn typed(f: TypedAt<'_>, graph: &Graph, n: u64, inputs: &[Vec<u8>], raw: bool) -> Ran {
    f(n, inputs).map(|o| (if raw { items(graph, o) } else { o }, None))
}

pub fn check(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    unfused: &Graph,
    api: &Api<'_>,
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
    let config = DispatchConfig::default();
    let mut instances = Vec::new();
    for &n in &all {
        let inputs = inputs(case, n, ctx.round);
        if n == 0 && case.refuses_zero {
            refused_at_zero(ctx, case, fused, unfused, api, &inputs);
            continue;
        }
        let want = oracle(n as usize, &inputs);
        let base = run(unfused, n, &inputs, &config);
        let bits = match &base {
            Ok((b, _)) if want.overflow.is_none() => Some(Want {
                outputs: same_bits(b, &want.outputs),
                ..want.clone()
            }),
            _ => None,
        };
        let large = FOLD.contains(&n);
        let mut modes: Vec<(&str, Ran)> = vec![
            ("unfused run", base),
            ("typed run", typed(api.run, fused, n, &inputs, false)),
            ("run", run(fused, n, &inputs, &config)),
        ];
        if !want.loops.is_empty() {
            modes.push(("run, loops recorded whole", run_full(fused, n, &inputs)));
        }
        if !large {
            modes.push(("run_async", run_async(fused, n, &inputs)));
            modes.push(("resident", resident(fused, n, &inputs)));
            modes.push(("record", record(fused, n, &inputs)));
            if let Some(f) = api.resident {
                modes.push(("typed run_resident", typed(f, fused, n, &inputs, true)));
            }
            if let Some(f) = api.record {
                modes.push(("typed record", typed(f, fused, n, &inputs, true)));
            }
            instances.push((n, inputs.clone()));
        }
        for (mode, got) in modes {
            ctx.runs += 1;
            if let Some(what) = verdict(&got, &want, &names, n) {
                ctx.fail(case, mode, n, what);
            } else if let (Some(bits), true) = (&bits, mode != "unfused run")
                && let Some(what) = verdict(&got, bits, &names, n)
            {
                ctx.fail(case, &format!("{mode} against unfused"), n, what);
            }
        }
    }
    streams(ctx, case, fused, api, oracle, &names, &instances);
}

/// Every way to run a graph that has no value at `n = 0` refuses it.
fn refused_at_zero(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    unfused: &Graph,
    api: &Api<'_>,
    inputs: &[Vec<u8>],
) {
    let config = DispatchConfig::default();
    let mut modes = vec![
        ("unfused run", run(unfused, 0, inputs, &config)),
        ("typed run", typed(api.run, fused, 0, inputs, false)),
        ("run", run(fused, 0, inputs, &config)),
        ("run_async", run_async(fused, 0, inputs)),
        ("resident", resident(fused, 0, inputs)),
        ("record", record(fused, 0, inputs)),
    ];
    if let Some(f) = api.resident {
        modes.push(("typed run_resident", typed(f, fused, 0, inputs, true)));
    }
    if let Some(f) = api.record {
        modes.push(("typed record", typed(f, fused, 0, inputs, true)));
    }
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

/// `run_batch` and `run_many` (untyped, and the typed `run_batch`) over
/// the small sizes at once, and a batch of one size (which stacks when
/// the graph may).
fn streams(
    ctx: &mut Ctx,
    case: &Case,
    fused: &Graph,
    api: &Api<'_>,
    oracle: Oracle<'_>,
    names: &[String],
    instances: &[(u64, Vec<Vec<u8>>)],
) {
    let same: Vec<(u64, Vec<Vec<u8>>)> = (0..3u64)
        .map(|k| (65, inputs(case, 65, ctx.round + 1 + k)))
        .collect();
    let every = |v: Vec<Result<Outputs, BackendError>>| v.into_iter().map(Some).collect();
    let mut runs: Vec<(&str, Vec<Instanced>, &[_])> = vec![
        (
            "run_batch mixed sizes",
            every(batch(fused, instances, None)),
            instances,
        ),
        (
            "run_batch one size",
            every(batch(fused, &same, None)),
            &same[..],
        ),
        (
            "run_many",
            every(batch(fused, instances, Some(3))),
            instances,
        ),
    ];
    if let Some(f) = api.batch {
        runs.push((
            "typed run_batch",
            typed_batch(f, fused, instances, oracle),
            instances,
        ));
    }
    for (mode, results, given) in runs {
        if results.len() != given.len() {
            let what = match results.into_iter().next() {
                Some(Some(Err(e))) => format!("the batch failed: {e}"),
                _ => "results for another number of instances".to_owned(),
            };
            ctx.fail(case, mode, 0, what);
            continue;
        }
        for ((n, inputs), got) in given.iter().zip(results) {
            let Some(got) = got else { continue };
            ctx.runs += 1;
            let want = oracle(*n as usize, inputs);
            let got: Ran = got.map(|o| (o, None::<Loops>));
            if let Some(what) = verdict(&got, &want, names, *n) {
                ctx.fail(case, mode, *n, what);
            }
        }
    }
}

/// The typed `run_batch` (repeated once after a `grow` buffer grew), as
/// one result per instance. The typed call returns the first error only:
/// it stands for the instances the oracle says overflow (or for every
/// instance when none does), and the others are not compared (`None`).
fn typed_batch(
    f: TypedBatch<'_>,
    graph: &Graph,
    instances: &[(u64, Vec<Vec<u8>>)],
    oracle: Oracle<'_>,
) -> Vec<Instanced> {
    let ran = match f(instances) {
        Err(e) if instances.iter().any(|(n, _)| graph.grew_for(root(&e), *n)) => f(instances),
        r => r,
    };
    match ran {
        Ok(outs) => outs.into_iter().map(|o| Some(Ok(o))).collect(),
        Err(e) => {
            let overflows: Vec<bool> = instances
                .iter()
                .map(|(n, i)| oracle(*n as usize, i).overflow.is_some())
                .collect();
            let any = overflows.contains(&true);
            let mut error = Some(e);
            overflows
                .iter()
                .map(|&o| {
                    if o || !any {
                        error.take().map(Err)
                    } else {
                        None
                    }
                })
                .collect()
        }
    }
}
