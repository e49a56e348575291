//! WGSL text as tokens (byte ranges of the source, comments skipped), and
//! the queries the text transforms of this stage share: an entry point's
//! `fn`, its attributes and its parameters' `@builtin(..)`, and a prefix no
//! name of a source contains. Folding (`fold.rs`) and fusion (`fuse/`)
//! rewrite user kernels' text with them rather than through naga's WGSL
//! writer, so every construct stays exactly as written; naga validates
//! every result again.

use std::ops::Range;

/// A prefix no identifier (indeed no text) of `source` contains, so the
/// wrapper's names cannot clash: `vyre_`, else `vyre1_`, `vyre2_`, ...
pub fn fresh_prefix(source: &str) -> Option<String> {
    (0..1000)
        .map(|i| match i {
            0 => "vyre_".to_owned(),
            i => format!("vyre{i}_"),
        })
        .find(|p| !source.contains(p.as_str()))
}

/// A WGSL token, by byte range (comments and blanks skipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Punct(u8),
    Number,
}

/// Tokens of `src`, skipping `//` and nested `/* */` comments; `None` for
/// an unterminated block comment. Non-ASCII characters count as identifier
/// characters (WGSL identifiers may be Unicode), so every range starts and
/// ends on a character boundary.
pub fn lex(src: &str) -> Option<Vec<Token>> {
    let bytes = src.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let is_ident = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(b) = at(i) {
        let start = i;
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'/' && at(i + 1) == Some(b'/') {
            while at(i).is_some_and(|c| c != b'\n') {
                i += 1;
            }
        } else if b == b'/' && at(i + 1) == Some(b'*') {
            i = skip_block_comment(bytes, i)?;
        } else if b.is_ascii_digit() {
            while at(i).is_some_and(|c| is_ident(c) || c == b'.') {
                i += 1;
            }
            tokens.push(Token {
                kind: Kind::Number,
                start,
                end: i,
            });
        } else if is_ident(b) {
            while at(i).is_some_and(is_ident) {
                i += 1;
            }
            tokens.push(Token {
                kind: Kind::Ident,
                start,
                end: i,
            });
        } else {
            i += 1;
            tokens.push(Token {
                kind: Kind::Punct(b),
                start,
                end: i,
            });
        }
    }
    Some(tokens)
}

/// The end of the (nested) block comment starting at `i`.
fn skip_block_comment(bytes: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'/'), Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (Some(b'*'), Some(b'/')) => {
                depth = depth.saturating_sub(1);
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            (Some(_), _) => i += 1,
            (None, _) => return None,
        }
    }
}

pub fn text<'a>(src: &'a str, t: &Token) -> &'a str {
    src.get(t.start..t.end).unwrap_or_default()
}

pub fn is_ident(src: &str, t: Option<&Token>, word: &str) -> bool {
    t.is_some_and(|t| t.kind == Kind::Ident && text(src, t) == word)
}

pub fn is_punct(t: Option<&Token>, c: u8) -> bool {
    t.is_some_and(|t| t.kind == Kind::Punct(c))
}

/// The index of the `fn` of `fn <entry>`, when there is exactly one.
pub fn find_entry(src: &str, tokens: &[Token], entry: &str) -> Option<usize> {
    let mut hits = (0..tokens.len())
        .filter(|&i| is_ident(src, tokens.get(i), "fn") && is_ident(src, tokens.get(i + 1), entry));
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

/// The `)` matching the `(` at `open`.
pub fn matching_close(tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct(b'(') => depth += 1,
            Kind::Punct(b')') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The `(` matching the `)` at `close`.
fn matching_open(tokens: &[Token], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match tokens.get(i)?.kind {
            Kind::Punct(b')') => depth += 1,
            Kind::Punct(b'(') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// An attribute: `@name` or `@name(...)`.
#[derive(Debug)]
pub struct Attr {
    pub name: String,
    /// From the `@` to the end of the name or the `)`.
    pub bytes: Range<usize>,
    /// Token indices of the `(` and `)`.
    pub args: Option<(usize, usize)>,
}

/// The attributes right before the token at `fn_at`, in any order.
pub fn attributes_before(src: &str, tokens: &[Token], fn_at: usize) -> Vec<Attr> {
    let mut attrs = Vec::new();
    let mut end = fn_at;
    while let Some(last) = end.checked_sub(1) {
        let (name_at, args) = if is_punct(tokens.get(last), b')') {
            let Some(open) = matching_open(tokens, last) else {
                break;
            };
            (open.checked_sub(1), Some((open, last)))
        } else {
            (Some(last), None)
        };
        let Some(name_at) = name_at else { break };
        let Some(at) = name_at.checked_sub(1) else {
            break;
        };
        let (Some(name), Some(at_tok)) = (tokens.get(name_at), tokens.get(at)) else {
            break;
        };
        if name.kind != Kind::Ident || at_tok.kind != Kind::Punct(b'@') {
            break;
        }
        let stop = args
            .and_then(|(_, close)| tokens.get(close))
            .map_or(name.end, |t| t.end);
        attrs.push(Attr {
            name: text(src, name).to_owned(),
            bytes: at_tok.start..stop,
            args,
        });
        end = at;
    }
    attrs
}

/// The byte ranges of the `@builtin(..)` attributes in the parameter list
/// of the function whose `fn` is at `fn_at`; `None` when the list is not
/// there or a parameter has another attribute.
pub fn builtin_attributes(src: &str, tokens: &[Token], fn_at: usize) -> Option<Vec<Range<usize>>> {
    let open = fn_at + 2;
    if !is_punct(tokens.get(open), b'(') {
        return None;
    }
    let close = matching_close(tokens, open)?;
    let mut ranges = Vec::new();
    let mut i = open + 1;
    while i < close {
        if is_punct(tokens.get(i), b'@') {
            if !is_ident(src, tokens.get(i + 1), "builtin") || !is_punct(tokens.get(i + 2), b'(') {
                return None;
            }
            let end = matching_close(tokens, i + 2)?;
            ranges.push(tokens.get(i)?.start..tokens.get(end)?.end);
            i = end;
        }
        i += 1;
    }
    Some(ranges)
}
