//! Stage 3: naga's WGSL front end **and** its validator
//! ([`ValidatedKernel`]).
//!
//! The front end catches syntax and many type errors; others (mixed-type
//! arithmetic, stores into `read` buffers) only the validator catches, so
//! both always run. Errors render naga's code frame (plain text) under a
//! header naming the kernel and the user's `file:line:col`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};

use crate::load::{LoadedKernel, Origin};
use crate::naga_diag::{self, Label, Rewritten};
use crate::partial::{self, PartialTypes};

/// A kernel naga parsed and validated: proof for the reflection stage.
pub struct ValidatedKernel {
    /// The loaded kernel.
    pub loaded: LoadedKernel,
    /// The naga IR.
    pub module: naga::Module,
    /// The validator's analysis (global uses per entry point).
    pub info: ModuleInfo,
}

/// Stack for naga: its parser recurses (up to 200 levels, each several
/// frames), and proc macros often run unoptimised.
const NAGA_STACK: usize = 64 << 20;

/// What naga made of a kernel (all `Send`, so it can cross threads).
enum Outcome {
    Valid(Box<(naga::Module, ModuleInfo)>),
    Error(Box<Rewritten>, Option<PartialTypes>),
}

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
/// ([`crate::features::capabilities`]).
///
/// naga runs on a thread of its own with a large stack (deeply nested WGSL
/// cannot overflow the compiler's stack), and a panic in naga becomes an
/// error instead of aborting the build.
#[cfg(test)]
pub fn validate(loaded: LoadedKernel, caps: Capabilities) -> syn::Result<ValidatedKernel> {
    validate_or_partial(loaded, caps).map_err(|f| f.error)
}

/// [`validate`], and on failure what the kernel's bindings hold.
pub fn validate_or_partial(
    loaded: LoadedKernel,
    caps: Capabilities,
) -> Result<ValidatedKernel, Failed> {
    let source = loaded.source.clone();
    let spawned = std::thread::Builder::new()
        .name("vyre-naga".into())
        .stack_size(NAGA_STACK)
        .spawn(move || run_naga(&source, caps));
    let outcome = match spawned {
        Ok(handle) => handle.join().ok(),
        // No thread to be had: run here, still catching panics.
        Err(_) => {
            let source = loaded.source.as_str();
            catch_unwind(AssertUnwindSafe(|| run_naga(source, caps))).ok()
        }
    };
    match outcome {
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
                    "internal error: naga panicked on kernel `{}`; please report this",
                    loaded.name
                ),
            ),
        }),
    }
}

/// Parses and validates generated WGSL (a wrapped kernel, `fold.rs`) the
/// way [`validate`] does, with the same capabilities: the module when naga
/// accepts it, `None` for any error or panic.
pub fn revalidate(source: &str, caps: Capabilities) -> Option<naga::Module> {
    let owned = source.to_owned();
    let spawned = std::thread::Builder::new()
        .name("vyre-naga".into())
        .stack_size(NAGA_STACK)
        .spawn(move || run_naga(&owned, caps));
    let outcome = match spawned {
        Ok(handle) => handle.join().ok(),
        Err(_) => catch_unwind(AssertUnwindSafe(|| run_naga(source, caps))).ok(),
    };
    match outcome {
        Some(Outcome::Valid(valid)) => Some(valid.0),
        _ => None,
    }
}

fn run_naga(source: &str, caps: Capabilities) -> Outcome {
    let module = match naga::front::wgsl::parse_str(source) {
        Ok(module) => module,
        Err(e) => {
            return Outcome::Error(
                Box::new(naga_diag::from_parse(&e, source)),
                partial::from_unparsed(source),
            );
        }
    };
    let mut validator = Validator::new(ValidationFlags::all(), caps);
    match validator.validate(&module) {
        Ok(info) => Outcome::Valid(Box::new((module, info))),
        Err(e) => {
            let mut rewritten = naga_diag::from_validation(&e, &module, source);
            if let Some(needed) = missing_capability(&module, caps, &e) {
                rewritten.help = Some(needed);
            }
            Outcome::Error(Box::new(rewritten), partial::from_module(&module))
        }
    }
}

/// When the first validation error goes away with more naga capabilities,
/// what would allow it: the `features [...]` to declare (every one the
/// kernel needs, found by adding one feature at a time), or that graph!
/// cannot request it. `None` for any other error.
fn missing_capability(
    module: &naga::Module,
    caps: Capabilities,
    error: &naga::WithSpan<naga::valid::ValidationError>,
) -> Option<String> {
    let first_error = |more: Capabilities| {
        Validator::new(ValidationFlags::all(), caps | more)
            .validate(module)
            .err()
            .map(|e| format!("{:?}", e.as_inner()))
    };
    let message = format!("{:?}", error.as_inner());
    // With every capability, the first error that no capability fixes.
    let unfixable = first_error(Capabilities::all());
    if unfixable.as_deref() == Some(message.as_str()) {
        return None;
    }
    let mut extra = Capabilities::empty();
    let mut needed: Vec<&crate::features::Feature> = Vec::new();
    let mut current = Some(message);
    while let Some(error) = current.take() {
        if Some(&error) == unfixable.as_ref() {
            break;
        }
        let candidates = || {
            crate::features::FEATURES
                .iter()
                .filter(|f| !(caps | extra).contains(f.capabilities))
        };
        // A feature that makes the kernel valid, else one that fixes this
        // error (the next may need another).
        let with = |f: &crate::features::Feature| first_error(extra | f.capabilities);
        let Some(f) = candidates()
            .find(|f| with(f).is_none())
            .or_else(|| candidates().find(|f| with(f).as_ref() != Some(&error)))
        else {
            break;
        };
        extra |= f.capabilities;
        needed.push(f);
        current = first_error(extra);
    }
    if needed.is_empty() {
        return Some(format!(
            "it needs a device capability beyond WebGPU that graph! cannot request (its `features` are {})",
            crate::features::names()
        ));
    }
    let what = needed
        .iter()
        .map(|f| format!("`{}` ({})", f.name, f.enables))
        .collect::<Vec<_>>()
        .join(", ");
    let names = needed.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
    let declared = crate::features::FEATURES
        .iter()
        .filter(|f| caps.contains(f.capabilities))
        .map(|f| f.name)
        .collect::<Vec<_>>();
    let list = if declared.is_empty() {
        names
    } else {
        format!("{}, {names}", declared.join(", "))
    };
    Some(format!(
        "it needs the device feature {what}: declare `features [{list}];` in graph!"
    ))
}

/// The error for a rewritten naga diagnostic.
///
/// In token form rustc draws the culprit itself (the whole range, first
/// token to last), so the message carries no code frame. A string literal
/// or a file cannot be pointed inside on stable Rust: there the message
/// draws one frame, at the user's real `file:line:col`. Details follow the
/// headline as `note:`/`help:` lines of the same error.
fn wgsl_error(loaded: &LoadedKernel, r: &Rewritten) -> syn::Error {
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
    if r.original != r.message {
        lines.push(format!("note: naga: {}", naga_diag::tidy(&r.original)));
    }
    let message = lines.join("\n");
    match (&r.primary, tokens) {
        (Some(primary), true) => loaded.error_at(primary.range.clone(), message),
        (Some(primary), false) => syn::Error::new(loaded.locate(primary.range.start).span, message),
        (None, _) => syn::Error::new(loaded.source_span(), message),
    }
}

/// A code frame of `label` in the kernel's text, numbered with the user's
/// real lines:
///
/// ```text
///    ┌─ src/lib.rs:13:22
///    │
/// 13 │     let x: u32 = 1.5;
///    │                  ^^^ this is `AbstractFloat`
/// ```
fn frame(loaded: &LoadedKernel, label: &Label) -> Vec<String> {
    let source = loaded.source.as_str();
    let start = label.range.start.min(source.len());
    let line_start = source
        .get(..start)
        .and_then(|b| b.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line_end = source
        .get(start..)
        .and_then(|a| a.find('\n'))
        .map_or(source.len(), |i| start + i);
    let text = source.get(line_start..line_end).unwrap_or_default();
    let place = loaded.locate(start).place;
    // The real line number: `file:LINE:col`.
    let number = place
        .as_deref()
        .and_then(|p| p.rsplit(':').nth(1))
        .unwrap_or("")
        .to_owned();
    let pad = " ".repeat(number.len());
    let col = source
        .get(line_start..start)
        .map_or(0, |b| b.chars().count());
    let end = label.range.end.min(line_end).max(start);
    let width = source
        .get(start..end)
        .map_or(0, |b| b.chars().count())
        .max(1);
    // codespan's box drawing (naga's own style), so the frame is not
    // mistaken for rustc's frame of the literal or path under it.
    let mut out = Vec::new();
    if let Some(place) = place {
        out.push(format!("{pad} ┌─ {place}"));
    }
    out.push(format!("{pad} │"));
    out.push(format!("{number} │ {}", text.trim_end()));
    out.push(format!(
        "{pad} │ {}{} {}",
        " ".repeat(col),
        "^".repeat(width),
        label.text
    ));
    out
}
