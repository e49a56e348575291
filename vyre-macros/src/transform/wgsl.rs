//! The queries of WGSL text only this stage needs, over the tokens of the
//! macro's one lexer (`model/lex.rs`): an entry point's parameters'
//! `@builtin(..)` attributes, and a prefix no name of a source contains.
//! Folding (`fold.rs`) and fusion (`fuse/`) rewrite user kernels' text
//! rather than going through naga's WGSL writer, so every construct stays
//! exactly as written; naga validates every result again.

use std::ops::Range;

use crate::model::lex::{Token, is_punct, is_word, matching_close};

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
            if !is_word(src, tokens.get(i + 1), "builtin") || !is_punct(tokens.get(i + 2), b'(') {
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
