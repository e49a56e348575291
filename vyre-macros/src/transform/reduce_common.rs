//! What fusion on read (`reduce.rs`), fusion on write (`reduce_write.rs`)
//! and paired reductions (`reduce_pair.rs`) share: copying a node's buffer
//! references, and giving a staged kernel's structs back their names.

use super::wgsl::{Kind, lex, text as wgsl_text};
use crate::model::BufferRef;

/// The producer's struct names without the prefix: they are the Rust types
/// of its bindings, which must stay the user's.
pub fn unprefix_structs(text: &str, prefix: &str, structs: &[&str]) -> Option<String> {
    let tokens = lex(text)?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for t in &tokens {
        let word = wgsl_text(text, t);
        if t.kind == Kind::Ident
            && let Some(name) = word.strip_prefix(prefix)
            && structs.contains(&name)
        {
            out.push_str(text.get(at..t.start)?);
            out.push_str(name);
            at = t.end;
        }
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// A copy of a node's buffer reference.
pub fn clone_ref(r: &BufferRef) -> BufferRef {
    match r {
        BufferRef::Name(n) => BufferRef::Name(n.clone()),
        BufferRef::Alternate {
            keyword,
            pong,
            a,
            b,
        } => BufferRef::Alternate {
            keyword: keyword.clone(),
            pong: *pong,
            a: a.clone(),
            b: b.clone(),
        },
    }
}
