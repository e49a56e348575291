//! A validated kernel's interface ([`KernelInterface`]): the entry point,
//! its workgroup size, every binding it uses (`bindings.rs`), its
//! `override` constants (`overrides.rs`), the structs its bindings' Rust
//! types need, and where its parts are in the user's source.

use naga::proc::Layouter;
use naga::{Module, ShaderStage, TypeInner};

use super::bindings::{Reflecting, reflect_bindings};
use super::convert::Converter;
use super::overrides::reflect_overrides;
use crate::diag::{list, list_raw};
use crate::model::{KernelInterface, LoadedKernel, StructDef, ValidatedKernel};

/// Reflects a validated kernel, reporting every problem with it.
pub fn reflect(kernel: ValidatedKernel) -> Result<KernelInterface, Vec<syn::Error>> {
    let ValidatedKernel {
        loaded,
        module,
        info,
    } = kernel;
    let name = loaded.name.clone();
    let entry_index = entry_point(&loaded, &module).map_err(|e| vec![e])?;
    let Some(ep) = module.entry_points.get(entry_index) else {
        return Err(Vec::new());
    };
    let ep_info = info.get_entry_point(entry_index);
    let mut errors = Vec::new();

    // Layouts, then the bindings and the structs their types need.
    let mut layouter = Layouter::default();
    if let Err(e) = layouter.update(module.to_ctx()) {
        errors.push(syn::Error::new(
            name.span(),
            format!("kernel `{name}`: {e}"),
        ));
        return Err(errors);
    }
    let mut converter = Converter::new(&module, &layouter);
    let (bindings, unused_bindings) = reflect_bindings(
        &mut Reflecting {
            module: &module,
            layouter: &layouter,
            converter: &mut converter,
            name: &name,
            errors: &mut errors,
        },
        ep_info,
    );
    let structs = std::mem::take(&mut converter.structs);
    let struct_spans = struct_spans(&module, &loaded, &structs);
    let (overrides, workgroup_size) = reflect_overrides(&module, &info, ep);
    let size_from_overrides = ep.workgroup_size_overrides.is_some();
    let entry_point = ep.name.clone();

    if !errors.is_empty() {
        return Err(errors);
    }
    let sites = crate::diag::sites::kernel_sites(&loaded, &module, &ep.name);
    let global_name = |h: naga::Handle<naga::GlobalVariable>| {
        module
            .global_variables
            .try_get(h)
            .ok()
            .and_then(|g| g.name.clone())
            .unwrap_or_default()
    };
    let mut sampling: Vec<(String, String)> = ep_info
        .sampling_set
        .iter()
        .map(|k| (global_name(k.image), global_name(k.sampler)))
        .collect();
    sampling.sort();
    Ok(KernelInterface {
        sampling,
        name,
        source: loaded.source,
        entry_point,
        workgroup_size,
        size_from_overrides,
        bindings,
        unused_bindings,
        overrides,
        structs,
        sites,
        struct_spans,
        module,
        info,
    })
}

/// The entry point to run: the one named by `entry "name"` (which must be
/// `@compute`), else the module's only `@compute` one.
fn entry_point(loaded: &LoadedKernel, module: &Module) -> Result<usize, syn::Error> {
    let name = &loaded.name;
    let describe_ep = |ep: &naga::EntryPoint| format!("`{}` ({})", ep.name, stage_name(ep.stage));
    if let Some(lit) = &loaded.entry {
        let wanted = lit.value();
        let Some(i) = module.entry_points.iter().position(|ep| ep.name == wanted) else {
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "kernel `{name}` has no entry point `{wanted}`{}\nnote: its entry points are {}",
                    crate::diag::suggest::did_you_mean(
                        &wanted,
                        module.entry_points.iter().map(|ep| ep.name.as_str())
                    ),
                    list_raw(module.entry_points.iter().map(describe_ep))
                ),
            ));
        };
        if let Some(ep) = module.entry_points.get(i)
            && ep.stage != ShaderStage::Compute
        {
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "entry point `{wanted}` of kernel `{name}` is a {} shader; graph nodes run `@compute` entry points",
                    stage_name(ep.stage)
                ),
            ));
        }
        return Ok(i);
    }
    let compute: Vec<usize> = module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, ep)| ep.stage == ShaderStage::Compute)
        .map(|(i, _)| i)
        .collect();
    match compute.as_slice() {
        [one] => Ok(*one),
        [] => {
            let others = if module.entry_points.is_empty() {
                "it has no entry points at all".to_owned()
            } else {
                format!(
                    "its entry points are {}",
                    list_raw(module.entry_points.iter().map(describe_ep))
                )
            };
            Err(syn::Error::new(
                name.span(),
                format!("kernel `{name}` has no `@compute` entry point; {others}"),
            ))
        }
        many => {
            let names = many
                .iter()
                .filter_map(|&i| module.entry_points.get(i))
                .map(|ep| ep.name.clone());
            let first = many
                .first()
                .and_then(|&i| module.entry_points.get(i))
                .map(|ep| ep.name.clone())
                .unwrap_or_default();
            Err(syn::Error::new(
                name.span(),
                format!(
                    "kernel `{name}` has several `@compute` entry points ({}): choose one with `kernel {name} = ... entry \"{first}\";`",
                    list(names)
                ),
            ))
        }
    }
}

/// The WGSL declaration of each generated struct (`XHeader` maps to `X`).
fn struct_spans(
    module: &Module,
    loaded: &LoadedKernel,
    structs: &[StructDef],
) -> Vec<(String, proc_macro2::Span)> {
    structs
        .iter()
        .map(|def| {
            let wgsl = |n: &str| {
                module.types.iter().find_map(|(h, t)| {
                    (t.name.as_deref() == Some(n) && matches!(t.inner, TypeInner::Struct { .. }))
                        .then(|| module.types.get_span(h).to_range())
                        .flatten()
                })
            };
            let range = wgsl(&def.name).or_else(|| def.name.strip_suffix("Header").and_then(wgsl));
            let span = range.map_or_else(|| loaded.name.span(), |r| loaded.locate(r.start).span);
            (def.name.clone(), span)
        })
        .collect()
}

fn stage_name(stage: ShaderStage) -> &'static str {
    match stage {
        ShaderStage::Compute => "compute",
        ShaderStage::Vertex => "vertex",
        ShaderStage::Fragment => "fragment",
        _ => "non-compute",
    }
}
