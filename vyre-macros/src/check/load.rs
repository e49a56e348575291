//! Loading: the WGSL text of each kernel, with a map from byte offsets in
//! that text back to the user's source ([`LoadedKernel`]).
//!
//! * A string literal: offsets map to `file:line:col` inside the literal
//!   (decoding escapes and raw-string prefixes from the literal's token text);
//!   the error span is the literal (stable Rust cannot point inside one).
//! * `file "path"`: read relative to `CARGO_MANIFEST_DIR` or, when it is not
//!   there, relative to the directory of the source file that invokes
//!   `graph!`; offsets map to `path:line:col` (the path relative to
//!   `CARGO_MANIFEST_DIR` when the file is under it, so messages carry no
//!   machine-specific prefix); the error span is the path literal.
//! * `wgsl { ... }`: the text is rebuilt from each token's line and column,
//!   so the layout (and naga's line numbers) match the Rust file exactly and
//!   an offset maps to the very token that holds it.

use std::path::{Component, Path, PathBuf};

use proc_macro2::{Delimiter, Group, Span, TokenTree};

use crate::diag::Diagnostics;
use crate::model::source::span_file;
use crate::model::{KernelDecl, KernelSource, LiteralMap, LoadedKernel, Origin, TokenMap};

/// `CARGO_MANIFEST_DIR` (the current directory outside Cargo).
pub fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// `path` made absolute against the current directory, with `.` and `..`
/// components removed lexically.
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// How messages name a kernel file: relative to `CARGO_MANIFEST_DIR` when
/// it is under it; else relative to where rustc names the invoking file
/// (`span`'s file, itself relative to the workspace in a Cargo build); else
/// absolute.
pub fn display_path(resolved: &Path, manifest: &Path, span: Span) -> String {
    let resolved = absolute(resolved);
    if let Ok(rel) = resolved.strip_prefix(absolute(manifest)) {
        return rel.display().to_string();
    }
    let named = span_file(span).map(PathBuf::from);
    let local = span.local_file().map(|f| absolute(&f));
    if let (Some(named), Some(local)) = (named, local) {
        // rustc's name for the file minus its local path's tail = the prefix
        // rustc uses; apply the same to the kernel file.
        let mut root = local.clone();
        let mut named_root = named.clone();
        while root.file_name().is_some() && named_root.file_name() == root.file_name() {
            root.pop();
            named_root.pop();
        }
        if let Ok(rel) = resolved.strip_prefix(&root) {
            return named_root.join(rel).display().to_string();
        }
    }
    resolved.display().to_string()
}

/// Loads every kernel, reporting unreadable files and malformed token
/// WGSL. Kernels that fail are left out.
pub fn load_all(kernels: &[KernelDecl], diag: &mut Diagnostics) -> Vec<Option<LoadedKernel>> {
    kernels
        .iter()
        .map(|k| match load(k) {
            Ok(loaded) => Some(loaded),
            Err(e) => {
                diag.push(e);
                None
            }
        })
        .collect()
}

/// Loads one kernel.
pub fn load(decl: &KernelDecl) -> syn::Result<LoadedKernel> {
    load_as(decl, "kernel")
}

/// Loads one kernel or module (`what` names it in messages).
pub fn load_as(decl: &KernelDecl, what: &str) -> syn::Result<LoadedKernel> {
    let (source, origin) = match &decl.source {
        KernelSource::Literal(lit) => {
            let source = lit.value();
            let map = LiteralMap::new(&lit.token().to_string());
            (
                source,
                Origin::Literal {
                    span: lit.span(),
                    map,
                },
            )
        }
        KernelSource::File(lit) => {
            let written = lit.value();
            let manifest = manifest_dir();
            let in_manifest = manifest.join(&written);
            // Beside the invoking source file: for crates whose sources are
            // compiled from elsewhere (trybuild, generated projects).
            let beside = (!in_manifest.exists())
                .then(|| lit.span().local_file())
                .flatten()
                .and_then(|f| f.parent().map(|dir| absolute(&dir.join(&written))))
                .filter(|p| p.exists());
            let resolved = beside.unwrap_or(in_manifest);
            let shown = display_path(&resolved, &manifest, lit.span());
            let source = std::fs::read_to_string(&resolved).map_err(|e| {
                let message = if e.kind() == std::io::ErrorKind::NotFound
                    && Path::new(&written).is_relative()
                {
                    format!(
                        "cannot find `{written}`, the WGSL file of {what} `{}`: a relative path is looked up in CARGO_MANIFEST_DIR (the directory of the crate's Cargo.toml), then beside the source file that invokes graph!",
                        decl.name
                    )
                } else {
                    format!(
                        "cannot read `{shown}`, the WGSL file of {what} `{}`: {e}",
                        decl.name
                    )
                };
                syn::Error::new(lit.span(), message)
            })?;
            (
                source,
                Origin::File {
                    span: lit.span(),
                    shown,
                    resolved,
                },
            )
        }
        KernelSource::Tokens(group) => {
            let (source, map) = rebuild(group);
            if source.trim().is_empty() {
                return Err(syn::Error::new(
                    group.span(),
                    format!("{what} `{}` has no WGSL inside `wgsl {{ }}`", decl.name),
                ));
            }
            (
                source,
                Origin::Tokens {
                    span: group.span(),
                    map,
                },
            )
        }
    };
    Ok(LoadedKernel {
        name: decl.name.clone(),
        entry: decl.entry.clone(),
        source,
        origin,
        link: None,
    })
}

// ---------------------------------------------------------------------------
// String literals

impl LiteralMap {
    /// Builds the map from the literal's token text (`"..."`, `r#"..."#`).
    pub fn new(token: &str) -> Self {
        let chars: Vec<char> = token.chars().collect();
        let mut out = Vec::new();
        let mut value_offset = 0usize;
        // Position in the token text.
        let mut line = 0usize;
        let mut col;
        let mut i;
        let advance = |c: char, line: &mut usize, col: &mut usize| {
            if c == '\n' {
                *line += 1;
                *col = 0;
            } else {
                *col += 1;
            }
        };
        let at = |i: usize| chars.get(i).copied();
        if at(0) == Some('r') {
            // Raw string: r, hashes, quote; the value is verbatim.
            let mut hashes = 0;
            i = 1;
            while at(i) == Some('#') {
                hashes += 1;
                i += 1;
            }
            i += 1; // the quote
            col = i;
            let end = chars.len().saturating_sub(hashes + 1);
            while i < end {
                let Some(c) = at(i) else { break };
                out.push((value_offset, line, col));
                value_offset += c.len_utf8();
                advance(c, &mut line, &mut col);
                i += 1;
            }
        } else {
            i = 1; // the quote
            col = 1;
            let end = chars.len().saturating_sub(1);
            while i < end {
                let Some(c) = at(i) else { break };
                if c != '\\' {
                    out.push((value_offset, line, col));
                    value_offset += c.len_utf8();
                    advance(c, &mut line, &mut col);
                    i += 1;
                    continue;
                }
                let start = (line, col);
                match at(i + 1) {
                    Some('\n') | Some('\r') => {
                        // Line continuation: skip the newline and leading whitespace.
                        i += 1;
                        col += 1;
                        while let Some(w) = at(i) {
                            if !w.is_whitespace() {
                                break;
                            }
                            advance(w, &mut line, &mut col);
                            i += 1;
                        }
                    }
                    Some('x') => {
                        out.push((value_offset, start.0, start.1));
                        value_offset += 1; // \x escapes are ASCII
                        i += 4;
                        col += 4;
                    }
                    Some('u') => {
                        let mut j = i + 2;
                        let mut digits = String::new();
                        while let Some(d) = at(j) {
                            j += 1;
                            if d == '}' {
                                break;
                            }
                            if d != '{' && d != '_' {
                                digits.push(d);
                            }
                        }
                        let decoded = u32::from_str_radix(&digits, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .map_or(1, char::len_utf8);
                        out.push((value_offset, start.0, start.1));
                        value_offset += decoded;
                        col += j - i;
                        i = j;
                    }
                    _ => {
                        out.push((value_offset, start.0, start.1));
                        value_offset += 1;
                        i += 2;
                        col += 2;
                    }
                }
            }
        }
        LiteralMap {
            chars: out,
            end: (line, col),
        }
    }
}

// ---------------------------------------------------------------------------
// WGSL as tokens

/// One level of the rebuild's explicit stack: the tokens of a group, the
/// next index, and the closing delimiter to place after them.
type Level = (Vec<TokenTree>, usize, Option<(char, Span)>);

/// Most blank lines the rebuild will insert (guards against absurd spans).
const MAX_TEXT: usize = 16 << 20;

/// Rebuilds WGSL text from the tokens inside `group`, placing every token at
/// its own line and column, so naga's line numbers are the Rust file's. Doc
/// comments (`///`, which the Rust tokenizer turns into `#[doc = ".."]`) are
/// dropped like other comments. Tokens whose positions go backwards (spans
/// from a macro expansion) are separated by one space instead.
pub fn rebuild(group: &Group) -> (String, TokenMap) {
    let mut out = Rebuilder {
        text: String::new(),
        line: 1,
        col: 0,
        entries: Vec::new(),
    };
    // Explicit stack instead of recursion: nesting depth is unbounded.
    let mut stack: Vec<Level> = vec![(group.stream().into_iter().collect(), 0, None)];
    while let Some((tokens, index, close)) = stack.last_mut() {
        let Some(token) = tokens.get(*index).cloned() else {
            let close = *close;
            stack.pop();
            if let Some((c, span)) = close {
                out.place(&c.to_string(), span);
            }
            continue;
        };
        *index += 1;
        match token {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // `#[doc = ".."]` / `#![doc = ".."]` from doc comments.
                let mut skip = 0;
                let mut next = tokens.get(*index);
                if let Some(TokenTree::Punct(bang)) = next
                    && bang.as_char() == '!'
                {
                    skip = 1;
                    next = tokens.get(*index + 1);
                }
                let is_doc = matches!(next, Some(TokenTree::Group(g))
                    if g.delimiter() == Delimiter::Bracket
                        && matches!(g.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc"));
                if is_doc {
                    *index += skip + 1;
                } else {
                    out.place("#", p.span());
                }
            }
            TokenTree::Punct(p) => out.place(&p.as_char().to_string(), p.span()),
            TokenTree::Ident(i) => out.place(&i.to_string(), i.span()),
            TokenTree::Literal(l) => out.place(&l.to_string(), l.span()),
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => (Some('('), Some(')')),
                    Delimiter::Brace => (Some('{'), Some('}')),
                    Delimiter::Bracket => (Some('['), Some(']')),
                    Delimiter::None => (None, None),
                };
                if let Some(o) = open {
                    out.place(&o.to_string(), g.span_open());
                }
                let close = close.map(|c| (c, g.span_close()));
                stack.push((g.stream().into_iter().collect(), 0, close));
            }
        }
    }
    (
        out.text,
        TokenMap {
            entries: out.entries,
        },
    )
}

struct Rebuilder {
    text: String,
    line: usize,
    col: usize,
    entries: Vec<(usize, usize, Span)>,
}

impl Rebuilder {
    fn place(&mut self, token: &str, span: Span) {
        let start = span.start();
        let lines = start.line.saturating_sub(self.line);
        if start.line > self.line && self.text.len().saturating_add(lines) < MAX_TEXT {
            self.text.extend(std::iter::repeat_n('\n', lines));
            self.line = start.line;
            self.col = 0;
        }
        if start.line == self.line && start.column >= self.col && start.column - self.col < MAX_TEXT
        {
            self.text
                .extend(std::iter::repeat_n(' ', start.column - self.col));
            self.col = start.column;
        } else if !self.text.is_empty() && !self.text.ends_with(char::is_whitespace) {
            // Out of order: keep tokens apart.
            self.text.push(' ');
            self.col += 1;
        }
        let begin = self.text.len();
        self.text.push_str(token);
        self.entries.push((begin, self.text.len(), span));
        for c in token.chars() {
            if c == '\n' {
                self.line += 1;
                self.col = 0;
            } else {
                self.col += 1;
            }
        }
    }
}
