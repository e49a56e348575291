//! Kernels that import from WESL modules: the graph's `module`s loaded
//! ([`load_modules`]), each importing kernel linked (`link.rs`, on its own
//! thread, plain data) and its errors placed in the module at fault
//! ([`link_kernel`]), here on the macro's thread.

use std::path::{Component, Path, PathBuf};

use proc_macro2::Span;
use syn::Ident;

use super::link::{self, LinkError, LinkInput, Unit, UnitInfo};
use super::load::{display_path, load_as, manifest_dir};
use crate::diag::Diagnostics;
use crate::diag::frame::frame;
use crate::diag::naga_errors::Label;
use crate::diag::sites::error_at;
use crate::diag::suggest::did_you_mean;
use crate::model::features::FeatureRow;
use crate::model::source::LinkView;
use crate::model::{KernelDecl, LoadedKernel, ModuleDecl, Origin};

/// The graph's modules and flags, as every kernel's link needs them.
pub struct Modules {
    /// Each `module` loaded; `None` when it failed (reported).
    loaded: Vec<Option<LoadedKernel>>,
    /// Conditional translation flags: the graph's `flags` (on) and every
    /// device feature (on when declared).
    flags: Vec<(String, bool)>,
}

impl Modules {
    /// No modules and no flags (kernels the macro generates).
    pub fn none() -> Self {
        Modules {
            loaded: Vec::new(),
            flags: Vec::new(),
        }
    }
}

/// Loads the graph's `module`s (reporting unreadable files and duplicate
/// names) and collects the flags `@if` sees.
pub fn load_modules(
    decls: &[ModuleDecl],
    flags: &[Ident],
    features: &[&'static FeatureRow],
    diag: &mut Diagnostics,
) -> Modules {
    let mut loaded = Vec::new();
    for (i, m) in decls.iter().enumerate() {
        if decls.iter().take(i).any(|d| d.name == m.name) {
            diag.error(
                m.name.span(),
                format!("module `{}` is declared twice", m.name),
            );
            loaded.push(None);
            continue;
        }
        let decl = KernelDecl {
            name: m.name.clone(),
            source: m.source.clone(),
            entry: None,
        };
        loaded.push(load_as(&decl, "module").map_err(|e| diag.push(e)).ok());
    }
    let mut on: Vec<(String, bool)> = flags.iter().map(|f| (f.to_string(), true)).collect();
    for row in crate::model::features::FEATURES {
        let declared = features.iter().any(|f| f.feature == row.feature);
        if !on.iter().any(|(n, _)| n == row.name()) {
            on.push((row.name().to_owned(), declared));
        }
    }
    Modules { loaded, flags: on }
}

/// Links `loaded` when it imports or uses `@if` (else returns it as is):
/// its `source` becomes the linked WGSL, with a map back. Every file the
/// link read goes to `tracked` (absolute paths), even when it failed.
/// `Ok(None)`: the kernel imports a module that failed to load (already
/// reported).
pub fn link_kernel(
    loaded: LoadedKernel,
    modules: &Modules,
    tracked: &mut Vec<String>,
) -> syn::Result<Option<LoadedKernel>> {
    if !link::needs_link(&loaded.source) {
        return Ok(Some(loaded));
    }
    let base = manifest_dir();
    // A file kernel's path is its file's, relative to the manifest
    // directory; outside it, its file name, beside which its `super::`
    // and `package::` imports are then looked up.
    let (root_path, beside) = match &loaded.origin {
        Origin::File { resolved, .. } => match module_path_of(resolved, &base) {
            Some(path) => (path, None),
            None => (
                resolved
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(|s| vec![s.to_owned()])
                    .unwrap_or_default(),
                resolved.parent().map(Path::to_path_buf),
            ),
        },
        _ => (Vec::new(), None),
    };
    let root_path = if root_path.is_empty() {
        vec![loaded.name.to_string()]
    } else {
        root_path
    };
    let beside = beside.or_else(|| {
        loaded
            .source_span()
            .local_file()
            .and_then(|f| f.parent().map(Path::to_path_buf))
    });
    let input = LinkInput {
        root: loaded.source.clone(),
        root_path,
        modules: modules
            .loaded
            .iter()
            .map(|m| {
                let name = m.as_ref().map(|m| m.name.to_string()).unwrap_or_default();
                let text = m.as_ref().map(|m| m.source.clone()).unwrap_or_default();
                (name, text)
            })
            .collect(),
        base: base.clone(),
        beside,
        flags: modules.flags.clone(),
    };
    let Some(result) = link::link(input) else {
        return Err(syn::Error::new(
            loaded.source_span(),
            format!(
                "internal error: the WESL linker panicked on kernel `{}`; please report this with the kernel's source",
                loaded.name
            ),
        ));
    };
    let units = match &result {
        Ok(linked) => &linked.units,
        Err(e) => &e.units,
    };
    if let Err(e) = &result {
        tracked.extend(
            e.mentioned
                .iter()
                .filter(|p| p.is_absolute())
                .filter_map(|p| p.to_str().map(str::to_owned)),
        );
    }
    for u in units {
        if let Unit::File(path) = &u.unit
            && path.is_absolute()
            && let Some(p) = path.to_str()
        {
            tracked.push(p.to_owned());
        }
    }
    let origins = origins(&loaded, units, modules, &base);
    let failed_module = units.iter().any(|u| match u.unit {
        Unit::Graph(i) => modules.loaded.get(i).is_some_and(Option::is_none),
        _ => false,
    });
    match result {
        Ok(linked) => {
            let own = loaded.source.clone();
            Ok(Some(LoadedKernel {
                source: linked.text.clone(),
                link: Some(Box::new(LinkView {
                    own,
                    linked,
                    origins,
                })),
                ..loaded
            }))
        }
        Err(_) if failed_module => Ok(None),
        Err(e) => Err(link_error(&loaded, *e, origins)),
    }
}

/// A file kernel's WESL path (`kernels/blur.wgsl` -> `[kernels, blur]`)
/// when it is under the manifest directory.
fn module_path_of(file: &Path, base: &Path) -> Option<Vec<String>> {
    // `kernels/../x.wgsl` is `x.wgsl`: a `..` left in the module path
    // would reach the mangled names as `.`, which is not WGSL.
    let mut normal = PathBuf::new();
    for c in file.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    let rel = normal.strip_prefix(base).ok()?.with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then_some(parts)
}

/// The source map of each unit: the kernel's own, a graph module's, or a
/// file's (whose errors go on the kernel's `import` of it).
fn origins(
    loaded: &LoadedKernel,
    units: &[UnitInfo],
    modules: &Modules,
    base: &Path,
) -> Vec<Origin> {
    units
        .iter()
        .map(|u| match &u.unit {
            Unit::Root => loaded.origin.clone(),
            Unit::Graph(i) => modules
                .loaded
                .get(*i)
                .and_then(Option::as_ref)
                .map_or_else(|| loaded.origin.clone(), |m| m.origin.clone()),
            Unit::File(path) => {
                let span = import_span(loaded, u);
                Origin::File {
                    span,
                    shown: display_path(path, base, span),
                    resolved: path.clone(),
                }
            }
        })
        .collect()
}

/// The span of the kernel's `import` that leads to `unit` (its chain's
/// first module after the kernel), else the kernel's source.
fn import_span(loaded: &LoadedKernel, unit: &UnitInfo) -> Span {
    let first = unit.chain.get(1).unwrap_or(&unit.path);
    let word = first.rsplit("::").next().unwrap_or_default();
    link::import_statement(&loaded.source, word)
        .map_or_else(|| loaded.source_span(), |r| loaded.locate(r.start).span)
}

/// `note: ...` naming how the kernel reaches `unit`.
pub fn chain_note(kernel: &Ident, unit: &UnitInfo) -> String {
    let mut hops: Vec<String> = unit
        .chain
        .iter()
        .skip(1)
        .map(|p| format!("`{p}`"))
        .collect();
    hops.push(format!("`{}`", unit.path));
    format!(
        "note: kernel `{kernel}` imports {}",
        hops.join(", which imports ")
    )
}

fn link_error(loaded: &LoadedKernel, e: LinkError, origins: Vec<Origin>) -> syn::Error {
    let suggestion = e
        .wanted
        .as_ref()
        .map(|(w, c)| did_you_mean(w, c.iter().map(String::as_str)))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "WESL error in kernel `{}`: {}{suggestion}",
        loaded.name, e.message
    )];
    let Some((unit, range)) = e.at.clone() else {
        return syn::Error::new(loaded.source_span(), lines.join("\n"));
    };
    let view = LoadedKernel {
        name: loaded.name.clone(),
        entry: None,
        source: e
            .units
            .get(unit)
            .map_or_else(|| loaded.source.clone(), |u| u.text.clone()),
        origin: origins
            .get(unit)
            .cloned()
            .unwrap_or_else(|| loaded.origin.clone()),
        link: None,
    };
    // A literal or a file: rustc cannot point inside, so the message
    // shows the line (`path:line:col`, numbered, the culprit underlined).
    if !matches!(view.origin, Origin::Tokens { .. }) {
        let label = Label {
            range: range.clone(),
            text: String::new(),
        };
        lines.extend(frame(&view, &label));
    }
    if unit != 0
        && let Some(u) = e.units.get(unit)
    {
        lines.push(chain_note(&loaded.name, u));
    }
    error_at(&view, range, lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::module_path_of;
    use std::path::Path;

    #[test]
    fn a_module_path_has_no_dot_dot() {
        let base = Path::new("/w/crate");
        let path = |p: &str| module_path_of(Path::new(p), base);
        assert_eq!(
            path("/w/crate/kernels/../k/blur.wgsl"),
            Some(vec!["k".to_owned(), "blur".to_owned()])
        );
        assert_eq!(
            path("/w/crate/./kernels/blur.wgsl"),
            Some(vec!["kernels".to_owned(), "blur".to_owned()])
        );
        // Outside the crate: no module path (the file's name is used, and
        // its imports are looked up beside it).
        assert_eq!(path("/w/crate/../examples/kernels/blur.wgsl"), None);
    }
}
