//! WGSL text as byte ranges of tokens ([`tokenize`]) and the name of a
//! WESL declaration: what linking and its map back share. Plain data.

use std::ops::Range;

use wesl::syntax::GlobalDeclaration;

/// The name a global declaration declares, if it has one.
pub fn decl_name(decl: &GlobalDeclaration) -> Option<String> {
    match decl {
        GlobalDeclaration::Declaration(d) => Some(d.ident.to_string()),
        GlobalDeclaration::TypeAlias(d) => Some(d.ident.to_string()),
        GlobalDeclaration::Struct(d) => Some(d.ident.to_string()),
        GlobalDeclaration::Function(d) => Some(d.ident.to_string()),
        _ => None,
    }
}

/// WGSL tokens as byte ranges: identifiers, numbers, one punctuation
/// character each; whitespace and comments skipped.
pub fn tokenize(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = at(i);
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && at(i + 1) == b'/' {
            while i < bytes.len() && at(i) != b'\n' {
                i += 1;
            }
        } else if c == b'/' && at(i + 1) == b'*' {
            let mut depth = 0usize;
            while i < bytes.len() {
                if at(i) == b'/' && at(i + 1) == b'*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == b'*' && at(i + 1) == b'/' {
                    depth = depth.saturating_sub(1);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            let start = i;
            let number = c.is_ascii_digit();
            while i < bytes.len() {
                let d = at(i);
                let sign = number
                    && matches!(d, b'+' | b'-')
                    && matches!(at(i - 1), b'e' | b'E' | b'p' | b'P')
                    && !text
                        .get(start..i)
                        .is_some_and(|s| s.starts_with("0x") && !s.contains(['p', 'P']));
                if d.is_ascii_alphanumeric()
                    || d == b'_'
                    || d >= 0x80
                    || (number && d == b'.')
                    || sign
                {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(start..i);
        } else {
            // One character (multi-byte ones whole).
            let len = text
                .get(i..)
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
            out.push(i..i + len);
            i += len;
        }
    }
    out
}
