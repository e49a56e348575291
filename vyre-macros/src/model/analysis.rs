//! What stage 4 (`analyse/`) hands on: the whole graph, checked
//! ([`GraphAnalysis`]), which stage 5 (`transform/`) rewrites (folded
//! kernels, fused groups) and stage 6 (`emit/`) spells as tokens; and, when
//! anything failed, what the error stub can still say ([`StubTypes`]).

use syn::Ident;
use vyre_analysis::BufferClass;
use vyre_analysis::spec::{DispatchSize, Extent, Feature, GridFold};

use super::input::{Header, TextureDecl};
use super::kernel::ReflectedBinding;
use super::rust_types::{RustTy, StructDef};

/// How `run` gets the problem size `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemSize {
    /// From the length of an `input`/`inout` buffer whose size is `K * n`.
    Infer,
    /// As the first parameter `n: u64`.
    Param,
    /// Nothing depends on `n`: it is 0.
    Unused,
}

/// A kernel as the spec needs it.
#[derive(Clone)]
pub struct KernelOut {
    /// Its name.
    pub label: String,
    /// The WGSL.
    pub source: String,
    /// The entry point.
    pub entry_point: String,
    /// The default workgroup size.
    pub workgroup_size: [u32; 3],
    /// The bindings.
    pub bindings: Vec<ReflectedBinding>,
    /// Whether it may run on a folded grid (decided by `transform/fold.rs`).
    pub fold: GridFold,
}

/// A buffer as the spec and the typed API need it.
pub struct BufferOut {
    /// Its name.
    pub name: Ident,
    /// Its class.
    pub class: BufferClass,
    /// Rust element type.
    pub element: RustTy,
    /// Bytes per element.
    pub element_size: u32,
    /// Length.
    pub len: Extent,
    /// The generated header struct of a `struct { fields..., items: array<T> }`
    /// binding.
    pub header: Option<RustTy>,
    /// Bytes before the elements.
    pub header_bytes: u32,
    /// A texture (`len` is its width) or a sampler.
    pub texture: Option<TextureDecl>,
    /// An append buffer (`Some(grow)`).
    pub append: Option<bool>,
    /// The bytes of the value every element holds at problem size 0 (a
    /// reduction's identity), when the graph determines it there.
    pub empty_value: Option<Vec<u8>>,
}

/// One unrolled node.
pub struct NodeOut {
    /// `label` or `label[i]`.
    pub label: String,
    /// Index of its kernel.
    pub kernel: usize,
    /// `(group, binding, buffer index)`, in the kernel's binding order.
    pub bindings: Vec<(u32, u32, usize)>,
    /// `(pipeline constant key, value)`.
    pub overrides: Vec<(String, f64)>,
    /// Set when the node's overrides change the workgroup size.
    pub workgroup_size: Option<[u32; 3]>,
    /// How many invocations or workgroups.
    pub size: DispatchSize,
    /// `unfused`: never part of a fused group.
    pub unfused: bool,
}

/// Everything the expansion needs, all checked.
pub struct GraphAnalysis {
    /// The generated type.
    pub header: Header,
    /// Kernels in declaration order.
    pub kernels: Vec<KernelOut>,
    /// Buffers in declaration order.
    pub buffers: Vec<BufferOut>,
    /// Nodes in program order, unrolled.
    pub nodes: Vec<NodeOut>,
    /// Dependency level of each node (from `vyre_analysis`).
    pub levels: Vec<u32>,
    /// Device slot of each buffer (from `vyre_analysis`).
    pub slots: Vec<usize>,
    /// Generated structs (deduplicated, dependency order) and the kernel
    /// each came from.
    pub structs: Vec<(StructDef, String)>,
    /// How `run` gets `n`.
    pub problem_size: ProblemSize,
    /// Groups of nodes fused into one dispatch (decided by `transform/fuse/`).
    pub fused: Vec<FusedOut>,
    /// Declared device features.
    pub features: Vec<Feature>,
    /// Loops that stop themselves (`repeat up to K .. until ..`).
    pub loops: Vec<LoopOut>,
    /// Whether instances may run stacked, or why not (decided by
    /// `transform/stack.rs`; emitted as `ScheduleSpec::stackable`).
    pub stackable: Result<(), &'static str>,
}

/// A fused group, as the spec needs it.
pub struct FusedOut {
    /// Member nodes (consecutive indices into `GraphAnalysis::nodes`).
    pub nodes: Vec<usize>,
    /// The dispatch that replaces them (its kernel is the fused one).
    pub dispatch: NodeOut,
    /// The fused kernel's grid-stride entry point (`transform/fuse/stride.rs`),
    /// if any.
    pub grid_stride_entry: Option<String>,
}

/// A loop that stops itself, unrolled.
pub struct LoopOut {
    /// `repeat up to K as i until empty(b)`, for messages and `describe()`.
    pub label: String,
    /// `until zero(f)` (else `until empty(b)`).
    pub zero: bool,
    /// Each iteration: first node, node count, the condition's buffer.
    pub iterations: Vec<(usize, usize, usize)>,
}

/// What the error stub can still say about the outputs: the Rust element
/// type of each `output`/`inout` buffer that some successfully reflected
/// kernel binds, and the structs those types need. Best effort, never an
/// error: it only keeps user code that reads the outputs from cascading
/// into "no field" errors while the real mistake is being fixed.
pub struct StubTypes {
    /// Per output/inout buffer, in declaration order: its name and element
    /// type when known.
    pub outputs: Vec<(Ident, Option<RustTy>)>,
    /// Structs the known types need (deduplicated by name).
    pub structs: Vec<(StructDef, String)>,
}
