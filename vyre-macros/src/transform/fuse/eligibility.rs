//! Which kernels are element-wise, read off naga's IR of the user's module
//! (before folding wraps it).
//!
//! A kernel is element-wise when its entry point takes exactly
//! `@builtin(global_invocation_id)` and nothing else, its workgroup size is
//! `[x, 1, 1]`, the module declares no workgroup memory, no textures or
//! samplers and no `@id` overrides, and no function of the module has a
//! barrier, an atomic, a subgroup or ray-query operation, an image store or
//! a workgroup-uniform load. For each of its storage globals it then says
//! whether every access is at the invocation's own index: the global
//! appears only in the entry point, only as `Access { base: global, index:
//! <gid>.x }` (what `buf[g.x]` and `let i = g.x; buf[i]` lower to) or
//! `ArrayLength(global)`. Anything else (a constant index, another index, a
//! whole-array load or store, a pointer passed to a function) makes that
//! global "any index": the group it joins may only read it.

use std::collections::HashMap;

use naga::{
    AddressSpace, Binding, Block, BuiltIn, Expression, Function, Handle, Module, ScalarKind,
    ShaderStage, Statement, TypeInner, VectorSize,
};

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
    let args = &ep.function.arguments;
    let gid = match args.as_slice() {
        [arg] if arg.binding == Some(Binding::BuiltIn(BuiltIn::GlobalInvocationId)) => 0u32,
        _ => return Err("the entry point takes more than global_invocation_id"),
    };
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
    let mut storage = HashMap::new();
    for (h, g) in module.global_variables.iter() {
        if !matches!(g.space, AddressSpace::Storage { .. }) || g.binding.is_none() {
            continue;
        }
        let Some(name) = g.name.clone() else {
            return Err("an unnamed global");
        };
        let in_helpers = module.functions.iter().any(|(_, f)| mentions_global(f, h));
        let own_index = !in_helpers && own_index_only(&ep.function, h, gid);
        storage.insert(
            name,
            StorageFacts {
                own_index,
                array_type: array_type(module, g.ty),
            },
        );
    }
    Ok(ElementWise { storage })
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

fn mentions_global(f: &Function, h: Handle<naga::GlobalVariable>) -> bool {
    f.expressions
        .iter()
        .any(|(_, e)| matches!(e, Expression::GlobalVariable(g) if *g == h))
}

/// Whether every use of global `h` in `f` is `h[<arg gid>.x]` or
/// `arrayLength(&h)`.
fn own_index_only(f: &Function, h: Handle<naga::GlobalVariable>, gid: u32) -> bool {
    let expr = |e: Handle<Expression>| f.expressions.try_get(e).ok();
    let is_global =
        |e: Handle<Expression>| matches!(expr(e), Some(Expression::GlobalVariable(g)) if *g == h);
    let is_gid_x = |e: Handle<Expression>| match expr(e) {
        Some(Expression::AccessIndex { base, index: 0 }) => {
            matches!(expr(*base), Some(Expression::FunctionArgument(a)) if *a == gid)
        }
        _ => false,
    };
    for (_, e) in f.expressions.iter() {
        let ok = match *e {
            Expression::Access { base, index } => !is_global(base) || is_gid_x(index),
            Expression::AccessIndex { base, .. } => !is_global(base),
            Expression::Load { pointer } => !is_global(pointer),
            Expression::CooperativeLoad { .. } => false,
            _ => true,
        };
        if !ok {
            return false;
        }
    }
    statements_keep_global(&f.body, &is_global)
}

fn statements_keep_global(block: &Block, is_global: &dyn Fn(Handle<Expression>) -> bool) -> bool {
    block.iter().all(|s| match s {
        Statement::Store { pointer, .. } => !is_global(*pointer),
        Statement::Call { arguments, .. } => !arguments.iter().any(|&a| is_global(a)),
        Statement::Block(b) => statements_keep_global(b, is_global),
        Statement::If { accept, reject, .. } => {
            statements_keep_global(accept, is_global) && statements_keep_global(reject, is_global)
        }
        Statement::Switch { cases, .. } => cases
            .iter()
            .all(|c| statements_keep_global(&c.body, is_global)),
        Statement::Loop {
            body, continuing, ..
        } => {
            statements_keep_global(body, is_global) && statements_keep_global(continuing, is_global)
        }
        _ => true,
    })
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
