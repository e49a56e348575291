//! A node's `override` values: evaluated per iteration (they may use the
//! `repeat` variable), checked against each override's type, and the
//! workgroup size they give, as naga evaluates it for pipeline creation.

use proc_macro2::Span;
use syn::Ident;

use super::limits::{NATIVE_HINT, workgroup_limit_problem};
use crate::check::{EvaluateOverrides, check_override_value};
use crate::diag::Diagnostics;
use crate::model::{BinOp, KernelInterface, NodeDecl, Value, ValueExpr};

/// An override value's expression, evaluated.
pub trait Evaluate {
    /// Evaluates with the `repeat` variable bound to `var` (if any).
    fn eval(&self, var: Option<(&Ident, i128)>) -> syn::Result<Value>;
}

impl Evaluate for ValueExpr {
    fn eval(&self, var: Option<(&Ident, i128)>) -> syn::Result<Value> {
        match self {
            ValueExpr::Int(v, _) => Ok(Value::Int(*v)),
            ValueExpr::Float(v, _) => Ok(Value::Float(*v)),
            ValueExpr::Bool(b, _) => Ok(Value::Bool(*b)),
            ValueExpr::Var(ident) => match var {
                Some((name, value)) if name == ident => Ok(Value::Int(value)),
                Some((name, _)) => Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown variable `{ident}`: the only variable here is `{name}`, the iteration of the enclosing `repeat`"
                    ),
                )),
                None => Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown variable `{ident}`: override values may use a variable only inside `repeat K as {ident} {{ ... }}`"
                    ),
                )),
            },
            ValueExpr::Neg(inner, span) => match inner.eval(var)? {
                Value::Int(v) => v
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| overflow(*span)),
                Value::Float(v) => Ok(Value::Float(-v)),
                Value::Bool(_) => Err(syn::Error::new(
                    *span,
                    "cannot negate a bool override value",
                )),
            },
            ValueExpr::Binary(l, op, span, r) => {
                let (Value::Int(a), Value::Int(b)) = (l.eval(var)?, r.eval(var)?) else {
                    return Err(syn::Error::new(
                        *span,
                        "arithmetic in override values is integer-only; write a float as a plain literal",
                    ));
                };
                let result = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div | BinOp::Rem if b == 0 => {
                        return Err(syn::Error::new(*span, "division by zero in override value"));
                    }
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                };
                result.map(Value::Int).ok_or_else(|| overflow(*span))
            }
        }
    }
}

fn overflow(span: Span) -> syn::Error {
    syn::Error::new(span, "arithmetic overflow in override value")
}

/// The pipeline constants a node sets: `(key, value)` per override of
/// `with { .. }`, each evaluated in iteration `var` and checked against the
/// override's type.
pub fn node_overrides(
    kernel: &KernelInterface,
    decl: &NodeDecl,
    var: Option<(&Ident, u64)>,
    in_iteration: &str,
    diag: &mut Diagnostics,
) -> Vec<(String, f64)> {
    let mut overrides = Vec::new();
    for o in &decl.overrides {
        let Some(od) = kernel.override_named(&o.name.to_string()) else {
            continue;
        };
        let value = match o.value.eval(var.map(|(v, i)| (v, i128::from(i)))) {
            Ok(v) => v,
            Err(e) => {
                diag.push(e);
                continue;
            }
        };
        match check_override_value(od, value) {
            Ok(v) => {
                overrides.push((od.key.clone(), v));
            }
            Err(message) => diag.error(o.value.span(), format!("{message}{in_iteration}")),
        }
    }
    overrides
}

/// The node's workgroup size when its overrides change the kernel's
/// (`None`: the kernel's), and whether it runs with the default one. naga
/// evaluates the node's overrides the way wgpu will when it creates the
/// pipeline; a size it cannot know is an error here, never a placeholder.
/// `decl` is the node's declaration, `label` its label and `in_iteration`
/// the iteration text of its messages.
pub fn node_workgroup_size(
    kernel: &KernelInterface,
    decl: &NodeDecl,
    label: &str,
    in_iteration: &str,
    overrides: &[(String, f64)],
    native: bool,
    diag: &mut Diagnostics,
) -> (Option<[u32; 3]>, bool) {
    if !kernel.size_from_overrides {
        return (None, true);
    }
    let size = match (&kernel.workgroup_size, overrides.is_empty()) {
        (Ok(size), true) => Ok(*size),
        _ => kernel.workgroup_size_with(overrides),
    };
    let span: Span = decl
        .overrides
        .first()
        .map_or(decl.keyword.span(), |o| o.name.span());
    match size {
        Ok(size) if kernel.workgroup_size.as_ref().ok() == Some(&size) => (None, true),
        Ok(size) => {
            if !native && let Some(message) = workgroup_limit_problem(size) {
                diag.error(
                    span,
                    format!("node `{label}`: workgroup size {size:?} {message}{in_iteration}; {NATIVE_HINT}"),
                );
            }
            (Some(size), false)
        }
        Err(message) => {
            let set = if overrides.is_empty() {
                "its override defaults".to_owned()
            } else {
                format!(
                    "`with {{ {} }}`",
                    decl.overrides
                        .iter()
                        .map(|o| o.name.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            diag.error(
                span,
                format!(
                    "node `{label}`: the workgroup size of kernel `{}` cannot be known with {set}{in_iteration}: {message}",
                    kernel.name
                ),
            );
            (None, true)
        }
    }
}
