//! Shared pieces of the grammar: the item keywords, error recovery at
//! item boundaries, doc comments on items, and the `;` that ends an item.

use proc_macro2::{Delimiter, TokenTree};
use syn::parse::ParseStream;
use syn::{Attribute, Ident, Token};

/// The keywords that start an item, for messages and error recovery.
const ITEM_KEYWORDS: &[&str] = &[
    "kernel",
    "sampler",
    "input",
    "inout",
    "intermediate",
    "output",
    "append",
    "uniform",
    "node",
    "repeat",
    "limits",
    "features",
    "fuse",
    "module",
    "flags",
];

/// What may start an item, for messages.
pub const EXPECTED_ITEM: &str = "expected `kernel`, `input`, `inout`, `intermediate`, `output`, `append`, `uniform`, `sampler`, `node`, `repeat`, `module`, `limits`, `features`, `flags` or `fuse`";

/// Parentheses deeper than this are rejected (keeps recursion bounded).
pub const MAX_NESTING: usize = 32;

/// Skips a malformed item: at least one token, then up to and including a
/// `;`, or up to the next item keyword.
pub fn recover(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        let mut first = true;
        while let Some((tt, next)) = rest.token_tree() {
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ';' => return Ok(((), next)),
                TokenTree::Ident(i) if !first && is_item_keyword(i) => return Ok(((), rest)),
                _ => {}
            }
            first = false;
            rest = next;
        }
        Ok(((), rest))
    });
}

/// Whether `ident` starts an item.
pub fn is_item_keyword(ident: &Ident) -> bool {
    ITEM_KEYWORDS.iter().any(|k| ident == k)
}

/// Doc comments on items are allowed (and ignored); other attributes are not.
pub fn skip_doc_comments(input: ParseStream) -> syn::Result<()> {
    for attr in Attribute::parse_outer(input)? {
        if !attr.path().is_ident("doc") {
            return Err(syn::Error::new_spanned(
                attr,
                "attributes are only allowed on the `struct` item; inside graph! only doc comments are accepted (and ignored)",
            ));
        }
    }
    Ok(())
}

/// The `;` that ends an item (`context` says where, for the message).
pub fn expect_semi(input: ParseStream, context: &str) -> syn::Result<()> {
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
        Ok(())
    } else {
        // Name what was found, the way rustc does: the caret is on the next
        // token, often on the next line, after the spot that lacks the `;`.
        let found = input
            .fork()
            .parse::<TokenTree>()
            .map(|t| match t {
                TokenTree::Group(g) => match g.delimiter() {
                    Delimiter::Parenthesis => "`(`".to_owned(),
                    Delimiter::Brace => "`{`".to_owned(),
                    Delimiter::Bracket => "`[`".to_owned(),
                    Delimiter::None => "a token".to_owned(),
                },
                other => format!("`{other}`"),
            })
            .unwrap_or_else(|_| "the end of the graph".to_owned());
        Err(input.error(format!("expected `;` {context}, found {found}")))
    }
}
