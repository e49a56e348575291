//! The whole input: the header (`pub struct Name;`) and the items after
//! it, each parsed by the file for its kind. Parsing recovers at item
//! boundaries: a malformed item is reported and skipped up to its `;` (or
//! the next item keyword), so one build shows every syntax error.

use proc_macro2::{Span, TokenStream};
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Ident, Token, Visibility};

use super::buffers::{parse_append_class, parse_buffer};
use super::kernels::{parse_kernel, parse_module};
use super::nodes::{parse_node, parse_repeat};
use super::options;
use super::reduce;
use super::textures::{is_texture_decl, parse_sampler, parse_texture};
use super::tokens::{EXPECTED_ITEM, recover, skip_doc_comments};
use crate::diag::Diagnostics;
use crate::model::{BufferClass, BufferDecl, GraphInput, Header, NodeItem};

/// Parses the macro input, reporting every syntax error into `diag`.
///
/// Always returns a [`GraphInput`] holding whatever parsed; callers must not
/// analyse the graph when `diag` holds errors (kernels that parsed may still
/// be checked).
pub fn parse(tokens: TokenStream, diag: &mut Diagnostics) -> GraphInput {
    let mut graph = GraphInput {
        header: None,
        limits_native: None,
        fuse_off: None,
        features: Vec::new(),
        kernels: Vec::new(),
        modules: Vec::new(),
        flags: Vec::new(),
        buffers: Vec::new(),
        items: Vec::new(),
        reductions: Vec::new(),
    };
    let mut errors = Diagnostics::new();
    let parser = |input: ParseStream| -> syn::Result<()> {
        parse_graph(input, &mut graph, &mut errors);
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    diag.extend(errors);
    graph
}

fn parse_graph(input: ParseStream, graph: &mut GraphInput, diag: &mut Diagnostics) {
    if input.is_empty() {
        diag.error(
            Span::call_site(),
            "empty graph: expected `pub struct Name;` followed by kernels, buffers and nodes",
        );
        return;
    }
    // The header.
    let fork = input.fork();
    match parse_header(&fork) {
        Ok(header) => {
            input.advance_to(&fork);
            graph.header = Some(header);
        }
        Err(e) => {
            diag.push(e);
            recover(input);
        }
    }
    while !input.is_empty() {
        let fork = input.fork();
        match parse_item(&fork, graph) {
            Ok(()) => input.advance_to(&fork),
            Err(e) => {
                diag.push(e);
                recover(input);
            }
        }
    }
}

fn parse_header(input: ParseStream) -> syn::Result<Header> {
    let attrs = Attribute::parse_outer(input)?;
    let vis: Visibility = input.parse()?;
    if !input.peek(Token![struct]) {
        return Err(input.error(
            "graph! starts with the type to generate: expected `struct Name;` (with optional doc comments and visibility, e.g. `pub struct Saxpy;`)",
        ));
    }
    input.parse::<Token![struct]>()?;
    let name: Ident = input.parse()?;
    if !input.peek(Token![;]) {
        return Err(input.error(
            "expected `;` after the type name: the generated type has no body or generics (`pub struct Name;`)",
        ));
    }
    input.parse::<Token![;]>()?;
    Ok(Header { attrs, vis, name })
}

fn parse_item(input: ParseStream, graph: &mut GraphInput) -> syn::Result<()> {
    skip_doc_comments(input)?;
    if input.peek(Token![struct]) || input.peek(Token![pub]) {
        return Err(input.error(if graph.header.is_some() {
            "only one `struct` per graph!: the generated type is declared once, first"
        } else {
            "the `struct` item must come first in graph!"
        }));
    }
    let keyword: Ident = match input.parse() {
        Ok(k) => k,
        Err(_) => return Err(input.error(EXPECTED_ITEM)),
    };
    match keyword.to_string().as_str() {
        "kernel" => graph.kernels.push(parse_kernel(input)?),
        "module" => graph.modules.push(parse_module(input)?),
        "flags" => options::parse_flags(input, &mut graph.flags)?,
        "input" | "inout" | "intermediate" | "output" | "uniform" | "append" => {
            graph.buffers.push(parse_buffer_item(input, keyword)?);
        }
        "sampler" => graph.buffers.push(parse_sampler(input)?),
        "node" if reduce::is_reduce(input) => {
            let at = graph.items.len();
            graph.reductions.push(reduce::parse_reduce(input, at)?);
        }
        "node" => graph
            .items
            .push(NodeItem::Node(parse_node(input, keyword)?)),
        "repeat" => graph
            .items
            .push(NodeItem::Repeat(parse_repeat(input, keyword)?)),
        "limits" => options::parse_limits(input, &keyword, &mut graph.limits_native)?,
        "fuse" => options::parse_fuse(input, &keyword, &mut graph.fuse_off)?,
        "features" => options::parse_features(input, &mut graph.features)?,
        _ => {
            return Err(syn::Error::new(
                keyword.span(),
                format!("unknown item `{keyword}`: {EXPECTED_ITEM}"),
            ));
        }
    }
    Ok(())
}

/// A buffer, texture or append buffer after its class keyword.
fn parse_buffer_item(input: ParseStream, keyword: Ident) -> syn::Result<BufferDecl> {
    let class = match keyword.to_string().as_str() {
        "append" => parse_append_class(input)?,
        "input" => BufferClass::Input,
        "inout" => BufferClass::InOut,
        "intermediate" => BufferClass::Intermediate,
        "output" => BufferClass::Output,
        _ => BufferClass::Uniform,
    };
    if is_texture_decl(input) {
        parse_texture(input, class, &keyword)
    } else {
        parse_buffer(input, class, keyword)
    }
}
