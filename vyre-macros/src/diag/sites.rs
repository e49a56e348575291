//! Where the parts of a kernel are in the user's source ([`KernelSites`]):
//! the entry point's `@workgroup_size(...)` attribute and each buffer
//! global, so graph-level checks (limits) can point at the attribute or the
//! binding at fault rather than at the kernel's name; and errors at a
//! [`Site`] or at a byte range of a kernel's text.

use std::ops::Range;

use naga::Module;

use crate::diag::diagnostics::spanned;
use crate::model::kernel::{KernelSites, Site};
use crate::model::lex::{attributes_before, find_entry, lex};
use crate::model::source::{LoadedKernel, Origin};

/// An error here. Where rustc cannot point inside (literals, files),
/// the message names the place.
pub fn error(site: &Site, message: &str) -> syn::Error {
    let message = match (&site.place, site.exact) {
        (Some(place), false) => {
            let (head, rest) = message.split_once('\n').unwrap_or((message, ""));
            let rest = if rest.is_empty() {
                String::new()
            } else {
                format!("\n{rest}")
            };
            format!("{head}\n --> {place}{rest}")
        }
        _ => message.to_owned(),
    };
    spanned(site.first, site.last, message)
}

/// An error covering the bytes `range` of `loaded.source`: in token
/// form the whole range, first token to last (an empty range is the
/// point just after the token before it, where a missing token goes);
/// otherwise the literal or the path.
pub fn error_at(
    loaded: &LoadedKernel,
    range: std::ops::Range<usize>,
    message: String,
) -> syn::Error {
    if loaded.link.is_some() {
        return match loaded
            .unlink(range)
            .and_then(|(unit, r)| Some((loaded.unit_view(unit)?, r)))
        {
            Some((view, r)) => error_at(&view, r, message),
            None => syn::Error::new(loaded.source_span(), message),
        };
    }
    match &loaded.origin {
        Origin::Tokens { map, .. } => match map.range(range) {
            Some((first, last)) => spanned(first, last, message),
            None => syn::Error::new(loaded.source_span(), message),
        },
        _ => syn::Error::new(loaded.locate(range.start).span, message),
    }
}

/// Finds the sites of `module`'s entry point `entry` and its globals.
pub fn kernel_sites(loaded: &LoadedKernel, module: &Module, entry: &str) -> KernelSites {
    if loaded.link.is_some() {
        return linked_sites(loaded, module, entry);
    }
    let globals = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.binding.is_some())
        .filter_map(|(h, g)| {
            let range = module.global_variables.get_span(h).to_range()?;
            Some((g.name.clone()?, site(loaded, range)?))
        })
        .collect();
    KernelSites {
        workgroup_size: workgroup_attribute(&loaded.source, entry).and_then(|r| site(loaded, r)),
        globals,
    }
}

/// [`kernel_sites`] of a linked kernel: in its own text (a global from an
/// imported module has no site).
fn linked_sites(loaded: &LoadedKernel, module: &Module, entry: &str) -> KernelSites {
    let Some(own) = loaded.unit_view(0) else {
        return KernelSites {
            workgroup_size: None,
            globals: Default::default(),
        };
    };
    let globals = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.binding.is_some())
        .filter_map(|(h, g)| {
            let range = module.global_variables.get_span(h).to_range()?;
            let (unit, range) = loaded.unlink(range)?;
            (unit == 0).then_some(())?;
            Some((g.name.clone()?, site(&own, range)?))
        })
        .collect();
    KernelSites {
        workgroup_size: workgroup_attribute(&own.source, entry).and_then(|r| site(&own, r)),
        globals,
    }
}

/// The site of a byte range of the kernel's text.
fn site(loaded: &LoadedKernel, range: Range<usize>) -> Option<Site> {
    if range.end > loaded.source.len() || range.is_empty() {
        return None;
    }
    let located = loaded.locate(range.start);
    match &loaded.origin {
        Origin::Tokens { map, .. } => {
            let (first, last) = map.range(range)?;
            Some(Site {
                first,
                last,
                place: located.place,
                exact: true,
            })
        }
        _ => Some(Site {
            first: located.span,
            last: located.span,
            place: located.place,
            exact: false,
        }),
    }
}

/// The `@workgroup_size(...)` attribute of the function `entry`: among
/// the attributes right before its `fn` (tokens, so a comment that
/// mentions `fn entry` or `@workgroup_size` is never taken for them).
fn workgroup_attribute(source: &str, entry: &str) -> Option<Range<usize>> {
    let tokens = lex(source).tokens;
    let fn_at = find_entry(source, &tokens, entry)?;
    attributes_before(source, &tokens, fn_at)
        .into_iter()
        .find(|a| a.name == "workgroup_size")
        .map(|a| a.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_entry_points_attribute() {
        let src = "@compute @workgroup_size(8, 8)\nfn other() {}\n@compute @workgroup_size(512)\nfn main() {}\n";
        let r = workgroup_attribute(src, "main").unwrap();
        assert_eq!(&src[r], "@workgroup_size(512)");
        let r = workgroup_attribute(src, "other").unwrap();
        assert_eq!(&src[r], "@workgroup_size(8, 8)");
        assert!(workgroup_attribute(src, "nope").is_none());
    }

    #[test]
    fn a_comment_that_mentions_the_entry_point_is_skipped() {
        let src = "// fn main is below\n/* @compute @workgroup_size(8) fn main() {} */\n@compute @workgroup_size(512) // not fn main\nfn main() {}\n";
        let r = workgroup_attribute(src, "main").unwrap();
        assert_eq!(r.start, src.rfind("@workgroup_size(512)").unwrap());
        assert_eq!(&src[r], "@workgroup_size(512)");
        let spaced = "@compute\n@ workgroup_size ( 4 , 4 )\n/* fn main */ fn\nmain() {}";
        let r = workgroup_attribute(spaced, "main").unwrap();
        assert_eq!(&spaced[r], "@ workgroup_size ( 4 , 4 )");
        let unicode = "@compute @workgroup_size(2) fn café() {}";
        assert_eq!(
            &unicode[workgroup_attribute(unicode, "café").unwrap()],
            "@workgroup_size(2)"
        );
        assert!(workgroup_attribute(unicode, "caf").is_none());
    }
}
