//! Validation: naga's WGSL front end **and** its validator
//! ([`ValidatedKernel`]).
//!
//! The front end catches syntax and many type errors; others (mixed-type
//! arithmetic, stores into `read` buffers) only the validator catches, so
//! both always run. Errors render naga's code frame (plain text) under a
//! header naming the kernel and the user's `file:line:col`.
//!
//! naga runs on a worker thread (`worker.rs`), where the compiler's
//! proc-macro API panics: the worker hands back plain data (naga IR, byte
//! ranges, strings), and this file makes the spans and `syn::Error`s on the
//! macro's own thread. Keep it so: never call a function that makes a
//! span, ident or token stream from `worker.rs` or the files it
//! reaches (see its module docs; `tests::threads` checks the files).

use naga::valid::Capabilities;

use crate::check::partial::PartialTypes;
use crate::check::worker::{self, Outcome};
use crate::diag::frame::frame;
use crate::diag::naga_errors::Rewritten;
use crate::diag::naga_words::tidy;
use crate::diag::sites::error_at;
use crate::model::{LoadedKernel, Origin, ValidatedKernel};

/// A kernel that failed: the error, and what its bindings hold when that
/// could still be found (for the error stub).
pub struct Failed {
    /// The error.
    pub error: syn::Error,
    /// The bindings' element types, when the kernel (or its globals) parsed.
    pub partial: Option<PartialTypes>,
}

/// Parses and validates one kernel with exactly `caps`: what wgpu grants
/// every WebGPU adapter plus the graph's declared `features`
/// ([`crate::model::features::capabilities`]).
///
/// naga runs on a thread of its own ([`worker::run`]); a panic in
/// naga becomes an error instead of aborting the build.
#[cfg(test)]
pub fn validate(loaded: LoadedKernel, caps: Capabilities) -> syn::Result<ValidatedKernel> {
    validate_or_partial(loaded, caps).map_err(|f| f.error)
}

/// Parses and validates one kernel (as `validate`, the tests' entry), and
/// on failure what the kernel's bindings hold.
pub fn validate_or_partial(
    loaded: LoadedKernel,
    caps: Capabilities,
) -> Result<ValidatedKernel, Failed> {
    match worker::run(&loaded.source, caps) {
        Some(Outcome::Valid(valid)) => {
            let (module, info) = *valid;
            Ok(ValidatedKernel {
                loaded,
                module,
                info,
            })
        }
        Some(Outcome::Error(rewritten, partial)) => Err(Failed {
            error: wgsl_error(&loaded, &rewritten),
            partial,
        }),
        None => Err(Failed {
            partial: None,
            error: syn::Error::new(
                loaded.name.span(),
                format!(
                    "internal error: naga panicked on kernel `{}`; please report this with the kernel's source",
                    loaded.name
                ),
            ),
        }),
    }
}

/// Parses and validates generated WGSL (a wrapped or fused kernel,
/// `transform/`) the
/// way [`validate_or_partial`] does, with the same capabilities: the module when naga
/// accepts it, `None` for any error or panic.
pub fn revalidate(source: &str, caps: Capabilities) -> Option<naga::Module> {
    match worker::run(source, caps) {
        Some(Outcome::Valid(valid)) => Some(valid.0),
        _ => None,
    }
}

/// The error for a rewritten naga diagnostic.
///
/// In token form rustc draws the culprit itself (the whole range, first
/// token to last), so the message carries no code frame. A string literal
/// or a file cannot be pointed inside on stable Rust: there the message
/// draws one frame, at the user's real `file:line:col`. Details follow the
/// headline as `note:`/`help:` lines of the same error.
fn wgsl_error(loaded: &LoadedKernel, r: &Rewritten) -> syn::Error {
    if loaded.link.is_some() {
        return linked_error(loaded, r);
    }
    wgsl_error_noted(loaded, r, None)
}

/// The error of a linked kernel, placed in the module it comes from: the
/// kernel's own text, a graph module's tokens, or an imported file (then
/// the message names the file's `path:line:col` and shows the line, on the
/// kernel's `import`), with the import chain as a note.
fn linked_error(loaded: &LoadedKernel, r: &Rewritten) -> syn::Error {
    let found = r
        .primary
        .as_ref()
        .and_then(|p| loaded.unlink(p.range.clone()))
        .and_then(|(unit, range)| Some((unit, range, loaded.unit_view(unit)?)));
    let Some((unit, range, view)) = found else {
        let mut plain = r.clone();
        plain.primary = None;
        plain.secondary.clear();
        return syn::Error::new(
            loaded.source_span(),
            format!(
                "{} in kernel `{}` (as linked with its imports): {}",
                r.class.title(),
                loaded.name,
                r.message
            ),
        );
    };
    let mut moved = r.clone();
    if let Some(p) = moved.primary.as_mut() {
        p.range = range;
    }
    moved.secondary = r
        .secondary
        .iter()
        .filter_map(|s| {
            let (u, range) = loaded.unlink(s.range.clone())?;
            (u == unit).then(|| crate::diag::naga_errors::Label {
                range,
                text: s.text.clone(),
            })
        })
        .collect();
    let note = loaded
        .link
        .as_ref()
        .and_then(|l| l.linked.units.get(unit))
        .filter(|_| unit != 0)
        .map(|u| crate::check::imports::chain_note(&loaded.name, u));
    wgsl_error_noted(&view, &moved, note)
}

fn wgsl_error_noted(loaded: &LoadedKernel, r: &Rewritten, note: Option<String>) -> syn::Error {
    let mut lines = vec![format!(
        "{} in kernel `{}`: {}",
        r.class.title(),
        loaded.name,
        r.message
    )];
    let tokens = matches!(loaded.origin, Origin::Tokens { .. });
    if let Some(primary) = &r.primary
        && !tokens
    {
        lines.extend(frame(loaded, primary));
    }
    for s in &r.secondary {
        let place = loaded.locate(s.range.start).place;
        let at = place.map(|p| format!(" ({p})")).unwrap_or_default();
        lines.push(format!("note: {}{at}", s.text));
    }
    if let Some(help) = &r.help {
        lines.push(format!("help: {help}"));
    }
    lines.extend(note);
    if r.original != r.message {
        lines.push(format!("note: naga: {}", tidy(&r.original)));
    }
    let message = lines.join("\n");
    match (&r.primary, tokens) {
        (Some(primary), true) => error_at(loaded, primary.range.clone(), message),
        (Some(primary), false) => syn::Error::new(loaded.locate(primary.range.start).span, message),
        (None, _) => syn::Error::new(loaded.source_span(), message),
    }
}
