//! What an index *is*: each storage access of a kernel evaluated, on naga's
//! IR, to a polynomial in the invocation's position ([`super::symbolic`]),
//! under the guarantees the fold wrapper (`transform/fold.rs`) gives an
//! `over` kernel whose workgroup size is `[W, 1, 1]`:
//!
//! | builtin | value |
//! |---|---|
//! | `global_invocation_id` | `(wid * W + lid, 0, 0)` |
//! | `workgroup_id` | `(wid, 0, 0)` |
//! | `num_workgroups` | `(N, 1, 1)` |
//! | `local_invocation_id` | `(lid, 0, 0)` |
//! | `local_invocation_index` | `lid` |
//!
//! (`wid` the linear workgroup index, `lid` the local index, `N` the
//! workgroup count; an unfolded grid gives the same values.) An access is at
//! the invocation's own index when its index evaluates to `wid * W + lid`:
//! `g.x`, `g.x + g.y * nwg.x * W`, `wid.x * W + lid.x` and
//! `wid.x * W + lid.x + wid.y * nwg.x * W` all do, whatever `let` bindings
//! and helper functions carry them; `2u * g.x`, `g.x + 1u` or
//! `wid.x * 128u + lid.x` at `W = 64` do not.
//!
//! Expressions are evaluated in arena order (operands come first), once per
//! function and call site; a load of a `var` that holds one value (see
//! [`super::locals`]) is that value; integer-typed values the ring cannot
//! follow (a division, a buffer load, a `select` of two different values)
//! become opaque atoms, which is exact: `g.y * x` is zero whatever `x` is.

use std::collections::{HashMap, HashSet};

use naga::front::Typifier;
use naga::proc::ResolveContext;
use naga::{
    BinaryOperator, Block, BuiltIn, Expression, Function, GlobalVariable, Handle, Literal, Module,
    ScalarKind, Statement, TypeInner, UnaryOperator,
};

use super::symbolic::{Atom, Poly};

/// An integer value: a scalar or a vector's components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A `u32` or `i32`.
    Scalar(Poly),
    /// A `vecN<u32>` or `vecN<i32>`.
    Vector(Vec<Poly>),
}

/// The most functions evaluated for one kernel (each call site evaluates
/// its callee again, with its own arguments).
const MAX_FRAMES: u32 = 256;

/// What builtin `b` holds under the fold wrapper's guarantees (see the
/// module docs); `w` is the workgroup size's x (`None`: an override).
pub fn builtin_value(b: BuiltIn, w: Option<u32>) -> Option<Value> {
    let atom = |a| Poly::atom(a);
    let zero = Poly::default;
    Some(match b {
        BuiltIn::GlobalInvocationId => {
            Value::Vector(vec![super::symbolic::own_index(w), zero(), zero()])
        }
        BuiltIn::WorkGroupId => Value::Vector(vec![atom(Atom::WorkgroupX), zero(), zero()]),
        BuiltIn::NumWorkGroups => Value::Vector(vec![
            atom(Atom::Workgroups),
            Poly::constant(1),
            Poly::constant(1),
        ]),
        BuiltIn::LocalInvocationId => Value::Vector(vec![atom(Atom::LocalX), zero(), zero()]),
        BuiltIn::LocalInvocationIndex => Value::Scalar(atom(Atom::LocalX)),
        _ => return None,
    })
}

/// The globals some access of which, in `entry` or a function it calls,
/// is not at `own` (or is not an indexed access at all): the globals a
/// fused group may only read. `args` are the entry point's arguments'
/// values. `None` when the kernel is too large to follow.
pub fn globals_off_own_index(
    module: &Module,
    entry: &Function,
    args: Vec<Option<Value>>,
    own: &Poly,
) -> Option<HashSet<Handle<GlobalVariable>>> {
    let mut walk = Walk {
        module,
        own,
        frames: 0,
        off: HashSet::new(),
    };
    walk.frame(entry, args)?;
    Some(walk.off)
}

struct Walk<'m> {
    module: &'m Module,
    own: &'m Poly,
    frames: u32,
    off: HashSet<Handle<GlobalVariable>>,
}

/// A call statement: its function and arguments.
type Call<'m> = (Handle<Function>, &'m [Handle<Expression>]);

impl<'m> Walk<'m> {
    /// Evaluates `f` with `args`, checks its accesses and its calls; the
    /// value it returns when every `return` agrees.
    fn frame(&mut self, f: &'m Function, args: Vec<Option<Value>>) -> Option<Option<Value>> {
        self.frames += 1;
        if self.frames > MAX_FRAMES {
            return None;
        }
        let id = self.frames;
        let mut types = Typifier::new();
        if let Some((last, _)) = f.expressions.iter().last() {
            let ctx = ResolveContext::with_locals(self.module, &f.local_variables, &f.arguments);
            types.grow(last, &f.expressions, &ctx).ok()?;
        }
        let mut calls = HashMap::new();
        collect_calls(&f.body, &mut calls);
        // `var`s that hold one value: their loads are that value.
        let single = super::locals::single_stores(f);
        let stored: HashMap<Handle<Expression>, Handle<Expression>> = f
            .expressions
            .iter()
            .filter_map(|(h, e)| match e {
                Expression::LocalVariable(v) => single.get(v).map(|&value| (h, value)),
                _ => None,
            })
            .collect();
        let mut values: Vec<Option<Value>> = Vec::with_capacity(f.expressions.len());
        for (h, e) in f.expressions.iter() {
            // Every callee is walked (its accesses count) whatever it returns.
            let returned = match e {
                Expression::CallResult(_) => {
                    let &(function, arguments) = calls.get(&h)?;
                    self.call(function, arguments, &values)?
                }
                _ => None,
            };
            let v = shape(self.module, &types, h).map(|n| {
                let v = match e {
                    Expression::CallResult(_) => returned,
                    _ => Eval {
                        module: self.module,
                        values: &values,
                        args: &args,
                        types: &types,
                        stored: &stored,
                    }
                    .expression(h, e),
                };
                v.filter(|v| fits(v, n)).unwrap_or_else(|| opaque(id, h, n))
            });
            values.push(v);
        }
        self.check_accesses(f, &values);
        self.check_statements(&f.body, f, &values)?;
        Some(returned_value(&f.body, &values))
    }

    /// Evaluates callee `function` with the values of `arguments`.
    fn call(
        &mut self,
        function: Handle<Function>,
        arguments: &[Handle<Expression>],
        values: &[Option<Value>],
    ) -> Option<Option<Value>> {
        let callee = self.module.functions.try_get(function).ok()?;
        let args = arguments
            .iter()
            .map(|a| values.get(a.index()).cloned().flatten())
            .collect();
        self.frame(callee, args)
    }

    /// Marks every global `f` touches other than at `own`.
    fn check_accesses(&mut self, f: &Function, values: &[Option<Value>]) {
        let global = |e: Handle<Expression>| match f.expressions.try_get(e) {
            Ok(Expression::GlobalVariable(g)) => Some(*g),
            _ => None,
        };
        for (_, e) in f.expressions.iter() {
            match *e {
                Expression::Access { base, index } => {
                    if let Some(g) = global(base) {
                        let at = values.get(index.index()).cloned().flatten();
                        if at.as_ref() != Some(&Value::Scalar(self.own.clone())) {
                            self.off.insert(g);
                        }
                    }
                }
                Expression::AccessIndex { base, .. } | Expression::Load { pointer: base } => {
                    self.off.extend(global(base));
                }
                Expression::CooperativeLoad { .. } => {
                    self.off
                        .extend(self.module.global_variables.iter().map(|(g, _)| g));
                }
                _ => {}
            }
        }
    }

    /// Whole-global stores and globals passed to a function mark the
    /// global; the callee of each call without a result is walked (those
    /// with one were, with their result).
    fn check_statements(
        &mut self,
        block: &'m Block,
        f: &'m Function,
        values: &[Option<Value>],
    ) -> Option<()> {
        let global = |e: Handle<Expression>| match f.expressions.try_get(e) {
            Ok(Expression::GlobalVariable(g)) => Some(*g),
            _ => None,
        };
        for s in block.iter() {
            match s {
                Statement::Store { pointer, .. } => self.off.extend(global(*pointer)),
                Statement::Call {
                    function,
                    arguments,
                    result,
                } => {
                    self.off.extend(arguments.iter().filter_map(|&a| global(a)));
                    if result.is_none() {
                        self.call(*function, arguments, values)?;
                    }
                }
                Statement::Block(b) => self.check_statements(b, f, values)?,
                Statement::If { accept, reject, .. } => {
                    self.check_statements(accept, f, values)?;
                    self.check_statements(reject, f, values)?;
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        self.check_statements(&c.body, f, values)?;
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    self.check_statements(body, f, values)?;
                    self.check_statements(continuing, f, values)?;
                }
                _ => {}
            }
        }
        Some(())
    }
}

/// Every call with a result, by its result expression.
fn collect_calls<'m>(block: &'m Block, out: &mut HashMap<Handle<Expression>, Call<'m>>) {
    for s in block.iter() {
        match s {
            Statement::Call {
                function,
                arguments,
                result: Some(r),
            } => {
                out.insert(*r, (*function, arguments.as_slice()));
            }
            Statement::Block(b) => collect_calls(b, out),
            Statement::If { accept, reject, .. } => {
                collect_calls(accept, out);
                collect_calls(reject, out);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    collect_calls(&c.body, out);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                collect_calls(body, out);
                collect_calls(continuing, out);
            }
            _ => {}
        }
    }
}

/// The value every `return` of `block` gives, when they all agree.
fn returned_value(block: &Block, values: &[Option<Value>]) -> Option<Value> {
    let mut found: Vec<Option<Value>> = Vec::new();
    collect_returns(block, values, &mut found);
    let first = found.first()?.clone()?;
    found
        .iter()
        .all(|v| v.as_ref() == Some(&first))
        .then_some(first)
}

fn collect_returns(block: &Block, values: &[Option<Value>], out: &mut Vec<Option<Value>>) {
    for s in block.iter() {
        match s {
            Statement::Return { value } => {
                out.push(value.and_then(|v| values.get(v.index()).cloned().flatten()));
            }
            Statement::Block(b) => collect_returns(b, values, out),
            Statement::If { accept, reject, .. } => {
                collect_returns(accept, values, out);
                collect_returns(reject, values, out);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    collect_returns(&c.body, values, out);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                collect_returns(body, values, out);
                collect_returns(continuing, values, out);
            }
            _ => {}
        }
    }
}

/// `Some(0)` for a 32-bit integer scalar, `Some(n)` for an integer
/// `vecN`, `None` for any other type.
fn shape(module: &Module, types: &Typifier, h: Handle<Expression>) -> Option<usize> {
    let int32 =
        |s: naga::Scalar| matches!(s.kind, ScalarKind::Uint | ScalarKind::Sint) && s.width == 4;
    match types.get(h, &module.types) {
        TypeInner::Scalar(s) if int32(*s) => Some(0),
        TypeInner::Vector { size, scalar } if int32(*scalar) => Some(*size as usize),
        _ => None,
    }
}

fn fits(v: &Value, n: usize) -> bool {
    match v {
        Value::Scalar(_) => n == 0,
        Value::Vector(c) => c.len() == n && n > 0,
    }
}

/// The value of expression `h` of frame `id`, not followed.
fn opaque(id: u32, h: Handle<Expression>, n: usize) -> Value {
    let atom = |c: u8| Poly::atom(Atom::Opaque(id, h.index(), c));
    match n {
        0 => Value::Scalar(atom(0)),
        n => Value::Vector((0..n).map(|c| atom(c as u8)).collect()),
    }
}

/// Evaluates one expression from its operands' values.
struct Eval<'a> {
    module: &'a Module,
    values: &'a [Option<Value>],
    args: &'a [Option<Value>],
    types: &'a Typifier,
    /// Pointers to single-value `var`s and the value each holds.
    stored: &'a HashMap<Handle<Expression>, Handle<Expression>>,
}

impl Eval<'_> {
    fn value(&self, h: Handle<Expression>) -> Option<&Value> {
        self.values.get(h.index())?.as_ref()
    }

    fn scalar(&self, h: Handle<Expression>) -> Option<&Poly> {
        match self.value(h)? {
            Value::Scalar(p) => Some(p),
            Value::Vector(_) => None,
        }
    }

    fn expression(&self, h: Handle<Expression>, e: &Expression) -> Option<Value> {
        match *e {
            Expression::Literal(l) => literal(l).map(Value::Scalar),
            Expression::Constant(c) => {
                let init = self.module.constants.try_get(c).ok()?.init;
                const_value(self.module, init, 0)
            }
            Expression::Override(o) => Some(Value::Scalar(Poly::atom(Atom::Override(o.index())))),
            Expression::ZeroValue(_) => {
                let n = shape(self.module, self.types, h)?;
                Some(zeros(n))
            }
            Expression::FunctionArgument(i) => self.args.get(i as usize).cloned().flatten(),
            Expression::AccessIndex { base, index } => match self.value(base)? {
                Value::Vector(c) => c.get(index as usize).cloned().map(Value::Scalar),
                Value::Scalar(_) => None,
            },
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let Value::Vector(c) = self.value(vector)? else {
                    return None;
                };
                let picked = pattern
                    .iter()
                    .take(size as usize)
                    .map(|&s| c.get(s as usize).cloned())
                    .collect::<Option<Vec<_>>>()?;
                Some(Value::Vector(picked))
            }
            Expression::Compose { ref components, .. } => {
                let mut out = Vec::new();
                for &c in components {
                    match self.value(c)? {
                        Value::Scalar(p) => out.push(p.clone()),
                        Value::Vector(v) => out.extend(v.iter().cloned()),
                    }
                }
                Some(Value::Vector(out))
            }
            Expression::Splat { size, value } => Some(Value::Vector(vec![
                self.scalar(value)?
                    .clone();
                size as usize
            ])),
            Expression::Binary { op, left, right } => {
                binary(op, self.value(left)?, self.value(right)?)
            }
            Expression::Unary { op, expr } => {
                let f = |p: &Poly| match op {
                    UnaryOperator::Negate => Some(p.neg()),
                    // !x == -x - 1 in two's complement.
                    UnaryOperator::BitwiseNot => p.neg().sub(&Poly::constant(1)),
                    UnaryOperator::LogicalNot => None,
                };
                map(self.value(expr)?, f)
            }
            Expression::As {
                expr,
                kind: ScalarKind::Uint | ScalarKind::Sint,
                convert: None | Some(4),
            } => {
                // Between 32-bit integers both conversions keep the bits;
                // from anything else the operand has no value here.
                self.value(expr).cloned()
            }
            Expression::Load { pointer } => self.value(*self.stored.get(&pointer)?).cloned(),
            Expression::Select { accept, reject, .. } => {
                let (a, r) = (self.value(accept)?, self.value(reject)?);
                (a == r).then(|| a.clone())
            }
            _ => None,
        }
    }
}

fn literal(l: Literal) -> Option<Poly> {
    Some(Poly::constant(match l {
        Literal::U32(v) => v,
        Literal::I32(v) => v as u32,
        Literal::AbstractInt(v) => v as u32,
        _ => return None,
    }))
}

fn zeros(n: usize) -> Value {
    match n {
        0 => Value::Scalar(Poly::default()),
        n => Value::Vector(vec![Poly::default(); n]),
    }
}

/// A module-scope constant's value (literals, zeros, composites, splats).
fn const_value(module: &Module, h: Handle<Expression>, depth: u32) -> Option<Value> {
    if depth > 8 {
        return None;
    }
    match *module.global_expressions.try_get(h).ok()? {
        Expression::Literal(l) => literal(l).map(Value::Scalar),
        Expression::Constant(c) => {
            const_value(module, module.constants.try_get(c).ok()?.init, depth + 1)
        }
        Expression::ZeroValue(ty) => match module.types.get_handle(ty).ok()?.inner {
            TypeInner::Scalar(_) => Some(zeros(0)),
            TypeInner::Vector { size, .. } => Some(zeros(size as usize)),
            _ => None,
        },
        Expression::Compose { ref components, .. } => {
            let mut out = Vec::new();
            for &c in components {
                match const_value(module, c, depth + 1)? {
                    Value::Scalar(p) => out.push(p),
                    Value::Vector(v) => out.extend(v),
                }
            }
            Some(Value::Vector(out))
        }
        Expression::Splat { size, value } => match const_value(module, value, depth + 1)? {
            Value::Scalar(p) => Some(Value::Vector(vec![p; size as usize])),
            Value::Vector(_) => None,
        },
        _ => None,
    }
}

fn map(v: &Value, f: impl Fn(&Poly) -> Option<Poly>) -> Option<Value> {
    match v {
        Value::Scalar(p) => f(p).map(Value::Scalar),
        Value::Vector(c) => c.iter().map(f).collect::<Option<_>>().map(Value::Vector),
    }
}

/// `left op right` for the ring operations (a scalar meets a vector
/// componentwise); `None` for the rest.
fn binary(op: BinaryOperator, left: &Value, right: &Value) -> Option<Value> {
    let f = |a: &Poly, b: &Poly| match op {
        BinaryOperator::Add => a.add(b),
        BinaryOperator::Subtract => a.sub(b),
        BinaryOperator::Multiply => a.mul(b),
        // `<<` by a known amount is a product (WGSL takes the amount
        // modulo 32 for 32-bit values).
        BinaryOperator::ShiftLeft => a.mul(&Poly::constant(1u32 << (b.as_constant()? & 31))),
        _ => None,
    };
    match (left, right) {
        (Value::Scalar(a), Value::Scalar(b)) => f(a, b).map(Value::Scalar),
        (Value::Vector(a), Value::Scalar(b)) => a
            .iter()
            .map(|x| f(x, b))
            .collect::<Option<_>>()
            .map(Value::Vector),
        (Value::Scalar(a), Value::Vector(b)) => b
            .iter()
            .map(|y| f(a, y))
            .collect::<Option<_>>()
            .map(Value::Vector),
        (Value::Vector(a), Value::Vector(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .map(|(x, y)| f(x, y))
            .collect::<Option<_>>()
            .map(Value::Vector),
        _ => None,
    }
}
