//! What stage 1 (`parse/`) makes of the macro input: [`GraphInput`] and
//! its declarations, each keeping the user's tokens (identifiers, literals,
//! spans) so that later stages can point errors at exactly what the user
//! wrote. Sizes are already normalised ([`ExtentExpr`]); override values
//! stay expressions ([`ValueExpr`]) because they depend on the `repeat`
//! variable.

use proc_macro2::{Group, Span};
use syn::{Attribute, Ident, LitStr, Visibility};
pub use vyre_analysis::BufferClass;
pub use vyre_analysis::spec::Extent;

use vyre_analysis::spec::{
    SamplerSpec, TexelFormat, TextureDimension, TextureResource, TextureShape,
};

/// The whole macro input.
#[derive(Clone)]
pub struct GraphInput {
    /// `pub struct Name;` with its attributes; `None` when it was missing or
    /// malformed (already reported).
    pub header: Option<Header>,
    /// `limits native;` was given (at this span).
    pub limits_native: Option<Span>,
    /// `fuse off;` was given (at this span): no node is fused.
    pub fuse_off: Option<Span>,
    /// `features [...]`: the device features declared, each once.
    pub features: Vec<&'static crate::model::features::FeatureRow>,
    /// Kernel declarations in order.
    pub kernels: Vec<KernelDecl>,
    /// `module name = ...;`: WESL modules the kernels may import.
    pub modules: Vec<ModuleDecl>,
    /// `flags [a, b];`: the conditional translation flags (`@if(a)`) that
    /// are on.
    pub flags: Vec<Ident>,
    /// Buffer declarations in order.
    pub buffers: Vec<BufferDecl>,
    /// Nodes and `repeat` blocks in program order.
    pub items: Vec<NodeItem>,
    /// Built-in reductions and scans, each with its place among `items`;
    /// lowered into kernels and nodes (`lower/`) before the graph is
    /// analysed.
    pub reductions: Vec<ReduceDecl>,
}

/// The generated type's declaration.
#[derive(Clone)]
pub struct Header {
    /// Doc comments and other attributes, copied onto the type.
    pub attrs: Vec<Attribute>,
    /// Its visibility (also used for the generated structs).
    pub vis: Visibility,
    /// Its name.
    pub name: Ident,
}

/// `kernel name = <source> [entry "main"];`
#[derive(Clone)]
pub struct KernelDecl {
    /// The kernel's name in the graph.
    pub name: Ident,
    /// Where the WGSL comes from.
    pub source: KernelSource,
    /// `entry "name"`: the entry point to run.
    pub entry: Option<LitStr>,
}

/// `module name = <source>;`: a WESL module kernels import as
/// `package::name`.
#[derive(Clone)]
pub struct ModuleDecl {
    /// The module's name.
    pub name: Ident,
    /// Where its WGSL comes from.
    pub source: KernelSource,
}

/// The three ways to give WGSL.
#[derive(Clone)]
pub enum KernelSource {
    /// `"..."`: a string literal.
    Literal(LitStr),
    /// `file "path.wgsl"`: relative to `CARGO_MANIFEST_DIR`.
    File(LitStr),
    /// `wgsl { ... }`: WGSL written as Rust tokens (the brace group).
    Tokens(Group),
}

/// `input x[n];`, `uniform params;`, ...
#[derive(Clone)]
pub struct BufferDecl {
    /// Who writes it and who reads it.
    pub class: BufferClass,
    /// The buffer's name.
    pub name: Ident,
    /// Its length in elements (`uniform`: exactly one); a texture's width.
    pub len: ExtentExpr,
    /// `Some` for a texture (`input texture t[w, h] rgba8unorm;`,
    /// `parse/textures.rs`) or a sampler (`sampler s = linear clamp;`).
    pub texture: Option<TextureDecl>,
    /// `append [intermediate] name[CAP] [grow];`: an append buffer (class
    /// `Output`, or `Intermediate` when it stays on the device).
    pub append: Option<AppendDecl>,
}

/// An [`Extent`] as `graph!` spells it (`3 * n / 4 + 1`), for messages and
/// the generated docs.
#[derive(Clone, Copy, Debug)]
pub struct Written(pub Extent);

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Written(e) = *self;
        if e.mul == 0 {
            return write!(f, "{}", e.add);
        }
        match (e.mul, e.div) {
            (1, 1) => write!(f, "n")?,
            (m, 1) => write!(f, "{m} * n")?,
            (1, d) => write!(f, "n / {d}")?,
            (m, d) => write!(f, "{m} * n / {d}")?,
        }
        if e.add != 0 {
            write!(f, " + {}", e.add)?;
        }
        Ok(())
    }
}

/// A normalised size with the span of its first token.
#[derive(Clone, Copy, Debug)]
pub struct ExtentExpr {
    /// The value.
    pub extent: Extent,
    /// Where it was written.
    pub span: Span,
}

/// A node or a `repeat` block.
#[derive(Clone)]
pub enum NodeItem {
    /// `node ...;`
    Node(NodeDecl),
    /// `repeat K as i { node ...; ... }`
    Repeat(RepeatDecl),
}

/// `repeat count as var { nodes }`.
#[derive(Clone)]
pub struct RepeatDecl {
    /// How many times (at least 1).
    pub count: u64,
    /// The count literal's span.
    pub count_span: Span,
    /// The iteration variable.
    pub var: Ident,
    /// The body.
    pub nodes: Vec<NodeDecl>,
    /// `repeat up to K as i until ..`: the stopping condition.
    pub until: Option<UntilDecl>,
}

/// `node [label =] kernel(binding: buffer, ...) over E | grid [E, E, E] [with { .. }];`
#[derive(Clone)]
pub struct NodeDecl {
    /// The `node` keyword.
    pub keyword: Ident,
    /// An explicit label.
    pub label: Option<Ident>,
    /// The kernel it runs.
    pub kernel: Ident,
    /// The argument list's parentheses.
    pub args_span: Span,
    /// `binding: buffer` pairs.
    pub args: Vec<BindArg>,
    /// How many invocations or workgroups.
    pub size: SizeDecl,
    /// `with { NAME = value, ... }`.
    pub overrides: Vec<OverrideArg>,
    /// `unfused` after the size (or the `with` block): never fused.
    pub unfused: bool,
}

/// `binding: buffer`.
#[derive(Clone)]
pub struct BindArg {
    /// The kernel's WGSL global.
    pub binding: Ident,
    /// The graph buffer.
    pub target: BufferRef,
}

/// A buffer named in a node.
#[derive(Clone)]
pub enum BufferRef {
    /// A plain name.
    Name(Ident),
    /// `ping(a, b)` (a on even iterations) or `pong(a, b)` (b on even).
    Alternate {
        /// `ping` or `pong`.
        keyword: Ident,
        /// Whether it is `pong`.
        pong: bool,
        /// The first buffer.
        a: Ident,
        /// The second buffer.
        b: Ident,
    },
}

/// A node's dispatch size.
#[derive(Clone)]
pub enum SizeDecl {
    /// `over E`: invocations.
    Over(ExtentExpr),
    /// `grid [x, y, z]`: workgroups.
    Grid([ExtentExpr; 3]),
    /// `over count(b)` or `grid indirect(b)`: read on the device.
    Device(DeviceSize),
}

/// `NAME = value` inside `with { .. }`.
#[derive(Clone)]
pub struct OverrideArg {
    /// The override's name.
    pub name: Ident,
    /// Its value.
    pub value: ValueExpr,
}

/// An override value: literals and integer arithmetic on the `repeat`
/// variable.
#[derive(Clone, Debug)]
pub enum ValueExpr {
    /// An integer literal.
    Int(i128, Span),
    /// A float literal.
    Float(f64, Span),
    /// `true` or `false`.
    Bool(bool, Span),
    /// A variable (must be the enclosing `repeat`'s).
    Var(Ident),
    /// `-e`.
    Neg(Box<ValueExpr>, Span),
    /// `a op b`.
    Binary(Box<ValueExpr>, BinOp, Span, Box<ValueExpr>),
}

/// Arithmetic operators of override values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division, truncating)
    Div,
    /// `%`
    Rem,
}

/// The value of an override expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// A float literal.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

impl Value {
    /// As `f64`, the way wgpu passes overrides.
    pub fn as_f64(self) -> f64 {
        match self {
            // Values are bounded by the override type checks later; the
            // conversion is exact for everything a u32/i32 can hold.
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
            Value::Bool(b) => u8::from(b).into(),
        }
    }
}

impl ValueExpr {
    /// The span of the expression's first token.
    pub fn span(&self) -> Span {
        match self {
            ValueExpr::Int(_, s)
            | ValueExpr::Float(_, s)
            | ValueExpr::Bool(_, s)
            | ValueExpr::Neg(_, s) => *s,
            ValueExpr::Var(i) => i.span(),
            ValueExpr::Binary(l, ..) => l.span(),
        }
    }
}

/// `append` (and `grow`) on a buffer declaration.
#[derive(Clone, Debug)]
pub struct AppendDecl {
    /// `grow` was given (at this span): on overflow, grow and run again.
    pub grow: Option<Span>,
}

/// A size read on the device.
#[derive(Clone)]
pub enum DeviceSize {
    /// `over count(b)`.
    Count(BufferRef),
    /// `grid indirect(b)`.
    Indirect(BufferRef),
}

/// `until empty(b)` or `until zero(f)`.
#[derive(Clone)]
pub struct UntilDecl {
    /// `empty` or `zero`.
    pub keyword: Ident,
    /// Whether it is `zero` (a flag) rather than `empty` (a count).
    pub zero: bool,
    /// The buffer.
    pub target: BufferRef,
}

/// What a declared graph resource is beyond a buffer.
#[derive(Clone, Debug)]
pub enum TextureDecl {
    /// `input texture src[width, height] rgba8unorm;` and the other
    /// dimensions (the width is the declaration's `len`).
    Texture {
        /// The texel format.
        format: TexelFormat,
        /// 1D, 2D, 2D array or 3D.
        dim: TextureDimension,
        /// The height (1 for a 1D texture).
        height: ExtentExpr,
        /// Layers of a 2D array, depth of a 3D texture (1 otherwise).
        depth: ExtentExpr,
    },
    /// `sampler lin = linear clamp;`.
    Sampler(SamplerSpec),
}

impl TextureDecl {
    /// The format of a texture.
    pub fn format(&self) -> Option<TexelFormat> {
        match self {
            TextureDecl::Texture { format, .. } => Some(*format),
            TextureDecl::Sampler(_) => None,
        }
    }

    /// Whether a side other than the width depends on `n`.
    pub fn depends_on_n(&self) -> bool {
        match self {
            TextureDecl::Texture { height, depth, .. } => {
                height.extent.depends_on_n() || depth.extent.depends_on_n()
            }
            TextureDecl::Sampler(_) => false,
        }
    }

    /// Whether it is a sampler.
    pub fn is_sampler(&self) -> bool {
        matches!(self, TextureDecl::Sampler(_))
    }

    /// The runtime's description of it, the width being `width`.
    pub fn resource(&self, width: Extent) -> TextureResource {
        match *self {
            TextureDecl::Texture {
                format,
                dim,
                height,
                depth,
            } => TextureResource::Texture(TextureShape {
                format,
                dimension: dim,
                width,
                height: height.extent,
                depth_or_array_layers: depth.extent,
            }),
            TextureDecl::Sampler(sampler) => TextureResource::Sampler(sampler),
        }
    }
}

impl BufferDecl {
    /// A texture's sides as declared, the width first (only those of its
    /// dimension); empty for a buffer or a sampler.
    pub fn sides(&self) -> Vec<ExtentExpr> {
        match &self.texture {
            Some(TextureDecl::Texture {
                dim, height, depth, ..
            }) => [self.len, *height, *depth]
                .into_iter()
                .take(dim.sides().len())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A texture's extent as declared: `[n, 3]`.
    pub fn extent_text(&self) -> String {
        let sides: Vec<String> = self
            .sides()
            .iter()
            .map(|e| Written(e.extent).to_string())
            .collect();
        format!("[{}]", sides.join(", "))
    }

    /// Whether the problem size can be inferred from this input texture's
    /// texel count: exactly one side is `K * n`, the others are constants.
    pub fn texture_infers_n(&self) -> bool {
        let sides = self.sides();
        let free: Vec<&ExtentExpr> = sides.iter().filter(|e| e.extent.depends_on_n()).collect();
        matches!(free.as_slice(), [one] if one.extent.solvable())
    }

    /// Whether a run infers the problem size from this buffer: an `input`
    /// or `inout` whose length (a texture's texel count) is `K * n`.
    pub fn infers_n(&self) -> bool {
        matches!(self.class, BufferClass::Input | BufferClass::InOut)
            && ((self.texture.is_none() && self.len.extent.solvable()) || self.texture_infers_n())
    }

    /// Whether it is a sampler (never a host input).
    pub fn is_sampler(&self) -> bool {
        self.texture.as_ref().is_some_and(TextureDecl::is_sampler)
    }
}

// Built-in reductions and scans (`parse/reduce.rs`), lowered by
// `lower/reduce.rs` into generated kernels and ordinary nodes.

/// How two values combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `sum` (or its synonym `add`): wrapping for integers.
    Sum,
    /// `max`: NaN wins, `+0` over `-0`.
    Max,
    /// `min`: NaN wins, `-0` over `+0`.
    Min,
}

impl ReduceOp {
    /// The operation's name as written in the grammar.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// A reduction, or a scan and which kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    /// `reduce`: one value (per row).
    Reduce,
    /// `scan inclusive`: element `i` combines elements `0..=i`.
    Inclusive,
    /// `scan exclusive`: element `i` combines elements `0..i` (the identity first).
    Exclusive,
}

/// `node label = reduce op[<T>](src) [over [rows, cols]] -> dst;` or
/// `node label = scan inclusive|exclusive op[<T>](src) [over [..]] -> dst;`.
#[derive(Clone)]
pub struct ReduceDecl {
    /// Where in the graph's node items it stands (`GraphInput::items`
    /// index at parse time): it is lowered in place, in program order.
    pub at: usize,
    /// The `reduce` or `scan` keyword.
    pub keyword: Ident,
    /// The node's label (required).
    pub label: Ident,
    /// Reduction or which scan.
    pub kind: ReduceKind,
    /// A `scan` written without `inclusive` or `exclusive` (at the
    /// operation): parsed as inclusive so that the rest is checked and the
    /// error stub types its output; `check` reports it.
    pub kind_missing: Option<proc_macro2::Span>,
    /// The operation.
    pub op: ReduceOp,
    /// `<T>` when written: the element type.
    pub ty: Option<Ident>,
    /// The buffer reduced or scanned.
    pub src: Ident,
    /// `over [rows, cols]`: per row (`None`: the whole buffer).
    pub rows: Option<[ExtentExpr; 2]>,
    /// The buffer written.
    pub dst: Ident,
}
