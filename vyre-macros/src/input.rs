//! Stage 1: the `graph!` grammar, parsed with syn into a [`GraphInput`].
//!
//! Every parsed piece keeps the user's tokens (identifiers, literals, spans)
//! so later stages can point errors at exactly what the user wrote. Parsing
//! recovers at item boundaries: a malformed item is reported and skipped up
//! to its `;` (or the next item keyword), so one build shows every syntax
//! error. Sizes are normalised here (they are syntax); override values are
//! kept as expressions because they depend on the `repeat` variable.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Ident, LitFloat, LitInt, LitStr, Token, Visibility};
pub use vyre_analysis::BufferClass;

use crate::diag::Diagnostics;

/// The keywords that start an item, for messages and error recovery.
const ITEM_KEYWORDS: &[&str] = &[
    "kernel",
    "sampler",
    "input",
    "inout",
    "intermediate",
    "output",
    "append",
    "uniform",
    "node",
    "repeat",
    "limits",
    "features",
    "fuse",
];

const EXPECTED_ITEM: &str = "expected `kernel`, `input`, `inout`, `intermediate`, `output`, `append`, `uniform`, `sampler`, `node`, `repeat`, `limits`, `features` or `fuse`";

/// What sizes may look like, for messages.
pub const EXTENT_FORMS: &str = "sizes are written as an integer, `n`, `K * n`, `n * K`, `(...) / K` (rounds up) or `... + K`, with integer constants `K`";

/// Parentheses deeper than this are rejected (keeps recursion bounded).
const MAX_NESTING: usize = 32;

/// The whole macro input.
pub struct GraphInput {
    /// `pub struct Name;` with its attributes; `None` when it was missing or
    /// malformed (already reported).
    pub header: Option<Header>,
    /// `limits native;` was given (at this span).
    pub limits_native: Option<Span>,
    /// `fuse off;` was given (at this span): no node is fused.
    pub fuse_off: Option<Span>,
    /// `features [...]`: the device features declared, each once.
    pub features: Vec<&'static crate::features::Feature>,
    /// Kernel declarations in order.
    pub kernels: Vec<KernelDecl>,
    /// Buffer declarations in order.
    pub buffers: Vec<BufferDecl>,
    /// Nodes and `repeat` blocks in program order.
    pub items: Vec<NodeItem>,
}

/// The generated type's declaration.
pub struct Header {
    /// Doc comments and other attributes, copied onto the type.
    pub attrs: Vec<Attribute>,
    /// Its visibility (also used for the generated structs).
    pub vis: Visibility,
    /// Its name.
    pub name: Ident,
}

/// `kernel name = <source> [entry "main"];`
pub struct KernelDecl {
    /// The kernel's name in the graph.
    pub name: Ident,
    /// Where the WGSL comes from.
    pub source: KernelSource,
    /// `entry "name"`: the entry point to run.
    pub entry: Option<LitStr>,
}

/// The three ways to give WGSL.
pub enum KernelSource {
    /// `"..."`: a string literal.
    Literal(LitStr),
    /// `file "path.wgsl"`: relative to `CARGO_MANIFEST_DIR`.
    File(LitStr),
    /// `wgsl { ... }`: WGSL written as Rust tokens (the brace group).
    Tokens(Group),
}

/// `input x[n];`, `uniform params;`, ...
pub struct BufferDecl {
    /// Who writes it and who reads it.
    pub class: BufferClass,
    /// The buffer's name.
    pub name: Ident,
    /// Its length in elements (`uniform`: exactly one); a texture's width.
    pub len: ExtentExpr,
    /// `Some` for a texture (`input texture t[w, h] rgba8unorm;`) or a
    /// sampler (`sampler s = linear clamp;`).
    pub texture: Option<crate::textures::TextureDecl>,
    /// `append [intermediate] name[CAP] [grow];`: an append buffer (class
    /// `Output`, or `Intermediate` when it stays on the device).
    pub append: Option<crate::dynamic::AppendDecl>,
}

/// Element count or invocation count as a function of `n`:
/// `ceil(n * mul / div) + add`. Mirrors `vyre_graph::spec::Extent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Multiplier of `n` (0 for a constant).
    pub mul: u64,
    /// Divisor, rounding up (never 0).
    pub div: u64,
    /// Constant added.
    pub add: u64,
}

impl Extent {
    /// Exactly `n`.
    pub const N: Extent = Extent {
        mul: 1,
        div: 1,
        add: 0,
    };

    /// A constant.
    pub const fn constant(value: u64) -> Self {
        Extent {
            mul: 0,
            div: 1,
            add: value,
        }
    }

    /// Whether it depends on `n`.
    pub const fn depends_on_n(&self) -> bool {
        self.mul != 0
    }

    /// Whether a run can infer `n` from a buffer of this length (`K * n`).
    pub const fn solvable(&self) -> bool {
        self.mul != 0 && self.div == 1 && self.add == 0
    }
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.mul == 0 {
            return write!(f, "{}", self.add);
        }
        match (self.mul, self.div) {
            (1, 1) => write!(f, "n")?,
            (m, 1) => write!(f, "{m} * n")?,
            (1, d) => write!(f, "n / {d}")?,
            (m, d) => write!(f, "{m} * n / {d}")?,
        }
        if self.add != 0 {
            write!(f, " + {}", self.add)?;
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
pub enum NodeItem {
    /// `node ...;`
    Node(NodeDecl),
    /// `repeat K as i { node ...; ... }`
    Repeat(RepeatDecl),
}

/// `repeat count as var { nodes }`.
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
    pub until: Option<crate::dynamic::UntilDecl>,
}

/// `node [label =] kernel(binding: buffer, ...) over E | grid [E, E, E] [with { .. }];`
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
pub struct BindArg {
    /// The kernel's WGSL global.
    pub binding: Ident,
    /// The graph buffer.
    pub target: BufferRef,
}

/// A buffer named in a node.
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
pub enum SizeDecl {
    /// `over E`: invocations.
    Over(ExtentExpr),
    /// `grid [x, y, z]`: workgroups.
    Grid([ExtentExpr; 3]),
    /// `over count(b)` or `grid indirect(b)`: read on the device.
    Device(crate::dynamic::DeviceSize),
}

/// `NAME = value` inside `with { .. }`.
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

    /// Evaluates with the `repeat` variable bound to `var` (if any).
    pub fn eval(&self, var: Option<(&Ident, i128)>) -> syn::Result<Value> {
        match self {
            ValueExpr::Int(v, _) => Ok(Value::Int(*v)),
            ValueExpr::Float(v, _) => Ok(Value::Float(*v)),
            ValueExpr::Bool(b, _) => Ok(Value::Bool(*b)),
            ValueExpr::Var(ident) => match var {
                Some((name, value)) if name == ident => Ok(Value::Int(value)),
                Some((name, _)) => Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown variable `{ident}`: the only variable here is `{name}`, the iteration of the enclosing `repeat`"
                    ),
                )),
                None => Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown variable `{ident}`: override values may use a variable only inside `repeat K as {ident} {{ ... }}`"
                    ),
                )),
            },
            ValueExpr::Neg(inner, span) => match inner.eval(var)? {
                Value::Int(v) => v
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| overflow(*span)),
                Value::Float(v) => Ok(Value::Float(-v)),
                Value::Bool(_) => Err(syn::Error::new(
                    *span,
                    "cannot negate a bool override value",
                )),
            },
            ValueExpr::Binary(l, op, span, r) => {
                let (Value::Int(a), Value::Int(b)) = (l.eval(var)?, r.eval(var)?) else {
                    return Err(syn::Error::new(
                        *span,
                        "arithmetic in override values is integer-only; write a float as a plain literal",
                    ));
                };
                let result = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div | BinOp::Rem if b == 0 => {
                        return Err(syn::Error::new(*span, "division by zero in override value"));
                    }
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                };
                result.map(Value::Int).ok_or_else(|| overflow(*span))
            }
        }
    }
}

fn overflow(span: Span) -> syn::Error {
    syn::Error::new(span, "arithmetic overflow in override value")
}

/// Parses the macro input, reporting every syntax error into `diag`.
///
/// Always returns a [`GraphInput`] holding whatever parsed; callers must not
/// analyse the graph when `diag` holds errors (kernels that parsed may still
/// be checked).
pub fn parse(tokens: TokenStream, diag: &mut Diagnostics) -> GraphInput {
    let mut graph = GraphInput {
        header: None,
        limits_native: None,
        fuse_off: None,
        features: Vec::new(),
        kernels: Vec::new(),
        buffers: Vec::new(),
        items: Vec::new(),
    };
    let mut errors = Diagnostics::new();
    let parser = |input: ParseStream| -> syn::Result<()> {
        parse_graph(input, &mut graph, &mut errors);
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    diag.extend(errors);
    graph
}

fn parse_graph(input: ParseStream, graph: &mut GraphInput, diag: &mut Diagnostics) {
    if input.is_empty() {
        diag.error(
            Span::call_site(),
            "empty graph: expected `pub struct Name;` followed by kernels, buffers and nodes",
        );
        return;
    }
    // The header.
    let fork = input.fork();
    match parse_header(&fork) {
        Ok(header) => {
            input.advance_to(&fork);
            graph.header = Some(header);
        }
        Err(e) => {
            diag.push(e);
            recover(input);
        }
    }
    while !input.is_empty() {
        let fork = input.fork();
        match parse_item(&fork, graph, false) {
            Ok(()) => input.advance_to(&fork),
            Err(e) => {
                diag.push(e);
                recover(input);
            }
        }
    }
}

fn parse_header(input: ParseStream) -> syn::Result<Header> {
    let attrs = Attribute::parse_outer(input)?;
    let vis: Visibility = input.parse()?;
    if !input.peek(Token![struct]) {
        return Err(input.error(
            "graph! starts with the type to generate: expected `struct Name;` (with optional doc comments and visibility, e.g. `pub struct Saxpy;`)",
        ));
    }
    input.parse::<Token![struct]>()?;
    let name: Ident = input.parse()?;
    if !input.peek(Token![;]) {
        return Err(input.error(
            "expected `;` after the type name: the generated type has no body or generics (`pub struct Name;`)",
        ));
    }
    input.parse::<Token![;]>()?;
    Ok(Header { attrs, vis, name })
}

/// Skips a malformed item: at least one token, then up to and including a
/// `;`, or up to the next item keyword.
fn recover(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        let mut first = true;
        while let Some((tt, next)) = rest.token_tree() {
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ';' => return Ok(((), next)),
                TokenTree::Ident(i) if !first && is_item_keyword(i) => return Ok(((), rest)),
                _ => {}
            }
            first = false;
            rest = next;
        }
        Ok(((), rest))
    });
}

fn is_item_keyword(ident: &Ident) -> bool {
    ITEM_KEYWORDS.iter().any(|k| ident == k)
}

/// Doc comments on items are allowed (and ignored); other attributes are not.
fn skip_doc_comments(input: ParseStream) -> syn::Result<()> {
    for attr in Attribute::parse_outer(input)? {
        if !attr.path().is_ident("doc") {
            return Err(syn::Error::new_spanned(
                attr,
                "attributes are only allowed on the `struct` item; inside graph! only doc comments are accepted (and ignored)",
            ));
        }
    }
    Ok(())
}

fn parse_item(input: ParseStream, graph: &mut GraphInput, in_repeat: bool) -> syn::Result<()> {
    skip_doc_comments(input)?;
    if input.peek(Token![struct]) || input.peek(Token![pub]) {
        return Err(input.error(if graph.header.is_some() {
            "only one `struct` per graph!: the generated type is declared once, first"
        } else {
            "the `struct` item must come first in graph!"
        }));
    }
    let keyword: Ident = match input.parse() {
        Ok(k) => k,
        Err(_) => return Err(input.error(EXPECTED_ITEM)),
    };
    let word = keyword.to_string();
    match word.as_str() {
        "kernel" => {
            let k = parse_kernel(input)?;
            graph.kernels.push(k);
        }
        "input" | "inout" | "intermediate" | "output" | "uniform" | "append" => {
            let class = match word.as_str() {
                "append" => crate::dynamic::parse_append_class(input)?,
                "input" => BufferClass::Input,
                "inout" => BufferClass::InOut,
                "intermediate" => BufferClass::Intermediate,
                "output" => BufferClass::Output,
                _ => BufferClass::Uniform,
            };
            let b = if is_texture_decl(input) {
                parse_texture(input, class, keyword)?
            } else {
                parse_buffer(input, class, keyword)?
            };
            graph.buffers.push(b);
        }
        "sampler" => {
            let b = parse_sampler(input)?;
            graph.buffers.push(b);
        }
        "node" => {
            let n = parse_node(input, keyword)?;
            graph.items.push(NodeItem::Node(n));
        }
        "repeat" => {
            if in_repeat {
                return Err(syn::Error::new(
                    keyword.span(),
                    "`repeat` blocks cannot be nested",
                ));
            }
            let r = parse_repeat(input, keyword)?;
            graph.items.push(NodeItem::Repeat(r));
        }
        "limits" => {
            let mode: Ident = input.parse().map_err(|_| {
                input.error("expected `native` after `limits` (`limits native;` skips the WebGPU default limit checks)")
            })?;
            if mode != "native" {
                return Err(syn::Error::new(
                    mode.span(),
                    format!(
                        "unknown limits mode `{mode}`: the only mode is `native` (`limits native;` skips the WebGPU default limit checks)"
                    ),
                ));
            }
            expect_semi(input, "after `limits native`")?;
            if graph.limits_native.is_some() {
                return Err(syn::Error::new(
                    keyword.span(),
                    "`limits native;` is given twice",
                ));
            }
            graph.limits_native = Some(keyword.span());
        }
        "fuse" => {
            let mode: Ident = input.parse().map_err(|_| {
                input.error(
                    "expected `off` after `fuse` (`fuse off;` runs every node as its own dispatch)",
                )
            })?;
            if mode != "off" {
                return Err(syn::Error::new(
                    mode.span(),
                    format!(
                        "unknown fuse mode `{mode}`: the only mode is `off` (`fuse off;` runs every node as its own dispatch; fusion is on by default)"
                    ),
                ));
            }
            expect_semi(input, "after `fuse off`")?;
            if graph.fuse_off.is_some() {
                return Err(syn::Error::new(
                    keyword.span(),
                    "`fuse off;` is given twice",
                ));
            }
            graph.fuse_off = Some(keyword.span());
        }
        "features" => {
            let list;
            syn::bracketed!(list in input);
            let names =
                syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated(&list)?;
            expect_semi(input, "after `features [...]`")?;
            for name in names {
                let Some(feature) = crate::features::by_name(&name.to_string()) else {
                    return Err(syn::Error::new(
                        name.span(),
                        format!(
                            "unknown feature `{name}`: graph! knows {}",
                            crate::features::names()
                        ),
                    ));
                };
                if graph.features.iter().any(|f| f.name == feature.name) {
                    return Err(syn::Error::new(
                        name.span(),
                        format!("feature `{name}` is declared twice"),
                    ));
                }
                graph.features.push(feature);
            }
        }
        _ => {
            return Err(syn::Error::new(
                keyword.span(),
                format!("unknown item `{keyword}`: {EXPECTED_ITEM}"),
            ));
        }
    }
    Ok(())
}

fn expect_semi(input: ParseStream, context: &str) -> syn::Result<()> {
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
        Ok(())
    } else {
        // Name what was found, the way rustc does: the caret is on the next
        // token, often on the next line, after the spot that lacks the `;`.
        let found = input
            .fork()
            .parse::<TokenTree>()
            .map(|t| match t {
                TokenTree::Group(g) => match g.delimiter() {
                    Delimiter::Parenthesis => "`(`".to_owned(),
                    Delimiter::Brace => "`{`".to_owned(),
                    Delimiter::Bracket => "`[`".to_owned(),
                    Delimiter::None => "a token".to_owned(),
                },
                other => format!("`{other}`"),
            })
            .unwrap_or_else(|_| "the end of the graph".to_owned());
        Err(input.error(format!("expected `;` {context}, found {found}")))
    }
}

fn parse_kernel(input: ParseStream) -> syn::Result<KernelDecl> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error("expected the kernel's name: `kernel name = ...;`"))?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `kernel {name}`")));
    }
    input.parse::<Token![=]>()?;
    const FORMS: &str =
        "expected the kernel's WGSL: a string literal, `file \"path.wgsl\"` or `wgsl { ... }`";
    let source = if input.peek(LitStr) {
        KernelSource::Literal(input.parse()?)
    } else if input.peek(syn::Ident) {
        let word: Ident = input.parse()?;
        if word == "file" {
            let path: LitStr = input.parse().map_err(|_| {
                input.error("expected the path as a string literal: `file \"kernels/name.wgsl\"`")
            })?;
            KernelSource::File(path)
        } else if word == "wgsl" {
            let group = input.step(|cursor| match cursor.token_tree() {
                Some((TokenTree::Group(g), next)) if g.delimiter() == Delimiter::Brace => {
                    Ok((g, next))
                }
                _ => Err(cursor.error("expected `{` after `wgsl`: `wgsl { ... }`")),
            })?;
            KernelSource::Tokens(group)
        } else {
            return Err(syn::Error::new(word.span(), FORMS));
        }
    } else {
        return Err(input.error(FORMS));
    };
    let mut entry = None;
    if input.peek(syn::Ident) {
        let word: Ident = input.parse()?;
        if word != "entry" {
            return Err(syn::Error::new(
                word.span(),
                "expected `entry \"name\"` or `;` after the kernel's source",
            ));
        }
        entry = Some(input.parse::<LitStr>().map_err(|_| {
            input.error("expected the entry point's name as a string literal: `entry \"main\"`")
        })?);
    }
    expect_semi(input, "after the kernel declaration")?;
    Ok(KernelDecl {
        name,
        source,
        entry,
    })
}

fn parse_buffer(input: ParseStream, class: BufferClass, keyword: Ident) -> syn::Result<BufferDecl> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected the buffer's name after `{keyword}`")))?;
    let len = if class == BufferClass::Uniform {
        if input.peek(syn::token::Bracket) {
            return Err(input.error(
                "a uniform buffer holds exactly one value of the kernel's uniform type: write `uniform name;` without a size",
            ));
        }
        ExtentExpr {
            extent: Extent::constant(1),
            span: name.span(),
        }
    } else {
        if !input.peek(syn::token::Bracket) {
            return Err(input.error(format!(
                "expected the buffer's length in elements: `{keyword} {name}[n];` ({EXTENT_FORMS})"
            )));
        }
        let content;
        let bracket = syn::bracketed!(content in input);
        if content.is_empty() {
            return Err(syn::Error::new(
                bracket.span.join(),
                format!("expected a length: {EXTENT_FORMS}"),
            ));
        }
        let len = parse_extent(&content)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected token in the length: {EXTENT_FORMS}")));
        }
        len
    };
    let grow = crate::dynamic::parse_grow(input, &keyword, &name)?;
    expect_semi(input, "after the buffer declaration")?;
    let append = (keyword == "append").then_some(crate::dynamic::AppendDecl { grow });
    Ok(BufferDecl {
        class,
        name,
        len,
        texture: None,
        append,
    })
}

/// Whether `texture name` follows (a buffer may still be called
/// `texture`: `input texture[n];`).
fn is_texture_decl(input: ParseStream) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|w| w == "texture") && fork.peek(syn::Ident)
}

/// `texture name[width, height] format;` after the class keyword.
fn parse_texture(
    input: ParseStream,
    class: BufferClass,
    keyword: Ident,
) -> syn::Result<BufferDecl> {
    use crate::textures::{Format, TextureDecl};
    let texture: Ident = input.parse()?;
    if class == BufferClass::Uniform {
        return Err(syn::Error::new(
            texture.span(),
            "a texture cannot be `uniform`: declare it `input`, `inout`, `intermediate` or `output`",
        ));
    }
    let name: Ident = input.parse().map_err(|_| {
        input.error(format!(
            "expected the texture's name after `{keyword} texture`"
        ))
    })?;
    let shape_help = format!(
        "expected the texture's size: `{keyword} texture {name}[width, height] rgba8unorm;` ({EXTENT_FORMS})"
    );
    if !input.peek(syn::token::Bracket) {
        return Err(input.error(shape_help));
    }
    let content;
    let bracket = syn::bracketed!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(bracket.span.join(), shape_help));
    }
    let width = parse_extent(&content)?;
    if !content.peek(Token![,]) {
        return Err(content.error(format!(
            "expected `,` and the height: a texture is `[width, height]` ({EXTENT_FORMS})"
        )));
    }
    content.parse::<Token![,]>()?;
    let height = parse_extent(&content)?;
    if !content.is_empty() {
        return Err(content.error(format!(
            "unexpected token in the texture's size: {EXTENT_FORMS}"
        )));
    }
    let format: Ident = input.parse().map_err(|_| {
        input.error(format!(
            "expected the texture's format after its size: one of {}",
            Format::names()
        ))
    })?;
    let Some(parsed) = Format::by_name(&format.to_string()) else {
        return Err(syn::Error::new(
            format.span(),
            format!(
                "unknown texture format `{format}`: graph textures are {}",
                Format::names()
            ),
        ));
    };
    expect_semi(input, "after the texture declaration")?;
    Ok(BufferDecl {
        class,
        name,
        len: width,
        texture: Some(TextureDecl::Texture {
            format: parsed,
            height,
        }),
        append: None,
    })
}

/// `sampler name = filter address;`.
fn parse_sampler(input: ParseStream) -> syn::Result<BufferDecl> {
    use crate::textures::{Address, Filter, TextureDecl};
    const FORM: &str = "a sampler is `sampler name = nearest|linear clamp|repeat|mirror;`";
    let name: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected the sampler's name: {FORM}")))?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `sampler {name}`: {FORM}")));
    }
    input.parse::<Token![=]>()?;
    let filter: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected `nearest` or `linear`: {FORM}")))?;
    let filter = match filter.to_string().as_str() {
        "nearest" => Filter::Nearest,
        "linear" => Filter::Linear,
        _ => {
            return Err(syn::Error::new(
                filter.span(),
                format!("unknown filter `{filter}`: {FORM}"),
            ));
        }
    };
    let address: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected `clamp`, `repeat` or `mirror`: {FORM}")))?;
    let address = match address.to_string().as_str() {
        "clamp" => Address::Clamp,
        "repeat" => Address::Repeat,
        "mirror" => Address::Mirror,
        _ => {
            return Err(syn::Error::new(
                address.span(),
                format!("unknown address mode `{address}`: {FORM}"),
            ));
        }
    };
    expect_semi(input, "after the sampler declaration")?;
    Ok(BufferDecl {
        class: BufferClass::Input,
        len: ExtentExpr {
            extent: Extent::constant(1),
            span: name.span(),
        },
        name,
        texture: Some(TextureDecl::Sampler { filter, address }),
        append: None,
    })
}

fn parse_node(input: ParseStream, keyword: Ident) -> syn::Result<NodeDecl> {
    let first: Ident = input.parse().map_err(|_| {
        input.error("expected the kernel to run: `node kernel(binding: buffer, ...) over n;` or `node label = kernel(...) over n;`")
    })?;
    let (label, kernel) = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let kernel: Ident = input.parse().map_err(|_| {
            input.error(format!("expected the kernel to run after `node {first} =`"))
        })?;
        (Some(first), kernel)
    } else {
        (None, first)
    };
    if !input.peek(syn::token::Paren) {
        return Err(input.error(format!(
            "expected the node's bindings: `{kernel}(binding: buffer, ...)`"
        )));
    }
    let content;
    let paren = syn::parenthesized!(content in input);
    let mut args = Vec::new();
    while !content.is_empty() {
        let binding: Ident = content
            .parse()
            .map_err(|_| content.error("expected `binding: buffer`, with `binding` the name of one of the kernel's WGSL globals"))?;
        if !content.peek(Token![:]) {
            return Err(content.error(format!(
                "expected `:` after `{binding}` (`{binding}: buffer`)"
            )));
        }
        content.parse::<Token![:]>()?;
        let target = parse_buffer_ref(&content)?;
        args.push(BindArg { binding, target });
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error("expected `,` between bindings"));
        }
        content.parse::<Token![,]>()?;
    }
    let size_kw: Ident = input.parse().map_err(|_| {
        input.error(
            "expected the node's size: `over <invocations>` or `grid [x, y, z]` (workgroups)",
        )
    })?;
    let size = if size_kw == "over" && crate::dynamic::peek_call(input, "count") {
        SizeDecl::Device(crate::dynamic::parse_count(input)?)
    } else if size_kw == "grid" && crate::dynamic::peek_call(input, "indirect") {
        SizeDecl::Device(crate::dynamic::parse_indirect(input)?)
    } else if size_kw == "over" {
        SizeDecl::Over(parse_extent(input)?)
    } else if size_kw == "grid" {
        if !input.peek(syn::token::Bracket) {
            return Err(input.error("expected `[x, y, z]` after `grid`: three workgroup counts"));
        }
        let content;
        let bracket = syn::bracketed!(content in input);
        let mut dims = Vec::new();
        while !content.is_empty() {
            dims.push(parse_extent(&content)?);
            if content.is_empty() {
                break;
            }
            if !content.peek(Token![,]) {
                return Err(content.error(format!(
                    "expected `,` between workgroup counts; {EXTENT_FORMS}"
                )));
            }
            content.parse::<Token![,]>()?;
        }
        match <[ExtentExpr; 3]>::try_from(dims) {
            Ok(dims) => SizeDecl::Grid(dims),
            Err(dims) => {
                return Err(syn::Error::new(
                    bracket.span.join(),
                    format!(
                        "`grid` takes exactly three workgroup counts `[x, y, z]`, found {}",
                        dims.len()
                    ),
                ));
            }
        }
    } else {
        return Err(syn::Error::new(
            size_kw.span(),
            "expected the node's size: `over <invocations>` or `grid [x, y, z]` (workgroups)",
        ));
    };
    let mut overrides = Vec::new();
    // `node a(..) over n node b(..)`: a forgotten `;`, not a misspelt `with`.
    let next_is_item = input
        .fork()
        .parse::<Ident>()
        .is_ok_and(|i| is_item_keyword(&i));
    let mut unfused = parse_unfused(input);
    if !unfused && input.peek(syn::Ident) && !next_is_item {
        let with: Ident = input.parse()?;
        if with != "with" {
            return Err(syn::Error::new(
                with.span(),
                format!(
                    "expected `with {{ NAME = value, ... }}`, `unfused` or `;` after the node's size, found `{with}`"
                ),
            ));
        }
        if !input.peek(syn::token::Brace) {
            return Err(input.error("expected `{` after `with`: `with { NAME = value, ... }`"));
        }
        let content;
        syn::braced!(content in input);
        while !content.is_empty() {
            let name: Ident = content.parse().map_err(|_| {
                content.error("expected `NAME = value`, with `NAME` an `override` of the kernel")
            })?;
            if !content.peek(Token![=]) {
                return Err(content.error(format!("expected `=` after `{name}`")));
            }
            content.parse::<Token![=]>()?;
            let value = parse_value(&content, 0)?;
            overrides.push(OverrideArg { name, value });
            if content.is_empty() {
                break;
            }
            if !content.peek(Token![,]) {
                return Err(content.error(
                    "expected `,` between overrides; values are integer, float or bool literals, or integer arithmetic (`+ - * / %`) on the `repeat` variable",
                ));
            }
            content.parse::<Token![,]>()?;
        }
        unfused = parse_unfused(input);
    }
    expect_semi(input, "after the node")?;
    Ok(NodeDecl {
        keyword,
        label,
        kernel,
        args_span: paren.span.join(),
        args,
        size,
        overrides,
        unfused,
    })
}

/// An optional `unfused` after a node's size or `with` block.
fn parse_unfused(input: ParseStream) -> bool {
    let is_unfused = input.fork().parse::<Ident>().is_ok_and(|i| i == "unfused");
    if is_unfused {
        let _ = input.parse::<Ident>();
    }
    is_unfused
}

pub(crate) fn parse_buffer_ref(input: ParseStream) -> syn::Result<BufferRef> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error("expected a buffer name, `ping(a, b)` or `pong(a, b)`"))?;
    if (name == "ping" || name == "pong") && input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let a: Ident = content.parse()?;
        content.parse::<Token![,]>()?;
        let b: Ident = content.parse()?;
        if content.peek(Token![,]) {
            content.parse::<Token![,]>()?;
        }
        if !content.is_empty() {
            return Err(content.error(format!(
                "`{name}` takes exactly two buffers: `{name}(a, b)`"
            )));
        }
        let pong = name == "pong";
        return Ok(BufferRef::Alternate {
            keyword: name,
            pong,
            a,
            b,
        });
    }
    Ok(BufferRef::Name(name))
}

fn parse_repeat(input: ParseStream, keyword: Ident) -> syn::Result<RepeatDecl> {
    let up_to = crate::dynamic::parse_up_to(input)?;
    let (count, count_span) = match up_to {
        Some(c) => c,
        None => {
            let count_lit: LitInt = input
                .parse()
                .map_err(|_| input.error("expected an iteration count: `repeat 4 as i { ... }`"))?;
            let count: u64 = count_lit.base10_parse().map_err(|_| {
                syn::Error::new(
                    count_lit.span(),
                    "repeat count too large (it must fit in 64 bits and be unrolled at compile time)",
                )
            })?;
            if count == 0 {
                return Err(syn::Error::new(
                    count_lit.span(),
                    "`repeat 0` runs nothing; remove the block or use a count of at least 1",
                ));
            }
            (count, count_lit.span())
        }
    };
    if !input.peek(Token![as]) {
        return Err(
            input.error("expected `as` and the iteration variable: `repeat 4 as i { ... }`")
        );
    }
    input.parse::<Token![as]>()?;
    let var: Ident = input
        .parse()
        .map_err(|_| input.error("expected the iteration variable's name after `as`"))?;
    let until = if up_to.is_some() {
        Some(crate::dynamic::parse_until(input)?)
    } else {
        crate::dynamic::reject_until(input)?;
        None
    };
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected `{ node ...; }`: the nodes to repeat"));
    }
    let content;
    syn::braced!(content in input);
    let mut nodes = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut note = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    while !content.is_empty() {
        let fork = content.fork();
        let parsed = (|| -> syn::Result<NodeDecl> {
            skip_doc_comments(&fork)?;
            let kw: Ident = fork
                .parse()
                .map_err(|_| fork.error("expected `node` inside `repeat`"))?;
            if kw == "repeat" {
                return Err(syn::Error::new(
                    kw.span(),
                    "`repeat` blocks cannot be nested",
                ));
            }
            if kw != "node" {
                return Err(syn::Error::new(
                    kw.span(),
                    format!(
                        "expected `node` inside `repeat`, found `{kw}`: declare kernels and buffers outside the block"
                    ),
                ));
            }
            parse_node(&fork, kw)
        })();
        match parsed {
            Ok(node) => {
                content.advance_to(&fork);
                nodes.push(node);
            }
            Err(e) => {
                note(e);
                recover(&content);
            }
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
    }
    if nodes.is_empty() {
        return Err(syn::Error::new(
            keyword.span(),
            "empty `repeat` block: put at least one `node` inside",
        ));
    }
    Ok(RepeatDecl {
        count,
        count_span,
        var,
        nodes,
        until,
    })
}

// ---------------------------------------------------------------------------
// Sizes

/// A size expression before normalisation.
enum SizeAst {
    Int(u64),
    N,
    Add(Box<SizeAst>, Box<SizeAst>, Span),
    Mul(Box<SizeAst>, Box<SizeAst>, Span),
    Div(Box<SizeAst>, Box<SizeAst>, Span),
}

/// Parses and normalises a size; stops before the first token that cannot
/// continue it (`,`, `;`, `with`, ...).
pub fn parse_extent(input: ParseStream) -> syn::Result<ExtentExpr> {
    let span = input.span();
    let ast = parse_size_sum(input, 0)?;
    let extent = normalise(&ast)?;
    Ok(ExtentExpr { extent, span })
}

fn parse_size_sum(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    let mut lhs = parse_size_product(input, depth)?;
    loop {
        if input.peek(Token![+]) {
            let op: Token![+] = input.parse()?;
            let rhs = parse_size_product(input, depth)?;
            lhs = SizeAst::Add(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![-]) {
            return Err(input.error(format!(
                "subtraction is not supported in sizes; {EXTENT_FORMS}"
            )));
        } else {
            return Ok(lhs);
        }
    }
}

fn parse_size_product(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    let mut lhs = parse_size_atom(input, depth)?;
    loop {
        if input.peek(Token![*]) {
            let op: Token![*] = input.parse()?;
            let rhs = parse_size_atom(input, depth)?;
            lhs = SizeAst::Mul(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![/]) {
            let op: Token![/] = input.parse()?;
            let rhs = parse_size_atom(input, depth)?;
            lhs = SizeAst::Div(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![%]) {
            return Err(input.error(format!("`%` is not supported in sizes; {EXTENT_FORMS}")));
        } else {
            return Ok(lhs);
        }
    }
}

fn parse_size_atom(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let value: u64 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "size too large: it must fit in 64 bits"))?;
        return Ok(SizeAst::Int(value));
    }
    if input.peek(syn::Ident) {
        let ident: Ident = input.parse()?;
        if ident == "n" {
            return Ok(SizeAst::N);
        }
        return Err(syn::Error::new(
            ident.span(),
            format!(
                "unknown size variable `{ident}`: sizes depend only on the problem size `n`; {EXTENT_FORMS}"
            ),
        ));
    }
    if input.peek(syn::token::Paren) {
        if depth >= MAX_NESTING {
            return Err(input.error("size expression nested too deeply"));
        }
        let content;
        syn::parenthesized!(content in input);
        let inner = parse_size_sum(&content, depth + 1)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected token in size; {EXTENT_FORMS}")));
        }
        return Ok(inner);
    }
    Err(input.error(format!("expected a size: {EXTENT_FORMS}")))
}

fn too_large(span: Span) -> syn::Error {
    syn::Error::new(span, "size arithmetic overflows 64 bits")
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn reduce(e: Extent) -> Extent {
    if e.mul == 0 {
        return Extent::constant(e.add);
    }
    let g = gcd(e.mul, e.div).max(1);
    Extent {
        mul: e.mul / g,
        div: e.div / g,
        add: e.add,
    }
}

fn normalise(ast: &SizeAst) -> syn::Result<Extent> {
    Ok(reduce(match ast {
        SizeAst::Int(v) => Extent::constant(*v),
        SizeAst::N => Extent::N,
        SizeAst::Add(a, b, op) => {
            let (a, b) = (normalise(a)?, normalise(b)?);
            let (var, c) = match (a.depends_on_n(), b.depends_on_n()) {
                (_, false) => (a, b.add),
                (false, true) => (b, a.add),
                (true, true) => {
                    return Err(syn::Error::new(
                        *op,
                        format!("cannot add two sizes that both depend on `n`; {EXTENT_FORMS}"),
                    ));
                }
            };
            Extent {
                add: var.add.checked_add(c).ok_or_else(|| too_large(*op))?,
                ..var
            }
        }
        SizeAst::Mul(a, b, op) => {
            let (a, b) = (normalise(a)?, normalise(b)?);
            let (var, c) = match (a.depends_on_n(), b.depends_on_n()) {
                (_, false) => (a, b.add),
                (false, true) => (b, a.add),
                (true, true) => {
                    return Err(syn::Error::new(
                        *op,
                        format!(
                            "sizes are linear in `n`: `n * n` is not supported; {EXTENT_FORMS}"
                        ),
                    ));
                }
            };
            if var.div != 1 {
                return Err(syn::Error::new(
                    *op,
                    format!(
                        "multiply before dividing: write `(K * n) / D` rather than `(n / D) * K`; {EXTENT_FORMS}"
                    ),
                ));
            }
            let mul = var.mul.checked_mul(c).ok_or_else(|| too_large(*op))?;
            let add = var.add.checked_mul(c).ok_or_else(|| too_large(*op))?;
            Extent { mul, div: 1, add }
        }
        SizeAst::Div(a, b, op) => {
            let (a, b) = (normalise(a)?, normalise(b)?);
            if b.depends_on_n() {
                return Err(syn::Error::new(
                    *op,
                    format!("sizes can only be divided by a constant; {EXTENT_FORMS}"),
                ));
            }
            if b.add == 0 {
                return Err(syn::Error::new(*op, "division by zero in size"));
            }
            if !a.depends_on_n() {
                Extent::constant(a.add.div_ceil(b.add))
            } else if a.add != 0 {
                return Err(syn::Error::new(
                    *op,
                    format!(
                        "cannot divide a sum: `(K * n + C) / D` is not supported; add constants after dividing; {EXTENT_FORMS}"
                    ),
                ));
            } else {
                // ceil(ceil(x / d) / k) == ceil(x / (d * k)) for positive integers.
                let div = a.div.checked_mul(b.add).ok_or_else(|| too_large(*op))?;
                Extent {
                    mul: a.mul,
                    div,
                    add: 0,
                }
            }
        }
    }))
}

// ---------------------------------------------------------------------------
// Override values

fn parse_value(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    let mut lhs = parse_value_product(input, depth)?;
    loop {
        let op = if input.peek(Token![+]) {
            BinOp::Add
        } else if input.peek(Token![-]) {
            BinOp::Sub
        } else {
            return Ok(lhs);
        };
        let span = input.span();
        let _: TokenTree = input.parse()?;
        let rhs = parse_value_product(input, depth)?;
        lhs = ValueExpr::Binary(Box::new(lhs), op, span, Box::new(rhs));
    }
}

fn parse_value_product(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    let mut lhs = parse_value_unary(input, depth)?;
    loop {
        let op = if input.peek(Token![*]) {
            BinOp::Mul
        } else if input.peek(Token![/]) {
            BinOp::Div
        } else if input.peek(Token![%]) {
            BinOp::Rem
        } else {
            return Ok(lhs);
        };
        let span = input.span();
        let _: TokenTree = input.parse()?;
        let rhs = parse_value_unary(input, depth)?;
        lhs = ValueExpr::Binary(Box::new(lhs), op, span, Box::new(rhs));
    }
}

fn parse_value_unary(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    if input.peek(Token![-]) {
        if depth >= MAX_NESTING {
            return Err(input.error("override value nested too deeply"));
        }
        let minus: Token![-] = input.parse()?;
        let inner = parse_value_unary(input, depth + 1)?;
        return Ok(ValueExpr::Neg(Box::new(inner), minus.span));
    }
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let value: i128 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "integer too large for an override value"))?;
        return Ok(ValueExpr::Int(value, lit.span()));
    }
    if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        let value: f64 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "invalid float literal"))?;
        if !value.is_finite() {
            return Err(syn::Error::new(
                lit.span(),
                "override values must be finite",
            ));
        }
        return Ok(ValueExpr::Float(value, lit.span()));
    }
    if input.peek(syn::LitBool) {
        let lit: syn::LitBool = input.parse()?;
        return Ok(ValueExpr::Bool(lit.value, lit.span));
    }
    if input.peek(syn::Ident) {
        return Ok(ValueExpr::Var(input.parse()?));
    }
    if input.peek(syn::token::Paren) {
        if depth >= MAX_NESTING {
            return Err(input.error("override value nested too deeply"));
        }
        let content;
        syn::parenthesized!(content in input);
        let inner = parse_value(&content, depth + 1)?;
        if !content.is_empty() {
            return Err(content.error("unexpected token in override value"));
        }
        return Ok(inner);
    }
    Err(input.error(
        "expected an override value: an integer, float or bool literal, or integer arithmetic (`+ - * / %`, parentheses) on the `repeat` variable",
    ))
}
