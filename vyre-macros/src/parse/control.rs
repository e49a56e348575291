//! The grammar of data-dependent graphs and of what alternates between
//! iterations:
//!
//! * `ping(a, b)` / `pong(a, b)`: a buffer that alternates between the
//!   iterations of a `repeat`;
//! * `over count(hits)`: a node sized by an append buffer's count on the
//!   device; `grid indirect(args)`: a grid read from a buffer;
//! * `repeat up to K as i until empty(b) { .. }` and
//!   `.. until zero(f) { .. }`: loops that stop themselves.
//!
//! What these mean for the rest of the graph is checked in
//! `analyse/appends.rs` and `analyse/loops.rs`.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, LitInt, Token};

use crate::model::{BufferRef, DeviceSize, UntilDecl};

/// A buffer a node names: a plain name, or `ping(a, b)` / `pong(a, b)`.
pub fn parse_buffer_ref(input: ParseStream) -> syn::Result<BufferRef> {
    let name: Ident = input
        .parse()
        .map_err(|_| input.error("expected a buffer name, `ping(a, b)` or `pong(a, b)`"))?;
    if (name == "ping" || name == "pong") && input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let a: Ident = content.parse()?;
        content.parse::<Token![,]>()?;
        let b: Ident = content.parse()?;
        if content.peek(Token![,]) {
            content.parse::<Token![,]>()?;
        }
        if !content.is_empty() {
            return Err(content.error(format!(
                "`{name}` takes exactly two buffers: `{name}(a, b)`"
            )));
        }
        let pong = name == "pong";
        return Ok(BufferRef::Alternate {
            keyword: name,
            pong,
            a,
            b,
        });
    }
    Ok(BufferRef::Name(name))
}

/// Parses `count(b)` after `over` (the `count` identifier already peeked).
pub fn parse_count(input: ParseStream) -> syn::Result<DeviceSize> {
    let _count: Ident = input.parse()?;
    Ok(DeviceSize::Count(parenthesized_ref(
        input,
        "`over count(b)` takes one append buffer: `over count(hits)`",
    )?))
}

/// Parses `indirect(b)` after `grid` (the identifier already peeked).
pub fn parse_indirect(input: ParseStream) -> syn::Result<DeviceSize> {
    let _indirect: Ident = input.parse()?;
    Ok(DeviceSize::Indirect(parenthesized_ref(
        input,
        "`grid indirect(b)` takes one buffer holding three `u32` workgroup counts: `grid indirect(args)`",
    )?))
}

/// Whether the next tokens are `word(`.
pub fn peek_call(input: ParseStream, word: &str) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|i| i == word) && fork.peek(syn::token::Paren)
}

fn parenthesized_ref(input: ParseStream, usage: &str) -> syn::Result<BufferRef> {
    if !input.peek(syn::token::Paren) {
        return Err(input.error(usage));
    }
    let content;
    syn::parenthesized!(content in input);
    let target = parse_buffer_ref(&content).map_err(|_| content.error(usage))?;
    if !content.is_empty() {
        return Err(content.error(usage));
    }
    Ok(target)
}

/// Parses `up to K` after `repeat` (when `up` follows): the count and its
/// span.
pub fn parse_up_to(input: ParseStream) -> syn::Result<Option<(u64, Span)>> {
    let is_up = input.fork().parse::<Ident>().is_ok_and(|i| i == "up");
    if !is_up {
        return Ok(None);
    }
    let _up: Ident = input.parse()?;
    let to = input.parse::<Ident>().ok().filter(|t| t == "to");
    if to.is_none() {
        return Err(input.error(
            "expected `to` after `repeat up`: `repeat up to K as i until empty(b) { ... }`",
        ));
    }
    let lit: LitInt = input.parse().map_err(|_| {
        input.error("expected the most iterations: `repeat up to 10 as i until empty(b) { ... }`")
    })?;
    repeat_count(
        &lit,
        "`repeat up to 0` never runs its body; give it at least 1 iteration, or remove the block",
    )
    .map(Some)
}

/// A `repeat` block's iteration count and its span: at least 1 (`zero`
/// says why 0 is wrong), unrolled at compile time.
pub fn repeat_count(lit: &LitInt, zero: &str) -> syn::Result<(u64, Span)> {
    let count: u64 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "repeat count too large (it must fit in 64 bits and be unrolled at compile time)",
        )
    })?;
    if count == 0 {
        return Err(syn::Error::new(lit.span(), zero));
    }
    Ok((count, lit.span()))
}

/// Parses `until empty(b)` / `until zero(f)` after a `repeat up to K as i`.
pub fn parse_until(input: ParseStream) -> syn::Result<UntilDecl> {
    const USAGE: &str = "`repeat up to K as i` needs its stopping condition: `until empty(b)` (stop when append buffer `b` is empty) or `until zero(f)` (stop after an iteration that left the `u32` flag `f` at 0)";
    let until = input.parse::<Ident>().ok().filter(|u| u == "until");
    if until.is_none() {
        return Err(input.error(USAGE));
    }
    let keyword: Ident = input.parse().map_err(|_| input.error(USAGE))?;
    let zero = match keyword.to_string().as_str() {
        "empty" => false,
        "zero" => true,
        _ => return Err(syn::Error::new(keyword.span(), USAGE)),
    };
    let target = parenthesized_ref(input, USAGE)?;
    Ok(UntilDecl {
        keyword,
        zero,
        target,
    })
}

/// `repeat 4 as i` must not say `until` (only `repeat up to K` stops).
pub fn reject_until(input: ParseStream) -> syn::Result<()> {
    let fork = input.fork();
    if let Ok(word) = fork.parse::<Ident>()
        && word == "until"
    {
        return Err(syn::Error::new(
            word.span(),
            "`repeat K` always runs K iterations; a loop that stops itself is written `repeat up to K as i until ... { ... }`",
        ));
    }
    Ok(())
}
