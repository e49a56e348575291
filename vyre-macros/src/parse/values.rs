//! Override values in `with { NAME = value }`: integer, float and bool
//! literals, and integer arithmetic (`+ - * / %`, parentheses) on the
//! `repeat` variable, kept as expressions ([`ValueExpr`]) because they are
//! evaluated per iteration (`analyse/`).

use proc_macro2::TokenTree;
use syn::parse::ParseStream;
use syn::{LitFloat, LitInt, Token};

use super::tokens::MAX_NESTING;
use crate::model::{BinOp, ValueExpr};

/// An override value: sums of products of unary terms, nested at most
/// `MAX_NESTING` deep (`depth` so far).
pub fn parse_value(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    let mut lhs = parse_value_product(input, depth)?;
    loop {
        let op = if input.peek(Token![+]) {
            BinOp::Add
        } else if input.peek(Token![-]) {
            BinOp::Sub
        } else {
            return Ok(lhs);
        };
        let span = input.span();
        let _: TokenTree = input.parse()?;
        let rhs = parse_value_product(input, depth)?;
        lhs = ValueExpr::Binary(Box::new(lhs), op, span, Box::new(rhs));
    }
}

fn parse_value_product(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    let mut lhs = parse_value_unary(input, depth)?;
    loop {
        let op = if input.peek(Token![*]) {
            BinOp::Mul
        } else if input.peek(Token![/]) {
            BinOp::Div
        } else if input.peek(Token![%]) {
            BinOp::Rem
        } else {
            return Ok(lhs);
        };
        let span = input.span();
        let _: TokenTree = input.parse()?;
        let rhs = parse_value_unary(input, depth)?;
        lhs = ValueExpr::Binary(Box::new(lhs), op, span, Box::new(rhs));
    }
}

fn parse_value_unary(input: ParseStream, depth: usize) -> syn::Result<ValueExpr> {
    if input.peek(Token![-]) {
        if depth >= MAX_NESTING {
            return Err(input.error("override value nested too deeply"));
        }
        let minus: Token![-] = input.parse()?;
        let inner = parse_value_unary(input, depth + 1)?;
        return Ok(ValueExpr::Neg(Box::new(inner), minus.span));
    }
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let value: i128 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "integer too large for an override value"))?;
        return Ok(ValueExpr::Int(value, lit.span()));
    }
    if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        let value: f64 = lit
            .base10_parse()
            .map_err(|_| syn::Error::new(lit.span(), "invalid float literal"))?;
        if !value.is_finite() {
            return Err(syn::Error::new(
                lit.span(),
                "override values must be finite",
            ));
        }
        return Ok(ValueExpr::Float(value, lit.span()));
    }
    if input.peek(syn::LitBool) {
        let lit: syn::LitBool = input.parse()?;
        return Ok(ValueExpr::Bool(lit.value, lit.span));
    }
    if input.peek(syn::Ident) {
        return Ok(ValueExpr::Var(input.parse()?));
    }
    if input.peek(syn::token::Paren) {
        if depth >= MAX_NESTING {
            return Err(input.error("override value nested too deeply"));
        }
        let content;
        syn::parenthesized!(content in input);
        let inner = parse_value(&content, depth + 1)?;
        if !content.is_empty() {
            return Err(content.error("unexpected token in override value"));
        }
        return Ok(inner);
    }
    Err(input.error(
        "expected an override value: an integer, float or bool literal, or integer arithmetic (`+ - * / %`, parentheses) on the `repeat` variable",
    ))
}
