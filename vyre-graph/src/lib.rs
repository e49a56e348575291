//! # vyre-graph
//!
//! GPU compute graphs on [wgpu]: many dependent kernels recorded into one
//! command encoder and submitted once, with a launch-plan cache that keeps the
//! buffers and bind groups of each problem size, so a steady-state run
//! allocates nothing.
//!
//! - [`graph!`] (re-exported from `vyre-macros`) checks WGSL kernels at compile
//!   time and expands to a typed wrapper around [`Graph`].
//! - [`Graph`] runs a [`spec::GraphSpec`]: kernels, buffers, and nodes that bind
//!   kernels to buffers. A node reads what an earlier node wrote, on the
//!   device; inputs are uploaded once; only the outputs asked for are read
//!   back, all mapped after one wait.
//! - [`GpuDispatchGraph`] is the seed API: an ordered list of ops dispatched
//!   with one submission.
//! - [`Graph::plan`] returns the launch plan ([`BatchDispatchPlan`]) of a
//!   problem size, from the graph's plan cache.
//!
//! ## Example
//!
//! ```
//! use vyre_graph::graph;
//!
//! graph! {
//!     /// out = a * x + y, element-wise.
//!     pub struct Saxpy;
//!
//!     kernel saxpy = wgsl {
//!         struct Params { a: f32 }
//!         @group(0) @binding(0) var<storage, read> x: array<f32>;
//!         @group(0) @binding(1) var<storage, read> y: array<f32>;
//!         @group(0) @binding(2) var<uniform> params: Params;
//!         @group(0) @binding(3) var<storage, read_write> out: array<f32>;
//!         @compute @workgroup_size(64)
//!         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
//!             if g.x < arrayLength(&out) { out[g.x] = params.a * x[g.x] + y[g.x]; }
//!         }
//!     };
//!
//!     input x[n];
//!     input y[n];
//!     uniform params;
//!     output out[n];
//!
//!     node saxpy(x: x, y: y, params: params, out: out) over n;
//! }
//!
//! let gpu = vyre_graph::Gpu::new()?;
//! let graph = Saxpy::new(&gpu)?;
//! let result = graph.run(&[1.0, 2.0][..], &[10.0, 20.0][..], &Params { a: 2.0 })?;
//! assert_eq!(result.out, [12.0, 24.0]);
//! # Ok::<(), vyre_graph::BackendError>(())
//! ```
//!
//! Nothing is submitted when a run's inputs, sizes or limits are wrong: every
//! check happens before encoding, and errors ([`BackendError`]) say how to fix
//! the problem.
//!
//! ## In a browser
//! On `wasm32-unknown-unknown` the backend is WebGPU and nothing blocks:
//! open the device with [`Gpu::new_async`], build graphs with
//! [`Graph::new_async`], and run them with the `_async` methods
//! ([`Graph::run_async`], [`Graph::run_batch_async`],
//! [`Graph::run_many_async`], [`RecordedRun::read_async`]). The blocking
//! methods are not compiled there; each one's documentation names its
//! async twin.
//!
//! ## Without a GPU
//! Install Mesa's software Vulkan driver: `apt-get install -y
//! --no-install-recommends mesa-vulkan-drivers libvulkan1`.
//!
//! ## How the crate is built
//! In layers, each importing only the layers below it (no import cycle,
//! also none inside a layer):
//!
//! 1. `spec/`: the static description ([`spec`]), options, errors, grid
//!    arithmetic ([`grid`]) and the plan data ([`BatchDispatchPlan`]): plain
//!    data, no device;
//! 2. `device/`: [`Gpu`], pipelines, resident buffers and textures, host
//!    feeds and sinks, reading device memory back;
//! 3. `plan/`: everything a run of one problem size needs: the compiled
//!    program, validation, sizing, launch plans and their cache, binding;
//! 4. `run/`: one run of a plan: encode, submit, read back, status;
//! 5. `graph.rs`: [`Graph`], whose `run` calls check, plan, bind, encode,
//!    submit and read back in that order (`describe.rs` beside it renders
//!    the schedule, and `batch.rs` runs batches and streams of runs); `seed/`: [`GpuDispatchGraph`], on top.
#![warn(missing_docs)]
// The only `unsafe` is `device/transfer.rs`'s, audited there.
#![deny(unsafe_code)]

/// Enter a host span for `tracing` subscribers (feature `tracing`): returns
/// the entered span's guard, or `()` without the feature (the fields are
/// then not evaluated). Names and nesting: `docs/profiling.md`.
#[cfg(feature = "tracing")]
macro_rules! enter {
    ($name:literal $(, $($field:tt)*)?) => {
        tracing::info_span!(target: "vyre_graph", $name $(, $($field)*)?).entered()
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! enter {
    ($name:literal $(, $($field:tt)*)?) => {
        ()
    };
}

/// `$future` inside a host span for `tracing` subscribers (feature
/// `tracing`); `$future` itself without the feature.
#[cfg(feature = "tracing")]
macro_rules! instrument {
    ($future:expr, $name:literal $(, $($field:tt)*)?) => {
        tracing::Instrument::instrument(
            $future,
            tracing::info_span!(target: "vyre_graph", $name $(, $($field)*)?),
        )
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! instrument {
    ($future:expr, $name:literal $(, $($field:tt)*)?) => {
        $future
    };
}

mod batch;
mod describe;
mod device;
mod dot;
mod engine;
mod graph;
mod plan;
mod run;
mod seed;
#[cfg(not(target_arch = "wasm32"))]
mod set;
pub mod spec;

#[doc(inline)]
pub use spec::grid;

pub use describe::{BufferDescription, Description, NodeDescription};
pub use device::buffer::GpuBufferHandle;
pub use device::counters::GpuCounters;
pub use device::gpu::{AdapterSummary, Gpu, GpuOptions};
pub use device::io::{Feed, GpuResource, Headed, Input, Sink, VecSink};
pub use device::pipeline::WgpuPipeline;
pub use device::texture_handle::GpuTextureHandle;
pub use engine::Engine;
pub use graph::Graph;
pub use run::batch::{BatchReport, Instance};
#[cfg(feature = "profiler")]
pub use run::profiler::ProfilerScope;
pub use run::recorded::RecordedRun;
pub use run::report::{LoopReport, RunPhases, RunReport};
pub use run::trace::Trace;
pub use seed::dispatch::{GpuDispatchGraph, LaunchAccounting, launch_accounting};
#[cfg(not(target_arch = "wasm32"))]
pub use set::{DeviceStatus, GpuFilter, Gpus, GraphSet, Throughput};
pub use spec::config::{DispatchConfig, GridStride, LoopBound, MAX_STRIDE_STEPS, StreamDepth};
pub use spec::error::{BackendError, DRIVER_SETUP_HINT, Result};
pub use spec::plan::{BatchDispatchPlan, Topology};
pub use spec::transfer::TransferOptions;
/// The `wgpu-profiler` that [`ProfilerScope`] takes (feature `profiler`).
#[cfg(feature = "profiler")]
pub use wgpu_profiler;

/// `f16` for kernels that use WGSL's `f16` (`features [shader_f16];`).
pub use half;

/// Casts between plain data and bytes: the `bytemuck` that the generated
/// WGSL structs implement `Pod` and `Zeroable` with, re-exported so that a
/// crate depending on `vyre-graph` alone can build the byte slices of the
/// untyped API ([`Feed::Host`], [`Sink::Host`]) or cast its own data.
///
/// ```
/// use vyre_graph::bytemuck;
///
/// let x = [1.0f32, 2.0, 3.0];
/// let bytes: &[u8] = bytemuck::cast_slice(&x);
/// assert_eq!(bytes.len(), 12);
/// let feed = vyre_graph::Feed::Host(bytes);
/// # let _ = feed;
/// ```
pub use bytemuck;

/// Runs a future to its end on the calling thread (re-exported from
/// `pollster`): an executor for the futures of this crate in native code,
/// for a crate that has none of its own. The generated `run_async`,
/// [`Graph::run_async`], [`RecordedRun::read_async`] and
/// [`Gpu::new_async`] need one; under tokio or another runtime, `.await`
/// them there instead. In a browser (WebAssembly), never block: spawn the
/// future on the page's event loop.
///
/// Not on wasm32 (nothing may block there): `.await` the `_async` methods,
/// e.g. from `wasm_bindgen_futures::spawn_local`.
///
/// ```
/// use vyre_graph::{DispatchConfig, Gpu, block_on, graph};
///
/// graph! {
///     /// `y = 2x`, element-wise.
///     pub struct Double;
///     kernel double = wgsl {
///         @group(0) @binding(0) var<storage, read> x: array<u32>;
///         @group(0) @binding(1) var<storage, read_write> y: array<u32>;
///         @compute @workgroup_size(64)
///         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
///             if g.x < arrayLength(&x) { y[g.x] = 2u * x[g.x]; }
///         }
///     };
///     input x[n];
///     output y[n];
///     node double(x: x, y: y) over n;
/// }
///
/// let gpu = block_on(Gpu::new_async(Default::default()))?;
/// let graph = Double::new(&gpu)?;
/// let config = DispatchConfig::default();
/// let out = block_on(graph.run_async(&config, &[1u32, 2, 3][..]))?;
/// assert_eq!(out.y, [2, 4, 6]);
/// # Ok::<(), vyre_graph::BackendError>(())
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub use pollster::block_on;
pub use vyre_macros::graph;
pub use wgpu;

/// What `graph!`'s expansion refers to. Not a public API: it may change in
/// any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::device::io::{
        HeadedInput, OwnedFeed, append_scratch, read_appended, resize_vec,
    };
    pub use crate::spec::*;
    pub use crate::{
        BackendError, Description, DispatchConfig, Engine, Feed, Gpu, GpuBufferHandle,
        GpuTextureHandle, Graph, Headed, Input, Instance, RecordedRun, RunReport, Sink,
    };
    pub use bytemuck;
    pub use half;
    pub use std::borrow::Cow;
    pub use wgpu;

    pub use crate::device::poller::PollerFaults;

    /// What `graph!` puts on a blocking method on wasm32, where it stands
    /// only to be refused: a bound no type meets, one trait per `async`
    /// twin, whose message names the twin to call instead.
    macro_rules! not_on_the_web {
        ($($name:ident => $message:literal, $note:literal;)*) => {$(
            #[diagnostic::on_unimplemented(
                message = $message,
                label = "this call would block the thread, which a browser forbids",
                note = $note
            )]
            #[doc(hidden)]
            pub trait $name {}
        )*};
    }
    not_on_the_web! {
        NewAsync => "in a browser, call `new_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunAsync => "in a browser, call `run_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunReportedAsync => "in a browser, call `run_reported_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunIntoAsync => "in a browser, call `run_into_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunResidentAsync => "in a browser, call `run_resident_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunBatchAsync => "in a browser, call `run_batch_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
        RunManyAsync => "in a browser, call `run_many_async(..).await`: blocking methods are not compiled for wasm32",
            "nothing may block a browser's thread (docs/web.md)";
    }

    /// Fault injection for vyre's own tests, not an API: replaces the
    /// faults `gpu`'s device poller has still to meet (see
    /// [`PollerFaults`]). Async runs waiting meanwhile must complete all
    /// the same.
    pub fn inject_poller_faults(gpu: &Gpu, faults: PollerFaults) {
        gpu.inject_poller_faults(faults);
    }

    /// Fault injection for vyre's own tests, not an API: the next `count`
    /// shader-module creations on `gpu` panic where wgpu's call would, as
    /// naga's SPIR-V writer does on some valid WGSL (`Graph::new` must
    /// return [`BackendError::BackendPanicked`] and leave `gpu` usable).
    pub fn inject_backend_panics(gpu: &Gpu, count: usize) {
        gpu.inject_backend_panics(count);
    }

    /// Fault injection for vyre's own tests, not an API: `gpu`'s device is
    /// destroyed as lost after `submissions` more submissions (0: now), as
    /// a driver reset would leave it; its runs then fail with
    /// [`BackendError::DeviceLost`] (a device set's failover tests).
    pub fn inject_device_loss(gpu: &Gpu, submissions: usize) {
        gpu.inject_device_loss(submissions);
    }

    /// Fault injection for vyre's own tests, not an API: popped error
    /// scopes of `gpu` answer later, as a browser's do, so that native
    /// tests reach the deferred path (`Graph::record`'s device errors
    /// reported by `RecordedRun::read_async`).
    pub fn defer_scope_errors(gpu: &Gpu, on: bool) {
        gpu.defer_scope_errors(on);
    }

    /// For `graph_bench`, not an API: nanoseconds per hit of the plan
    /// cache's lookup (the cache is the crate's own), over `iterations`
    /// lookups into a cache of 32 plans.
    pub fn plan_cache_hit_ns(iterations: u64) -> f64 {
        crate::spec::plan::lookup_hit_ns(iterations)
    }

    /// The element type of an output in the placeholder `graph!` emits
    /// beside its errors, when no kernel could say the real one.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Unresolved {}

    /// The type of an output field in that placeholder when not even the
    /// kernel's globals parsed: Rust's never type `!`, named on stable
    /// through a function pointer's return type. A value of it coerces to
    /// any type, so user code returning the field as `Vec<T>` gets no
    /// second error.
    pub type Unknown = <fn() -> ! as ReturnOf>::Output;

    /// The return type of a function pointer (see [`Unknown`]).
    pub trait ReturnOf {
        /// The return type.
        type Output;
    }
    impl<T> ReturnOf for fn() -> T {
        type Output = T;
    }
}
