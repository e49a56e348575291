//! Just enough lexing of Rust for the house check: source text with
//! comments and the contents of string and character literals blanked
//! (same length, same lines), a flat token list, and the byte ranges of
//! `#[cfg(test)]` items.

/// Whether `b` can be part of an identifier (bytes of non-ASCII characters
/// count, as Rust identifiers may hold them).
pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Replaces every byte but newlines with a space.
fn blank(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// `src` with comments and literal contents turned into spaces. Newlines
/// stay where they were, so byte offsets and line numbers still match the
/// file.
pub fn strip(src: &str) -> Vec<u8> {
    let s = src.as_bytes();
    let n = s.len();
    let mut out = s.to_vec();
    let mut i = 0;
    while i < n {
        let c = s[i];
        if s[i..].starts_with(b"//") {
            let j = s[i..].iter().position(|&b| b == b'\n').map_or(n, |p| i + p);
            blank(&mut out[i..j]);
            i = j;
        } else if s[i..].starts_with(b"/*") {
            let j = block_comment_end(s, i);
            blank(&mut out[i..j]);
            i = j;
        } else if c == b'"' {
            let j = string_end(s, i + 1);
            blank(&mut out[i + 1..j]);
            i = j + 1;
        } else if c == b'\'' {
            i = char_literal(src, &mut out, i);
        } else if is_ident(c) {
            let j = ident_end(s, i);
            i = match raw_string(s, i, j) {
                Some((open, close, resume)) => {
                    blank(&mut out[open..close]);
                    resume
                }
                None => j,
            };
        } else {
            i += 1;
        }
    }
    out
}

fn ident_end(s: &[u8], i: usize) -> usize {
    s[i..]
        .iter()
        .position(|&b| !is_ident(b))
        .map_or(s.len(), |p| i + p)
}

/// End (exclusive) of the block comment opening at `i`; block comments nest.
fn block_comment_end(s: &[u8], i: usize) -> usize {
    let (mut depth, mut j) = (1, i + 2);
    while j < s.len() && depth > 0 {
        if s[j..].starts_with(b"/*") {
            depth += 1;
            j += 2;
        } else if s[j..].starts_with(b"*/") {
            depth -= 1;
            j += 2;
        } else {
            j += 1;
        }
    }
    j.min(s.len())
}

/// Index of the quote closing a string whose contents start at `j` (or the
/// end of the text).
fn string_end(s: &[u8], mut j: usize) -> usize {
    while j < s.len() && s[j] != b'"' {
        j += if s[j] == b'\\' { 2 } else { 1 };
    }
    j.min(s.len())
}

/// A raw string whose prefix (`r`, `br` or `cr`) is the identifier
/// `s[i..j]`: the range of its contents and where to go on.
fn raw_string(s: &[u8], i: usize, j: usize) -> Option<(usize, usize, usize)> {
    if !matches!(&s[i..j], b"r" | b"br" | b"cr") {
        return None;
    }
    let hashes = s[j..].iter().take_while(|&&b| b == b'#').count();
    let open = j + hashes;
    if s.get(open) != Some(&b'"') {
        return None;
    }
    let mut close = open + 1;
    while close < s.len() {
        let after = &s[close + 1..];
        if s[close] == b'"' && after.len() >= hashes && after[..hashes].iter().all(|&b| b == b'#') {
            return Some((open + 1, close, close + 1 + hashes));
        }
        close += 1;
    }
    Some((open + 1, s.len(), s.len()))
}

/// Blanks the character literal starting at the quote at `i`, if it is one
/// (not a lifetime or label), and says where to go on.
fn char_literal(src: &str, out: &mut [u8], i: usize) -> usize {
    let s = src.as_bytes();
    if s.get(i + 1) == Some(&b'\\') {
        let window = &s[(i + 3).min(s.len())..(i + 12).min(s.len())];
        return match window.iter().position(|&b| b == b'\'') {
            Some(p) => {
                let close = i + 3 + p;
                blank(&mut out[i + 1..close]);
                close + 1
            }
            None => i + 1,
        };
    }
    let Some(c) = src.get(i + 1..).and_then(|rest| rest.chars().next()) else {
        return i + 1;
    };
    let close = i + 1 + c.len_utf8();
    if c != '\'' && s.get(close) == Some(&b'\'') {
        blank(&mut out[i + 1..close]);
        close + 1
    } else {
        i + 1
    }
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A run of identifier bytes (keywords and numbers included).
    Ident,
    /// One byte of punctuation.
    Punct,
}

/// A token of blanked source: a byte range.
#[derive(Clone, Copy, Debug)]
pub struct Tok {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// The tokens of blanked source `code`.
pub fn tokens(code: &[u8]) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let b = code[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if is_ident(b) {
            let end = ident_end(code, i);
            toks.push(Tok {
                kind: Kind::Ident,
                start: i,
                end,
            });
            i = end;
        } else {
            toks.push(Tok {
                kind: Kind::Punct,
                start: i,
                end: i + 1,
            });
            i += 1;
        }
    }
    toks
}

/// The text of token `t`.
pub fn text<'a>(code: &'a [u8], t: &Tok) -> &'a str {
    std::str::from_utf8(&code[t.start..t.end]).unwrap_or("")
}

/// Whether token `k` exists and is the punctuation byte `p`.
pub fn is_punct(toks: &[Tok], code: &[u8], k: usize, p: u8) -> bool {
    toks.get(k)
        .is_some_and(|t| t.kind == Kind::Punct && code[t.start] == p)
}

/// Whether token `k` exists and is the identifier (or keyword) `word`.
pub fn is_word(toks: &[Tok], code: &[u8], k: usize, word: &str) -> bool {
    toks.get(k)
        .is_some_and(|t| t.kind == Kind::Ident && text(code, t) == word)
}

/// Index of the brace closing the one at byte `open` (the last byte when it
/// is never closed).
pub fn match_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &b) in code.iter().enumerate().skip(open) {
        if b == b'{' {
            depth += 1;
        } else if b == b'}' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return j;
            }
        }
    }
    code.len().saturating_sub(1)
}

/// The test-only parts of a file.
#[derive(Debug, Default)]
pub struct TestItems {
    /// Byte ranges (inclusive, sorted, disjoint) from each `#[cfg(test)]`
    /// to the end of the item it gates.
    pub ranges: Vec<(usize, usize)>,
    /// Names of modules declared `#[cfg(test)] mod name;` (in other files).
    pub mods: Vec<String>,
    /// The file opens with `#![cfg(test)]`: all of it is test code.
    pub whole_file: bool,
}

/// Index of the token after the attribute `#[...]` or `#![...]` starting at
/// token `k`, and whether it is exactly `cfg(test)`; `None` when token `k`
/// does not start an attribute.
fn attribute(toks: &[Tok], code: &[u8], k: usize) -> Option<(usize, bool)> {
    if !is_punct(toks, code, k, b'#') {
        return None;
    }
    let open = if is_punct(toks, code, k + 1, b'!') {
        k + 2
    } else {
        k + 1
    };
    if !is_punct(toks, code, open, b'[') {
        return None;
    }
    let mut depth = 0usize;
    for j in open..toks.len() {
        if toks[j].kind != Kind::Punct {
            continue;
        }
        match code[toks[j].start] {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    let inner: Vec<&str> =
                        toks[open + 1..j].iter().map(|t| text(code, t)).collect();
                    return Some((j + 1, inner == ["cfg", "(", "test", ")"]));
                }
            }
            _ => {}
        }
    }
    Some((toks.len(), false))
}

/// Finds the `#[cfg(test)]` items of a file.
pub fn test_items(code: &[u8], toks: &[Tok]) -> TestItems {
    let mut items = TestItems::default();
    let mut k = 0;
    while is_punct(toks, code, k, b'#') && is_punct(toks, code, k + 1, b'!') {
        let Some((next, is_test)) = attribute(toks, code, k) else {
            break;
        };
        items.whole_file |= is_test;
        k = next;
    }
    while k < toks.len() {
        match attribute(toks, code, k) {
            Some((next, true)) if !is_punct(toks, code, k + 1, b'!') => {
                let (last, module) = gated_item(toks, code, next);
                let end = toks
                    .get(last)
                    .map_or(code.len().saturating_sub(1), |t| t.start);
                items.ranges.push((toks[k].start, end));
                items.mods.extend(module);
                k = last + 1;
            }
            _ => k += 1,
        }
    }
    items
}

/// The item starting at token `k` (after one attribute): the index of its
/// last token (`;` or `}`), and its name when it is `mod name;`.
fn gated_item(toks: &[Tok], code: &[u8], mut k: usize) -> (usize, Option<String>) {
    while let Some((next, _)) = attribute(toks, code, k) {
        k = next;
    }
    let mut w = k;
    if is_word(toks, code, w, "pub") {
        w += 1;
        if is_punct(toks, code, w, b'(') {
            while w < toks.len() && !is_punct(toks, code, w, b')') {
                w += 1;
            }
            w += 1;
        }
    }
    let word = |j: usize| toks.get(j).map_or("", |t| text(code, t));
    let ends_at_semicolon = matches!(word(w), "use" | "static" | "type" | "let" | "extern")
        && !(word(w) == "extern" && word(w + 1) != "crate")
        || word(w) == "const" && !matches!(word(w + 1), "fn" | "unsafe" | "async" | "extern");
    let module = (word(w) == "mod").then(|| word(w + 1).to_owned());
    let mut depth = 0usize;
    let mut braced = false;
    for j in k..toks.len() {
        if toks[j].kind != Kind::Punct {
            continue;
        }
        match code[toks[j].start] {
            b'(' | b'[' => depth += 1,
            b'{' => {
                depth += 1;
                braced = true;
            }
            b')' | b']' => depth = depth.saturating_sub(1),
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && braced && !ends_at_semicolon {
                    return (j, None);
                }
            }
            b';' if depth == 0 => return (j, if braced { None } else { module }),
            _ => {}
        }
    }
    (toks.len().saturating_sub(1), None)
}

/// `code` with every byte inside `ranges` (but newlines) blanked.
pub fn without(code: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
    let mut out = code.to_vec();
    for &(a, b) in ranges {
        blank(&mut out[a..=b.min(code.len().saturating_sub(1))]);
    }
    out
}
