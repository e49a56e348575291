//! Stage 3: naga's WGSL front end **and** its validator
//! ([`ValidatedKernel`]).
//!
//! The front end catches syntax and many type errors; others (mixed-type
//! arithmetic, stores into `read` buffers) only the validator catches, so
//! both always run. Errors render naga's code frame (plain text) under a
//! header naming the kernel and the user's `file:line:col`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};

use crate::load::LoadedKernel;

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
    Error {
        stage: &'static str,
        message: String,
        offset: Option<usize>,
        frame: String,
    },
}

/// Parses and validates one kernel with exactly `caps`: what wgpu grants
/// every WebGPU adapter plus the graph's declared `features`
/// ([`crate::features::capabilities`]).
///
/// naga runs on a thread of its own with a large stack (deeply nested WGSL
/// cannot overflow the compiler's stack), and a panic in naga becomes an
/// error instead of aborting the build.
pub fn validate(loaded: LoadedKernel, caps: Capabilities) -> syn::Result<ValidatedKernel> {
    let source = loaded.source.clone();
    let path = loaded.frame_path();
    let spawned = std::thread::Builder::new()
        .name("vyre-naga".into())
        .stack_size(NAGA_STACK)
        .spawn(move || run_naga(&source, &path, caps));
    let outcome = match spawned {
        Ok(handle) => handle.join().ok(),
        // No thread to be had: run here, still catching panics.
        Err(_) => {
            let (source, path) = (loaded.source.as_str(), loaded.frame_path());
            catch_unwind(AssertUnwindSafe(|| run_naga(source, &path, caps))).ok()
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
        Some(Outcome::Error {
            stage,
            message,
            offset,
            frame,
        }) => Err(wgsl_error(&loaded, stage, &message, offset, &frame)),
        None => Err(syn::Error::new(
            loaded.name.span(),
            format!(
                "internal error: naga panicked on kernel `{}`; please report this",
                loaded.name
            ),
        )),
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
        .spawn(move || run_naga(&owned, "", caps));
    let outcome = match spawned {
        Ok(handle) => handle.join().ok(),
        Err(_) => catch_unwind(AssertUnwindSafe(|| run_naga(source, "", caps))).ok(),
    };
    match outcome {
        Some(Outcome::Valid(valid)) => Some(valid.0),
        _ => None,
    }
}

fn run_naga(source: &str, path: &str, caps: Capabilities) -> Outcome {
    let module = match naga::front::wgsl::parse_str(source) {
        Ok(module) => module,
        Err(e) => {
            let offset = e
                .labels()
                .next()
                .and_then(|(span, _)| span.to_range())
                .map(|r| r.start);
            return Outcome::Error {
                stage: "parse",
                message: e.message().to_owned(),
                offset,
                frame: e.emit_to_string_with_path(source, path),
            };
        }
    };
    let mut validator = Validator::new(ValidationFlags::all(), caps);
    match validator.validate(&module) {
        Ok(info) => Outcome::Valid(Box::new((module, info))),
        Err(e) => {
            // The most specific (shortest) span: naga adds enclosing
            // contexts (the function, the statement) as further spans.
            let mut offset = e
                .spans()
                .filter_map(|(span, _)| span.to_range())
                .min_by_key(|r| r.len())
                .map(|r| r.start);
            let mut message = with_hint(&tidy(&error_chain(e.as_inner())));
            if let Some(needed) = missing_capability(&module, caps, &message) {
                if let naga::valid::ValidationError::Type { handle, source, .. } = e.as_inner() {
                    // naga's ``Type '' is invalid`` has no line: name (and
                    // point at) the declaration that uses the type instead.
                    let (at, owner) = type_owner(&module, *handle);
                    offset = offset.or(at);
                    message = format!("{owner}: {}", tidy(&error_chain(source)));
                }
                message = format!("{message}; {needed}");
            }
            Outcome::Error {
                stage: "validation",
                message,
                offset,
                frame: e.emit_to_string_with_path(source, path),
            }
        }
    }
}

/// When the first validation error goes away with more naga capabilities,
/// what would allow it: the `features [...]` to declare (every one the
/// kernel needs, found by adding one feature at a time), or that graph!
/// cannot request it. `None` for any other error.
fn missing_capability(module: &naga::Module, caps: Capabilities, message: &str) -> Option<String> {
    let first_error = |more: Capabilities| {
        Validator::new(ValidationFlags::all(), caps | more)
            .validate(module)
            .err()
            .map(|e| with_hint(&tidy(&error_chain(e.as_inner()))))
    };
    // With every capability, the first error that no capability fixes.
    let unfixable = first_error(Capabilities::all());
    if unfixable.as_deref() == Some(message) {
        return None;
    }
    let mut extra = Capabilities::empty();
    let mut needed: Vec<&crate::features::Feature> = Vec::new();
    let mut current = Some(message.to_owned());
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

/// Where a type without a span of its own is used: the first struct
/// member or global whose type is it or is built from it (or from its
/// scalar), with the byte offset of that declaration and a name for it.
fn type_owner(module: &naga::Module, ty: naga::Handle<naga::Type>) -> (Option<usize>, String) {
    use naga::TypeInner as T;
    let inner = |h: naga::Handle<naga::Type>| module.types.get_handle(h).ok().map(|t| &t.inner);
    let scalar_of = |t: &T| match *t {
        T::Scalar(s) | T::Atomic(s) | T::Vector { scalar: s, .. } | T::Matrix { scalar: s, .. } => {
            Some(s)
        }
        _ => None,
    };
    let wanted = inner(ty).and_then(scalar_of);
    let uses = |outer: naga::Handle<naga::Type>| {
        let mut at = outer;
        for _ in 0..64 {
            if at == ty {
                return true;
            }
            match inner(at) {
                Some(T::Array { base, .. } | T::BindingArray { base, .. }) => at = *base,
                Some(t) => return wanted.is_some() && scalar_of(t) == wanted,
                None => return false,
            }
        }
        false
    };
    let wgsl = |h| naga::common::wgsl::TypeContext::type_to_string(&module.to_ctx(), h);
    for (handle, t) in module.types.iter() {
        if let T::Struct { members, .. } = &t.inner
            && let Some(m) = members.iter().find(|m| uses(m.ty))
        {
            let at = module.types.get_span(handle).to_range().map(|r| r.start);
            let sname = t.name.as_deref().unwrap_or("?");
            let mname = m.name.as_deref().unwrap_or("?");
            return (
                at,
                format!("member `{mname}: {}` of struct `{sname}`", wgsl(m.ty)),
            );
        }
    }
    for (handle, g) in module.global_variables.iter() {
        if uses(g.ty) {
            let at = module
                .global_variables
                .get_span(handle)
                .to_range()
                .map(|r| r.start);
            let gname = g.name.as_deref().unwrap_or("?");
            return (at, format!("global `{gname}: {}`", wgsl(g.ty)));
        }
    }
    (None, format!("type `{}`", wgsl(ty)))
}

/// How naga's `Debug` output spells the scalar types, and how WGSL does.
const SCALARS: &[(&str, &str)] = &[
    ("Scalar { kind: Uint, width: 4 }", "u32"),
    ("Scalar { kind: Sint, width: 4 }", "i32"),
    ("Scalar { kind: Float, width: 4 }", "f32"),
    ("Scalar { kind: Float, width: 2 }", "f16"),
    ("Scalar { kind: Float, width: 8 }", "f64"),
    ("Scalar { kind: Uint, width: 8 }", "u64"),
    ("Scalar { kind: Sint, width: 8 }", "i64"),
    ("Scalar { kind: Bool, width: 1 }", "bool"),
    ("Scalar { kind: AbstractInt, width: 8 }", "abstract-int"),
    ("Scalar { kind: AbstractFloat, width: 8 }", "abstract-float"),
];

/// naga's validation messages print its IR: arena handles (`[7]`), `Debug`
/// types (`Scalar(Scalar { kind: Uint, width: 4 })`) and labels such as
/// `naga::ir::Expression [6]`. This rewrites them the way WGSL users read
/// them: `with [5] (of type Scalar(..Uint..))` becomes ``with `u32` ``.
fn tidy(text: &str) -> String {
    let mut text = text.to_owned();
    for (debug, wgsl) in SCALARS {
        text = text.replace(debug, wgsl);
    }
    for (_, wgsl) in SCALARS {
        text = text.replace(&format!("Scalar({wgsl})"), wgsl);
        for (size, n) in [("Bi", 2), ("Tri", 3), ("Quad", 4)] {
            text = text.replace(
                &format!("Vector {{ size: {size}, scalar: {wgsl} }}"),
                &format!("vec{n}<{wgsl}>"),
            );
        }
    }
    for (ir, plain) in [
        ("naga::ir::Expression", "this expression"),
        ("naga::ir::Function", "this function"),
        ("naga::ir::GlobalVariable", "this global"),
        ("naga::ir::", ""),
    ] {
        text = text.replace(ir, plain);
    }
    strip_handles(&text)
}

/// Drops arena handles (` [7]`); ` [5] (of type T)` becomes `` `T` ``.
fn strip_handles(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" [") {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let digits = after
            .get(2..)
            .unwrap_or_default()
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 || !after.get(2 + digits..).is_some_and(|r| r.starts_with(']')) {
            out.push_str(" [");
            rest = after.get(2..).unwrap_or_default();
            continue;
        }
        rest = after.get(3 + digits..).unwrap_or_default();
        if let Some(typed) = rest.strip_prefix(" (of type ") {
            // The matching `)`.
            let mut depth = 1usize;
            let close = typed.char_indices().find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(j)
            });
            if let Some(j) = close {
                out.push_str(" `");
                out.push_str(typed.get(..j).unwrap_or_default());
                out.push('`');
                rest = typed.get(j + 1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// Adds how to fix the validation errors whose cause naga does not name.
fn with_hint(message: &str) -> String {
    if message.contains("valid destination for a store") {
        format!(
            "{message} (a `var<storage, read>` or `var<uniform>` buffer is read-only: declare it `var<storage, read_write>` to write it)"
        )
    } else if message.contains("can't work with") {
        format!(
            "{message} (WGSL never converts implicitly: convert one operand, e.g. `f32(x)` or `u32(x)`)"
        )
    } else {
        message.to_owned()
    }
}

/// `outer: inner: innermost`, the way naga's errors nest.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    let mut depth = 0;
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
        depth += 1;
        if depth > 16 {
            break;
        }
    }
    message
}

/// The error for a naga diagnostic at byte `offset` of the kernel's text.
fn wgsl_error(
    loaded: &LoadedKernel,
    stage: &str,
    message: &str,
    offset: Option<usize>,
    frame: &str,
) -> syn::Error {
    let (span, place) = match offset {
        Some(offset) => {
            let located = loaded.locate(offset);
            (located.span, located.place)
        }
        None => (loaded.source_span(), None),
    };
    let at = place.map(|p| format!(" at {p}")).unwrap_or_default();
    // naga's frame repeats the message on its first line (`error: ...`).
    let frame = match frame.split_once('\n') {
        Some((first, rest)) if first.starts_with("error") => rest,
        _ => frame,
    };
    // Its labels and notes print IR like the message; its source lines
    // (`12 │ code`) stay verbatim.
    let frame = frame
        .trim_end()
        .lines()
        .map(|line| {
            let is_source = line.split_once('│').is_some_and(|(gutter, _)| {
                let gutter = gutter.trim();
                !gutter.is_empty() && gutter.bytes().all(|b| b.is_ascii_digit())
            });
            if is_source {
                line.to_owned()
            } else {
                tidy(line)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    syn::Error::new(
        span,
        format!(
            "WGSL {stage} error in kernel `{}`{at}: {message}\n{frame}",
            loaded.name
        ),
    )
}
