//! Whether independent instances of a graph may run *stacked*: `B`
//! instances of size `n` as one run of size `B × n` over their buffers
//! laid one after another (the runtime's `Graph::run_batch`). Emitted as
//! data (`ScheduleSpec::stackable`); never an error.
//!
//! A graph is stackable when invocation `j` of instance `i`, run as
//! invocation `i × n + j` of the stacked run, does exactly what it did
//! alone:
//!
//! * every node runs `over n`, its kernel element-wise (the facts of
//!   `fuse/eligibility.rs`: only `global_invocation_id`, no barriers,
//!   atomics, workgroup memory, textures, `@id` overrides) and every
//!   storage global it binds accessed only at the invocation's own index;
//! * the invocation's index is used for nothing else than indexing those
//!   globals and comparing with `arrayLength` of one (the bounds check:
//!   `i × n + j < B × n` exactly when `j < n`): a kernel that computes with
//!   its index would see another number stacked;
//! * `arrayLength` is used for nothing else than that bounds check, in the
//!   entry point and in every function it calls: stacked, a buffer holds
//!   `B × n` elements, so a kernel that computes with a length (`x + len`,
//!   `x % arrayLength(&y)`) would see another number too;
//! * every buffer holds exactly `n` elements with no header, and none is
//!   an append buffer, a texture or a uniform (one value per instance);
//! * the graph has no self-stopping loop.
//!
//! Override values are constants of the graph (evaluated at compile time,
//! never from `n`), so they cannot tell instances apart. Fused groups are
//! made of such nodes, so the facts of the declared kernels decide.

use naga::{Expression, Handle, Module, ShaderStage, Statement};
use vyre_analysis::BufferClass;
use vyre_analysis::spec::{DispatchSize, Extent};

use super::fuse::KernelFacts;
use crate::model::GraphAnalysis;

/// Why `analysis` is not stackable, or `Ok` when it is. `facts[k]` and
/// `modules[k]` belong to declared kernel `k`; `node_kernels[i]` is node
/// `i`'s declared kernel.
pub fn stackable(
    analysis: &GraphAnalysis,
    facts: &[Option<KernelFacts>],
    modules: &[Option<&Module>],
    node_kernels: &[usize],
) -> Result<(), &'static str> {
    if !analysis.loops.is_empty() {
        return Err("a loop that stops itself");
    }
    for b in &analysis.buffers {
        if b.append.is_some() {
            return Err("an append buffer");
        }
        if b.texture.is_some() {
            return Err("a texture");
        }
        if b.class == BufferClass::Uniform {
            return Err("a uniform buffer");
        }
        if b.len != Extent::N || b.header_bytes != 0 {
            return Err("a buffer whose size is not exactly n elements");
        }
    }
    for (i, node) in analysis.nodes.iter().enumerate() {
        if node.size != DispatchSize::Invocations(Extent::N) {
            return Err("a node not over n");
        }
        let kernel = *node_kernels.get(i).ok_or("a node without a kernel")?;
        let facts = facts
            .get(kernel)
            .and_then(Option::as_ref)
            .ok_or("a kernel without facts")?;
        let elementwise = facts
            .elementwise
            .as_ref()
            .map_err(|_| "a kernel that is not element-wise")?;
        if !elementwise.storage.values().all(|s| s.own_index) {
            return Err("a kernel that reads or writes at another index than its own");
        }
        let module = modules
            .get(kernel)
            .copied()
            .flatten()
            .ok_or("a kernel without a module")?;
        if !index_only_indexes(module, &facts.entry) {
            return Err("a kernel that computes with its invocation index");
        }
        if !lengths_only_bound(module, &facts.entry) {
            return Err("a kernel that computes with `arrayLength`");
        }
    }
    Ok(())
}

/// Whether entry point `entry` uses `global_invocation_id` (its only
/// argument) only as `.x`, and `.x` only to index a global or to compare
/// with `arrayLength` of a global. Any expression or statement this does
/// not know makes it say no.
fn index_only_indexes(module: &Module, entry: &str) -> bool {
    let Some(ep) = module
        .entry_points
        .iter()
        .find(|ep| ep.name == entry && ep.stage == ShaderStage::Compute)
    else {
        return false;
    };
    let f = &ep.function;
    // Fusion also accepts entry points taking `workgroup_id`,
    // `num_workgroups` or `local_invocation_id`; their values change when
    // instances are stacked (`num_workgroups` of B × n is not that of n), so
    // a stacked kernel takes `global_invocation_id` alone.
    let only_global_id = matches!(
        f.arguments.as_slice(),
        [naga::FunctionArgument {
            binding: Some(naga::Binding::BuiltIn(naga::BuiltIn::GlobalInvocationId)),
            ..
        }]
    );
    if !only_global_id {
        return false;
    }
    let expr = |h: Handle<Expression>| f.expressions.try_get(h).ok();
    let is_arg = |h| matches!(expr(h), Some(Expression::FunctionArgument(0)));
    let is_x =
        |h| matches!(expr(h), Some(Expression::AccessIndex { base, index: 0 }) if is_arg(*base));
    let is_global = |h| matches!(expr(h), Some(Expression::GlobalVariable(_)));
    let is_length = |h| matches!(expr(h), Some(Expression::ArrayLength(g)) if is_global(*g));
    let index = |h| is_x(h) || is_arg(h);
    for (_, e) in f.expressions.iter() {
        let ok = match *e {
            Expression::AccessIndex { base, .. } => !is_arg(base) || is_x_of(e),
            Expression::Access { base, index: i } => {
                !index(base) && (!index(i) || (is_x(i) && is_global(base)))
            }
            Expression::Binary { op, left, right } => {
                let compare = matches!(
                    op,
                    naga::BinaryOperator::Less
                        | naga::BinaryOperator::LessEqual
                        | naga::BinaryOperator::Greater
                        | naga::BinaryOperator::GreaterEqual
                        | naga::BinaryOperator::Equal
                        | naga::BinaryOperator::NotEqual
                );
                match (index(left), index(right)) {
                    (false, false) => true,
                    (true, false) => compare && is_x(left) && is_length(right),
                    (false, true) => compare && is_x(right) && is_length(left),
                    (true, true) => false,
                }
            }
            // Every other kind this knows: the index in none of its operands.
            _ => operands(e).is_some_and(|ops| !ops.into_iter().any(index)),
        };
        if !ok {
            return false;
        }
    }
    statements_keep_index(&f.body, &index)
}

/// `.x` of the argument: the one component of it that may be used.
fn is_x_of(e: &Expression) -> bool {
    matches!(e, Expression::AccessIndex { index: 0, .. })
}

/// No statement uses the index (or the argument) as a value.
fn statements_keep_index(block: &naga::Block, index: &dyn Fn(Handle<Expression>) -> bool) -> bool {
    block.iter().all(|s| match s {
        Statement::Emit(_) | Statement::Break | Statement::Continue => true,
        Statement::Return { value } => value.is_none_or(|v| !index(v)),
        Statement::Store { pointer, value } => !index(*pointer) && !index(*value),
        Statement::Call { arguments, .. } => !arguments.iter().any(|&a| index(a)),
        Statement::Block(b) => statements_keep_index(b, index),
        Statement::If {
            condition,
            accept,
            reject,
        } => {
            !index(*condition)
                && statements_keep_index(accept, index)
                && statements_keep_index(reject, index)
        }
        Statement::Switch { selector, cases } => {
            !index(*selector) && cases.iter().all(|c| statements_keep_index(&c.body, index))
        }
        Statement::Loop {
            body,
            continuing,
            break_if,
        } => {
            break_if.is_none_or(|b| !index(b))
                && statements_keep_index(body, index)
                && statements_keep_index(continuing, index)
        }
        _ => false,
    })
}

/// Whether entry point `entry` uses `arrayLength` only as the bounds check
/// with its own index (`g.x < arrayLength(&x)`, either way round), and no
/// function it calls uses `arrayLength` at all (a helper never sees the
/// index: `index_only_indexes` refuses passing it). Runs after
/// `index_only_indexes`, so the entry point holds only the expressions and
/// statements that function knows.
fn lengths_only_bound(module: &Module, entry: &str) -> bool {
    let Some(ep) = module.entry_points.iter().find(|ep| ep.name == entry) else {
        return false;
    };
    let f = &ep.function;
    let expr = |h: Handle<Expression>| f.expressions.try_get(h).ok();
    let is_length = |h| matches!(expr(h), Some(Expression::ArrayLength(_)));
    let is_x = |h| {
        matches!(expr(h), Some(Expression::AccessIndex { base, index: 0 })
            if matches!(expr(*base), Some(Expression::FunctionArgument(0))))
    };
    for (_, e) in f.expressions.iter() {
        let ok = match *e {
            // `index_only_indexes` let the index into a comparison only
            // with a length on the other side: the bounds check.
            Expression::Binary { left, right, .. } if is_x(left) || is_x(right) => true,
            _ => operands(e).is_some_and(|ops| !ops.into_iter().any(is_length)),
        };
        if !ok {
            return false;
        }
    }
    let mut helpers = Vec::new();
    called(&f.body, &mut helpers);
    let mut seen = Vec::new();
    while let Some(h) = helpers.pop() {
        if seen.contains(&h) {
            continue;
        }
        seen.push(h);
        let Ok(helper) = module.functions.try_get(h) else {
            return false;
        };
        let uses_length = helper
            .expressions
            .iter()
            .any(|(_, e)| matches!(e, Expression::ArrayLength(_)));
        if uses_length {
            return false;
        }
        called(&helper.body, &mut helpers);
    }
    statements_keep_index(&f.body, &is_length)
}

/// The expressions `e` reads, for the kinds `index_only_indexes` accepts;
/// `None` for any other kind.
fn operands(e: &Expression) -> Option<Vec<Handle<Expression>>> {
    Some(match *e {
        Expression::Literal(_)
        | Expression::Constant(_)
        | Expression::Override(_)
        | Expression::ZeroValue(_)
        | Expression::FunctionArgument(_)
        | Expression::GlobalVariable(_)
        | Expression::LocalVariable(_)
        | Expression::CallResult(_) => Vec::new(),
        Expression::AccessIndex { base: a, .. }
        | Expression::Splat { value: a, .. }
        | Expression::Swizzle { vector: a, .. }
        | Expression::Load { pointer: a }
        | Expression::Unary { expr: a, .. }
        | Expression::Relational { argument: a, .. }
        | Expression::As { expr: a, .. }
        | Expression::ArrayLength(a) => vec![a],
        Expression::Access { base, index } => vec![base, index],
        Expression::Binary { left, right, .. } => vec![left, right],
        Expression::Compose { ref components, .. } => components.clone(),
        Expression::Select {
            condition,
            accept,
            reject,
        } => vec![condition, accept, reject],
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => std::iter::once(arg)
            .chain(arg1)
            .chain(arg2)
            .chain(arg3)
            .collect(),
        _ => return None,
    })
}

/// Every function `block` calls, nested blocks included, pushed to `out`.
fn called(block: &naga::Block, out: &mut Vec<Handle<naga::Function>>) {
    for s in block.iter() {
        match s {
            Statement::Call { function, .. } => out.push(*function),
            Statement::Block(b) => called(b, out),
            Statement::If { accept, reject, .. } => {
                called(accept, out);
                called(reject, out);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| called(&c.body, out)),
            Statement::Loop {
                body, continuing, ..
            } => {
                called(body, out);
                called(continuing, out);
            }
            _ => {}
        }
    }
}
