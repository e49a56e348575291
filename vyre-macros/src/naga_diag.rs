//! naga's errors rewritten for WGSL users ([`Rewritten`]).
//!
//! naga reports the symptom where it noticed it, in its own IR's words
//! (arena handles, `Debug` types, "Entry point main at Compute is
//! invalid"). This module finds the culprit with naga's own IR and span
//! tables and says what is wrong in WGSL's words:
//!
//! * a `let`/`var` whose initializer has the wrong type: the initializer,
//!   with the annotation as a second site;
//! * a missing token (`expected `;``): the point just after the previous
//!   token, where the token goes;
//! * an invalid expression or store: the whole expression;
//! * a type error without a span (`f64` without its capability): the global,
//!   struct member or local whose type it is.
//!
//! Everything here is plain data over byte ranges of the kernel's text (it
//! crosses from naga's thread); `validate.rs` maps the ranges to the user's
//! source and renders the error.

use std::ops::Range;

use naga::common::wgsl::TypeContext;
use naga::front::wgsl::ParseError;
use naga::valid::{FunctionError, ValidationError};
use naga::{Expression, Handle, Module, Type, TypeInner, WithSpan};

/// What kind of mistake an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The text is not WGSL.
    Syntax,
    /// A value has the wrong type.
    Type,
    /// Well-typed WGSL that breaks one of WGSL's rules.
    Validation,
}

impl Class {
    /// The headline's first words.
    pub fn title(self) -> &'static str {
        match self {
            Class::Syntax => "WGSL syntax error",
            Class::Type => "WGSL type error",
            Class::Validation => "WGSL validation error",
        }
    }
}

/// A byte range of the kernel's text and what to say there. An empty range
/// is an insertion point (where a missing token goes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Bytes of the kernel's text.
    pub range: Range<usize>,
    /// The label (shown under the code, or in a note).
    pub text: String,
}

/// A naga error, rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// Syntax, type or validation.
    pub class: Class,
    /// The headline, in WGSL's words (no handles, no IR types).
    pub message: String,
    /// The culprit; `None` when naga gave no place and none was found.
    pub primary: Option<Label>,
    /// Further sites (an annotation, a previous definition).
    pub secondary: Vec<Label>,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// naga's own message (tidied), kept as a note.
    pub original: String,
}

// ---------------------------------------------------------------------------
// Parse errors

/// naga front-end messages that are about types, not syntax.
const TYPE_MESSAGES: &[&str] = &[
    "is expected to be",
    "automatic conversions",
    "type mismatch",
    "expected a scalar",
    "scalar type must be",
    "invalid type for constructor",
    "unexpected argument type",
    "type can't be inferred",
    "failed to convert expression",
    "not constructible",
    "must resolve to `bool`",
    "atomic operand type",
    "wrong number of arguments",
];

/// Rewrites a front-end error of `source`.
pub fn from_parse(e: &ParseError, source: &str) -> Rewritten {
    let message = e.message().to_owned();
    let labels: Vec<Label> = e
        .labels()
        .filter_map(|(span, text)| {
            span.to_range().map(|range| Label {
                range: clamp(range, source),
                text: text.to_owned(),
            })
        })
        .collect();
    let original = message.clone();
    let class = if TYPE_MESSAGES.iter().any(|p| message.contains(p)) {
        Class::Type
    } else {
        Class::Syntax
    };
    let mut out = Rewritten {
        class,
        message: backquote_found(&message),
        primary: labels.first().cloned(),
        secondary: labels.iter().skip(1).cloned().collect(),
        help: None,
        original,
    };
    if let Some((name, expected, got)) = initializer_mismatch(&message)
        && let Some(first) = labels.first()
        && let Some(decl) = scan_declaration(source, first.range.end)
    {
        let got_words = type_words(got);
        out.message =
            format!("`{name}` is declared `{expected}` but initialized with `{got_words}`");
        let init_text = source.get(decl.init.clone()).unwrap_or_default().trim();
        out.primary = Some(Label {
            range: decl.init,
            text: format!("this is `{got_words}`"),
        });
        out.secondary = vec![Label {
            range: decl.annotation,
            text: format!("`{name}` is declared `{expected}` here"),
        }];
        let concrete = concrete(got);
        out.help = Some(if concrete == expected {
            format!("remove the annotation `: {expected}`")
        } else {
            format!(
                "WGSL never converts implicitly: write `{expected}({init_text})`, or declare `{name}: {concrete}`"
            )
        });
    } else if let Some((expected, found)) = expected_found(&message) {
        if let Some(token) = missing_token(expected)
            && let Some(first) = labels.first()
        {
            let at = end_of_previous_token(source, first.range.start);
            let same_line = !source
                .get(at..first.range.start)
                .unwrap_or_default()
                .contains('\n');
            out.message = if same_line {
                format!("expected `{token}` before `{found}`")
            } else {
                format!("missing `{token}` at the end of the line")
            };
            out.primary = Some(Label {
                range: at..at,
                text: format!("add `{token}` here"),
            });
            out.help = Some(if same_line {
                format!("if `{found}` continues the expression, an operator is missing before it")
            } else {
                format!("end the statement with `{token}`")
            });
        } else if let Some(first) = out.primary.as_mut() {
            first.text = format!("expected {expected}");
            out.message = format!("expected {expected}, found `{found}`");
        }
    } else if message.starts_with("automatic conversions cannot convert") {
        out.help = Some(
            "WGSL never converts implicitly: convert it explicitly, e.g. `f32(x)` or `u32(x)`"
                .to_owned(),
        );
    }
    out.message = words(&out.message);
    out
}

/// `(name, expected, got)` of naga's "the type of `x` is expected to be
/// `u32`, but got `f32`".
fn initializer_mismatch(message: &str) -> Option<(&str, &str, &str)> {
    let rest = message.strip_prefix("the type of `")?;
    let (name, rest) = rest.split_once("` is expected to be `")?;
    let (expected, rest) = rest.split_once("`, but got `")?;
    let got = rest.strip_suffix('`')?;
    Some((name, expected, got))
}

/// `(expected, found)` of naga's "expected X, found "Y"".
fn expected_found(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("expected ")?;
    let (expected, found) = rest.rsplit_once(", found ")?;
    let found = found
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(found);
    Some((expected, found))
}

/// The token of an "expected `;`"-style message when it names exactly one
/// punctuation token that can simply be missing.
fn missing_token(expected: &str) -> Option<&str> {
    let token = expected.strip_prefix('`')?.strip_suffix('`')?;
    [";", ",", ")", "]", "}", ":", ">", "="]
        .contains(&token)
        .then_some(token)
}

/// naga's `found "2.0"` with back-quotes, the way every other message
/// quotes code.
fn backquote_found(message: &str) -> String {
    match expected_found(message) {
        Some((expected, found)) => format!("expected {expected}, found `{found}`"),
        None => message.to_owned(),
    }
}

/// The byte just after the last non-blank character before `offset` (the
/// end of the previous token; a `//` comment after it is skipped).
fn end_of_previous_token(source: &str, offset: usize) -> usize {
    let before = source.get(..offset.min(source.len())).unwrap_or_default();
    let mut lines: Vec<&str> = before.split('\n').collect();
    let mut base = before.len();
    while let Some(line) = lines.pop() {
        base -= line.len();
        let code = match line.find("//") {
            Some(i) => line.get(..i).unwrap_or(line),
            None => line,
        };
        let trimmed = code.trim_end();
        if !trimmed.is_empty() {
            return base + trimmed.len();
        }
        // The newline before this line.
        base = base.saturating_sub(1);
    }
    offset
}

/// The annotation and the initializer of the declaration whose name ends
/// at `name_end`: `name: T = init;`.
struct Declaration {
    /// `: T` without the colon.
    annotation: Range<usize>,
    /// `init`, trimmed.
    init: Range<usize>,
}

/// Finds `: T = init` after a declared name, brackets balanced.
fn scan_declaration(source: &str, name_end: usize) -> Option<Declaration> {
    let bytes = source.as_bytes();
    let skip_ws = |mut i: usize| {
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let colon = skip_ws(name_end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let ty_start = skip_ws(colon + 1);
    // The type ends at the `=` outside `<...>`.
    let mut depth = 0i32;
    let mut i = ty_start;
    let eq = loop {
        match bytes.get(i)? {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b'=' if depth <= 0 => break i,
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
        i += 1;
    };
    let ty_end = trim_end_at(source, ty_start, eq);
    let init_start = skip_ws(eq + 1);
    let mut depth = 0i32;
    let mut i = init_start;
    let semi = loop {
        match bytes.get(i) {
            None => break i,
            Some(b'(' | b'[' | b'{') => depth += 1,
            Some(b')' | b']' | b'}') if depth > 0 => depth -= 1,
            Some(b')' | b']' | b'}') => break i,
            Some(b';') if depth == 0 => break i,
            _ => {}
        }
        i += 1;
    };
    let init_end = trim_end_at(source, init_start, semi);
    (ty_end > ty_start && init_end > init_start).then_some(Declaration {
        annotation: ty_start..ty_end,
        init: init_start..init_end,
    })
}

/// `end` moved back over whitespace, not before `start`.
fn trim_end_at(source: &str, start: usize, end: usize) -> usize {
    let text = source.get(start..end).unwrap_or_default();
    start + text.trim_end().len()
}

/// naga's `{AbstractFloat}` as WGSL's spec names it.
fn type_words(ty: &str) -> String {
    ty.replace("{AbstractFloat}", "AbstractFloat")
        .replace("{AbstractInt}", "AbstractInt")
}

/// The concrete type an abstract one becomes by default.
fn concrete(ty: &str) -> &str {
    match ty {
        "{AbstractFloat}" => "f32",
        "{AbstractInt}" => "i32",
        other => other,
    }
}

// ---------------------------------------------------------------------------
// Validation errors

/// Rewrites a validator error of `module` (parsed from `source`).
pub fn from_validation(e: &WithSpan<ValidationError>, module: &Module, source: &str) -> Rewritten {
    let inner = e.as_inner();
    let chain = error_chain(inner);
    let original = tidy(&chain.join(": "));
    // naga's spans: the most specific (shortest) is the culprit; it adds
    // the enclosing function or statement as further spans.
    let mut labels: Vec<Label> = e
        .spans()
        .filter_map(|(span, text)| {
            span.to_range().map(|range| Label {
                range: clamp(range, source),
                text: tidy(text),
            })
        })
        .collect();
    labels.sort_by_key(|l| l.range.len());
    let mut out = Rewritten {
        class: Class::Validation,
        message: innermost(&chain),
        primary: labels.first().cloned(),
        secondary: Vec::new(),
        help: None,
        original,
    };
    match inner {
        ValidationError::EntryPoint { name, source, .. } => {
            if let naga::valid::EntryPointError::Function(fe) = source
                && let Some(ep) = module.entry_points.iter().find(|ep| &ep.name == name)
            {
                function_error(fe, &ep.function, module, &mut out);
            }
        }
        ValidationError::Function { handle, source, .. } => {
            if let Ok(function) = module.functions.try_get(*handle) {
                function_error(source, function, module, &mut out);
            }
        }
        ValidationError::Type { handle, .. } => {
            out.class = Class::Type;
            type_site(*handle, module, source, &mut out);
        }
        ValidationError::GlobalVariable { handle, .. } if out.primary.is_none() => {
            let span = module.global_variables.get_span(*handle);
            out.primary = span.to_range().map(|range| Label {
                range: clamp(range, source),
                text: String::new(),
            });
        }
        _ => {}
    }
    if let Some(cap) = capability(&chain) {
        out.message = format!("{cap} (not in WebGPU's defaults)");
        out.help = Some(
            "write `limits native;` in graph! to allow it (the device must then support it)"
                .to_owned(),
        );
    }
    out.message = words(&out.message);
    out
}

/// Culprits inside a function.
fn function_error(
    e: &FunctionError,
    function: &naga::Function,
    module: &Module,
    out: &mut Rewritten,
) {
    match e {
        FunctionError::InvalidStorePointer(pointer) => {
            let root = root_variable(function, *pointer);
            out.message = match root {
                Some(Root::Global(g)) => {
                    let global = module.global_variables.try_get(g).ok();
                    let name = global.and_then(|g| g.name.clone()).unwrap_or_default();
                    let space = global.map(|g| g.space);
                    match space {
                        Some(naga::AddressSpace::Uniform) => {
                            out.help = Some(format!(
                                "uniform buffers are read-only: to write `{name}`, declare it `var<storage, read_write>`"
                            ));
                            format!(
                                "cannot write to `{name}`: it is `var<uniform>`, which is read-only"
                            )
                        }
                        Some(naga::AddressSpace::Storage { .. }) => {
                            out.help = Some(format!(
                                "declare it `var<storage, read_write> {name}` to write it"
                            ));
                            format!("cannot write to `{name}`: it is `var<storage, read>`")
                        }
                        _ => format!("cannot write to `{name}`: it is read-only"),
                    }
                }
                Some(Root::Argument) | None => "cannot write to this: it is not a variable".into(),
            };
            if let Some(primary) = out.primary.as_mut() {
                primary.text = "written here".into();
            }
        }
        FunctionError::Expression { source, handle } => {
            if let naga::valid::ExpressionError::InvalidBinaryOperandTypes {
                op,
                lhs_type,
                rhs_type,
                ..
            } = source
            {
                out.class = Class::Type;
                let (l, r) = (type_inner(module, lhs_type), type_inner(module, rhs_type));
                out.message = format!("`{}` cannot combine `{l}` and `{r}`", op_symbol(*op));
                out.help = Some(format!(
                    "WGSL never converts implicitly: convert one operand, e.g. `{l}(...)` or `{r}(...)`"
                ));
            }
            // The whole expression, from naga's span table.
            let span = function.expressions.get_span(*handle);
            if let Some(range) = span.to_range()
                && !range.is_empty()
            {
                out.primary = Some(Label {
                    range,
                    text: "this expression".into(),
                });
            }
        }
        _ => {}
    }
}

enum Root {
    Global(Handle<naga::GlobalVariable>),
    Argument,
}

/// The variable a pointer expression points into.
fn root_variable(function: &naga::Function, mut e: Handle<Expression>) -> Option<Root> {
    for _ in 0..64 {
        match function.expressions.try_get(e).ok()? {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => e = *base,
            Expression::GlobalVariable(g) => return Some(Root::Global(*g)),
            Expression::FunctionArgument(_) => return Some(Root::Argument),
            _ => return None,
        }
    }
    None
}

/// Points a type error at what has that type: a global, a local, a
/// struct member.
fn type_site(ty: Handle<Type>, module: &Module, source: &str, out: &mut Rewritten) {
    let wgsl = module.to_ctx().type_to_string(ty);
    let named = module
        .types
        .get_handle(ty)
        .ok()
        .and_then(|t| t.name.clone());
    out.message = match &named {
        Some(name) => format!("type `{name}` is invalid here"),
        None => format!("type `{wgsl}` is invalid here"),
    };
    if let Some(inner) = out.original.rsplit(": ").next() {
        out.message = format!("`{wgsl}`: {}", lower_first(inner));
    }
    if out.primary.is_some() {
        return;
    }
    let contains = |outer: Handle<Type>| type_contains(module, outer, ty, 0);
    // A global of (or containing) that type.
    if let Some((h, g)) = module.global_variables.iter().find(|(_, g)| contains(g.ty))
        && let Some(range) = module.global_variables.get_span(h).to_range()
    {
        out.primary = Some(Label {
            range: clamp(range, source),
            text: format!("`{}` has type `{wgsl}`", g.name.clone().unwrap_or_default()),
        });
        return;
    }
    // A struct member of that type.
    for (h, t) in module.types.iter() {
        if let TypeInner::Struct { members, .. } = &t.inner
            && let Some(m) = members.iter().find(|m| contains(m.ty))
            && let Some(range) = module.types.get_span(h).to_range()
        {
            let range = clamp(range, source);
            let member = m.name.clone().unwrap_or_default();
            let text = source.get(range.clone()).unwrap_or_default();
            let at = text
                .find(&format!("{member}:"))
                .or_else(|| text.find(&member))
                .map(|i| range.start + i..range.start + i + member.len())
                .unwrap_or(range);
            out.primary = Some(Label {
                range: at,
                text: format!("member `{member}` has type `{wgsl}`"),
            });
            return;
        }
    }
    // A local variable.
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|ep| &ep.function));
    for f in functions {
        if let Some((h, v)) = f.local_variables.iter().find(|(_, v)| contains(v.ty))
            && let Some(range) = f.local_variables.get_span(h).to_range()
        {
            out.primary = Some(Label {
                range: clamp(range, source),
                text: format!("`{}` has type `{wgsl}`", v.name.clone().unwrap_or_default()),
            });
            return;
        }
    }
}

/// Whether `outer` is `inner` or holds it (arrays, structs, atomics,
/// pointers).
fn type_contains(module: &Module, outer: Handle<Type>, inner: Handle<Type>, depth: u32) -> bool {
    if outer == inner {
        return true;
    }
    if depth > 32 {
        return false;
    }
    let Ok(t) = module.types.get_handle(outer) else {
        return false;
    };
    match &t.inner {
        TypeInner::Array { base, .. } | TypeInner::BindingArray { base, .. } => {
            type_contains(module, *base, inner, depth + 1)
        }
        TypeInner::Pointer { base, .. } => type_contains(module, *base, inner, depth + 1),
        TypeInner::Struct { members, .. } => members
            .iter()
            .any(|m| type_contains(module, m.ty, inner, depth + 1)),
        _ => false,
    }
}

/// WGSL spelling of a type naga's error carries by value.
fn type_inner(module: &Module, inner: &TypeInner) -> String {
    let mut s = String::new();
    match module.to_ctx().write_type_inner(inner, &mut s) {
        Ok(()) => s,
        Err(_) => tidy(&format!("{inner:?}")),
    }
}

fn op_symbol(op: naga::BinaryOperator) -> &'static str {
    use naga::BinaryOperator as B;
    match op {
        B::Add => "+",
        B::Subtract => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::Equal => "==",
        B::NotEqual => "!=",
        B::Less => "<",
        B::LessEqual => "<=",
        B::Greater => ">",
        B::GreaterEqual => ">=",
        B::And => "&",
        B::ExclusiveOr => "^",
        B::InclusiveOr => "|",
        B::LogicalAnd => "&&",
        B::LogicalOr => "||",
        B::ShiftLeft => "<<",
        B::ShiftRight => ">>",
    }
}

/// The feature a missing naga capability stands for, in WebGPU's words.
fn capability(chain: &[String]) -> Option<String> {
    let text = chain.join(" ");
    for (naga, what) in [
        ("FLOAT64", "`f64` needs device feature SHADER_F64"),
        (
            "SHADER_INT64",
            "64-bit integers need device feature SHADER_INT64",
        ),
        ("SHADER_FLOAT16", "`f16` needs device feature SHADER_F16"),
        ("SHADER_F16", "`f16` needs device feature SHADER_F16"),
    ] {
        if text.contains(naga) {
            return Some(what.to_owned());
        }
    }
    text.contains("Capabilit")
        .then(|| "this needs a device capability".to_owned())
}

/// Each level of naga's nested error, outermost first, without repeats.
fn error_chain(e: &dyn std::error::Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.iter().any(|m| m.contains(&text)) {
            out.push(text);
        }
        source = s.source();
        if out.len() > 16 {
            break;
        }
    }
    out
}

/// The most specific level of the chain: naga's wrappers ("Entry point
/// main at Compute is invalid", "Expression [3] is invalid") say where,
/// not what.
fn innermost(chain: &[String]) -> String {
    let specific = chain
        .iter()
        .rev()
        .find(|m| !m.ends_with(" is invalid") && !m.ends_with("is invalid"))
        .or_else(|| chain.last())
        .cloned()
        .unwrap_or_default();
    lower_first(&tidy(&specific))
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.clone().next()) {
        // Keep acronyms (`IR`) and code as they are.
        (Some(c), Some(d)) if c.is_ascii_uppercase() && !d.is_ascii_uppercase() => {
            c.to_ascii_lowercase().to_string() + chars.as_str()
        }
        _ => text.to_owned(),
    }
}

/// Final wording: naga's IR names in WGSL's words.
fn words(text: &str) -> String {
    tidy(text)
        .replace("naga::valid::Capabilities::", "capability ")
        .replace("''", "")
}

/// A range clamped to the text (naga's spans are byte offsets of it).
fn clamp(range: Range<usize>, source: &str) -> Range<usize> {
    let end = range.end.min(source.len());
    range.start.min(end)..end
}

/// How naga's `Debug` output spells the scalar types, and how WGSL does.
const SCALARS: &[(&str, &str)] = &[
    ("Scalar { kind: Uint, width: 4 }", "u32"),
    ("Scalar { kind: Sint, width: 4 }", "i32"),
    ("Scalar { kind: Float, width: 4 }", "f32"),
    ("Scalar { kind: Float, width: 2 }", "f16"),
    ("Scalar { kind: Float, width: 8 }", "f64"),
    ("Scalar { kind: Uint, width: 8 }", "u64"),
    ("Scalar { kind: Sint, width: 8 }", "i64"),
    ("Scalar { kind: Bool, width: 1 }", "bool"),
    ("Scalar { kind: AbstractInt, width: 8 }", "AbstractInt"),
    ("Scalar { kind: AbstractFloat, width: 8 }", "AbstractFloat"),
];

/// naga's validation messages print its IR: arena handles (`[7]`), `Debug`
/// types (`Scalar(Scalar { kind: Uint, width: 4 })`) and labels such as
/// `naga::ir::Expression [6]`. This rewrites them the way WGSL users read
/// them: `with [5] (of type Scalar(..Uint..))` becomes ``with `u32` ``.
pub fn tidy(text: &str) -> String {
    let mut text = text.to_owned();
    for (debug, wgsl) in SCALARS {
        text = text.replace(debug, wgsl);
    }
    for (_, wgsl) in SCALARS {
        text = text.replace(&format!("Scalar({wgsl})"), wgsl);
        for (size, n) in [("Bi", 2), ("Tri", 3), ("Quad", 4)] {
            text = text.replace(
                &format!("Vector {{ size: {size}, scalar: {wgsl} }}"),
                &format!("vec{n}<{wgsl}>"),
            );
        }
    }
    for (ir, plain) in [
        ("naga::ir::Expression", "this expression"),
        ("naga::ir::Function", "this function"),
        ("naga::ir::GlobalVariable", "this global"),
        ("naga::ir::", ""),
    ] {
        text = text.replace(ir, plain);
    }
    strip_handles(&text)
        .replace("Type '' is invalid", "A type is invalid")
        .replace(" '' ", " ")
}

/// Drops arena handles (` [7]`); ` [5] (of type T)` becomes `` `T` ``.
fn strip_handles(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" [") {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let digits = after
            .get(2..)
            .unwrap_or_default()
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 || !after.get(2 + digits..).is_some_and(|r| r.starts_with(']')) {
            out.push_str(" [");
            rest = after.get(2..).unwrap_or_default();
            continue;
        }
        rest = after.get(3 + digits..).unwrap_or_default();
        if let Some(typed) = rest.strip_prefix(" (of type ") {
            // The matching `)`.
            let mut depth = 1usize;
            let close = typed.char_indices().find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(j)
            });
            if let Some(j) = close {
                out.push_str(" `");
                out.push_str(typed.get(..j).unwrap_or_default());
                out.push('`');
                rest = typed.get(j + 1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Rewritten {
        match naga::front::wgsl::parse_str(src) {
            Ok(module) => {
                let mut v = naga::valid::Validator::new(
                    naga::valid::ValidationFlags::all(),
                    naga::valid::Capabilities::default(),
                );
                match v.validate(&module) {
                    Ok(_) => panic!("valid: {src}"),
                    Err(e) => from_validation(&e, &module, src),
                }
            }
            Err(e) => from_parse(&e, src),
        }
    }

    fn at<'a>(src: &'a str, r: &Rewritten) -> &'a str {
        let range = r.primary.as_ref().map(|l| l.range.clone()).unwrap_or(0..0);
        src.get(range).unwrap_or("?")
    }

    const HEAD: &str = "@group(0) @binding(0) var<storage, read> src: array<f32>;\n@group(0) @binding(1) var<storage, read_write> dst: array<f32>;\n";

    #[test]
    fn let_type_mismatch_points_at_initializer() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    let x: u32 = 1.5;\n    dst[id.x] = f32(x);\n}}\n"
        );
        let r = parse(&src);
        eprintln!("{r:#?}");
        assert_eq!(r.class, Class::Type);
        assert_eq!(at(&src, &r), "1.5");
        assert_eq!(src.get(r.secondary[0].range.clone()), Some("u32"));
    }

    #[test]
    fn missing_semicolon_points_after_previous_token() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    let y = src[id.x] * 2.0\n    dst[id.x] = y;\n}}\n"
        );
        let r = parse(&src);
        eprintln!("{r:#?}");
        assert_eq!(r.class, Class::Syntax);
        let p = r.primary.clone().unwrap();
        assert!(p.range.is_empty());
        assert!(src[..p.range.start].ends_with("2.0"), "{r:?}");
        assert_eq!(p.text, "add `;` here");
    }

    #[test]
    fn store_to_read_only_names_the_buffer() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    src[id.x] = 1.0;\n    dst[id.x] = 0.0;\n}}\n"
        );
        let r = parse(&src);
        eprintln!("{r:#?}");
        assert_eq!(r.class, Class::Validation);
        assert_eq!(at(&src, &r), "src[id.x]");
        assert!(r.message.contains("`src`"), "{}", r.message);
        assert!(!r.message.contains("Entry point"));
    }

    #[test]
    fn mixed_types_cover_the_expression() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    let s = id.x + src[id.x];\n    dst[id.x] = 0.0;\n}}\n"
        );
        let r = parse(&src);
        eprintln!("{r:#?}");
        assert_eq!(r.class, Class::Type);
        assert_eq!(at(&src, &r), "id.x + src[id.x]");
        assert_eq!(r.message, "`+` cannot combine `u32` and `f32`");
    }

    #[test]
    fn spanless_type_errors_get_the_global() {
        for ty in ["f64", "i64"] {
            let src = format!(
                "@group(0) @binding(0) var<storage, read_write> dst: array<{ty}>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    dst[id.x] = dst[id.x];\n}}\n"
            );
            let r = parse(&src);
            eprintln!("{r:#?}");
            assert!(r.primary.is_some(), "{r:?}");
            assert!(at(&src, &r).contains("dst"), "{r:?}");
            assert!(!r.message.contains("''"), "{r:?}");
            assert!(r.help.is_some(), "{r:?}");
        }
    }

    #[test]
    fn no_handles_or_empty_quotes() {
        let r = Rewritten {
            message: words("Type [1] '' is invalid"),
            ..parse("fn")
        };
        assert!(!r.message.contains('['), "{}", r.message);
        assert!(!r.message.contains("''"), "{}", r.message);
    }
}
