//! Grid folding.
//!
//! `over E` launches `ceil(E / workgroup_size.x)` workgroups; past 65,535
//! the runtime folds them into y and z, and a kernel that indexes with
//! `global_invocation_id.x` alone would skip the tail. For every kernel an
//! `over` node runs, this stage decides:
//!
//! * the entry point takes none of `global_invocation_id`, `workgroup_id`,
//!   `num_workgroups`: a fold is invisible to it, [`GridFold::Linear`],
//!   unchanged;
//! * otherwise its entry point is *wrapped*: in the text, the user's entry
//!   loses `@compute`, `@workgroup_size(..)` and its parameters'
//!   `@builtin(..)` (blanked with spaces, so every byte offset and line stays
//!   where it was) and becomes an ordinary function, called by a new entry
//!   point that passes it linear positions ([`GridFold::Linear`]);
//! * when wrapping is not possible or the wrapped module fails naga's
//!   validation, the original with [`GridFold::XOnly`]: the runtime then refuses
//!   a folded run with a clear error. Folding never causes a compile error.
//!
//! A kernel that `grid [..]` nodes also run keeps its original entry point
//! for them (an explicit grid is never folded): the wrapped copy is a new
//! kernel at the end of the list, and only the `over` nodes move to it.

use std::ops::Range;

use naga::{Binding, BuiltIn, Module, ShaderStage, TypeInner};

use super::wgsl::{builtin_attributes, fresh_prefix};
use crate::check::revalidate;
use crate::model::lex::{Attr, Kind, Token, attributes_before, find_entry, lex};
use crate::model::{GraphAnalysis, KernelOut};
use vyre_analysis::spec::{DispatchSize, GridFold};

/// What an entry point's arguments are, as far as folding cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Positions {
    /// None of `global_invocation_id`, `workgroup_id`, `num_workgroups`.
    Unaffected,
    /// Each argument is one builtin, in order (one of them a position).
    Builtins(Vec<BuiltIn>),
    /// Positions arrive in a way that is not wrapped (a struct argument).
    Unwrappable,
}

/// One entry point of a validated module.
#[derive(Clone, Debug)]
pub struct EntryFacts {
    name: String,
    positions: Positions,
    workgroup_size: [u32; 3],
    /// Which dimensions of the size come from overrides.
    size_overrides: Option<[bool; 3]>,
}

/// The entry points of one kernel's module, taken from naga's IR before
/// reflection (which keeps only the chosen one).
#[derive(Clone, Debug, Default)]
pub struct ModuleFacts {
    entries: Vec<EntryFacts>,
}

impl ModuleFacts {
    fn entry(&self, name: &str) -> Option<&EntryFacts> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// What entry point `name` takes.
    #[cfg(test)]
    pub fn positions(&self, name: &str) -> Option<&Positions> {
        self.entry(name).map(|e| &e.positions)
    }
}

/// The facts of every `@compute` entry point of `module`.
pub fn module_facts(module: &Module) -> ModuleFacts {
    let entries = module
        .entry_points
        .iter()
        .filter(|ep| ep.stage == ShaderStage::Compute)
        .map(|ep| EntryFacts {
            name: ep.name.clone(),
            positions: positions(module, &ep.function.arguments),
            workgroup_size: ep.workgroup_size,
            size_overrides: size_overrides(&ep.workgroup_size_overrides),
        })
        .collect();
    ModuleFacts { entries }
}

fn size_overrides<T>(o: &Option<[Option<T>; 3]>) -> Option<[bool; 3]> {
    o.as_ref().map(|dims| dims.each_ref().map(Option::is_some))
}

fn is_position(b: BuiltIn) -> bool {
    matches!(
        b,
        BuiltIn::GlobalInvocationId | BuiltIn::WorkGroupId | BuiltIn::NumWorkGroups
    )
}

fn positions(module: &Module, args: &[naga::FunctionArgument]) -> Positions {
    let mut direct = Vec::new();
    let mut any_position = false;
    let mut all_direct = true;
    for arg in args {
        match arg.binding {
            Some(Binding::BuiltIn(b)) => {
                any_position |= is_position(b);
                direct.push(b);
            }
            _ => {
                all_direct = false;
                let members = match module.types.get_handle(arg.ty).map(|t| &t.inner) {
                    Ok(TypeInner::Struct { members, .. }) => members.as_slice(),
                    _ => &[],
                };
                any_position |= members
                    .iter()
                    .any(|m| matches!(m.binding, Some(Binding::BuiltIn(b)) if is_position(b)));
            }
        }
    }
    match (any_position, all_direct) {
        (false, _) => Positions::Unaffected,
        (true, true) => Positions::Builtins(direct),
        (true, false) => Positions::Unwrappable,
    }
}

/// Decides every `over` kernel of `analysis` (see the module docs).
/// `facts[i]` belongs to `analysis.kernels[i]`; `caps` are the naga
/// capabilities the wrapped text is validated with, as in
/// `check/validate.rs`.
pub fn fold(
    analysis: &mut GraphAnalysis,
    facts: &[Option<ModuleFacts>],
    caps: naga::valid::Capabilities,
) {
    let declared = analysis.kernels.len();
    for k in 0..declared {
        let runs_over = analysis
            .nodes
            .iter()
            .any(|n| n.kernel == k && is_over(n.size));
        let runs_grid = analysis
            .nodes
            .iter()
            .any(|n| n.kernel == k && !is_over(n.size));
        let Some(kernel) = analysis.kernels.get_mut(k) else {
            continue;
        };
        if !runs_over {
            continue;
        }
        let entry = facts
            .get(k)
            .and_then(Option::as_ref)
            .and_then(|m| m.entry(&kernel.entry_point));
        let Some(entry) = entry else { continue };
        let wrapped = match &entry.positions {
            Positions::Unaffected => {
                kernel.fold = GridFold::Linear;
                continue;
            }
            Positions::Unwrappable => continue,
            Positions::Builtins(builtins) => checked_wrap(kernel, entry, builtins, caps),
        };
        let Some(wrapped) = wrapped else { continue };
        if runs_grid {
            let index = analysis.kernels.len();
            analysis.kernels.push(wrapped);
            for n in analysis.nodes.iter_mut() {
                if n.kernel == k && is_over(n.size) {
                    n.kernel = index;
                }
            }
        } else {
            *kernel = wrapped;
        }
    }
}

fn is_over(size: DispatchSize) -> bool {
    // `over count(b)` folds on the device exactly like `over E` on the host.
    matches!(size, DispatchSize::Invocations(_) | DispatchSize::Count(_))
}

/// The wrapped kernel, when the text transform works and naga validates
/// the result to an entry point of the same workgroup size.
fn checked_wrap(
    kernel: &KernelOut,
    entry: &EntryFacts,
    builtins: &[BuiltIn],
    caps: naga::valid::Capabilities,
) -> Option<KernelOut> {
    let wrapped = wrap(&kernel.source, &kernel.entry_point, builtins)?;
    let module = revalidate(&wrapped.source, caps)?;
    let still_entry = module.entry_points.iter().any(|ep| ep.name == entry.name);
    let ep = module
        .entry_points
        .iter()
        .find(|ep| ep.name == wrapped.entry_point)?;
    let same = ep.stage == ShaderStage::Compute
        && !still_entry
        && ep.workgroup_size == entry.workgroup_size
        && size_overrides(&ep.workgroup_size_overrides) == entry.size_overrides;
    same.then(|| KernelOut {
        source: wrapped.source,
        entry_point: wrapped.entry_point,
        fold: GridFold::Linear,
        ..kernel.clone()
    })
}

/// A wrapped module: the source and its new entry point.
#[derive(Debug)]
pub struct Wrapped {
    /// The user's text (entry attributes blanked) plus the new entry.
    pub source: String,
    /// The new entry point's name.
    pub entry_point: String,
}

/// The text transform alone (not validated): `None` when the entry point,
/// its attributes or its parameters are not where and what they must be,
/// or a builtin has no wrapper.
pub fn wrap(source: &str, entry: &str, builtins: &[BuiltIn]) -> Option<Wrapped> {
    let tokens = lex(source).complete()?;
    let fn_at = find_entry(source, &tokens, entry)?;
    let attrs = attributes_before(source, &tokens, fn_at);
    let compute: Vec<&Attr> = attrs.iter().filter(|a| a.name == "compute").collect();
    let sizes: Vec<&Attr> = attrs
        .iter()
        .filter(|a| a.name == "workgroup_size")
        .collect();
    let ([compute], [size]) = (compute.as_slice(), sizes.as_slice()) else {
        return None;
    };
    let (open, close) = size.args?;
    let size_args = source.get(tokens.get(open)?.end..tokens.get(close)?.start)?;
    let first_x = first_argument(source, &tokens, open, close)?;
    let mut blanked = vec![compute.bytes.clone(), size.bytes.clone()];
    let params = builtin_attributes(source, &tokens, fn_at)?;
    if params.len() != builtins.len() {
        return None;
    }
    blanked.extend(params);
    let prefix = fresh_prefix(source)?;
    let entry_point = format!("{prefix}linear_{entry}");
    let wrapper = wrapper(&prefix, &entry_point, entry, size_args, first_x, builtins)?;
    let mut out = blank(source, &blanked);
    out.push_str(&wrapper);
    Some(Wrapped {
        source: out,
        entry_point,
    })
}

/// The WGSL spelling and type of builtins passed through unchanged.
fn passthrough(b: BuiltIn) -> Option<(&'static str, &'static str)> {
    Some(match b {
        BuiltIn::LocalInvocationIndex => ("local_invocation_index", "u32"),
        BuiltIn::NumSubgroups => ("num_subgroups", "u32"),
        BuiltIn::SubgroupId => ("subgroup_id", "u32"),
        BuiltIn::SubgroupSize => ("subgroup_size", "u32"),
        BuiltIn::SubgroupInvocationId => ("subgroup_invocation_id", "u32"),
        _ => return None,
    })
}

/// The new entry point: it derives the linear workgroup index from the
/// (possibly folded) grid and calls the user's function with it.
fn wrapper(
    p: &str,
    name: &str,
    entry: &str,
    size_args: &str,
    first_x: &str,
    builtins: &[BuiltIn],
) -> Option<String> {
    let mut params = vec![
        format!("@builtin(workgroup_id) {p}wg: vec3<u32>"),
        format!("@builtin(num_workgroups) {p}nwg: vec3<u32>"),
        format!("@builtin(local_invocation_id) {p}l: vec3<u32>"),
    ];
    let mut extra: Vec<BuiltIn> = Vec::new();
    let mut args = Vec::new();
    for &b in builtins {
        args.push(match b {
            BuiltIn::GlobalInvocationId => {
                format!("vec3<u32>({p}lin * u32(({first_x})) + {p}l.x, {p}l.y, {p}l.z)")
            }
            BuiltIn::WorkGroupId => format!("vec3<u32>({p}lin, 0u, 0u)"),
            BuiltIn::NumWorkGroups => {
                format!("vec3<u32>({p}nwg.x * {p}nwg.y * {p}nwg.z, 1u, 1u)")
            }
            BuiltIn::LocalInvocationId => format!("{p}l"),
            other => {
                let (spelling, ty) = passthrough(other)?;
                let i = match extra.iter().position(|&e| e == other) {
                    Some(i) => i,
                    None => {
                        extra.push(other);
                        params.push(format!(
                            "@builtin({spelling}) {p}b{}: {ty}",
                            extra.len() - 1
                        ));
                        extra.len() - 1
                    }
                };
                format!("{p}b{i}")
            }
        });
    }
    Some(format!(
        "\n\n// Added by graph!: linear positions on a folded grid.\n\
         @compute @workgroup_size({size_args})\n\
         fn {name}({params}) {{\n    \
         let {p}lin = {p}wg.x + {p}nwg.x * ({p}wg.y + {p}nwg.y * {p}wg.z);\n    \
         {entry}({args});\n}}\n",
        params = params.join(", "),
        args = args.join(", "),
    ))
}

/// The text of the first argument of the attribute whose parentheses are
/// the tokens `open` and `close` (commas inside `(..)` or `[..]` do not
/// count); `None` when it is empty.
fn first_argument<'a>(
    src: &'a str,
    tokens: &[Token],
    open: usize,
    close: usize,
) -> Option<&'a str> {
    let mut depth = 0i32;
    let mut end = tokens.get(close)?.start;
    for t in tokens.get(open + 1..close)? {
        match t.kind {
            Kind::Punct(b'(' | b'[') => depth += 1,
            Kind::Punct(b')' | b']') => depth -= 1,
            Kind::Punct(b',') if depth == 0 => {
                end = t.start;
                break;
            }
            _ => {}
        }
    }
    let first = src.get(tokens.get(open)?.end..end)?;
    (!first.trim().is_empty()).then_some(first)
}

/// `src` with every character in `ranges` replaced by spaces (line breaks
/// kept): the same bytes offsets and lines as before.
fn blank(src: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(src.len() + 512);
    for (i, c) in src.char_indices() {
        if c != '\n' && c != '\r' && ranges.iter().any(|r| r.contains(&i)) {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}
