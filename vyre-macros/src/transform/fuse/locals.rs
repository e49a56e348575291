//! Local variables that hold one value: `var i = g.x + ..;` never assigned
//! again. A load of such a variable is the value stored, when that holds
//! for every execution: the variable is stored exactly once, every load of
//! it is emitted after that store in the store's own block (or in a block
//! nested in a later statement of it), and no pointer to it goes anywhere
//! else (an element access, a function argument). Then each load reads the
//! value the store wrote in the same pass through that block.

use std::collections::{HashMap, HashSet};

use naga::{Block, Expression, Function, Handle, LocalVariable, Statement};

/// For each single-value variable of `f`, the expression its one store
/// writes.
pub fn single_stores(f: &Function) -> HashMap<Handle<LocalVariable>, Handle<Expression>> {
    let mut var_of: HashMap<Handle<Expression>, Handle<LocalVariable>> = HashMap::new();
    for (h, e) in f.expressions.iter() {
        if let Expression::LocalVariable(v) = *e {
            var_of.insert(h, v);
        }
    }
    let mut refused: HashSet<Handle<LocalVariable>> = HashSet::new();
    let mut loads: HashMap<Handle<LocalVariable>, Vec<Handle<Expression>>> = HashMap::new();
    for (h, e) in f.expressions.iter() {
        match *e {
            Expression::Load { pointer } => {
                if let Some(&v) = var_of.get(&pointer) {
                    loads.entry(v).or_default().push(h);
                }
            }
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                refused.extend(var_of.get(&base));
            }
            _ => {}
        }
    }
    let mut stores = Stores::new();
    collect_stores(&f.body, &var_of, &mut stores, &mut refused);
    let mut out = HashMap::new();
    for (v, list) in stores {
        let [(value, after)] = list.as_slice() else {
            continue;
        };
        let init = f.local_variables.try_get(v).map(|l| l.init.is_some());
        if refused.contains(&v) || init != Ok(false) {
            continue;
        }
        let all_after = loads
            .get(&v)
            .is_none_or(|l| l.iter().all(|h| after.contains(h)));
        if all_after {
            out.insert(v, *value);
        }
    }
    out
}

/// By variable: each store's value and the expressions emitted after it
/// in its block.
type Stores = HashMap<Handle<LocalVariable>, Vec<(Handle<Expression>, After)>>;

/// Expressions emitted after a statement in its block.
type After = HashSet<Handle<Expression>>;

/// Each store to a variable, with the expressions emitted after it in its
/// block; variables passed to a function are refused.
fn collect_stores(
    block: &Block,
    var_of: &HashMap<Handle<Expression>, Handle<LocalVariable>>,
    stores: &mut Stores,
    refused: &mut HashSet<Handle<LocalVariable>>,
) {
    let statements: Vec<&Statement> = block.iter().collect();
    for (k, s) in statements.iter().enumerate() {
        match s {
            Statement::Store { pointer, value } => {
                if let Some(&v) = var_of.get(pointer) {
                    let mut after = HashSet::new();
                    for later in statements.iter().skip(k + 1) {
                        emitted(later, &mut after);
                    }
                    stores.entry(v).or_default().push((*value, after));
                }
            }
            Statement::Call { arguments, .. } => {
                refused.extend(arguments.iter().filter_map(|a| var_of.get(a)));
            }
            _ => {}
        }
        for inner in nested(s) {
            collect_stores(inner, var_of, stores, refused);
        }
    }
}

/// The blocks directly inside statement `s`.
fn nested(s: &Statement) -> Vec<&Block> {
    match s {
        Statement::Block(b) => vec![b],
        Statement::If { accept, reject, .. } => vec![accept, reject],
        Statement::Switch { cases, .. } => cases.iter().map(|c| &c.body).collect(),
        Statement::Loop {
            body, continuing, ..
        } => vec![body, continuing],
        _ => Vec::new(),
    }
}

/// Every expression emitted by `s` or inside it.
fn emitted(s: &Statement, out: &mut HashSet<Handle<Expression>>) {
    if let Statement::Emit(range) = s {
        out.extend(range.clone());
    }
    for b in nested(s) {
        for inner in b.iter() {
            emitted(inner, out);
        }
    }
}
