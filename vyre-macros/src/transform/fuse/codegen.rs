//! The fused kernel's text, composed from the members' own WGSL.
//!
//! Why text and not naga IR through `naga::back::wgsl`: the user's source
//! is already valid WGSL that naga accepted, and copying it keeps every
//! construct exactly as written (naga's WGSL writer does not write
//! override-derived workgroup sizes, and a round trip through it would be
//! one more thing that can differ). The transform is small and checked
//! afterwards: the composed module is validated by naga again, and a group
//! whose module fails falls back to unfused nodes.
//!
//! Per member ("stage"), on the tokens of its source (comments skipped):
//! every module-scope name (`fn`, `struct`, `alias`, `const`, `override`,
//! `var`) is prefixed with the stage's prefix wherever it is used, except
//! after `.` (members, swizzles), after `@` (attribute names) and as a
//! member name inside a struct body; a global the group shares (a buffer
//! some member writes, bound once) loses its declaration and takes the
//! shared name; every other global with a binding moves to group 0 and a
//! fresh binding number; the entry point loses `@compute`,
//! `@workgroup_size(..)` and its parameter's `@builtin(..)` and becomes a
//! plain function of the invocation id.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::model::lex::{Kind, Token, attributes_before, find_entry, lex, matching_close, text};
use crate::transform::wgsl::builtin_attributes;

/// One member's renamed text.
#[derive(Debug)]
pub struct StageText {
    /// The text, ready to be concatenated.
    pub text: String,
    /// The entry point, now a function taking the invocation id.
    pub entry_fn: String,
    /// `(group, binding)` of each non-shared global with a binding, and its
    /// new binding in group 0.
    pub rebound: Vec<((u32, u32), u32)>,
}

/// Rename and rebind one member (see the module docs). `shared` maps a
/// global's name to the shared global's name; `next_binding` is the next
/// free binding of group 0. `None` when the text is not understood.
pub fn stage(
    source: &str,
    entry: &str,
    prefix: &str,
    shared: &HashMap<String, String>,
    next_binding: &mut u32,
) -> Option<StageText> {
    let tokens = lex(source).complete()?;
    let scope = module_scope(source, &tokens)?;
    if !scope.declared.contains(entry) {
        return None;
    }
    let mut edits = Edits::default();
    let rebound = rebind(
        source,
        &tokens,
        &scope.globals,
        shared,
        next_binding,
        &mut edits,
    )?;

    // The entry point becomes a plain function.
    let fn_at = find_entry(source, &tokens, entry)?;
    for attr in attributes_before(source, &tokens, fn_at) {
        match attr.name.as_str() {
            "compute" | "workgroup_size" => edits.removed.push(attr.bytes),
            _ => return None,
        }
    }
    edits
        .removed
        .extend(builtin_attributes(source, &tokens, fn_at)?);
    rename(source, &tokens, &scope, prefix, shared, &mut edits);
    Some(StageText {
        text: edits.apply(source)?,
        entry_fn: format!("{prefix}{entry}"),
        rebound,
    })
}

/// What a member's module scope declares: its names, its struct bodies
/// (token ranges) and its global `var`s (their `var` and `;` tokens).
struct Scope<'s> {
    declared: HashSet<&'s str>,
    struct_bodies: Vec<Range<usize>>,
    globals: Vec<(usize, usize)>,
}

/// The module scope of `source`; `None` for text this does not
/// understand (`enable`, `requires`, `diagnostic`, unbalanced braces).
fn module_scope<'s>(source: &'s str, tokens: &[Token]) -> Option<Scope<'s>> {
    let tok = |i: usize| tokens.get(i);
    let is_punct = |i: usize, c: u8| tok(i).is_some_and(|t| t.kind == Kind::Punct(c));
    let ident = |i: usize| {
        tok(i)
            .filter(|t| t.kind == Kind::Word)
            .map(|t| text(source, t))
    };
    let mut scope = Scope {
        declared: HashSet::new(),
        struct_bodies: Vec::new(),
        globals: Vec::new(),
    };
    let mut depth = 0usize;
    let mut i = 0usize;
    while let Some(t) = tok(i) {
        match t.kind {
            Kind::Punct(b'{') => depth += 1,
            Kind::Punct(b'}') => depth = depth.checked_sub(1)?,
            Kind::Word if depth == 0 && !is_punct(i.wrapping_sub(1), b'@') => {
                match text(source, t) {
                    "enable" | "requires" | "diagnostic" => return None,
                    "fn" | "alias" | "const" | "override" => {
                        scope.declared.insert(ident(i + 1)?);
                    }
                    "struct" => {
                        scope.declared.insert(ident(i + 1)?);
                        if !is_punct(i + 2, b'{') {
                            return None;
                        }
                        let close = matching_close(tokens, i + 2)?;
                        scope.struct_bodies.push(i + 2..close);
                    }
                    "var" => {
                        let mut name_at = i + 1;
                        if is_punct(name_at, b'<') {
                            while !is_punct(name_at, b'>') {
                                tok(name_at)?;
                                name_at += 1;
                            }
                            name_at += 1;
                        }
                        scope.declared.insert(ident(name_at)?);
                        let mut semi = name_at;
                        while !is_punct(semi, b';') {
                            tok(semi)?;
                            semi += 1;
                        }
                        scope.globals.push((i, semi));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(scope)
}

/// Byte ranges of the text to replace, and to remove.
#[derive(Default)]
struct Edits {
    replaced: Vec<(Range<usize>, String)>,
    removed: Vec<Range<usize>>,
}

impl Edits {
    /// `source` with the edits made (a removal wins over a replacement
    /// inside it); `None` when two edits overlap.
    fn apply(mut self, source: &str) -> Option<String> {
        for r in self.removed {
            self.replaced
                .retain(|(e, _)| e.end <= r.start || e.start >= r.end);
            self.replaced.push((r, String::new()));
        }
        self.replaced.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(source.len() + source.len() / 4);
        let mut at = 0usize;
        for (r, new) in self.replaced {
            if r.start < at {
                return None;
            }
            out.push_str(source.get(at..r.start)?);
            out.push_str(&new);
            at = r.end;
        }
        out.push_str(source.get(at..)?);
        Some(out)
    }
}

/// A shared global loses its declaration; every other global with a
/// binding moves to group 0 and the next free binding: the
/// `((group, binding), new binding)` of each.
fn rebind(
    source: &str,
    tokens: &[Token],
    globals: &[(usize, usize)],
    shared: &HashMap<String, String>,
    next_binding: &mut u32,
    edits: &mut Edits,
) -> Option<Vec<((u32, u32), u32)>> {
    let tok = |i: usize| tokens.get(i);
    let mut rebound = Vec::new();
    for &(var_at, semi) in globals {
        let attrs = attributes_before(source, tokens, var_at);
        let name = globals_name(source, tokens, var_at)?;
        if shared.contains_key(name) {
            let start = attrs
                .iter()
                .map(|a| a.bytes.start)
                .min()
                .unwrap_or(tok(var_at)?.start);
            edits.removed.push(start..tok(semi)?.end);
            continue;
        }
        let arg = |attr: &str| {
            attrs
                .iter()
                .find(|a| a.name == attr)
                .and_then(|a| a.args)
                .and_then(|(open, close)| {
                    let range = tok(open)?.end..tok(close)?.start;
                    let value = parse_u32(source.get(range.clone())?)?;
                    Some((range, value))
                })
        };
        match (arg("group"), arg("binding")) {
            (Some((g_range, group)), Some((b_range, binding))) => {
                let new = *next_binding;
                *next_binding = next_binding.checked_add(1)?;
                edits.replaced.push((g_range, "0".to_owned()));
                edits.replaced.push((b_range, new.to_string()));
                rebound.push(((group, binding), new));
            }
            (None, None) => {}
            _ => return None,
        }
    }
    Some(rebound)
}

/// Every use of a module-scope name prefixed (or, for a shared global,
/// renamed to the shared name), except after `.`, after `@` and as a
/// member name inside a struct body.
fn rename(
    source: &str,
    tokens: &[Token],
    scope: &Scope,
    prefix: &str,
    shared: &HashMap<String, String>,
    edits: &mut Edits,
) {
    let is_punct = |i: usize, c: u8| tokens.get(i).is_some_and(|t| t.kind == Kind::Punct(c));
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != Kind::Word {
            continue;
        }
        let word = text(source, t);
        if !scope.declared.contains(word) || is_punct(i.wrapping_sub(1), b'.') {
            continue;
        }
        if is_punct(i.wrapping_sub(1), b'@') {
            continue;
        }
        let member = is_punct(i + 1, b':') && scope.struct_bodies.iter().any(|b| b.contains(&i));
        if member {
            continue;
        }
        let new = match shared.get(word) {
            Some(s) => s.clone(),
            None => format!("{prefix}{word}"),
        };
        edits.replaced.push((t.start..t.end, new));
    }
}

/// The name of the global declared by the `var` at `var_at`.
fn globals_name<'a>(source: &'a str, tokens: &[Token], var_at: usize) -> Option<&'a str> {
    let mut i = var_at + 1;
    if tokens.get(i)?.kind == Kind::Punct(b'<') {
        while tokens.get(i)?.kind != Kind::Punct(b'>') {
            i += 1;
        }
        i += 1;
    }
    let t = tokens.get(i)?;
    (t.kind == Kind::Word).then(|| text(source, t))
}

/// `3`, `3u`, `3i`.
fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim();
    let s = s
        .strip_suffix('u')
        .or_else(|| s.strip_suffix('i'))
        .unwrap_or(s);
    s.parse().ok()
}
