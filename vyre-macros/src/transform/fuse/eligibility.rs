//! Which kernels are element-wise, read off naga's IR of the user's module
//! (before folding wraps it).
//!
//! A kernel is element-wise when its entry point takes only builtins among
//! `global_invocation_id`, `workgroup_id`, `num_workgroups`,
//! `local_invocation_id` and `local_invocation_index` (each a plain
//! parameter), its workgroup size is `[x, 1, 1]`, the module declares no
//! workgroup memory, no textures or samplers and no `@id` overrides, and no
//! function of the module has a barrier, an atomic, a subgroup or
//! ray-query operation, an image store or a workgroup-uniform load. For
//! each of its storage globals it then says whether every access is at the
//! invocation's own index: in the entry point and every function it calls,
//! the global appears only as `Access { base: global, index }` whose index
//! *is* the invocation's linear index once the fold wrapper has run (see
//! [`super::index`]: `g.x`, `g.x + g.y * nwg.x * W`, `wid.x * W + lid.x`,
//! through `let`s and helper functions), or in `arrayLength(&global)`.
//! Anything else (another index, a whole-array load or store, a pointer
//! passed to a function) makes that global "any index": the group it joins
//! may only read it.

use std::collections::HashMap;

use naga::{
    AddressSpace, Binding, Block, BuiltIn, Handle, Module, ScalarKind, ShaderStage, Statement,
    TypeInner, VectorSize,
};

use super::index::{builtin_value, globals_off_own_index};
use super::symbolic::own_index;

/// What fusion needs to know about one kernel.
#[derive(Clone, Debug)]
pub struct KernelFacts {
    /// The user's source (before folding).
    pub source: String,
    /// The entry point.
    pub entry: String,
    /// `Ok` when element-wise, else why not (for tests).
    pub elementwise: Result<ElementWise, &'static str>,
}

/// An element-wise kernel's globals.
#[derive(Clone, Debug, Default)]
pub struct ElementWise {
    /// Storage globals with a binding, by name.
    pub storage: HashMap<String, StorageFacts>,
    /// The entry point's parameters, in order: the builtin each one is.
    pub builtins: Vec<BuiltIn>,
}

/// One storage global of an element-wise kernel.
#[derive(Clone, Debug)]
pub struct StorageFacts {
    /// Every access is at the invocation's own index.
    pub own_index: bool,
    /// `array<T>` with `T` a 32-bit scalar or vector, spelled from the IR:
    /// the type a shared (writable) binding is declared with.
    pub array_type: Option<String>,
}

/// The facts of entry point `entry` of `module`, whose text is `source`.
pub fn kernel_facts(module: &Module, source: &str, entry: &str) -> KernelFacts {
    KernelFacts {
        source: source.to_owned(),
        entry: entry.to_owned(),
        elementwise: elementwise(module, entry),
    }
}

fn elementwise(module: &Module, entry: &str) -> Result<ElementWise, &'static str> {
    let ep = module
        .entry_points
        .iter()
        .find(|ep| ep.name == entry && ep.stage == ShaderStage::Compute)
        .ok_or("no such entry point")?;
    let [_, y, z] = ep.workgroup_size;
    if ep.workgroup_size_overrides.is_none() && (y, z) != (1, 1) {
        return Err("workgroup size is not [x, 1, 1]");
    }
    let mut builtins = Vec::new();
    let mut args = Vec::new();
    let size_x = match &ep.workgroup_size_overrides {
        Some([Some(_), _, _]) => None,
        _ => Some(ep.workgroup_size[0]),
    };
    for arg in &ep.function.arguments {
        let value = match arg.binding {
            Some(Binding::BuiltIn(b)) => builtin_value(b, size_x).map(|v| (b, v)),
            _ => None,
        };
        let Some((b, value)) = value else {
            return Err(
                "the entry point takes a parameter other than global_invocation_id, \
                        workgroup_id, num_workgroups, local_invocation_id, local_invocation_index",
            );
        };
        builtins.push(b);
        args.push(Some(value));
    }
    if builtins.is_empty() {
        return Err("the entry point takes no invocation position");
    }
    for (_, g) in module.global_variables.iter() {
        match g.space {
            AddressSpace::WorkGroup => return Err("workgroup memory"),
            AddressSpace::Handle => return Err("textures or samplers"),
            AddressSpace::Storage { .. }
            | AddressSpace::Uniform
            | AddressSpace::Private
            | AddressSpace::Function => {}
            _ => return Err("an address space fusion does not handle"),
        }
    }
    if module.overrides.iter().any(|(_, o)| o.id.is_some()) {
        return Err("an override with @id");
    }
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(std::iter::once(&ep.function));
    for f in functions {
        allowed_block(&f.body)?;
    }
    // A kernel too large to follow is still element-wise; fusion may then
    // only read its buffers.
    let off = globals_off_own_index(module, &ep.function, args, &own_index(size_x));
    let mut storage = HashMap::new();
    for (h, g) in module.global_variables.iter() {
        if !matches!(g.space, AddressSpace::Storage { .. }) || g.binding.is_none() {
            continue;
        }
        let Some(name) = g.name.clone() else {
            return Err("an unnamed global");
        };
        storage.insert(
            name,
            StorageFacts {
                own_index: off.as_ref().is_some_and(|off| !off.contains(&h)),
                array_type: array_type(module, g.ty),
            },
        );
    }
    Ok(ElementWise { storage, builtins })
}

/// Only statements whose effects stay within the invocation.
fn allowed_block(block: &Block) -> Result<(), &'static str> {
    for s in block.iter() {
        match s {
            Statement::Emit(_)
            | Statement::Break
            | Statement::Continue
            | Statement::Return { .. }
            | Statement::Store { .. }
            | Statement::Call { .. } => {}
            Statement::Block(b) => allowed_block(b)?,
            Statement::If { accept, reject, .. } => {
                allowed_block(accept)?;
                allowed_block(reject)?;
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    allowed_block(&c.body)?;
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                allowed_block(body)?;
                allowed_block(continuing)?;
            }
            _ => return Err("a barrier, atomic, subgroup, image or kill statement"),
        }
    }
    Ok(())
}

/// `array<T>` (runtime-sized) with `T` a 32-bit scalar or vector.
fn array_type(module: &Module, ty: Handle<naga::Type>) -> Option<String> {
    let TypeInner::Array {
        base,
        size: naga::ArraySize::Dynamic,
        ..
    } = module.types.get_handle(ty).ok()?.inner
    else {
        return None;
    };
    let scalar = |s: naga::Scalar| match (s.kind, s.width) {
        (ScalarKind::Uint, 4) => Some("u32"),
        (ScalarKind::Sint, 4) => Some("i32"),
        (ScalarKind::Float, 4) => Some("f32"),
        _ => None,
    };
    let element = match module.types.get_handle(base).ok()?.inner {
        TypeInner::Scalar(s) => scalar(s)?.to_owned(),
        TypeInner::Vector { size, scalar: s } => {
            let n = match size {
                VectorSize::Bi => 2,
                VectorSize::Tri => 3,
                VectorSize::Quad => 4,
            };
            format!("vec{n}<{}>", scalar(s)?)
        }
        _ => return None,
    };
    Some(format!("array<{element}>"))
}
