//! Sizes (buffer lengths, `over`, `grid`), normalised as they are parsed
//! to `ceil(n * mul / div) + add`: an integer, `n`, `K * n`, `n * K`,
//! `(...) / K` (rounds up) and `... + K`.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, LitInt, Token};

use super::tokens::MAX_NESTING;
use crate::model::{Extent, ExtentExpr};

/// What sizes may look like, for messages.
pub const EXTENT_FORMS: &str = "sizes are written as an integer, `n`, `K * n`, `n * K`, `(...) / K` (rounds up) or `... + K`, with integer constants `K`";

/// A size expression before normalisation.
enum SizeAst {
    Int(u64),
    N,
    Add(Box<SizeAst>, Box<SizeAst>, Span),
    Mul(Box<SizeAst>, Box<SizeAst>, Span),
    Div(Box<SizeAst>, Box<SizeAst>, Span),
}

/// Parses and normalises a size; stops before the first token that cannot
/// continue it (`,`, `;`, `with`, ...).
pub fn parse_extent(input: ParseStream) -> syn::Result<ExtentExpr> {
    let span = input.span();
    let ast = parse_size_sum(input, 0)?;
    let extent = normalise(&ast)?;
    Ok(ExtentExpr { extent, span })
}

fn parse_size_sum(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    let mut lhs = parse_size_product(input, depth)?;
    loop {
        if input.peek(Token![+]) {
            let op: Token![+] = input.parse()?;
            let rhs = parse_size_product(input, depth)?;
            lhs = SizeAst::Add(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![-]) {
            return Err(input.error(format!(
                "subtraction is not supported in sizes; {EXTENT_FORMS}"
            )));
        } else {
            return Ok(lhs);
        }
    }
}

fn parse_size_product(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    let mut lhs = parse_size_atom(input, depth)?;
    loop {
        if input.peek(Token![*]) {
            let op: Token![*] = input.parse()?;
            let rhs = parse_size_atom(input, depth)?;
            lhs = SizeAst::Mul(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![/]) {
            let op: Token![/] = input.parse()?;
            let rhs = parse_size_atom(input, depth)?;
            lhs = SizeAst::Div(Box::new(lhs), Box::new(rhs), op.span);
        } else if input.peek(Token![%]) {
            return Err(input.error(format!("`%` is not supported in sizes; {EXTENT_FORMS}")));
        } else {
            return Ok(lhs);
        }
    }
}

fn parse_size_atom(input: ParseStream, depth: usize) -> syn::Result<SizeAst> {
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let value: u64 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "size too large: it must fit in 64 bits"))?;
        return Ok(SizeAst::Int(value));
    }
    if input.peek(syn::Ident) {
        let ident: Ident = input.parse()?;
        if ident == "n" {
            return Ok(SizeAst::N);
        }
        return Err(syn::Error::new(
            ident.span(),
            format!(
                "unknown size variable `{ident}`: sizes depend only on the problem size `n`; {EXTENT_FORMS}"
            ),
        ));
    }
    if input.peek(syn::token::Paren) {
        if depth >= MAX_NESTING {
            return Err(input.error("size expression nested too deeply"));
        }
        let content;
        syn::parenthesized!(content in input);
        let inner = parse_size_sum(&content, depth + 1)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected token in size; {EXTENT_FORMS}")));
        }
        return Ok(inner);
    }
    Err(input.error(format!("expected a size: {EXTENT_FORMS}")))
}

fn too_large(span: Span) -> syn::Error {
    syn::Error::new(span, "size arithmetic overflows 64 bits")
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn reduce(e: Extent) -> Extent {
    if e.mul == 0 {
        return Extent::constant(e.add);
    }
    let g = gcd(e.mul, e.div).max(1);
    Extent {
        mul: e.mul / g,
        div: e.div / g,
        add: e.add,
    }
}

/// The operands of `+` or `*` at `op`, normalised: the one that depends
/// on `n` (or the first, when neither does) and the other's constant;
/// `both` says why both may not depend on `n`.
fn operands(a: &SizeAst, b: &SizeAst, op: Span, both: &str) -> syn::Result<(Extent, u64)> {
    let (a, b) = (normalise(a)?, normalise(b)?);
    match (a.depends_on_n(), b.depends_on_n()) {
        (_, false) => Ok((a, b.add)),
        (false, true) => Ok((b, a.add)),
        (true, true) => Err(syn::Error::new(op, format!("{both}; {EXTENT_FORMS}"))),
    }
}

fn normalise(ast: &SizeAst) -> syn::Result<Extent> {
    Ok(reduce(match ast {
        SizeAst::Int(v) => Extent::constant(*v),
        SizeAst::N => Extent::N,
        SizeAst::Add(a, b, op) => {
            let (var, c) = operands(a, b, *op, "cannot add two sizes that both depend on `n`")?;
            Extent {
                add: var.add.checked_add(c).ok_or_else(|| too_large(*op))?,
                ..var
            }
        }
        SizeAst::Mul(a, b, op) => {
            let (var, c) = operands(
                a,
                b,
                *op,
                "sizes are linear in `n`: `n * n` is not supported",
            )?;
            if var.div != 1 {
                return Err(syn::Error::new(
                    *op,
                    format!(
                        "multiply before dividing: write `(K * n) / D` rather than `(n / D) * K`; {EXTENT_FORMS}"
                    ),
                ));
            }
            let mul = var.mul.checked_mul(c).ok_or_else(|| too_large(*op))?;
            let add = var.add.checked_mul(c).ok_or_else(|| too_large(*op))?;
            Extent { mul, div: 1, add }
        }
        SizeAst::Div(a, b, op) => {
            let (a, b) = (normalise(a)?, normalise(b)?);
            if b.depends_on_n() {
                return Err(syn::Error::new(
                    *op,
                    format!("sizes can only be divided by a constant; {EXTENT_FORMS}"),
                ));
            }
            if b.add == 0 {
                return Err(syn::Error::new(*op, "division by zero in size"));
            }
            if !a.depends_on_n() {
                Extent::constant(a.add.div_ceil(b.add))
            } else if a.add != 0 {
                return Err(syn::Error::new(
                    *op,
                    format!(
                        "cannot divide a sum: `(K * n + C) / D` is not supported; add constants after dividing; {EXTENT_FORMS}"
                    ),
                ));
            } else {
                // ceil(ceil(x / d) / k) == ceil(x / (d * k)) for positive integers.
                let div = a.div.checked_mul(b.add).ok_or_else(|| too_large(*op))?;
                Extent {
                    mul: a.mul,
                    div,
                    add: 0,
                }
            }
        }
    }))
}
