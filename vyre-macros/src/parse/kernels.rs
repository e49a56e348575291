//! `kernel name = "..." | file "path" | wgsl { ... } [entry "main"];`

use proc_macro2::{Delimiter, TokenTree};
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

use super::tokens::expect_semi;
use crate::model::{KernelDecl, KernelSource};

/// A kernel declaration after `kernel`.
pub fn parse_kernel(input: ParseStream) -> syn::Result<KernelDecl> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error("expected the kernel's name: `kernel name = ...;`"))?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `kernel {name}`")));
    }
    input.parse::<Token![=]>()?;
    const FORMS: &str =
        "expected the kernel's WGSL: a string literal, `file \"path.wgsl\"` or `wgsl { ... }`";
    let source = if input.peek(LitStr) {
        KernelSource::Literal(input.parse()?)
    } else if input.peek(syn::Ident) {
        let word: Ident = input.parse()?;
        if word == "file" {
            let path: LitStr = input.parse().map_err(|_| {
                input.error("expected the path as a string literal: `file \"kernels/name.wgsl\"`")
            })?;
            KernelSource::File(path)
        } else if word == "wgsl" {
            let group = input.step(|cursor| match cursor.token_tree() {
                Some((TokenTree::Group(g), next)) if g.delimiter() == Delimiter::Brace => {
                    Ok((g, next))
                }
                _ => Err(cursor.error("expected `{` after `wgsl`: `wgsl { ... }`")),
            })?;
            KernelSource::Tokens(group)
        } else {
            return Err(syn::Error::new(word.span(), FORMS));
        }
    } else {
        return Err(input.error(FORMS));
    };
    let mut entry = None;
    if input.peek(syn::Ident) {
        let word: Ident = input.parse()?;
        if word != "entry" {
            return Err(syn::Error::new(
                word.span(),
                "expected `entry \"name\"` or `;` after the kernel's source",
            ));
        }
        entry = Some(input.parse::<LitStr>().map_err(|_| {
            input.error("expected the entry point's name as a string literal: `entry \"main\"`")
        })?);
    }
    expect_semi(input, "after the kernel declaration")?;
    Ok(KernelDecl {
        name,
        source,
        entry,
    })
}
