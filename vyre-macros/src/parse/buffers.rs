//! Buffer declarations: `input x[n];`, `inout`, `intermediate`, `output`,
//! `uniform params;`, and append buffers (`append hits[CAP] [grow];`,
//! `append intermediate hits[CAP];`), read back as a `Vec` truncated to
//! their count unless they stay on the device. Textures and samplers are
//! `textures.rs`.

use proc_macro2::Span;
use syn::Ident;
use syn::parse::ParseStream;

use super::sizes::{EXTENT_FORMS, parse_extent};
use super::tokens::expect_semi;
use crate::model::{AppendDecl, BufferClass, BufferDecl, Extent, ExtentExpr};

/// A buffer's name, length and `;` after its class keyword (`keyword`):
/// `x[n];`, `params;` for a uniform, `hits[CAP] grow;` for an append buffer.
pub fn parse_buffer(
    input: ParseStream,
    class: BufferClass,
    keyword: Ident,
) -> syn::Result<BufferDecl> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected the buffer's name after `{keyword}`")))?;
    let len = if class == BufferClass::Uniform {
        if input.peek(syn::token::Bracket) {
            return Err(input.error(
                "a uniform buffer holds exactly one value of the kernel's uniform type: write `uniform name;` without a size",
            ));
        }
        ExtentExpr {
            extent: Extent::constant(1),
            span: name.span(),
        }
    } else {
        if !input.peek(syn::token::Bracket) {
            return Err(input.error(format!(
                "expected the buffer's length in elements: `{keyword} {name}[n];` ({EXTENT_FORMS})"
            )));
        }
        let content;
        let bracket = syn::bracketed!(content in input);
        if content.is_empty() {
            return Err(syn::Error::new(
                bracket.span.join(),
                format!("expected a length: {EXTENT_FORMS}"),
            ));
        }
        let len = parse_extent(&content)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected token in the length: {EXTENT_FORMS}")));
        }
        len
    };
    let grow = parse_grow(input, &keyword, &name)?;
    expect_semi(input, "after the buffer declaration")?;
    let append = (keyword == "append").then_some(AppendDecl { grow });
    Ok(BufferDecl {
        class,
        name,
        len,
        texture: None,
        append,
    })
}

/// Parses what follows `append` before the name: `intermediate` for an
/// append buffer that stays on the device (class `Intermediate`), nothing
/// for one read back (class `Output`). A buffer may still be called
/// `intermediate` (`append intermediate[n];`).
pub fn parse_append_class(input: ParseStream) -> syn::Result<BufferClass> {
    let fork = input.fork();
    let (Ok(word), Ok(_name)) = (fork.parse::<Ident>(), fork.parse::<Ident>()) else {
        return Ok(BufferClass::Output);
    };
    match word.to_string().as_str() {
        "intermediate" => {
            let _: Ident = input.parse()?;
            Ok(BufferClass::Intermediate)
        }
        "input" | "inout" | "output" | "uniform" => Err(syn::Error::new(
            word.span(),
            format!(
                "an append buffer is written by the graph's kernels and read back by default; `append {word}` is not a kind of buffer: write `append name[CAP];` for one read back after the run, or `append intermediate name[CAP];` for one that stays on the device"
            ),
        )),
        _ => Ok(BufferClass::Output),
    }
}

/// Parses an optional `grow` after a buffer's length; `append` says whether
/// the buffer is an append buffer (`grow` on another is an error).
pub fn parse_grow(input: ParseStream, keyword: &Ident, name: &Ident) -> syn::Result<Option<Span>> {
    let is_grow = input.fork().parse::<Ident>().is_ok_and(|i| i == "grow");
    if !is_grow {
        return Ok(None);
    }
    let grow: Ident = input.parse()?;
    if keyword != "append" {
        return Err(syn::Error::new(
            grow.span(),
            format!(
                "`grow` applies only to append buffers, whose capacity can grow to fit their count; `{keyword} {name}` has a fixed size: remove `grow`, or declare `append {name}[..] grow;`"
            ),
        ));
    }
    Ok(Some(grow.span()))
}
