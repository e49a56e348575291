//! `kernel name = "..." | file "path" | wgsl { ... } [entry "main"];` and
//! `module name = "..." | file "path" | wgsl { ... };` (a WESL module the
//! kernels may import as `package::name`).

use proc_macro2::{Delimiter, TokenTree};
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

use super::tokens::expect_semi;
use crate::model::{KernelDecl, KernelSource, ModuleDecl};

/// A kernel declaration after `kernel`.
pub fn parse_kernel(input: ParseStream) -> syn::Result<KernelDecl> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error("expected the kernel's name: `kernel name = ...;`"))?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `kernel {name}`")));
    }
    input.parse::<Token![=]>()?;
    let source = parse_source(input, "kernel")?;
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

/// The WGSL after `=`: a string literal, `file "path"` or `wgsl { ... }`;
/// `what` (kernel, module) names it in messages.
fn parse_source(input: ParseStream, what: &str) -> syn::Result<KernelSource> {
    let forms = format!(
        "expected the {what}'s WGSL: a string literal, `file \"path.wgsl\"` or `wgsl {{ ... }}`"
    );
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
            return Err(syn::Error::new(word.span(), forms.clone()));
        }
    } else {
        return Err(input.error(forms.clone()));
    };
    Ok(source)
}

/// A module declaration after `module`: `module name = <source>;`.
pub fn parse_module(input: ParseStream) -> syn::Result<ModuleDecl> {
    let name: Ident = input.parse().map_err(|_| {
        input.error("expected the module's name: `module name = wgsl { ... };` (imported as `package::name`)")
    })?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `module {name}`")));
    }
    input.parse::<Token![=]>()?;
    let source = parse_source(input, "module")?;
    expect_semi(input, "after the module declaration")?;
    Ok(ModuleDecl { name, source })
}
