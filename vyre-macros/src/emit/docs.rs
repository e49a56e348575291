//! The generated docs: a line per buffer, the `run` functions' docs (each
//! argument, the problem size), and what the user's attributes already
//! say.

use vyre_analysis::BufferClass;
use vyre_analysis::spec::DispatchSize;

use super::textures::doc as texture_doc;
use crate::model::{BufferOut, Extent, GraphAnalysis, ProblemSize, TextureDecl, Written};

pub fn element_doc(b: &BufferOut) -> String {
    let class = match b.class {
        BufferClass::Input => "input",
        BufferClass::InOut => "inout",
        BufferClass::Output => "output",
        BufferClass::Intermediate => "intermediate",
        BufferClass::Uniform => "uniform",
    };
    if let Some(doc) = texture_doc(b, class) {
        doc
    } else if b.class == BufferClass::Uniform {
        format!("`{}` ({class}): one `{}`", b.name, b.element.display())
    } else if b.append.is_some() {
        format!(
            "`{}` (append): up to {} items of `{}`, truncated to its count",
            b.name,
            Written(b.len),
            b.element.display()
        )
    } else if let Some(header) = &b.header {
        format!(
            "`{}` ({class}): a `{}` header, then {} elements of `{}`",
            b.name,
            header.display(),
            Written(b.len),
            b.element.display()
        )
    } else {
        format!(
            "`{}` ({class}): {} elements of `{}`",
            b.name,
            Written(b.len),
            b.element.display()
        )
    }
}

/// The struct's lines about its engine parameter `E`: what it is, what
/// runs on which, and a short example (`text`: a generated doc's code
/// would run as a doctest of the user's crate, where this crate's paths
/// are unknown).
pub fn engine_doc(name: &syn::Ident) -> Vec<String> {
    vec![
        String::new(),
        format!(
            "`E` is the engine that runs its batches: a [`Graph`](vyre_graph::Graph) on one GPU by default (`{name}` is `{name}<Graph>`, made by [`{name}::new`], with every method), or any other [`Engine`](vyre_graph::Engine), such as a device set, given to [`{name}::with_engine`]. On every engine the typed `run_batch`, `run_many` and their `async` twins spread the instances over it; single runs, resident outputs and recording are `{name}<Graph>`'s."
        ),
        String::new(),
        "```text".to_string(),
        format!("let graph = {name}::new(&gpu)?;                      // {name}<Graph>"),
        "let outputs = graph.run_batch(&config, &instances)?;".to_string(),
        format!("let set = {name}::with_engine(GraphSet::new(&gpus, {name}::SPEC)?)?;"),
        "let outputs = set.run_batch(&config, &instances)?;    // spread over the devices"
            .to_string(),
        "```".to_string(),
    ]
}

/// Kernels as declared: `transform/fold.rs` may have added a wrapped copy of one
/// (same label) for its `over` nodes.
pub fn distinct_kernels(a: &GraphAnalysis) -> usize {
    let mut labels: Vec<&str> = a.kernels.iter().map(|k| k.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    labels.len()
}

/// Whether `attrs` hold a `#[derive(..)]` that names `Debug`.
pub fn derives_debug(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if !attr.path().is_ident("derive") {
            return false;
        }
        let mut found = false;
        let _ = attr.parse_nested_meta(|meta| {
            if meta
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Debug")
            {
                found = true;
            }
            Ok(())
        });
        found
    })
}

/// The doc of `run` (what it does, how it gets `n`) and one line per
/// argument: `n` first when it is one, then each host input.
pub fn run_docs(a: &GraphAnalysis, inputs: &[(usize, &BufferOut)]) -> (String, Vec<String>) {
    let n_doc = match a.problem_size {
        ProblemSize::Infer => "The problem size `n` is inferred from the inputs' lengths.",
        ProblemSize::Param => "`n` is the problem size every size of the graph depends on.",
        ProblemSize::Unused => "No size depends on the problem size.",
    };
    let mut args_doc: Vec<String> = Vec::new();
    if a.problem_size == ProblemSize::Param {
        args_doc.push(n_arg_doc(a));
    }
    args_doc.extend(inputs.iter().map(|(_, b)| format!("- {}", element_doc(b))));
    let run_doc = format!(
        "Runs the graph once (uploads the inputs, dispatches every node in one submission, reads back the outputs). {n_doc} Arguments, in order, each a `&[T]`, a `&Vec<T>`, a `&T` (one value) or a `&GpuBufferHandle` (a buffer on the device) of its element type `T`:"
    );
    (run_doc, args_doc)
}

/// The doc line of the `n: u64` argument: what it is, why it is an
/// argument, and the sizes it sets (buffers and textures, else nodes), so
/// that a missing or misplaced `n` is understood at the call.
fn n_arg_doc(a: &GraphAnalysis) -> String {
    let written = |sides: &[Extent]| {
        sides
            .iter()
            .map(|e| Written(*e).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut sets: Vec<String> = a
        .buffers
        .iter()
        .filter_map(|b| match &b.texture {
            Some(TextureDecl::Texture {
                dim, height, depth, ..
            }) => {
                let sides: Vec<Extent> = [b.len, height.extent, depth.extent]
                    .into_iter()
                    .take(dim.sides().len())
                    .collect();
                let depends = sides.iter().any(Extent::depends_on_n);
                depends.then(|| format!("`{}` (`[{}]` texels)", b.name, written(&sides)))
            }
            Some(TextureDecl::Sampler(_)) => None,
            None => b
                .len
                .depends_on_n()
                .then(|| format!("`{}` (`{}` elements)", b.name, Written(b.len))),
        })
        .collect();
    if sets.is_empty() {
        sets = a
            .nodes
            .iter()
            .filter_map(|n| match n.size {
                DispatchSize::Invocations(e) if e.depends_on_n() => Some(format!(
                    "node `{}` (over `{}` invocations)",
                    n.label,
                    Written(e)
                )),
                DispatchSize::Workgroups(es) if es.iter().any(Extent::depends_on_n) => {
                    Some(format!(
                        "node `{}` (a grid of `[{}]` workgroups)",
                        n.label,
                        written(&es)
                    ))
                }
                _ => None,
            })
            .take(4)
            .collect();
    }
    format!(
        "- `n`: the problem size, a `u64` of at least 1. No input's length gives it, so it is the first argument; it sizes {}",
        crate::diag::list_raw(sets)
    )
}
