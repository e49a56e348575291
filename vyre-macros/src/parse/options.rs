//! The graph's options: `limits native;` (skip WebGPU's default limit
//! checks), `fuse off;` (never fuse nodes), `features [...]` (the device
//! features the kernels need) and `flags [...]` (WESL `@if` flags that are on).

use proc_macro2::Span;
use syn::Ident;
use syn::parse::ParseStream;

use super::tokens::expect_semi;
use crate::model::features::{self, FeatureRow};

/// `limits native;` after `limits` (at `keyword`), recorded in `slot`.
pub fn parse_limits(
    input: ParseStream,
    keyword: &Ident,
    slot: &mut Option<Span>,
) -> syn::Result<()> {
    let about = "`limits native;` skips the WebGPU default limit checks";
    parse_mode(input, keyword, "native", about, "", slot)
}

/// `fuse off;` after `fuse` (at `keyword`), recorded in `slot`.
pub fn parse_fuse(input: ParseStream, keyword: &Ident, slot: &mut Option<Span>) -> syn::Result<()> {
    let about = "`fuse off;` runs every node as its own dispatch";
    parse_mode(
        input,
        keyword,
        "off",
        about,
        "; fusion is on by default",
        slot,
    )
}

/// `KEYWORD MODE;`, an option with one mode, given at most once: `about`
/// says what it does (and `more` what happens without it) in messages.
fn parse_mode(
    input: ParseStream,
    keyword: &Ident,
    mode: &str,
    about: &str,
    more: &str,
    slot: &mut Option<Span>,
) -> syn::Result<()> {
    let found: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected `{mode}` after `{keyword}` ({about})")))?;
    if found != mode {
        return Err(syn::Error::new(
            found.span(),
            format!("unknown {keyword} mode `{found}`: the only mode is `{mode}` ({about}{more})"),
        ));
    }
    expect_semi(input, &format!("after `{keyword} {mode}`"))?;
    if slot.is_some() {
        return Err(syn::Error::new(
            keyword.span(),
            format!("`{keyword} {mode};` is given twice"),
        ));
    }
    *slot = Some(keyword.span());
    Ok(())
}

/// `[name, ...];` after `features`: each a feature graph! knows, once.
pub fn parse_features(
    input: ParseStream,
    declared: &mut Vec<&'static FeatureRow>,
) -> syn::Result<()> {
    let list;
    syn::bracketed!(list in input);
    let names = syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated(&list)?;
    expect_semi(input, "after `features [...]`")?;
    for name in names {
        let Some(feature) = features::by_name(&name.to_string()) else {
            return Err(syn::Error::new(
                name.span(),
                format!(
                    "unknown feature `{name}`: graph! knows {}",
                    features::names()
                ),
            ));
        };
        if declared.iter().any(|f| f.feature == feature.feature) {
            return Err(syn::Error::new(
                name.span(),
                format!("feature `{name}` is declared twice"),
            ));
        }
        declared.push(feature);
    }
    Ok(())
}

/// `[name, ...];` after `flags`: conditional translation flags that are on
/// (`@if(name)` in any kernel or module), each once.
pub fn parse_flags(input: ParseStream, flags: &mut Vec<Ident>) -> syn::Result<()> {
    let list;
    syn::bracketed!(list in input);
    let names = syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated(&list)?;
    expect_semi(input, "after `flags [...]`")?;
    for name in names {
        if flags.contains(&name) {
            return Err(syn::Error::new(
                name.span(),
                format!("flag `{name}` is given twice"),
            ));
        }
        flags.push(name);
    }
    Ok(())
}
