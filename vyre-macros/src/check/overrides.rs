//! A kernel's `override` constants: their types and defaults, the
//! workgroup size they give, and a node's values for them, all evaluated
//! by naga's own `process_overrides`, the code wgpu runs when it creates
//! the pipeline.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use naga::back::pipeline_constants::PipelineConstantError;
use naga::valid::ModuleInfo;
use naga::{EntryPoint, Expression, Literal, Module, ScalarKind, ShaderStage, TypeInner};

use crate::model::{KernelInterface, OverrideDecl, OverrideTy, Value};

/// The module's overrides, and the entry point's workgroup size with their
/// defaults (`Err` says why it cannot be known without a node's values),
/// both as naga evaluates them when wgpu creates the pipeline.
pub fn reflect_overrides(
    module: &Module,
    info: &ModuleInfo,
    ep: &EntryPoint,
) -> (Vec<OverrideDecl>, Result<[u32; 3], String>) {
    let mut overrides = Vec::new();
    for (_, o) in module.overrides.iter() {
        let ty = match module.types.get_handle(o.ty).map(|t| &t.inner) {
            Ok(TypeInner::Scalar(s)) => match s.kind {
                ScalarKind::Uint => OverrideTy::U32,
                ScalarKind::Sint => OverrideTy::I32,
                ScalarKind::Bool => OverrideTy::Bool,
                _ => OverrideTy::Float,
            },
            _ => OverrideTy::Float,
        };
        let oname = o
            .name
            .clone()
            .unwrap_or_else(|| o.id.map(|id| id.to_string()).unwrap_or_default());
        let key = o.id.map_or_else(|| oname.clone(), |id| id.to_string());
        // A literal default is known even where the evaluation below cannot
        // run (another override has no default).
        let default = o
            .init
            .and_then(|init| module.global_expressions.try_get(init).ok())
            .and_then(literal_value);
        overrides.push(OverrideDecl {
            name: oname,
            key,
            ty,
            default,
            has_init: o.init.is_some(),
        });
    }
    let size_from_overrides = ep.workgroup_size_overrides.is_some();
    let workgroup_size = if module.overrides.is_empty() {
        Ok(ep.workgroup_size)
    } else {
        match process(module, info, &ep.name, &overrides, &[]) {
            Ok(p) => {
                for o in &mut overrides {
                    if let Some(v) = p.values.get(&o.key) {
                        o.default = Some(*v);
                    }
                }
                Ok(p.workgroup_size)
            }
            Err(e) if size_from_overrides => Err(e),
            // The size is literal: naga's reflection already holds it.
            Err(_) => Ok(ep.workgroup_size),
        }
    };
    (overrides, workgroup_size)
}

/// A kernel's `override` constants evaluated by naga with a node's values.
pub trait EvaluateOverrides {
    /// The workgroup size with some overrides set, keyed as pipeline
    /// constants ([`OverrideDecl::key`] → value), evaluated by naga exactly
    /// as pipeline creation evaluates it. `Err` says why it cannot be known.
    fn workgroup_size_with(&self, constants: &[(String, f64)]) -> Result<[u32; 3], String>;
}

impl EvaluateOverrides for KernelInterface {
    fn workgroup_size_with(&self, constants: &[(String, f64)]) -> Result<[u32; 3], String> {
        process(
            &self.module,
            &self.info,
            &self.entry_point,
            &self.overrides,
            constants,
        )
        .map(|p| p.workgroup_size)
    }
}

/// What naga's override processing gave.
struct Processed {
    /// The entry point's workgroup size.
    workgroup_size: [u32; 3],
    /// Each remaining override's value, by pipeline constant key.
    values: HashMap<String, f64>,
}

/// Replaces every override of the module with its value (`constants`, else
/// its initializer) with naga's own `process_overrides`, the code wgpu runs
/// when it creates the pipeline, and reads the entry point's workgroup
/// size. A panic in naga becomes an `Err`.
fn process(
    module: &Module,
    info: &ModuleInfo,
    entry: &str,
    overrides: &[OverrideDecl],
    constants: &[(String, f64)],
) -> Result<Processed, String> {
    let table: naga::back::PipelineConstants = constants.iter().cloned().collect();
    let name_of = |key: &str| {
        overrides
            .iter()
            .find(|o| o.key == key)
            .map_or_else(|| key.to_owned(), |o| o.name.clone())
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        naga::back::pipeline_constants::process_overrides(
            module,
            info,
            Some((ShaderStage::Compute, entry)),
            &table,
        )
        .map(|(m, _)| {
            let ep = m.entry_points.iter().find(|ep| ep.name == entry);
            let size = ep.map(|ep| (ep.workgroup_size, ep.workgroup_size_overrides.is_some()));
            let mut values = HashMap::new();
            for (_, o) in m.overrides.iter() {
                let key = o.id.map(|id| id.to_string()).or_else(|| o.name.clone());
                let value = o
                    .init
                    .and_then(|init| m.global_expressions.try_get(init).ok())
                    .and_then(literal_value);
                if let (Some(key), Some(value)) = (key, value) {
                    values.insert(key, value);
                }
            }
            (size, values)
        })
        .map_err(|e| describe_error(e, &name_of))
    }));
    match outcome {
        Err(_) => Err(
            "naga panicked while evaluating its `override`s (an internal error; please report it)"
                .to_owned(),
        ),
        Ok(Err(message)) => Err(message),
        Ok(Ok((Some((size, false)), values))) => Ok(Processed {
            workgroup_size: size,
            values,
        }),
        Ok(Ok(_)) => Err(
            "naga left its workgroup size unevaluated (an internal error; please report it)"
                .to_owned(),
        ),
    }
}

/// What a failed `process_overrides` means, in WGSL terms.
fn describe_error(e: PipelineConstantError, name_of: &dyn Fn(&str) -> String) -> String {
    match e {
        PipelineConstantError::MissingValue(key) => {
            let name = name_of(&key);
            format!("override `{name}` has no value: it has no default and is not set")
        }
        PipelineConstantError::NegativeWorkgroupSize => {
            "its workgroup size evaluates to zero or to a value that is not a `u32`; every dimension must be at least 1".to_owned()
        }
        PipelineConstantError::ConstantEvaluatorError(e) => {
            format!("naga cannot evaluate its `override`s: {e}")
        }
        PipelineConstantError::ValidationError(e) => {
            format!("with these `override` values it is not valid WGSL: {}", e.as_inner())
        }
        other => format!("naga cannot apply these `override` values: {other}"),
    }
}

/// A constant literal as the `f64` wgpu passes overrides as.
fn literal_value(e: &Expression) -> Option<f64> {
    match *e {
        Expression::Literal(lit) => Some(match lit {
            Literal::U32(v) => v.into(),
            Literal::I32(v) => v.into(),
            Literal::F32(v) => v.into(),
            Literal::F64(v) | Literal::AbstractFloat(v) => v,
            Literal::F16(v) => f64::from(f32::from(v)),
            Literal::U16(v) => v.into(),
            Literal::I16(v) => v.into(),
            Literal::Bool(b) => u8::from(b).into(),
            Literal::U64(v) => v as f64,
            Literal::I64(v) | Literal::AbstractInt(v) => v as f64,
        }),
        _ => None,
    }
}

/// Checks a node's value for an override of type `ty`; `Err` says why not.
pub fn check_override_value(o: &OverrideDecl, value: Value) -> Result<f64, String> {
    let bad = |what: &str| Err(format!("override `{}` is {}; {what}", o.name, o.ty.name()));
    match (o.ty, value) {
        (OverrideTy::U32, Value::Int(v)) if (0..=i128::from(u32::MAX)).contains(&v) => Ok(v as f64),
        (OverrideTy::U32, Value::Int(v)) => bad(&format!("{v} is out of range")),
        (OverrideTy::I32, Value::Int(v))
            if (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v) =>
        {
            Ok(v as f64)
        }
        (OverrideTy::I32, Value::Int(v)) => bad(&format!("{v} is out of range")),
        (OverrideTy::U32 | OverrideTy::I32, Value::Float(_) | Value::Bool(_)) => {
            bad("give an integer")
        }
        (OverrideTy::Bool, Value::Bool(b)) => Ok(u8::from(b).into()),
        (OverrideTy::Bool, Value::Int(v @ (0 | 1))) => Ok(v as f64),
        (OverrideTy::Bool, _) => bad("give `true` or `false` (or 1 or 0)"),
        (OverrideTy::Float, Value::Bool(_)) => bad("give a number"),
        (OverrideTy::Float, v) => {
            let f = v.as_f64();
            if f.is_finite() && f.abs() <= f64::from(f32::MAX) {
                Ok(f)
            } else {
                bad("the value is out of range")
            }
        }
    }
}
