//! Grammar of data-dependent graphs (issue 12), called from `input.rs`:
//!
//! * `append hits[CAP];` and `append hits[CAP] grow;`: an append buffer
//!   (read back as a `Vec` truncated to its count);
//!   `append intermediate hits[CAP];`: one that stays on the device (never
//!   read back, not in the outputs);
//! * `over count(hits)`: a node sized by an append buffer's count on the
//!   device; `grid indirect(args)`: a grid read from a buffer;
//! * `repeat up to K as i until empty(b) { .. }` and
//!   `.. until zero(f) { .. }`: loops that stop themselves.
//!
//! What these mean for the rest of the graph is checked in `append.rs`.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, LitInt};

use crate::input::BufferRef;
use vyre_analysis::BufferClass;

/// `append` (and `grow`) on a buffer declaration.
#[derive(Clone, Debug)]
pub struct AppendDecl {
    /// `grow` was given (at this span): on overflow, grow and run again.
    pub grow: Option<Span>,
}

/// A size read on the device.
pub enum DeviceSize {
    /// `over count(b)`.
    Count(BufferRef),
    /// `grid indirect(b)`.
    Indirect(BufferRef),
}

/// `until empty(b)` or `until zero(f)`.
pub struct UntilDecl {
    /// `empty` or `zero`.
    pub keyword: Ident,
    /// Whether it is `zero` (a flag) rather than `empty` (a count).
    pub zero: bool,
    /// The buffer.
    pub target: BufferRef,
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
    let target = crate::input::parse_buffer_ref(&content).map_err(|_| content.error(usage))?;
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
    let count: u64 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "repeat count too large (it must fit in 64 bits and be unrolled at compile time)",
        )
    })?;
    if count == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "`repeat up to 0` never runs its body; give it at least 1 iteration, or remove the block",
        ));
    }
    Ok(Some((count, lit.span())))
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
