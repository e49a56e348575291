//! The one WGSL lexer of the macro ([`lex`]): WGSL text as tokens, each a
//! byte range of the source, with blanks and comments skipped, and the
//! small token queries the stages share (an entry point's `fn`, the
//! attributes before it, matching brackets).
//!
//! Every stage that reads WGSL text rather than naga's IR uses it: linking
//! (`check/link.rs`, `check/link/align.rs`), the stub types of a kernel
//! that does not parse (`check/partial.rs`), the sites of diagnostics
//! (`diag/sites.rs`), and the text rewrites of `transform/` (folding,
//! fusion, reductions). It follows WGSL's lexical rules:
//!
//! * blanks are WGSL's blankspace (ASCII space, tab, line breaks, and
//!   U+0085, U+200E, U+200F, U+2028, U+2029);
//! * `//` comments run to the end of the line, `/* */` comments nest; an
//!   unterminated block comment ends the text ([`Lexed::unterminated`]);
//! * an identifier is `_` or an `XID_Start` character, then `XID_Continue`
//!   characters (Unicode, as WGSL's identifier rule; a lone `_`, the
//!   phony assignment's left side, is lexed as an identifier too);
//! * a number is a decimal or hexadecimal literal, with a fraction, an
//!   exponent (`e`/`p` with an optional sign) and a suffix (`u i f h`); the
//!   characters an identifier continues with that follow a number stay in
//!   it, so a malformed literal (`1abc`) is one token, as naga reports it;
//! * every other ASCII character is one punctuation token: `::` or `->`
//!   are two adjacent tokens (compare their byte ranges to tell);
//! * any other character (not valid in WGSL outside a comment) is one
//!   [`Kind::Other`] token.
//!
//! Plain string work: it runs on the naga and link threads too (see
//! `check/worker.rs`).

use std::ops::Range;

/// A WGSL token: what it is and its byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: Kind,
    /// The byte offset of its first character.
    pub start: usize,
    /// The byte offset just past its last character.
    pub end: usize,
}

impl Token {
    /// The token's bytes in the source.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword (WGSL's Unicode rule).
    Word,
    /// A numeric literal, suffix included.
    Number,
    /// One ASCII punctuation character.
    Punct(u8),
    /// A character WGSL has no token for (e.g. an emoji outside a comment).
    Other,
}

/// The tokens of a text, and whether a block comment was left open.
#[derive(Debug, PartialEq, Eq)]
pub struct Lexed {
    /// Every token before the end of the text (or before the open comment).
    pub tokens: Vec<Token>,
    /// The byte offset of the `/*` of a block comment the text never
    /// closes; lexing stops there.
    pub unterminated: Option<usize>,
}

impl Lexed {
    /// The tokens of a text whose comments are all closed: what the text
    /// rewrites need, since they must not guess where an open comment ends.
    pub fn complete(self) -> Option<Vec<Token>> {
        self.unterminated.is_none().then_some(self.tokens)
    }
}

/// The tokens of `src` (see the module's rules).
pub fn lex(src: &str) -> Lexed {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(c) = src.get(i..).and_then(|s| s.chars().next()) {
        let start = i;
        let next = src.get(i + c.len_utf8()..).and_then(|s| s.chars().next());
        let kind = if is_blank(c) {
            i += c.len_utf8();
            continue;
        } else if c == '/' && next == Some('/') {
            i = line_comment_end(src, i);
            continue;
        } else if c == '/' && next == Some('*') {
            match block_comment_end(src, i) {
                Some(end) => i = end,
                None => {
                    return Lexed {
                        tokens,
                        unterminated: Some(start),
                    };
                }
            }
            continue;
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            i = number_end(src, i);
            Kind::Number
        } else if is_ident_start(c) {
            i = word_end(src, i + c.len_utf8(), is_ident_continue);
            Kind::Word
        } else if c.is_ascii() {
            i += 1;
            Kind::Punct(c as u8)
        } else {
            i += c.len_utf8();
            Kind::Other
        };
        tokens.push(Token {
            kind,
            start,
            end: i,
        });
    }
    Lexed {
        tokens,
        unterminated: None,
    }
}

/// The byte ranges of the tokens of `src` (up to an unterminated comment),
/// for callers that only compare token texts.
pub fn token_ranges(src: &str) -> Vec<Range<usize>> {
    lex(src).tokens.iter().map(Token::range).collect()
}

/// Whether `c` may start a WGSL identifier: `_` or `XID_Start`.
pub fn is_ident_start(c: char) -> bool {
    c == '_' || unicode_ident::is_xid_start(c)
}

/// Whether `c` may continue a WGSL identifier: `XID_Continue`.
pub fn is_ident_continue(c: char) -> bool {
    unicode_ident::is_xid_continue(c)
}

/// WGSL's blankspace.
fn is_blank(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t'
            | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | '\u{85}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Whether `c` ends a line (and a `//` comment).
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// The end of the characters from `i` on that `keep` accepts.
fn word_end(src: &str, i: usize, keep: impl Fn(char) -> bool) -> usize {
    let rest = src.get(i..).unwrap_or_default();
    i + rest.find(|c: char| !keep(c)).unwrap_or(rest.len())
}

/// The end of the `//` comment at `i`: its line break (not included).
fn line_comment_end(src: &str, i: usize) -> usize {
    word_end(src, i, |c| !is_line_break(c))
}

/// The end of the (nested) block comment at `i`, or `None` when the text
/// ends first.
fn block_comment_end(src: &str, mut i: usize) -> Option<usize> {
    let bytes = src.as_bytes();
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

/// The end of the numeric literal at `i` (a digit, or `.` before one):
/// `0x` and hex digits with a `p` exponent, or decimal digits with an `e`
/// exponent; fraction, suffix and any identifier characters after it
/// included.
fn number_end(src: &str, i: usize) -> usize {
    let bytes = src.as_bytes();
    let hex = bytes.get(i) == Some(&b'0') && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
    let (mut end, exponent): (usize, &[u8]) = if hex {
        (
            word_end(src, i + 2, |c| c.is_ascii_hexdigit() || c == '.'),
            b"pP",
        )
    } else {
        (word_end(src, i, |c| c.is_ascii_digit() || c == '.'), b"eE")
    };
    if bytes.get(end).is_some_and(|b| exponent.contains(b)) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = word_end(src, end + 1 + sign, |c| c.is_ascii_digit());
        }
    }
    word_end(src, end, |c| is_ident_continue(c) || c == '.')
}

/// The text of a token.
pub fn text<'a>(src: &'a str, t: &Token) -> &'a str {
    src.get(t.range()).unwrap_or_default()
}

/// Whether `t` is the identifier (or keyword) `word`.
pub fn is_word(src: &str, t: Option<&Token>, word: &str) -> bool {
    t.is_some_and(|t| t.kind == Kind::Word && text(src, t) == word)
}

/// Whether `t` is the punctuation character `c`.
pub fn is_punct(t: Option<&Token>, c: u8) -> bool {
    t.is_some_and(|t| t.kind == Kind::Punct(c))
}

/// The index of the `fn` of `fn <entry>`, when there is exactly one
/// (outside comments, so a comment that mentions `fn entry` is no match).
pub fn find_entry(src: &str, tokens: &[Token], entry: &str) -> Option<usize> {
    let mut hits = (0..tokens.len())
        .filter(|&i| is_word(src, tokens.get(i), "fn") && is_word(src, tokens.get(i + 1), entry));
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

/// The bracket that closes `open` (`(`, `[` or `{`).
fn closer(open: u8) -> Option<u8> {
    match open {
        b'(' => Some(b')'),
        b'[' => Some(b']'),
        b'{' => Some(b'}'),
        _ => None,
    }
}

/// The index of the bracket that closes the `(`, `[` or `{` at `open`.
pub fn matching_close(tokens: &[Token], open: usize) -> Option<usize> {
    let Kind::Punct(o) = tokens.get(open)?.kind else {
        return None;
    };
    let c = closer(o)?;
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if t.kind == Kind::Punct(o) {
            depth += 1;
        } else if t.kind == Kind::Punct(c) {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The index of the `(` that the `)` at `close` closes.
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
    /// The attribute's name (`compute`, `workgroup_size`, ...).
    pub name: String,
    /// From the `@` to the end of the name or the `)`.
    pub bytes: Range<usize>,
    /// Token indices of the `(` and `)`.
    pub args: Option<(usize, usize)>,
}

/// The attributes right before the token at `fn_at`, last first.
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
        if name.kind != Kind::Word || at_tok.kind != Kind::Punct(b'@') {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each token's kind and text.
    fn tokens(src: &str) -> Vec<(Kind, &str)> {
        let lexed = lex(src);
        assert_eq!(lexed.unterminated, None, "{src}");
        lexed
            .tokens
            .iter()
            .map(|t| (t.kind, text(src, t)))
            .collect()
    }

    fn texts(src: &str) -> Vec<&str> {
        tokens(src).into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn skips_line_and_nested_block_comments() {
        assert_eq!(
            texts("a // b c\nd /* e /* f */ g */ h/**/i"),
            ["a", "d", "h", "i"]
        );
        assert_eq!(texts("x//\ry"), ["x", "y"]);
        assert_eq!(texts("x /* a */ /* b /* c /* d */ */ */ y"), ["x", "y"]);
        assert_eq!(texts("a/b*c"), ["a", "/", "b", "*", "c"]);
    }

    #[test]
    fn an_unterminated_comment_ends_the_text() {
        let src = "fn f() {} /* open /* nested */ still open";
        let lexed = lex(src);
        assert_eq!(lexed.unterminated, Some(10));
        assert_eq!(lexed.tokens.len(), 6);
        assert_eq!(lex(src).complete(), None);
        assert!(lex("a /* */").complete().is_some());
        assert_eq!(lex("/*").unterminated, Some(0));
    }

    #[test]
    fn identifiers_follow_the_unicode_rule() {
        assert_eq!(
            tokens("café Δx _x __y x1 _ 日本"),
            [
                (Kind::Word, "café"),
                (Kind::Word, "Δx"),
                (Kind::Word, "_x"),
                (Kind::Word, "__y"),
                (Kind::Word, "x1"),
                (Kind::Word, "_"),
                (Kind::Word, "日本"),
            ]
        );
        // Not identifier characters: an emoji, a combining mark first.
        assert_eq!(
            tokens("a🦀b \u{301}c"),
            [
                (Kind::Word, "a"),
                (Kind::Other, "🦀"),
                (Kind::Word, "b"),
                (Kind::Other, "\u{301}"),
                (Kind::Word, "c"),
            ]
        );
        assert!(is_ident_start('é') && is_ident_continue('\u{301}'));
        assert!(!is_ident_start('1') && is_ident_continue('1'));
    }

    #[test]
    fn numbers_take_their_suffix_hex_digits_and_exponent() {
        for literal in [
            "1", "1u", "42i", "0x1Fu", "0X1f", "1.5", "1.5e-3f", "1e+10", "2h", "0.5h", ".5",
            ".5e2f", "1.", "0x1.8p-3", "0x1p4f", "1abc",
        ] {
            assert_eq!(tokens(literal), [(Kind::Number, literal)], "{literal}");
        }
        // A hex `e` is a digit: the `-` after it is a minus.
        assert_eq!(texts("0x1e-3"), ["0x1e", "-", "3"]);
        assert_eq!(texts("a-1u"), ["a", "-", "1u"]);
        assert_eq!(texts("x[1].y"), ["x", "[", "1", "]", ".", "y"]);
        assert_eq!(texts("v.x"), ["v", ".", "x"]);
    }

    #[test]
    fn punctuation_is_one_character_each() {
        assert_eq!(
            tokens("a::b->c>>=1;"),
            [
                (Kind::Word, "a"),
                (Kind::Punct(b':'), ":"),
                (Kind::Punct(b':'), ":"),
                (Kind::Word, "b"),
                (Kind::Punct(b'-'), "-"),
                (Kind::Punct(b'>'), ">"),
                (Kind::Word, "c"),
                (Kind::Punct(b'>'), ">"),
                (Kind::Punct(b'>'), ">"),
                (Kind::Punct(b'='), "="),
                (Kind::Number, "1"),
                (Kind::Punct(b';'), ";"),
            ]
        );
        assert_eq!(texts("a\u{2028}b\u{85}c\u{0B}d"), ["a", "b", "c", "d"]);
    }

    #[test]
    fn finds_an_entry_point_outside_comments() {
        let src = "// fn main is below\n/* @compute @workgroup_size(1) fn main() {} */\n@compute @workgroup_size(64, 1)\nfn main() {}\nfn mainly() {}";
        let tokens = lex(src).tokens;
        let at = find_entry(src, &tokens, "main").unwrap();
        assert_eq!(tokens[at].start, src.find("\nfn main()").unwrap() + 1);
        let attrs = attributes_before(src, &tokens, at);
        let names: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["workgroup_size", "compute"]);
        assert_eq!(&src[attrs[0].bytes.clone()], "@workgroup_size(64, 1)");
        assert_eq!(find_entry(src, &tokens, "nope"), None);
        let twice = "fn f() {} fn f() {}";
        assert_eq!(find_entry(twice, &lex(twice).tokens, "f"), None);
    }

    #[test]
    fn matches_every_kind_of_bracket() {
        let src = "f(a[b{c}], (d))";
        let tokens = lex(src).tokens;
        let close = |open| matching_close(&tokens, open).map(|i| text(src, &tokens[i]));
        assert_eq!(close(1), Some(")"));
        assert_eq!(matching_close(&tokens, 1), Some(tokens.len() - 1));
        assert_eq!(close(3), Some("]"));
        assert_eq!(close(5), Some("}"));
        assert_eq!(matching_close(&tokens, 0), None);
        let open = "f(a";
        assert_eq!(matching_close(&lex(open).tokens, 1), None);
    }
}
