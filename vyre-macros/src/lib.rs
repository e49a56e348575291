//! The compile-time checked `graph!` macro of vyre. Use it through
//! `vyre_graph::graph!`; the generated code needs the `vyre_graph` runtime.
//!
//! The macro is a pipeline of stages, one file each, each taking the
//! previous stage's output as proof that it succeeded:
//!
//! ```text
//! input.rs    tokens          -> GraphInput        (syn grammar, spans kept)
//! load.rs     KernelDecl      -> LoadedKernel      (literal | file | tokens, source map)
//! validate.rs LoadedKernel    -> ValidatedKernel   (naga front end + validator)
//! reflect.rs  ValidatedKernel -> KernelInterface   (bindings, use, layout, overrides)
//! analyse.rs  GraphInput + KernelInterface* -> GraphAnalysis (names, types, limits, hazards)
//! fold.rs     GraphAnalysis   -> GraphAnalysis     (`over` kernels wrapped for folded grids)
//! fuse.rs     GraphAnalysis   -> GraphAnalysis     (element-wise chains fused into one dispatch)
//! expand.rs   GraphAnalysis   -> tokens            (quote! only)
//! ```
//!
//! Every error of an invocation is collected (`diag.rs`) and emitted
//! together as `compile_error!`s, beside a stub of the generated type so the
//! rest of the user's crate still resolves.
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
mod append;
mod diag;
mod dynamic;
mod expand;
mod features;
mod fold;
mod fuse;
mod hints;
mod input;
mod load;
mod naga_diag;
mod partial;
mod reflect;
mod rust_types;
mod sites;
mod suggest;
mod timings;
mod validate;

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

fn front_end(tokens: TokenStream) -> TokenStream {
    let timer = timings::Timer::start();
    let mut diag = diag::Diagnostics::new();
    let graph = input::parse(tokens, &mut diag);
    let syntax_ok = diag.is_empty();
    let fuse_on = graph.fuse_off.is_none();
    let caps = features::capabilities(&graph.features);
    let declared: Vec<&'static str> = graph.features.iter().map(|f| f.variant).collect();

    let loaded = load::load_all(&graph.kernels, &mut diag);
    // Rebuild when a kernel file changes, even when it has errors.
    let tracked = loaded
        .iter()
        .flatten()
        .filter_map(|k| k.tracked_path().map(str::to_owned))
        .collect::<Vec<_>>();
    let includes = quote!(#(const _: &str = ::core::include_str!(#tracked);)*);

    // What failed kernels' bindings hold, for the error stub.
    let mut partial: Vec<Option<partial::PartialTypes>> = Vec::new();
    let mut fuse_facts = Vec::new();
    let (interfaces, fold_facts): (Vec<Option<reflect::KernelInterface>>, Vec<_>) = loaded
        .into_iter()
        .map(|kernel| {
            partial.push(None);
            let validated = match validate::validate_or_partial(kernel?, caps) {
                Ok(v) => v,
                Err(failed) => {
                    diag.push(failed.error);
                    if let Some(slot) = partial.last_mut() {
                        *slot = failed.partial;
                    }
                    return None;
                }
            };
            let facts = fold::module_facts(&validated.module);
            fuse_facts.push(
                fuse_on
                    .then(|| {
                        let entry = validated.loaded.entry.as_ref().map(syn::LitStr::value);
                        fuse::kernel_facts(&validated.module, &validated.loaded.source, entry)
                    })
                    .flatten(),
            );
            match reflect::reflect(validated) {
                Ok(interface) => Some((interface, facts)),
                Err(errors) => {
                    errors.into_iter().for_each(|e| diag.push(e));
                    None
                }
            }
        })
        .map(|k| k.map_or((None, None), |(i, f)| (Some(i), Some(f))))
        .unzip();

    let stub = expand::stub(&graph, &analyse::stub_types(&graph, &interfaces, &partial));
    if syntax_ok
        && let Some(mut analysis) = analyse::analyse(graph, interfaces, &mut diag)
        && diag.is_empty()
    {
        analysis.features = declared;
        let node_kernels: Vec<usize> = analysis.nodes.iter().map(|n| n.kernel).collect();
        fold::fold(&mut analysis, &fold_facts, caps);
        if fuse_on {
            let started = timer.lap();
            fuse::fuse(&mut analysis, &fuse_facts, &node_kernels, caps);
            timer.report_stage(&analysis.header.name.to_string(), "fuse", started);
        }
        let expanded = expand::expand(&analysis);
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
    quote!(#includes #errors #stub)
}
