//! A kernel's WGSL and where each byte of it came from
//! ([`LoadedKernel`]), as stage 2 (`check/load.rs`) builds it: the text
//! naga sees, and a source map back to the user's string literal, file or
//! tokens, so that every later message points at the user's source.

use std::path::PathBuf;

use proc_macro2::Span;
use syn::{Ident, LitStr};

/// A kernel's WGSL and where it came from.
pub struct LoadedKernel {
    /// The kernel's name in the graph.
    pub name: Ident,
    /// `entry "name"`, if given.
    pub entry: Option<LitStr>,
    /// The WGSL text naga sees.
    pub source: String,
    /// Where each byte came from.
    pub origin: Origin,
    /// When the kernel imports from other modules: `source` is the linked
    /// WGSL, and this maps it back to the kernel's own text and the modules.
    pub link: Option<Box<LinkView>>,
}

/// A linked kernel's map back to its own text and the modules it imports
/// (`check/link.rs`).
pub struct LinkView {
    /// The kernel's own WGSL (what the user wrote).
    pub own: String,
    /// The linked text's map.
    pub linked: crate::model::link::Linked,
    /// Each module's source map (index as `linked.units`; the kernel's own
    /// for the first).
    pub origins: Vec<Origin>,
}

impl LoadedKernel {
    /// The kernel's own text or an imported module's, as a kernel of its
    /// own without a link (for messages): `unit` indexes `linked.units`.
    pub fn unit_view(&self, unit: usize) -> Option<LoadedKernel> {
        let view = self.link.as_ref()?;
        let text = if unit == 0 {
            view.own.clone()
        } else {
            view.linked.units.get(unit)?.text.clone()
        };
        Some(LoadedKernel {
            name: self.name.clone(),
            entry: self.entry.clone(),
            source: text,
            origin: view.origins.get(unit)?.clone(),
            link: None,
        })
    }

    /// For a linked kernel, which module (index into the link's units) and
    /// range of its text the bytes `range` of [`Self::source`] come from.
    pub fn unlink(&self, range: std::ops::Range<usize>) -> Option<(usize, std::ops::Range<usize>)> {
        self.link.as_ref()?.linked.unlink(range)
    }
}

/// The source map of a [`LoadedKernel`].
#[derive(Clone)]
pub enum Origin {
    /// A string literal.
    Literal {
        /// The literal's span.
        span: Span,
        /// Position of every decoded character inside the literal.
        map: LiteralMap,
    },
    /// A `.wgsl` file.
    File {
        /// The path literal's span.
        span: Span,
        /// The path as messages show it (`check/load.rs`'s `display_path`).
        shown: String,
        /// The resolved absolute path.
        resolved: PathBuf,
    },
    /// WGSL as Rust tokens.
    Tokens {
        /// The `{ ... }` group's span (fallback).
        span: Span,
        /// Byte ranges of the rebuilt text and the token each came from.
        map: TokenMap,
    },
}

/// Where a byte offset of a kernel's WGSL is in the user's source.
pub struct Located {
    /// The best span for an error there.
    pub span: Span,
    /// `file:line:col` (1-based line and column), when known.
    pub place: Option<String>,
}

impl LoadedKernel {
    /// Maps a byte offset of [`Self::source`] back to the user's source.
    pub fn locate(&self, offset: usize) -> Located {
        if self.link.is_some() {
            return match self
                .unlink(offset..offset + 1)
                .and_then(|(unit, r)| Some((self.unit_view(unit)?, r)))
            {
                Some((view, r)) => view.locate(r.start),
                None => Located {
                    span: self.source_span(),
                    place: None,
                },
            };
        }
        match &self.origin {
            Origin::Literal { span, map } => {
                let place = map.position(offset).and_then(|(line_delta, col)| {
                    let start = span.start();
                    let file = span_file(*span)?;
                    let line = start.line.checked_add(line_delta)?;
                    let column = if line_delta == 0 {
                        start.column.checked_add(col)?
                    } else {
                        col
                    };
                    Some(format!("{file}:{line}:{}", column.saturating_add(1)))
                });
                Located { span: *span, place }
            }
            Origin::File { span, shown, .. } => {
                let (line, col) = line_col(&self.source, offset);
                Located {
                    span: *span,
                    place: Some(format!("{shown}:{line}:{col}")),
                }
            }
            Origin::Tokens { span, map } => {
                let span = map.token_at(offset).unwrap_or(*span);
                let start = span.start();
                let place = span_file(span)
                    .map(|f| format!("{f}:{}:{}", start.line, start.column.saturating_add(1)));
                Located { span, place }
            }
        }
    }

    /// The absolute path of a file kernel, for an `include_str!` that makes
    /// Cargo rebuild when the file changes.
    pub fn tracked_path(&self) -> Option<&str> {
        match &self.origin {
            Origin::File { resolved, .. } if resolved.is_absolute() => resolved.to_str(),
            _ => None,
        }
    }

    /// The span naming the kernel's source as a whole.
    pub fn source_span(&self) -> Span {
        match &self.origin {
            Origin::Literal { span, .. }
            | Origin::File { span, .. }
            | Origin::Tokens { span, .. } => *span,
        }
    }
}

/// The file a span is in, as rustc names it, when that is a real file.
///
/// Outside a real macro expansion (unit tests) proc-macro2 names parsed
/// strings `<parsed string N>`; those are not files, so this returns `None`.
pub fn span_file(span: Span) -> Option<String> {
    let file = span.file();
    if file.is_empty() || file.starts_with('<') {
        None
    } else {
        Some(file)
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut line = 1;
    let mut col = 1;
    for (i, c) in text.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

/// For each decoded character of a string literal: its byte offset in the
/// value, and its line (relative to the literal's first line) and column (in
/// characters; on the first line relative to the literal's first character).
#[derive(Clone)]
pub struct LiteralMap {
    /// `(byte offset, line delta, column)` of each decoded character.
    pub chars: Vec<(usize, usize, usize)>,
    /// Line delta and column just after the last character.
    pub end: (usize, usize),
}

impl LiteralMap {
    /// `(line delta, column)` of a byte offset of the value; the end of the
    /// literal for offsets past it.
    pub fn position(&self, offset: usize) -> Option<(usize, usize)> {
        let idx = self.chars.partition_point(|&(o, _, _)| o <= offset);
        match idx.checked_sub(1).and_then(|i| self.chars.get(i)) {
            Some(&(o, line, col)) if o == offset || idx < self.chars.len() => Some((line, col)),
            Some(_) | None => Some(self.end),
        }
    }
}

/// Byte ranges of the rebuilt WGSL text and the token each came from.
#[derive(Clone)]
pub struct TokenMap {
    /// `(start, end, span)` of each token, in text order.
    pub entries: Vec<(usize, usize, Span)>,
}

impl TokenMap {
    /// The token holding `offset`, or the closest one before it (errors at
    /// whitespace or at the end), or the first token.
    pub fn token_at(&self, offset: usize) -> Option<Span> {
        let idx = self
            .entries
            .partition_point(|&(start, _, _)| start <= offset);
        idx.checked_sub(1)
            .and_then(|i| self.entries.get(i))
            .or_else(|| self.entries.first())
            .map(|&(_, _, span)| span)
    }

    /// The first and last token of a byte range; for an empty range, the
    /// point just after the last token that ends at or before it.
    pub fn range(&self, range: std::ops::Range<usize>) -> Option<(Span, Span)> {
        if range.is_empty() {
            let idx = self
                .entries
                .partition_point(|&(_, end, _)| end <= range.start);
            let &(_, _, span) = idx.checked_sub(1).and_then(|i| self.entries.get(i))?;
            let after = just_after(span);
            return Some((after, after));
        }
        let first = self
            .entries
            .iter()
            .find(|&&(start, end, _)| end > range.start && start < range.end)?;
        let last = self
            .entries
            .iter()
            .rev()
            .find(|&&(start, end, _)| start < range.end && end > range.start)?;
        Some((first.2, last.2))
    }

    /// How many tokens were mapped.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// An empty span just after `span` (where a missing token goes), when the
/// compiler can make one; `span` itself otherwise (outside a macro).
fn just_after(span: Span) -> Span {
    if proc_macro::is_available() {
        Span::from(span.unwrap().end())
    } else {
        span
    }
}
