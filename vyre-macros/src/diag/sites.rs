//! Where the parts of a kernel are in the user's source ([`KernelSites`]):
//! the entry point's `@workgroup_size(...)` attribute and each buffer
//! global, so graph-level checks (limits) can point at the attribute or the
//! binding at fault rather than at the kernel's name; and errors at a
//! [`Site`] or at a byte range of a kernel's text.

use std::ops::Range;

use naga::Module;

use crate::diag::diagnostics::spanned;
use crate::model::kernel::{KernelSites, Site};
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

/// `@workgroup_size(...)` of the function `entry`: the last one before
/// `fn entry`.
fn workgroup_attribute(source: &str, entry: &str) -> Option<Range<usize>> {
    let bytes = source.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut search = 0;
    let fn_at = loop {
        let i = search + source.get(search..)?.find(entry)?;
        let end = i + entry.len();
        let before = source.get(..i)?.trim_end();
        if before.ends_with("fn")
            && !bytes.get(end).copied().is_some_and(is_ident)
            && !before
                .as_bytes()
                .get(before.len().wrapping_sub(3))
                .copied()
                .is_some_and(is_ident)
        {
            break i;
        }
        search = end;
    };
    let start = source.get(..fn_at)?.rfind("@workgroup_size")?;
    let open = start + source.get(start..)?.find('(')?;
    let mut depth = 0usize;
    for (i, c) in source.get(open..)?.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start..open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
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
}
