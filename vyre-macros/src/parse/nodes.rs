//! Nodes: `node [label =] kernel(binding: buffer, ...) over E | grid [X,
//! Y, Z] | over count(b) | grid indirect(b) [with { NAME = value, ... }]
//! [unfused];`, and `repeat` blocks of nodes (`repeat K as i { ... }`,
//! `repeat up to K as i until ... { ... }`).

use syn::parse::ParseStream;
use syn::parse::discouraged::Speculative;
use syn::{Ident, LitInt, Token};

use super::control;
use super::sizes::{EXTENT_FORMS, parse_extent};
use super::tokens::{expect_semi, is_item_keyword, recover, skip_doc_comments};
use super::values::parse_value;
use crate::model::{BindArg, ExtentExpr, NodeDecl, OverrideArg, RepeatDecl, SizeDecl};

/// A node after its `node` keyword.
pub fn parse_node(input: ParseStream, keyword: Ident) -> syn::Result<NodeDecl> {
    let first: Ident = input.parse().map_err(|_| {
        input.error("expected the kernel to run: `node kernel(binding: buffer, ...) over n;` or `node label = kernel(...) over n;`")
    })?;
    let (label, kernel) = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let kernel: Ident = input.parse().map_err(|_| {
            input.error(format!("expected the kernel to run after `node {first} =`"))
        })?;
        (Some(first), kernel)
    } else {
        (None, first)
    };
    if !input.peek(syn::token::Paren) {
        return Err(input.error(format!(
            "expected the node's bindings: `{kernel}(binding: buffer, ...)`"
        )));
    }
    let content;
    let paren = syn::parenthesized!(content in input);
    let args = parse_args(&content)?;
    let size = parse_size(input)?;
    let mut overrides = Vec::new();
    // `node a(..) over n node b(..)`: a forgotten `;`, not a misspelt `with`.
    let next_is_item = input
        .fork()
        .parse::<Ident>()
        .is_ok_and(|i| is_item_keyword(&i));
    let mut unfused = parse_unfused(input);
    if !unfused && input.peek(syn::Ident) && !next_is_item {
        overrides = parse_with(input)?;
        unfused = parse_unfused(input);
    }
    expect_semi(input, "after the node")?;
    Ok(NodeDecl {
        keyword,
        label,
        kernel,
        args_span: paren.span.join(),
        args,
        size,
        overrides,
        unfused,
    })
}

/// `binding: buffer, ...` inside a node's parentheses.
fn parse_args(content: ParseStream) -> syn::Result<Vec<BindArg>> {
    let mut args = Vec::new();
    while !content.is_empty() {
        let binding: Ident = content
            .parse()
            .map_err(|_| content.error("expected `binding: buffer`, with `binding` the name of one of the kernel's WGSL globals"))?;
        if !content.peek(Token![:]) {
            return Err(content.error(format!(
                "expected `:` after `{binding}` (`{binding}: buffer`)"
            )));
        }
        content.parse::<Token![:]>()?;
        let target = control::parse_buffer_ref(content)?;
        args.push(BindArg { binding, target });
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error("expected `,` between bindings"));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(args)
}

/// `over E`, `grid [X, Y, Z]`, `over count(b)` or `grid indirect(b)`.
fn parse_size(input: ParseStream) -> syn::Result<SizeDecl> {
    let size_kw: Ident = input.parse().map_err(|_| {
        input.error(
            "expected the node's size: `over <invocations>` or `grid [x, y, z]` (workgroups)",
        )
    })?;
    if size_kw == "over" && control::peek_call(input, "count") {
        Ok(SizeDecl::Device(control::parse_count(input)?))
    } else if size_kw == "grid" && control::peek_call(input, "indirect") {
        Ok(SizeDecl::Device(control::parse_indirect(input)?))
    } else if size_kw == "over" {
        Ok(SizeDecl::Over(parse_extent(input)?))
    } else if size_kw == "grid" {
        parse_grid(input).map(SizeDecl::Grid)
    } else {
        Err(syn::Error::new(
            size_kw.span(),
            "expected the node's size: `over <invocations>` or `grid [x, y, z]` (workgroups)",
        ))
    }
}

/// `[X, Y, Z]` after `grid`: three workgroup counts.
fn parse_grid(input: ParseStream) -> syn::Result<[ExtentExpr; 3]> {
    if !input.peek(syn::token::Bracket) {
        return Err(input.error("expected `[x, y, z]` after `grid`: three workgroup counts"));
    }
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut dims = Vec::new();
    while !content.is_empty() {
        dims.push(parse_extent(&content)?);
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error(format!(
                "expected `,` between workgroup counts; {EXTENT_FORMS}"
            )));
        }
        content.parse::<Token![,]>()?;
    }
    <[ExtentExpr; 3]>::try_from(dims).map_err(|dims| {
        syn::Error::new(
            bracket.span.join(),
            format!(
                "`grid` takes exactly three workgroup counts `[x, y, z]`, found {}",
                dims.len()
            ),
        )
    })
}

/// `with { NAME = value, ... }` after a node's size.
fn parse_with(input: ParseStream) -> syn::Result<Vec<OverrideArg>> {
    let with: Ident = input.parse()?;
    if with != "with" {
        return Err(syn::Error::new(
            with.span(),
            format!(
                "expected `with {{ NAME = value, ... }}`, `unfused` or `;` after the node's size, found `{with}`"
            ),
        ));
    }
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected `{` after `with`: `with { NAME = value, ... }`"));
    }
    let content;
    syn::braced!(content in input);
    let mut overrides = Vec::new();
    while !content.is_empty() {
        let name: Ident = content.parse().map_err(|_| {
            content.error("expected `NAME = value`, with `NAME` an `override` of the kernel")
        })?;
        if !content.peek(Token![=]) {
            return Err(content.error(format!("expected `=` after `{name}`")));
        }
        content.parse::<Token![=]>()?;
        let value = parse_value(&content, 0)?;
        overrides.push(OverrideArg { name, value });
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error(
                "expected `,` between overrides; values are integer, float or bool literals, or integer arithmetic (`+ - * / %`) on the `repeat` variable",
            ));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(overrides)
}

/// An optional `unfused` after a node's size or `with` block.
fn parse_unfused(input: ParseStream) -> bool {
    let is_unfused = input.fork().parse::<Ident>().is_ok_and(|i| i == "unfused");
    if is_unfused {
        let _ = input.parse::<Ident>();
    }
    is_unfused
}

/// A `repeat` block after its keyword.
pub fn parse_repeat(input: ParseStream, keyword: Ident) -> syn::Result<RepeatDecl> {
    let up_to = control::parse_up_to(input)?;
    let (count, count_span) = match up_to {
        Some(c) => c,
        None => {
            let count_lit: LitInt = input
                .parse()
                .map_err(|_| input.error("expected an iteration count: `repeat 4 as i { ... }`"))?;
            control::repeat_count(
                &count_lit,
                "`repeat 0` runs nothing; remove the block or use a count of at least 1",
            )?
        }
    };
    if !input.peek(Token![as]) {
        return Err(
            input.error("expected `as` and the iteration variable: `repeat 4 as i { ... }`")
        );
    }
    input.parse::<Token![as]>()?;
    let var: Ident = input
        .parse()
        .map_err(|_| input.error("expected the iteration variable's name after `as`"))?;
    let until = if up_to.is_some() {
        Some(control::parse_until(input)?)
    } else {
        control::reject_until(input)?;
        None
    };
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected `{ node ...; }`: the nodes to repeat"));
    }
    let content;
    syn::braced!(content in input);
    let mut nodes = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut note = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    while !content.is_empty() {
        let fork = content.fork();
        let parsed = (|| -> syn::Result<NodeDecl> {
            skip_doc_comments(&fork)?;
            let kw: Ident = fork
                .parse()
                .map_err(|_| fork.error("expected `node` inside `repeat`"))?;
            if kw == "repeat" {
                return Err(syn::Error::new(
                    kw.span(),
                    "`repeat` blocks cannot be nested",
                ));
            }
            if kw != "node" {
                return Err(syn::Error::new(
                    kw.span(),
                    format!(
                        "expected `node` inside `repeat`, found `{kw}`: declare kernels and buffers outside the block"
                    ),
                ));
            }
            parse_node(&fork, kw)
        })();
        match parsed {
            Ok(node) => {
                content.advance_to(&fork);
                nodes.push(node);
            }
            Err(e) => {
                note(e);
                recover(&content);
            }
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
    }
    if nodes.is_empty() {
        return Err(syn::Error::new(
            keyword.span(),
            "empty `repeat` block: put at least one `node` inside",
        ));
    }
    Ok(RepeatDecl {
        count,
        count_span,
        var,
        nodes,
        until,
    })
}
