//! naga's validation errors rewritten for WGSL users: the culprit found
//! with naga's IR and span tables (an invalid store's buffer, a mixed-type
//! expression, the global or member whose type needs a capability), in
//! WGSL's words (plain data: it runs on the naga thread).

use naga::common::wgsl::TypeContext;
use naga::valid::{FunctionError, ValidationError};
use naga::{Expression, Handle, Module, Type, TypeInner, WithSpan};

use crate::diag::naga_errors::{Class, Label, Rewritten};
use crate::diag::naga_words::{clamp, lower_first, tidy, words};

/// Rewrites a validator error of `module` (parsed from `source`).
pub fn from_validation(e: &WithSpan<ValidationError>, module: &Module, source: &str) -> Rewritten {
    let inner = e.as_inner();
    let chain = error_chain(inner);
    let original = tidy(&chain.join(": "));
    // naga's spans: the most specific (shortest) is the culprit; it adds
    // the enclosing function or statement as further spans.
    let mut labels: Vec<Label> = e
        .spans()
        .filter_map(|(span, text)| {
            span.to_range().map(|range| Label {
                range: clamp(range, source),
                text: tidy(text),
            })
        })
        .collect();
    labels.sort_by_key(|l| l.range.len());
    let mut out = Rewritten {
        class: Class::Validation,
        message: innermost(&chain),
        primary: labels.first().cloned(),
        secondary: Vec::new(),
        help: None,
        original,
    };
    match inner {
        ValidationError::EntryPoint { name, source, .. } => {
            if let naga::valid::EntryPointError::Function(fe) = source
                && let Some(ep) = module.entry_points.iter().find(|ep| &ep.name == name)
            {
                function_error(fe, &ep.function, module, &mut out);
            }
        }
        ValidationError::Function { handle, source, .. } => {
            if let Ok(function) = module.functions.try_get(*handle) {
                function_error(source, function, module, &mut out);
            }
        }
        ValidationError::Type { handle, .. } => {
            out.class = Class::Type;
            type_site(*handle, module, source, &mut out);
        }
        ValidationError::GlobalVariable { handle, .. } if out.primary.is_none() => {
            let span = module.global_variables.get_span(*handle);
            out.primary = span.to_range().map(|range| Label {
                range: clamp(range, source),
                text: String::new(),
            });
        }
        _ => {}
    }
    if let Some(cap) = capability(&chain) {
        out.message = format!("{cap} (not in WebGPU's defaults)");
        out.help = Some(
            "write `limits native;` in graph! to allow it (the device must then support it)"
                .to_owned(),
        );
    }
    out.message = words(&out.message);
    out
}

/// Culprits inside a function.
fn function_error(
    e: &FunctionError,
    function: &naga::Function,
    module: &Module,
    out: &mut Rewritten,
) {
    match e {
        FunctionError::InvalidStorePointer(pointer) => {
            let root = root_variable(function, *pointer);
            out.message = match root {
                Some(Root::Global(g)) => {
                    let global = module.global_variables.try_get(g).ok();
                    let name = global.and_then(|g| g.name.clone()).unwrap_or_default();
                    let space = global.map(|g| g.space);
                    match space {
                        Some(naga::AddressSpace::Uniform) => {
                            out.help = Some(format!(
                                "uniform buffers are read-only: to write `{name}`, declare it `var<storage, read_write>`"
                            ));
                            format!(
                                "cannot write to `{name}`: it is `var<uniform>`, which is read-only"
                            )
                        }
                        Some(naga::AddressSpace::Storage { .. }) => {
                            out.help = Some(format!(
                                "declare it `var<storage, read_write> {name}` to write it"
                            ));
                            format!("cannot write to `{name}`: it is `var<storage, read>`")
                        }
                        _ => format!("cannot write to `{name}`: it is read-only"),
                    }
                }
                Some(Root::Argument) | None => "cannot write to this: it is not a variable".into(),
            };
            if let Some(primary) = out.primary.as_mut() {
                primary.text = "written here".into();
            }
        }
        FunctionError::Expression { source, handle } => {
            if let naga::valid::ExpressionError::InvalidBinaryOperandTypes {
                op,
                lhs_type,
                rhs_type,
                ..
            } = source
            {
                out.class = Class::Type;
                let (l, r) = (type_inner(module, lhs_type), type_inner(module, rhs_type));
                out.message = format!("`{}` cannot combine `{l}` and `{r}`", op_symbol(*op));
                out.help = Some(match struct_member(lhs_type).or(struct_member(rhs_type)) {
                    // No conversion makes a number of a struct: a member does.
                    Some(member) => format!(
                        "a struct is not a number: use one of its members, e.g. `.{member}`"
                    ),
                    None => format!(
                        "WGSL never converts implicitly: convert one operand, e.g. `{l}(...)` or `{r}(...)`"
                    ),
                });
            }
            // The whole expression, from naga's span table.
            let span = function.expressions.get_span(*handle);
            if let Some(range) = span.to_range()
                && !range.is_empty()
            {
                out.primary = Some(Label {
                    range,
                    text: "this expression".into(),
                });
            }
        }
        _ => {}
    }
}

enum Root {
    Global(Handle<naga::GlobalVariable>),
    Argument,
}

/// The variable a pointer expression points into.
fn root_variable(function: &naga::Function, mut e: Handle<Expression>) -> Option<Root> {
    for _ in 0..64 {
        match function.expressions.try_get(e).ok()? {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => e = *base,
            Expression::GlobalVariable(g) => return Some(Root::Global(*g)),
            Expression::FunctionArgument(_) => return Some(Root::Argument),
            _ => return None,
        }
    }
    None
}

/// Points a type error at what has that type: a global, a local, a
/// struct member.
fn type_site(ty: Handle<Type>, module: &Module, source: &str, out: &mut Rewritten) {
    let wgsl = module.to_ctx().type_to_string(ty);
    let named = module
        .types
        .get_handle(ty)
        .ok()
        .and_then(|t| t.name.clone());
    out.message = match &named {
        Some(name) => format!("type `{name}` is invalid here"),
        None => format!("type `{wgsl}` is invalid here"),
    };
    if let Some(inner) = out.original.rsplit(": ").next() {
        out.message = format!("`{wgsl}`: {}", lower_first(inner));
    }
    if out.primary.is_some() {
        return;
    }
    let contains = |outer: Handle<Type>| type_contains(module, outer, ty, 0);
    // A global of (or containing) that type.
    if let Some((h, g)) = module.global_variables.iter().find(|(_, g)| contains(g.ty))
        && let Some(range) = module.global_variables.get_span(h).to_range()
    {
        out.primary = Some(Label {
            range: clamp(range, source),
            text: format!("`{}` has type `{wgsl}`", g.name.clone().unwrap_or_default()),
        });
        return;
    }
    // A struct member of that type.
    for (h, t) in module.types.iter() {
        if let TypeInner::Struct { members, .. } = &t.inner
            && let Some(m) = members.iter().find(|m| contains(m.ty))
            && let Some(range) = module.types.get_span(h).to_range()
        {
            let range = clamp(range, source);
            let member = m.name.clone().unwrap_or_default();
            let text = source.get(range.clone()).unwrap_or_default();
            let at = text
                .find(&format!("{member}:"))
                .or_else(|| text.find(&member))
                .map(|i| range.start + i..range.start + i + member.len())
                .unwrap_or(range);
            out.primary = Some(Label {
                range: at,
                text: format!("member `{member}` has type `{wgsl}`"),
            });
            return;
        }
    }
    // A local variable.
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|ep| &ep.function));
    for f in functions {
        if let Some((h, v)) = f.local_variables.iter().find(|(_, v)| contains(v.ty))
            && let Some(range) = f.local_variables.get_span(h).to_range()
        {
            out.primary = Some(Label {
                range: clamp(range, source),
                text: format!("`{}` has type `{wgsl}`", v.name.clone().unwrap_or_default()),
            });
            return;
        }
    }
}

/// Whether `outer` is `inner` or holds it (arrays, structs, atomics,
/// pointers).
fn type_contains(module: &Module, outer: Handle<Type>, inner: Handle<Type>, depth: u32) -> bool {
    if outer == inner {
        return true;
    }
    if depth > 32 {
        return false;
    }
    let Ok(t) = module.types.get_handle(outer) else {
        return false;
    };
    match &t.inner {
        TypeInner::Array { base, .. } | TypeInner::BindingArray { base, .. } => {
            type_contains(module, *base, inner, depth + 1)
        }
        TypeInner::Pointer { base, .. } => type_contains(module, *base, inner, depth + 1),
        TypeInner::Struct { members, .. } => members
            .iter()
            .any(|m| type_contains(module, m.ty, inner, depth + 1)),
        _ => false,
    }
}

/// WGSL spelling of a type naga's error carries by value.
/// The first member's name of a struct type, `None` for other types.
fn struct_member(inner: &TypeInner) -> Option<String> {
    match inner {
        TypeInner::Struct { members, .. } => members.first()?.name.clone(),
        _ => None,
    }
}

/// A type as WGSL spells it; a struct by its declared name (naga's
/// writer knows only its layout here and says `{unnamed struct}`).
fn type_inner(module: &Module, inner: &TypeInner) -> String {
    if let TypeInner::Struct { .. } = inner
        && let Some(name) = (module.types.iter())
            .find(|(_, t)| &t.inner == inner)
            .and_then(|(_, t)| t.name.clone())
    {
        return name;
    }
    let mut s = String::new();
    match module.to_ctx().write_type_inner(inner, &mut s) {
        Ok(()) => s,
        Err(_) => tidy(&format!("{inner:?}")),
    }
}

fn op_symbol(op: naga::BinaryOperator) -> &'static str {
    use naga::BinaryOperator as B;
    match op {
        B::Add => "+",
        B::Subtract => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::Equal => "==",
        B::NotEqual => "!=",
        B::Less => "<",
        B::LessEqual => "<=",
        B::Greater => ">",
        B::GreaterEqual => ">=",
        B::And => "&",
        B::ExclusiveOr => "^",
        B::InclusiveOr => "|",
        B::LogicalAnd => "&&",
        B::LogicalOr => "||",
        B::ShiftLeft => "<<",
        B::ShiftRight => ">>",
    }
}

/// The feature a missing naga capability stands for, in WebGPU's words.
fn capability(chain: &[String]) -> Option<String> {
    let text = chain.join(" ");
    for (naga, what) in [
        ("FLOAT64", "`f64` needs device feature SHADER_F64"),
        (
            "SHADER_INT64",
            "64-bit integers need device feature SHADER_INT64",
        ),
        ("SHADER_FLOAT16", "`f16` needs device feature SHADER_F16"),
        ("SHADER_F16", "`f16` needs device feature SHADER_F16"),
    ] {
        if text.contains(naga) {
            return Some(what.to_owned());
        }
    }
    text.contains("Capabilit")
        .then(|| "this needs a device capability".to_owned())
}

/// Each level of naga's nested error, outermost first, without repeats.
fn error_chain(e: &dyn std::error::Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.iter().any(|m| m.contains(&text)) {
            out.push(text);
        }
        source = s.source();
        if out.len() > 16 {
            break;
        }
    }
    out
}

/// The most specific level of the chain: naga's wrappers ("Entry point
/// main at Compute is invalid", "Expression \[3\] is invalid") say where,
/// not what.
fn innermost(chain: &[String]) -> String {
    let specific = chain
        .iter()
        .rev()
        .find(|m| !m.ends_with(" is invalid") && !m.ends_with("is invalid"))
        .or_else(|| chain.last())
        .cloned()
        .unwrap_or_default();
    lower_first(&tidy(&specific))
}
