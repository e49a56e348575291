//! Built-in reductions and scans, after `node`:
//! `label = reduce sum|add|max|min[<T>](src) [over [rows, cols]] -> dst;` and
//! `label = scan inclusive|exclusive sum|add|max|min[<T>](src) [over [rows, cols]] -> dst;`.
//! A kernel called `reduce` or `scan` still parses as a node
//! (`node r = reduce(src: x) over n;`): a reduction has the operation's name
//! between the keyword and the parentheses.

use syn::parse::ParseStream;
use syn::{Ident, Token};

use super::sizes::parse_extent;
use super::tokens::expect_semi;
use crate::model::ExtentExpr;
use crate::model::{ReduceDecl, ReduceKind, ReduceOp};

const FORMS: &str = "`node total = reduce sum(x) -> s;`, `reduce max(x) over [rows, cols] -> m`, `scan inclusive sum(x) -> y` or `scan exclusive sum(x) -> y`";

/// Whether the tokens after `node` are a reduction or a scan.
pub fn is_reduce(input: ParseStream) -> bool {
    let fork = input.fork();
    let ok = fork.parse::<Ident>().is_ok() && fork.parse::<Token![=]>().is_ok();
    let Ok(kw) = fork.parse::<Ident>() else {
        return false;
    };
    ok && (kw == "reduce" || kw == "scan") && fork.peek(syn::Ident)
}

/// A reduction or scan after `node` (`is_reduce` said so); `at` is its place
/// among the graph's node items.
pub fn parse_reduce(input: ParseStream, at: usize) -> syn::Result<ReduceDecl> {
    let label: Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let keyword: Ident = input.parse()?;
    let mut kind_missing = None;
    let kind = if keyword == "scan" {
        // Peeked: a missing kind leaves the operation for below.
        let which: Ident = input.fork().parse()?;
        let op_next = matches!(which.to_string().as_str(), "sum" | "add" | "max" | "min");
        if !op_next {
            input.parse::<Ident>()?;
        }
        match which.to_string().as_str() {
            "inclusive" => ReduceKind::Inclusive,
            "exclusive" => ReduceKind::Exclusive,
            // `scan sum(x)`: the kind is missing, the operation is there.
            "sum" | "add" | "max" | "min" => {
                kind_missing = Some(which.span());
                ReduceKind::Inclusive
            }
            _ => {
                return Err(syn::Error::new(
                    which.span(),
                    format!(
                        "expected `inclusive` or `exclusive` after `scan`, found `{which}` (`scan inclusive sum(x) -> y;`)"
                    ),
                ));
            }
        }
    } else {
        ReduceKind::Reduce
    };
    let op_ident: Ident = input.parse().map_err(|_| {
        input.error(format!(
            "expected the operation: `sum`, `add`, `max` or `min`; {FORMS}"
        ))
    })?;
    let op = match op_ident.to_string().as_str() {
        "sum" | "add" => ReduceOp::Sum,
        "max" => ReduceOp::Max,
        "min" => ReduceOp::Min,
        _ => {
            return Err(syn::Error::new(
                op_ident.span(),
                format!(
                    "unknown operation `{op_ident}`: `{keyword}` takes `sum` (or `add`), `max` or `min`"
                ),
            ));
        }
    };
    let ty = if input.peek(Token![<]) {
        input.parse::<Token![<]>()?;
        let ty: Ident = input.parse()?;
        input.parse::<Token![>]>()?;
        Some(ty)
    } else {
        None
    };
    if !input.peek(syn::token::Paren) {
        return Err(input.error(format!(
            "expected the buffer to {keyword} in parentheses: `{keyword} {op_ident}(x)`"
        )));
    }
    let content;
    syn::parenthesized!(content in input);
    let src: Ident = content.parse().map_err(|_| {
        content.error(format!(
            "expected one buffer name: `{keyword} {op_ident}(x)`"
        ))
    })?;
    if !content.is_empty() {
        return Err(content.error(format!(
            "`{keyword}` takes one buffer: `{keyword} {op_ident}({src})`"
        )));
    }
    let rows = parse_rows(input, &keyword)?;
    if !input.peek(Token![->]) {
        return Err(input.error(format!(
            "expected `-> buffer` after `{keyword} {op_ident}({src})`: the buffer it writes"
        )));
    }
    input.parse::<Token![->]>()?;
    let dst: Ident = input
        .parse()
        .map_err(|_| input.error("expected the buffer to write after `->`"))?;
    expect_semi(input, "after the node")?;
    Ok(ReduceDecl {
        at,
        keyword,
        label,
        kind,
        kind_missing,
        op,
        ty,
        src,
        rows,
        dst,
    })
}

/// `over [rows, cols]`, if present.
fn parse_rows(input: ParseStream, keyword: &Ident) -> syn::Result<Option<[ExtentExpr; 2]>> {
    if !input.peek(syn::Ident) {
        return Ok(None);
    }
    let over: Ident = input.parse()?;
    if over != "over" {
        return Err(syn::Error::new(
            over.span(),
            format!("expected `over [rows, cols]` or `-> buffer`, found `{over}`"),
        ));
    }
    let no_rows = || {
        format!(
            "a segmented `{keyword}` needs the extent's rows and columns: `over [rows, cols]` (e.g. `over [n / 1024, 1024]`); without `over` it works on the whole buffer"
        )
    };
    if !input.peek(syn::token::Bracket) {
        return Err(syn::Error::new(over.span(), no_rows()));
    }
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut dims = Vec::new();
    while !content.is_empty() {
        dims.push(parse_extent(&content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    <[ExtentExpr; 2]>::try_from(dims)
        .map(Some)
        .map_err(|_| syn::Error::new(bracket.span.join(), no_rows()))
}
