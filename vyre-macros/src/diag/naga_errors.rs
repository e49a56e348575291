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
//! This file rewrites the front end's (parse) errors; `naga_validation.rs`
//! the validator's, `naga_words.rs` naga's wording. Everything here is
//! plain data over byte ranges of the kernel's text (it crosses from
//! naga's thread); `check/validate.rs` maps the ranges to the user's
//! source and renders the error.

use std::ops::Range;

use naga::front::wgsl::ParseError;

use crate::diag::naga_words::{clamp, words};

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
        out.help = Some(match converted_struct(&message) {
            Some(name) => format!(
                "`{name}` is a struct, which converts to no number: use one of its members (`value.member`)"
            ),
            None => {
                "WGSL never converts implicitly: convert it explicitly, e.g. `f32(x)` or `u32(x)`"
                    .to_owned()
            }
        });
    } else if message == NAGA_INTERNAL {
        front_end_limit(&mut out, e.notes().next().unwrap_or_default());
    }
    out.message = words(&out.message);
    out
}

/// The type that naga's "automatic conversions cannot convert `T` ..." or
/// "... elements of `T` ..." names, when it is a user's struct (a name
/// that is no WGSL built-in type).
fn converted_struct(message: &str) -> Option<&str> {
    let name = message.split('`').nth(1)?;
    const BUILT_IN: [&str; 12] = [
        "f32", "f16", "f64", "i32", "u32", "i64", "u64", "bool", "vec", "mat", "array", "atomic",
    ];
    let built_in = BUILT_IN.iter().any(|b| name.starts_with(b))
        || name.starts_with("{Abstract")
        || name.starts_with("ptr")
        || name.starts_with("texture")
        || name.starts_with("sampler");
    (!built_in).then_some(name)
}

/// naga's message for its `Error::Internal`; the reason is in its note.
const NAGA_INTERNAL: &str = "internal WGSL front end error";

/// naga's front end gave up (`Error::Internal`): say why in the message,
/// not "internal", and keep naga's reason in the `naga:` note.
fn front_end_limit(out: &mut Rewritten, reason: &str) {
    out.original = format!("{NAGA_INTERNAL}: {reason}");
    if reason.contains("recursion limit") {
        out.message =
            "the kernel nests too deeply: naga's WGSL parser stops at 200 levels of nested expressions, statements and types".to_owned();
        out.help =
            Some("split the deep expression with `let` bindings or a helper function".to_owned());
    } else {
        out.message = format!("naga's WGSL parser gave up: {reason}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::naga_validation::from_validation;
    use crate::diag::naga_words::words;

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

    /// naga's recursion limit is its `Error::Internal`: the message says
    /// what the user did, never "internal".
    #[test]
    fn deep_nesting_is_a_limit_not_an_internal_error() {
        let deep = format!(
            "{HEAD}@compute @workgroup_size(1) fn main() {{ dst[0] = {}1.0{}; }}",
            "(".repeat(300),
            ")".repeat(300)
        );
        let r = parse(&deep);
        assert!(r.message.contains("nests too deeply"), "{}", r.message);
        assert!(!r.message.contains("internal"), "{}", r.message);
        assert!(r.original.contains("recursion limit"), "{}", r.original);
        assert!(r.help.is_some());
    }

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
