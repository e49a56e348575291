//! The compile-time checked `graph!` macro of vyre. Use it through
//! `vyre_graph::graph!`; the generated code needs the `vyre_graph` runtime.
//!
//! The macro is a pipeline of six stages, one folder each, each taking
//! the previous stage's output as proof that it succeeded; a stage imports
//! only earlier stages, `model/` (the types they hand on) and `diag/`
//! (diagnostics):
//!
//! ```text
//! 1 parse/      tokens -> GraphInput                   the grammar, spans kept
//! 2 check/      KernelDecl -> LoadedKernel              literal | file | tokens, source map
//!                          -> ValidatedKernel           naga front end + validator (worker thread)
//!                          -> KernelInterface           entry point, bindings, overrides, Rust types
//! 3 lower/      GraphInput + Checked -> LoweredGraph    reductions and scans as generated kernels and nodes
//! 4 analyse/    LoweredGraph's parts -> GraphAnalysis   names, types, limits, hazards
//! 5 transform/  GraphAnalysis + LoweredGraph -> GraphAnalysis
//!                                                       reductions fused with their neighbours (then
//!                                                       analysed again), grids folded, element-wise
//!                                                       chains fused
//! 6 emit/       GraphAnalysis -> tokens                 quote! only (or the error stub)
//! ```
//!
//! `front_end` is that sequence. Every error of an invocation is collected
//! (`diag/`) and emitted together as `compile_error!`s, beside a stub of
//! the generated type so the rest of the user's crate still resolves.
//!
//! # The promise: a WGSL or graph error, never an internal one
//!
//! Whatever the input, `graph!` answers with the expansion or with errors
//! that name the user's mistake (naga's WGSL errors at the culprit, the
//! graph checks): it never panics and never reports an internal error.
//! `expand` still catches a panic as a last resort ("internal error:
//! graph! panicked"), and `check/validate.rs` one in naga; either is a bug, to be
//! reported with the macro input that caused it. Kept so by:
//!
//! * no `unwrap`, `expect`, `panic!` or unchecked indexing in this crate
//!   (denied below);
//! * no proc-macro API off the macro's thread: naga runs on a worker thread
//!   that makes plain data only (`check/worker.rs`; `tests::threads`
//!   checks the files it reaches);
//! * `tests/compile/compile_many.rs` (the workspace's), which builds about 200
//!   invalid kernels in every source form through the real compiler and
//!   fails on any internal error or panic, and the fuzz test
//!   (`tests::fuzz`), which runs thousands of mutants of every invocation
//!   in the repository through the front end.
#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

extern crate proc_macro;

mod analyse;
mod check;
mod diag;
mod emit;
mod lower;
mod model;
mod parse;
mod timings;
mod transform;

#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use quote::quote;

/// Declares a compute graph of WGSL kernels, checked at compile time.
///
/// Every kernel is parsed and validated by naga while your crate compiles;
/// every node is checked against its kernel's bindings; buffers get one
/// element type each; the graph is checked for reads before writes, writes
/// to read-only buffers and outputs nobody writes. Mistakes are compile
/// errors at the offending token, all reported in one build.
///
/// # Example
///
/// ```text
/// use vyre_graph::graph;
///
/// graph! {
///     /// y = a * x + y, element-wise.
///     pub struct Saxpy;
///
///     kernel saxpy = wgsl {
///         struct Params { a: f32 }
///         @group(0) @binding(0) var<storage, read> x: array<f32>;
///         @group(0) @binding(1) var<storage, read> y: array<f32>;
///         @group(0) @binding(2) var<uniform> params: Params;
///         @group(0) @binding(3) var<storage, read_write> out: array<f32>;
///         @compute @workgroup_size(64)
///         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
///             if g.x < arrayLength(&out) { out[g.x] = params.a * x[g.x] + y[g.x]; }
///         }
///     };
///
///     input x[n];
///     input y[n];
///     uniform params;
///     output out[n];
///
///     node saxpy(x: x, y: y, params: params, out: out) over n;
/// }
///
/// let gpu = vyre_graph::Gpu::new()?;
/// let graph = Saxpy::new(&gpu)?;
/// let result = graph.run(&[1.0, 2.0][..], &[10.0, 20.0][..], &Params { a: 2.0 })?;
/// assert_eq!(result.out, [12.0, 24.0]);
/// ```
///
/// # Grammar
///
/// Items end with `;` (a `repeat` block ends with its `}`). Doc comments are
/// allowed before any item (and ignored except on the `struct`).
///
/// ```text
/// graph! {
///     /// Doc comments and attributes go on the generated type.
///     pub struct Saxpy;                  // visibility + name; first item, required
///
///     limits native;                     // optional: skip the WebGPU default limit checks
///     fuse off;                          // optional: never fuse nodes (fusion is on by default)
///     features [shader_int64];           // optional: device features the kernels need
///     flags [fast];                      // optional: WESL `@if(fast)` flags that are on
///
///     module rng = wgsl { fn hash(x: u32) -> u32 { ... } };  // a WESL module (any kernel form)
///     kernel mix = wgsl { import package::rng::hash; ... };  // kernels may import (docs/modules.md)
///
///     kernel scale = "@group(0) @binding(0) var<storage, read> src: array<f32>; ...";  // WGSL string literal
///     kernel add = file "kernels/add.wgsl";                  // relative to CARGO_MANIFEST_DIR, else to this file
///     kernel mul = wgsl { @group(0) @binding(0) ... };       // WGSL written as Rust tokens
///     kernel two = file "kernels/many.wgsl" entry "second";  // choose the entry point (any form)
///
///     input x[n];                 // host -> device; nodes may only read it
///     inout keys[n];              // host -> device; nodes may write it; read back
///     intermediate t[2 * n];      // device only
///     output out[n];              // device -> host
///     uniform params;             // one value of the kernel's uniform type, written by the host each run
///
///     node scale(src: x, dst: t) over n;                      // label = kernel name
///     node second = add(a: t, b: y, out: out) over n / 2;    // explicit label; invocations
///     node g = add(a: t, b: y, out: out) grid [n / 64, 1, 1]; // explicit workgroup grid
///     node s = sort(src: ping(a, b), dst: pong(a, b)) over n with { WG = 128, SHIFT = i * 8 };
///     node c = copy(src: x, dst: t) over n unfused;            // never part of a fused group
///     repeat 4 as i { node ...; node ...; }                   // unrolled, i = 0, 1, 2, 3
/// }
/// ```
///
/// * **Kernels.** A string literal (escapes and raw strings are fine), a
///   file (a relative path is looked up in `CARGO_MANIFEST_DIR`, then beside
///   the source file that invokes `graph!`), or WGSL written as Rust tokens
///   inside `wgsl { ... }` (errors then point at the exact token; `//`
///   comments are dropped, `///` too). The
///   entry point is the module's only `@compute` function, or the one named
///   by `entry "name"`. A node must bind exactly the buffer bindings the
///   entry point uses; globals the entry point does not touch are not part
///   of its interface.
/// * **Modules.** Any kernel may `import` items (WESL) from a `module`
///   declared in the graph (`package::NAME`) or from a `.wesl`/`.wgsl`
///   file under `CARGO_MANIFEST_DIR` (`package::dir::file`); `@if(flag)`
///   keeps code when `flag` is in `flags [..]` or is a declared feature.
///   The `wesl` crate links such a kernel (imported items mangled, the
///   kernel's own names kept) before naga sees it; a kernel without
///   imports or `@if` is used exactly as written.
/// * **Buffers.** `input`, `inout`, `intermediate`, `output` take a length in
///   elements; `uniform` holds one value. The element type comes from the
///   kernels that bind the buffer (all must agree): `array<T>` (and
///   `array<T, N>`) storage bindings bind elements of `T`; every other
///   binding binds one value of its type. A buffer no node binds is an
///   error, as is an `input`/`uniform` nobody reads.
/// * **Sizes** (buffer lengths, `over`, `grid`) are functions of the problem
///   size `n`: an integer, `n`, `K * n`, `n * K`, `(...) / K` (rounds up) and
///   `... + K`, normalised to `ceil(n * mul / div) + add`.
/// * **Nodes** run in program order. `node label = kernel(...)` names a
///   node (required when a kernel runs more than once); `over E` launches
///   `E` invocations (`ceil(E / workgroup_size.x)` workgroups), `grid [X, Y,
///   Z]` that many workgroups. Past 65,535 workgroups an `over` grid is
///   folded into y and z; `graph!` wraps the entry point of every `over`
///   kernel so that `global_invocation_id.x`, `workgroup_id.x` and
///   `num_workgroups.x` stay linear (a kernel it cannot wrap is marked
///   `GridFold::XOnly` and a folded run is refused). `grid` nodes are never
///   folded and keep the original entry point. `with { NAME = value }` sets the kernel's
///   `override` constants: integer or float literals, or integer arithmetic
///   (`+ - * / %`, parentheses) on the `repeat` variable, evaluated at
///   compile time; a workgroup size that depends on overrides is evaluated
///   per node by naga, exactly as pipeline creation will (a size that cannot
///   be known at compile time is an error, never a guess).
/// * **Fusion.** Consecutive element-wise nodes (every access to a buffer the
///   group writes is at the invocation's own `global_invocation_id.x`; same
///   `over` size and workgroup size `[x, 1, 1]`; no barriers, atomics or
///   workgroup memory) are fused at compile time into one kernel and one
///   dispatch, with bit-identical results (`SPEC.fused`, `describe()`,
///   `to_dot()` show the groups). `fuse off;` turns it off for the graph,
///   `unfused` after a node's size (or `with { .. }`) for one node.
/// * **`repeat K as i { ... }`** unrolls its nodes `K` times (labels
///   `label[i]`); `ping(a, b)` is `a` on even iterations and `b` on odd ones,
///   `pong(a, b)` the opposite.
///
/// # Rust types
///
/// `f32`, `u32`, `i32` map to themselves, `atomic<u32>`/`atomic<i32>` to
/// `u32`/`i32`, `vecN<T>` to `[T; N]` (as an array element `vec3<T>` has a
/// stride of 16 and maps to `[T; 4]`), `matCxR<f32>` to `[[f32; R]; C]`
/// (`R = 3` padded to 4), `array<T, N>` to `[T; N]`, and a WGSL struct to a
/// generated `#[repr(C)]` struct of the same name beside the graph, with
/// explicit `_padN: [u8; k]` fields matching WGSL's layout, `Pod`,
/// `Zeroable`, `Default` (all zero) and compile-time layout assertions.
/// With `features [...]`, `u64`, `i64`, `f64` map to themselves and `f16`
/// to `vyre_graph::half::f16`. `bool` and textures have no mapping and are
/// errors. A storage binding whose struct ends in a runtime-sized array
/// binds the array's elements; fields before it form a generated
/// `<Struct>Header` struct, passed as `(&header, &elements)` and read back
/// as `Headed { header, elements }`.
///
/// # What it generates
///
/// For `pub struct Saxpy;`: the type `Saxpy` with `SPEC` (the static
/// `GraphSpec`, WGSL embedded), `new(&Gpu)`, `run(inputs...)`,
/// `run_with(&DispatchConfig, inputs...)`, `run_resident(inputs...)`,
/// `graph()`, `describe()` and `to_dot()`; `SaxpyOutputs` (one `Vec` per
/// `output`/`inout` buffer) and `SaxpyResident` (one `GpuBufferHandle`
/// each). The inputs are the `input`, `inout` and `uniform` buffers in
/// declaration order, each `impl Into<Input<'a, T>>`. The problem size `n`
/// is inferred from an input whose length is `K * n`; when no input has
/// such a length, `n: u64` is the first argument.
///
/// # Checks
///
/// WGSL syntax and validation errors (with naga's code frame and the
/// `file:line:col` of the error); unknown, ambiguous or non-`@compute` entry
/// points; unknown or missing bindings, buffers, kernels and overrides;
/// duplicate names; buffers bound with different element types; uniform
/// buffers bound as storage and the reverse; writes to `input` or `uniform`
/// buffers; reads of an `intermediate` or `output` before any node writes
/// it; outputs never written; buffers bound twice in one node with one
/// binding writable; and, unless `limits native;`, WebGPU's default limits
/// (workgroup size `x, y <= 256`, `z <= 64`, `x * y * z <= 256`; at most 8
/// storage and 12 uniform buffers per kernel).
#[proc_macro]
pub fn graph(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input.into()).into()
}

/// The whole front end over proc-macro2 tokens (usable outside a macro
/// invocation, e.g. in tests): the expansion, or every error as a
/// `compile_error!` plus a stub of the generated type.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| front_end(input))) {
        Ok(tokens) => tokens,
        Err(_) => quote! {
            ::core::compile_error!("internal error: graph! panicked; please report this with the macro input");
        },
    }
}

/// The stages in order: parse, check every kernel, lower the built-in
/// nodes, then (when the syntax, every kernel and every built-in node are
/// fine) analyse, transform and emit; otherwise every error beside the
/// stub.
fn front_end(tokens: TokenStream) -> TokenStream {
    let timer = timings::Timer::start();
    let mut diag = diag::Diagnostics::new();
    let graph = parse::parse(tokens, &mut diag);
    let name = graph.header.as_ref().map(|h| h.name.to_string());
    let syntax_ok = diag.is_empty();
    let fuse_on = graph.fuse_off.is_none();
    let caps = model::features::capabilities(&graph.features);

    let modules =
        check::imports::load_modules(&graph.modules, &graph.flags, &graph.features, &mut diag);
    let checked = check::check_kernels_with(&graph.kernels, &modules, caps, &mut diag);
    let before_lowering = diag.len();
    let lowered = lower::lower(graph, checked, caps, &mut diag);
    // A reduction that failed to lower leaves the graph without its nodes:
    // analysing it would only add errors about what is missing.
    let syntax_ok = syntax_ok && diag.len() == before_lowering;
    // Rebuild when a kernel file changes, even when it has errors.
    let tracked = &lowered.checked.tracked;
    let includes = quote!(#(const _: &str = ::core::include_str!(#tracked);)*);

    let (graph, checked) = (&lowered.graph, &lowered.checked);
    let stub = emit::stub(
        graph,
        &analyse::stub_types(graph, &checked.interfaces, &checked.partial),
    );
    if syntax_ok
        && let Some(analysis) = analyse::analyse(
            graph.clone(),
            &checked.interfaces,
            &lowered.identities,
            &mut diag,
        )
        && diag.is_empty()
        && let Some(analysis) =
            transform::transform(analysis, lowered, caps, fuse_on, &timer, &mut diag)
    {
        let expanded = emit::expand(&analysis);
        timer.report(&analysis.header.name.to_string(), analysis.kernels.len());
        return quote!(#includes #expanded);
    }
    if diag.is_empty() {
        diag.error(
            proc_macro2::Span::call_site(),
            "internal error: graph! failed without a message; please report this",
        );
    }
    let errors = diag.to_compile_errors();
    timer.report_failed(name.as_deref().unwrap_or("?"), diag.len());
    quote!(#includes #errors #stub)
}
