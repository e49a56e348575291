//! Intermediates kept in registers: a buffer that a fused group writes and
//! that no node outside the group binds never needs to reach memory. Every
//! access to it in the group is at the invocation's own index (the fusion
//! rules), and its first use is a write (an intermediate is never read
//! before it is written), so one private value per invocation holds it.
//!
//! In the composed text, `b[<index>]` becomes the private `b`, and
//! `arrayLength(&b)` becomes the length of another buffer of the group with
//! the same length (a "stand-in"; without one, the buffer stays in memory).
//! Anything else that names it leaves it in memory too.

use crate::model::lex::{Kind, lex, text};

/// Rewrite `source` so that the global `name` (declared by the caller as
/// `var<private> name: T`) is used as a value: `name[...]` becomes `name`
/// and `arrayLength(&name)` becomes `arrayLength(&stand_in)`. `None` when a
/// use is neither.
pub fn rewrite(source: &str, name: &str, stand_in: &str) -> Option<String> {
    let tokens = lex(source).complete()?;
    let is_punct = |i: usize, c: u8| tokens.get(i).is_some_and(|t| t.kind == Kind::Punct(c));
    let is_ident = |i: usize, w: &str| {
        tokens
            .get(i)
            .is_some_and(|t| t.kind == Kind::Word && text(source, t) == w)
    };
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        if t.kind != Kind::Word || text(source, t) != name || is_punct(i.wrapping_sub(1), b'.') {
            i += 1;
            continue;
        }
        // Its declaration, `var<private> name: T;`.
        if is_punct(i.wrapping_sub(1), b'>') && is_punct(i + 1, b':') {
            i += 1;
            continue;
        }
        if is_punct(i + 1, b'[') {
            // `name[ ... ]` with balanced brackets.
            let mut depth = 0usize;
            let mut j = i + 1;
            loop {
                let u = tokens.get(j)?;
                match u.kind {
                    Kind::Punct(b'[') => depth += 1,
                    Kind::Punct(b']') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            edits.push((t.start, tokens.get(j)?.end, name));
            i = j + 1;
        } else if is_punct(i.wrapping_sub(1), b'&')
            && is_punct(i.wrapping_sub(2), b'(')
            && is_ident(i.wrapping_sub(3), "arrayLength")
        {
            edits.push((t.start, t.end, stand_in));
            i += 1;
        } else {
            return None;
        }
    }
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for (start, end, with) in edits {
        out.push_str(source.get(at..start)?);
        out.push_str(with);
        at = end;
    }
    out.push_str(source.get(at..)?);
    Some(out)
}

/// `T` of `array<T>`.
pub fn element_type(array: &str) -> Option<&str> {
    array
        .trim()
        .strip_prefix("array<")?
        .strip_suffix('>')
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_uses_become_the_value_and_lengths_the_stand_in() {
        let src = "fn f(g: vec3<u32>) { if g.x < arrayLength(&t) { t[g.x] = src[g.x] * 2u; y[g.x] = t[(g.x)] + 1u; } }";
        let out = rewrite(src, "t", "src").expect("rewritten");
        assert_eq!(
            out,
            "fn f(g: vec3<u32>) { if g.x < arrayLength(&src) { t = src[g.x] * 2u; y[g.x] = t + 1u; } }"
        );
        let declared = format!("var<private> t: u32;\n{src}");
        assert!(
            rewrite(&declared, "t", "src").is_some_and(|o| o.starts_with("var<private> t: u32;"))
        );
    }

    #[test]
    fn any_other_use_keeps_the_buffer_in_memory() {
        assert!(rewrite("fn f() { let p = &t; }", "t", "s").is_none());
        assert!(rewrite("fn f() { g(t); }", "t", "s").is_none());
        // A member access of another value with the same name is not a use.
        assert_eq!(
            rewrite("fn f() { let a = v.t; }", "t", "s").as_deref(),
            Some("fn f() { let a = v.t; }")
        );
    }

    #[test]
    fn element_types() {
        assert_eq!(element_type("array<u32>"), Some("u32"));
        assert_eq!(element_type("array<vec4<f32>>"), Some("vec4<f32>"));
        assert_eq!(element_type("u32"), None);
    }
}
