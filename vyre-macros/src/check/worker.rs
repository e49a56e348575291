//! Validation's worker: naga's front end and validator, on a thread of its
//! own ([`run`]).
//!
//! naga runs with a large stack (its parser recurses, and deeply nested
//! WGSL must not overflow the compiler's stack), and a panic in naga
//! becomes `None` instead of aborting the build.
//!
//! # Plain data only
//!
//! The compiler's proc-macro API (`proc_macro::Span`, and through it every
//! `proc_macro2` span, `Ident`, `TokenStream`, `syn::parse_str`, `quote!`)
//! may only be used on the thread the compiler called the macro on;
//! anywhere else it panics ("procedural macro API is used outside of a
//! procedural macro"), and unit tests never see it because they run
//! `proc_macro2`'s fallback. So everything that runs here makes plain data
//! ([`Outcome`]: naga IR, byte ranges, strings, [`PartialTypes`]), and the
//! macro's thread turns it into spans and tokens (`validate.rs`,
//! `emit/rust_types.rs`). This file and the files it reaches
//! (`diag/naga_errors.rs`, `partial.rs`, `convert.rs`,
//! `model/rust_types.rs`, `model/features.rs`) name no `proc_macro`,
//! `proc_macro2`, `syn` or `quote` item; the unit test `tests::threads`
//! checks it, and `tests/compile/compile_many.rs` builds over a hundred failing
//! kernels through the real compiler.

use std::panic::{AssertUnwindSafe, catch_unwind};

use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};

use crate::check::partial::{self, PartialTypes};
use crate::diag::naga_errors::{self, Rewritten};
use crate::diag::naga_validation;

/// Stack for naga: its parser recurses (up to 200 levels, each several
/// frames), and proc macros often run unoptimised.
const NAGA_STACK: usize = 64 << 20;

/// What naga made of a kernel: plain data, `Send`, free of spans.
pub enum Outcome {
    /// The module and the validator's analysis.
    Valid(Box<(naga::Module, ModuleInfo)>),
    /// The error, as byte ranges of the source, and what the kernel's
    /// bindings hold when that could still be found.
    Error(Box<Rewritten>, Option<PartialTypes>),
}

/// Parses and validates `source` with exactly `caps` on the `vyre-naga`
/// thread (on this thread, still catching panics, when no thread can be
/// had). `None` when naga panicked.
pub fn run(source: &str, caps: Capabilities) -> Option<Outcome> {
    let owned = source.to_owned();
    let spawned = std::thread::Builder::new()
        .name("vyre-naga".into())
        .stack_size(NAGA_STACK)
        .spawn(move || parse_and_validate(&owned, caps));
    match spawned {
        Ok(handle) => handle.join().ok(),
        Err(_) => catch_unwind(AssertUnwindSafe(|| parse_and_validate(source, caps))).ok(),
    }
}

fn parse_and_validate(source: &str, caps: Capabilities) -> Outcome {
    let module = match naga::front::wgsl::parse_str(source) {
        Ok(module) => module,
        Err(e) => {
            return Outcome::Error(
                Box::new(naga_errors::from_parse(&e, source)),
                partial::from_unparsed(source),
            );
        }
    };
    let mut validator = Validator::new(ValidationFlags::all(), caps);
    match validator.validate(&module) {
        Ok(info) => Outcome::Valid(Box::new((module, info))),
        Err(e) => {
            let mut rewritten = naga_validation::from_validation(&e, &module, source);
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
    let mut needed: Vec<&crate::model::features::FeatureRow> = Vec::new();
    let mut current = Some(message);
    while let Some(error) = current.take() {
        if Some(&error) == unfixable.as_ref() {
            break;
        }
        let candidates = || {
            crate::model::features::FEATURES
                .iter()
                .filter(|f| !(caps | extra).contains(f.capabilities))
        };
        // A feature that makes the kernel valid, else one that fixes this
        // error (the next may need another).
        let with = |f: &crate::model::features::FeatureRow| first_error(extra | f.capabilities);
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
            crate::model::features::names()
        ));
    }
    let what = needed
        .iter()
        .map(|f| format!("`{}` ({})", f.name(), f.enables))
        .collect::<Vec<_>>()
        .join(", ");
    let names = needed
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ");
    let declared = crate::model::features::FEATURES
        .iter()
        .filter(|f| caps.contains(f.capabilities))
        .map(|f| f.name())
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
