//! Shared helpers of the GPU integration tests: one device per test binary,
//! a lock that serialises the tests that read the device's counters, terse
//! builders for hand-written [`GraphSpec`]s, and the WGSL kernels.
//!
//! Each test binary uses a different subset of these, so unused items are
//! expected.
#![allow(dead_code)]

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard, OnceLock};

use vyre_graph::spec::{
    Access, BindingKind, BindingSpec, BufferClass, BufferSpec, DispatchSize, Extent, GraphSpec,
    GridFold, KernelSpec, NodeBinding, NodeSpec,
};
use vyre_graph::{DispatchConfig, Feed, Gpu, Graph, RunReport, Sink};

/// The test binary's device. A GPU test never skips: without an adapter it
/// panics with the error, whose message names the driver setup step.
pub fn gpu() -> Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => panic!("no GPU for the integration tests: {e}"),
    })
    .clone()
}

/// Serialises the tests of one binary. The counters of [`gpu`] are shared by
/// every test of the binary, so a test that measures `counters().since(..)`
/// must not run beside another test that submits work; every test takes this
/// lock first. A test that panicked poisons it, which the others ignore.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

// --- spec builders ----------------------------------------------------------

fn binding(
    name: &str,
    group: u32,
    binding: u32,
    kind: BindingKind,
    element_size: u32,
    access: Access,
) -> BindingSpec {
    BindingSpec {
        name: Cow::Owned(name.to_owned()),
        group,
        binding,
        kind,
        element_size,
        min_binding_size: 0,
        access,
        wgsl_type: Cow::Borrowed(""),
    }
}

/// `var<storage, read>` binding of `elem`-byte elements.
pub fn read(name: &str, group: u32, binding_index: u32, elem: u32) -> BindingSpec {
    binding(
        name,
        group,
        binding_index,
        BindingKind::ReadOnlyStorage,
        elem,
        Access::Read,
    )
}

/// `var<storage, read_write>` binding that the kernel only writes (what
/// `graph!` reflects for an output the kernel never reads).
pub fn write(name: &str, group: u32, binding_index: u32, elem: u32) -> BindingSpec {
    binding(
        name,
        group,
        binding_index,
        BindingKind::ReadWriteStorage,
        elem,
        Access::Write,
    )
}

/// `var<uniform>` binding of a `size`-byte struct.
pub fn uniform(name: &str, group: u32, binding_index: u32, size: u32) -> BindingSpec {
    binding(
        name,
        group,
        binding_index,
        BindingKind::Uniform,
        size,
        Access::Read,
    )
}

/// A kernel with entry point `main`.
pub fn kernel(label: &str, wgsl: &str, wg: [u32; 3], bindings: &[BindingSpec]) -> KernelSpec {
    KernelSpec {
        label: Cow::Owned(label.to_owned()),
        source: Cow::Owned(wgsl.to_owned()),
        entry_point: Cow::Borrowed("main"),
        workgroup_size: wg,
        bindings: Cow::Owned(bindings.to_vec()),
        fold: GridFold::XOnly,
    }
}

/// A graph buffer of `extent` elements of `elem_size` bytes.
pub fn buffer(name: &str, class: BufferClass, elem_size: u32, extent: Extent) -> BufferSpec {
    BufferSpec {
        name: Cow::Owned(name.to_owned()),
        class,
        element_size: elem_size,
        len: extent,
        header_bytes: 0,
        texture: None,
        append: None,
        empty_value: None,
    }
}

/// A node running kernel `kernel`, binding `(group, binding)` to buffer index.
pub fn node(
    label: &str,
    kernel: usize,
    binds: &[(u32, u32, usize)],
    size: DispatchSize,
) -> NodeSpec {
    NodeSpec {
        label: Cow::Owned(label.to_owned()),
        kernel,
        bindings: Cow::Owned(
            binds
                .iter()
                .map(|&(group, binding, buffer)| NodeBinding {
                    group,
                    binding,
                    buffer,
                })
                .collect(),
        ),
        overrides: Cow::Borrowed(&[]),
        workgroup_size: None,
        size,
    }
}

/// One invocation per element of an `n`-element buffer.
pub const OVER_N: DispatchSize = DispatchSize::Invocations(Extent::N);

/// A whole graph.
pub fn graph_spec(
    name: &str,
    kernels: Vec<KernelSpec>,
    buffers: Vec<BufferSpec>,
    nodes: Vec<NodeSpec>,
) -> GraphSpec {
    GraphSpec {
        features: Cow::Borrowed(&[]),
        schedule: None,
        fused: Cow::Borrowed(&[]),
        loops: Cow::Borrowed(&[]),
        name: Cow::Owned(name.to_owned()),
        kernels: Cow::Owned(kernels),
        buffers: Cow::Owned(buffers),
        nodes: Cow::Owned(nodes),
    }
}

/// A unary `u32` kernel `dst = f(src)`, bindings `src` (0, 0) and `dst` (0, 1).
pub fn unary(label: &str, wgsl: &str) -> KernelSpec {
    kernel(
        label,
        wgsl,
        [64, 1, 1],
        &[read("src", 0, 0, 4), write("dst", 0, 1, 4)],
    )
}

/// A binary `u32` kernel `dst = f(a, b)`, bindings `a` (0, 0), `b` (0, 1) and
/// `dst` (0, 2).
pub fn binary(label: &str, wgsl: &str) -> KernelSpec {
    kernel(
        label,
        wgsl,
        [64, 1, 1],
        &[
            read("a", 0, 0, 4),
            read("b", 0, 1, 4),
            write("dst", 0, 2, 4),
        ],
    )
}

/// `u32` elements as bytes.
pub fn bytes(data: &[u32]) -> &[u8] {
    bytemuck::cast_slice(data)
}

/// `u32` elements as mutable bytes.
pub fn bytes_mut(data: &mut [u32]) -> &mut [u8] {
    bytemuck::cast_slice_mut(data)
}

/// Deterministic pseudo-random `u32`s (an LCG, so no dependency).
pub fn data(len: usize, seed: u32) -> Vec<u32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(12_345);
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state ^ (state >> 16)
        })
        .collect()
}

/// The index of the first element where `got` and `want` differ, for a
/// readable failure instead of a million-element dump.
pub fn assert_same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!(
            "{what}: element {i} is {} but the CPU reference says {} ({} of {} elements differ)",
            got[i],
            want[i],
            got.iter().zip(want).filter(|(g, w)| g != w).count(),
            got.len()
        );
    }
}

// --- CPU references ---------------------------------------------------------

/// CPU reference of [`MUL3_ADD1`].
pub fn mul3_add1(x: u32) -> u32 {
    x.wrapping_mul(3).wrapping_add(1)
}

/// CPU reference of [`XOR_SHIFT3`].
pub fn xor_shift3(x: u32) -> u32 {
    x ^ (x >> 3)
}

/// CPU reference of [`ROTATE_ADD`].
pub fn rotate_add(x: u32) -> u32 {
    x.rotate_left(7).wrapping_add(0x9E37_79B9)
}

// --- WGSL kernels -----------------------------------------------------------
// Every kernel bounds-checks its index with `arrayLength`.

/// `dst = src * 3 + 1` (mod 2^32).
pub const MUL3_ADD1: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        dst[i] = src[i] * 3u + 1u;
    }
}
";

/// `dst = src ^ (src >> 3)`.
pub const XOR_SHIFT3: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        let x = src[i];
        dst[i] = x ^ (x >> 3u);
    }
}
";

/// `dst = rotl(src, 7) + 0x9E3779B9`.
pub const ROTATE_ADD: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        let x = src[i];
        dst[i] = ((x << 7u) | (x >> 25u)) + 0x9E3779B9u;
    }
}
";

/// `dst = a + b` (mod 2^32).
pub const ADD: &str = "
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        dst[i] = a[i] + b[i];
    }
}
";

/// Two outputs from one input: `lo = src * 3 + 1`, `hi = src ^ (src >> 3)`.
pub const SPLIT: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> lo: array<u32>;
@group(0) @binding(2) var<storage, read_write> hi: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&src) {
        let x = src[i];
        lo[i] = x * 3u + 1u;
        hi[i] = x ^ (x >> 3u);
    }
}
";

/// `@workgroup_size(1)`: recovers its linear index from a (possibly folded)
/// grid and writes `idx * 2`.
pub const FOLDED_INDEX: &str = "
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = wg.x + wg.y * nwg.x + wg.z * nwg.x * nwg.y;
    if idx < arrayLength(&dst) {
        dst[idx] = idx * 2u;
    }
}
";

/// `dst = src * params.scale + params.offset`, with a uniform struct.
pub const AFFINE_UNIFORM: &str = "
struct Params { scale: u32, offset: u32, _pad: vec2<u32> }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        dst[i] = src[i] * params.scale + params.offset;
    }
}
";

/// The uniform block of [`AFFINE_UNIFORM`].
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AffineParams {
    pub scale: u32,
    pub offset: u32,
    pub pad: [u32; 2],
}

/// In place: `data = data * 3 + 1`, one `read_write` binding that the
/// kernel reads and writes.
pub const IN_PLACE_MUL3_ADD1: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&data) {
        data[i] = data[i] * 3u + 1u;
    }
}
";

/// `f32`, across bind groups 0 and 2 (group 1 is empty):
/// `dst = src * 2 + 0.5`, exact for integer-valued inputs below 2^22.
pub const F32_GROUPS_0_AND_2: &str = "
@group(0) @binding(3) var<storage, read> src: array<f32>;
@group(2) @binding(0) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        dst[i] = src[i] * 2.0 + 0.5;
    }
}
";

/// `dst = src * factor`, with the factor and the workgroup size set by
/// pipeline-overridable constants (defaults 1 and 256).
pub const OVERRIDE_MUL: &str = "
override factor: u32 = 1u;
override wg: u32 = 256u;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(wg)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&dst) {
        dst[i] = src[i] * factor;
    }
}
";

/// `read_write` binding that the kernel reads and writes.
pub fn read_write(name: &str, group: u32, binding_index: u32, elem: u32) -> BindingSpec {
    binding(
        name,
        group,
        binding_index,
        BindingKind::ReadWriteStorage,
        elem,
        Access::ReadWrite,
    )
}

// --- small graphs shared by several test binaries ----------------------------

/// `x -> t -> y` with `t = x * 3 + 1` and `y = t ^ (t >> 3)`.
pub fn two_step_spec(name: &str) -> GraphSpec {
    graph_spec(
        name,
        vec![
            unary("mul3_add1", MUL3_ADD1),
            unary("xor_shift3", XOR_SHIFT3),
        ],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("t", BufferClass::Intermediate, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![
            node("scale", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N),
            node("mix", 1, &[(0, 0, 1), (0, 1, 2)], OVER_N),
        ],
    )
}

pub fn two_step_cpu(x: &[u32]) -> Vec<u32> {
    x.iter().map(|&v| xor_shift3(mul3_add1(v))).collect()
}

/// `x -> y` with `y = x * 3 + 1`.
pub fn one_step_spec(name: &str) -> GraphSpec {
    graph_spec(
        name,
        vec![unary("mul3_add1", MUL3_ADD1)],
        vec![
            buffer("x", BufferClass::Input, 4, Extent::N),
            buffer("y", BufferClass::Output, 4, Extent::N),
        ],
        vec![node("scale", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N)],
    )
}

/// Run a graph with one host input and one host output.
pub fn run_host(graph: &Graph, x: &[u32]) -> (Vec<u32>, RunReport) {
    let mut y = vec![0u32; x.len()];
    let report = graph
        .run(
            &DispatchConfig::default(),
            x.len() as u64,
            &[Feed::Host(bytes(x))],
            &mut [Sink::Host(bytes_mut(&mut y))],
        )
        .expect("run");
    (y, report)
}
