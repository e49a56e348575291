//! Linking a kernel that imports from other WESL modules ([`link`]), with
//! the `wesl` crate: imports, conditional translation (`@if`) and name
//! mangling, then a map from every token of the linked WGSL back to the
//! module and byte range it came from ([`Linked::unlink`]).
//!
//! A kernel whose text has no `import` statement, no `@if`/`@elif`/
//! `@else` attribute and no inline path (`a::b`) is never linked
//! ([`needs_link`]): naga sees exactly the text the user wrote.
//!
//! Modules are addressed as WESL paths: `package::NAME` is a module
//! declared in the graph (`module NAME = ...;`), any other `package::a::b`
//! the file `a/b.wesl` (or `a/b.wgsl`) under the crate's manifest
//! directory. A kernel's own path is `package::NAME` (its name) or, for a
//! `file` kernel, its file's path, so `super::` works from both.
//!
//! # Plain data only
//!
//! Linking runs on a thread of its own (`vyre-link`, a large stack: the
//! WESL parser recurses); like `worker.rs` it takes and returns strings,
//! paths and byte ranges only, and names no `proc_macro`, `proc_macro2`,
//! `syn` or `quote` item (`tests::threads` checks it).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

pub use crate::model::link::{Linked, Unit, UnitInfo};
use wesl::syntax::{GlobalDeclaration, ImportContent, ModulePath, PathOrigin, TranslationUnit};
use wesl::{CompileOptions, EscapeMangler, Feature, Features, Mangler, ResolveError, Resolver};

mod align;
mod names;

use crate::model::lex::token_ranges;
use align::align_all;
use names::decl_name;

/// Stack for the WESL parser and linker.
const LINK_STACK: usize = 64 << 20;

/// What a kernel is linked from: plain data.
pub struct LinkInput {
    /// The kernel's own WGSL.
    pub root: String,
    /// The kernel's module path components (`[name]`, or a file's path).
    pub root_path: Vec<String>,
    /// Modules declared in the graph: name and WGSL.
    pub modules: Vec<(String, String)>,
    /// Where `package::a::b` files are looked up: the manifest directory,
    /// then (when not found there) the directory of the source file that
    /// invokes `graph!`, as for `file` kernels.
    pub base: PathBuf,
    /// The directory of the source file that invokes `graph!`, if known.
    pub beside: Option<PathBuf>,
    /// Conditional translation flags and whether each is on.
    pub flags: Vec<(String, bool)>,
}

/// Why a kernel could not be linked: plain data.
#[derive(Debug)]
pub struct LinkError {
    /// What went wrong.
    pub message: String,
    /// The module at fault (index into `units`) and a byte range of its text.
    pub at: Option<(usize, Range<usize>)>,
    /// A wanted name and the names it could have meant (for a did-you-mean).
    pub wanted: Option<(String, Vec<String>)>,
    /// Every module read before the error.
    pub units: Vec<UnitInfo>,
    /// Files the modules read name in their `import` statements (tracked
    /// for rebuilds, so fixing one rebuilds the crate).
    pub mentioned: Vec<PathBuf>,
}

/// Whether `source` uses WESL: an `import` statement, an `@if`, `@elif`
/// or `@else` attribute, or an inline path such as `package::rng::hash`
/// (`::`, which plain WGSL never writes) (comments skipped).
pub fn needs_link(source: &str) -> bool {
    let tokens = token_ranges(source);
    tokens.iter().enumerate().any(|(i, t)| {
        let text = source.get(t.clone()).unwrap_or_default();
        let prev = i.checked_sub(1).and_then(|p| tokens.get(p));
        let prev_text = prev.and_then(|r| source.get(r.clone()));
        let path = text == ":" && prev_text == Some(":") && prev.is_some_and(|p| p.end == t.start);
        path || (text == "import" && matches!(prev_text, None | Some(";" | "}")))
            || (matches!(text, "if" | "elif" | "else") && prev_text == Some("@"))
    })
}

/// Links `input` on the `vyre-link` thread. `None` when the linker panicked.
pub fn link(input: LinkInput) -> Option<Result<Linked, Box<LinkError>>> {
    std::thread::Builder::new()
        .name("vyre-link".into())
        .stack_size(LINK_STACK)
        .spawn(move || link_here(&input))
        .ok()?
        .join()
        .ok()
}

/// The modules a link may read, recording each one it reads.
struct Sources<'a> {
    input: &'a LinkInput,
    root: ModulePath,
    read: RefCell<Vec<(ModulePath, Unit, String)>>,
}

impl Sources<'_> {
    fn find(&self, path: &ModulePath) -> Result<(Unit, String), ResolveError> {
        if *path == self.root {
            return Ok((Unit::Root, self.input.root.clone()));
        }
        if !matches!(path.origin, PathOrigin::Absolute) {
            return Err(ResolveError::ModuleNotFound(
                path.clone(),
                format!(
                    "a path names a module of this crate as `package::{path}` or `super::{path}`, and WGSL itself has no `::`; modules of other crates (WESL packages) are not supported by graph! yet"
                ),
            ));
        }
        if let [one] = path.components.as_slice()
            && let Some(i) = self.input.modules.iter().position(|(n, _)| n == one)
        {
            let text = self.input.modules.get(i).map(|m| m.1.clone());
            return Ok((Unit::Graph(i), text.unwrap_or_default()));
        }
        let file = module_file(&self.input.base, &path.components)
            .or_else(|| {
                let beside = self.input.beside.as_ref()?;
                module_file(beside, &path.components)
            })
            .ok_or_else(|| {
                let file = path.components.join("/");
                let graph = match path.components.as_slice() {
                    [one] => format!("it is not a module of the graph (`module {one} = ...;`) and "),
                    _ => String::new(),
                };
                ResolveError::ModuleNotFound(
                    path.clone(),
                    format!("{graph}there is no file `{file}.wesl` or `{file}.wgsl` in the crate's manifest directory or beside the source file that invokes graph!"),
                )
            })?;
        let text = std::fs::read_to_string(&file)
            .map_err(|e| ResolveError::FileNotFound(file.clone(), e.to_string()))?;
        Ok((Unit::File(file), text))
    }
}

/// `base/a/b.wesl`, else `base/a/b.wgsl`, when one exists.
fn module_file(base: &Path, components: &[String]) -> Option<PathBuf> {
    let mut path = base.to_path_buf();
    path.extend(components);
    ["wesl", "wgsl"]
        .into_iter()
        .map(|ext| path.with_extension(ext))
        .find(|p| p.is_file())
}

impl Resolver for Sources<'_> {
    fn resolve_source<'b>(&'b self, path: &ModulePath) -> Result<Cow<'b, str>, ResolveError> {
        let (unit, text) = self.find(path)?;
        let mut read = self.read.borrow_mut();
        if !read.iter().any(|(p, _, _)| p == path) {
            read.push((path.clone(), unit, text.clone()));
        }
        Ok(Cow::Owned(text))
    }
}

fn link_here(input: &LinkInput) -> Result<Linked, Box<LinkError>> {
    let root = ModulePath::new(PathOrigin::Absolute, input.root_path.clone());
    let sources = Sources {
        input,
        root: root.clone(),
        read: RefCell::new(Vec::new()),
    };
    // The kernel's own declarations are all kept (as in a kernel that
    // does not import: unused bindings and overrides stay visible); of the
    // modules, only what the kernel reaches.
    let options = CompileOptions {
        keep_root: true,
        features: Features {
            default: Feature::Disable,
            flags: input
                .flags
                .iter()
                .map(|(name, on)| (name.clone(), Feature::from(*on)))
                .collect(),
        },
        ..CompileOptions::default()
    };
    let result = wesl::compile(&root, &sources, &EscapeMangler, &options);
    let read = sources.read.take();
    let units = units_of(&read);
    let mentioned = || {
        let mut files: Vec<PathBuf> = units
            .iter()
            .flat_map(|u| mentioned_files(&u.text, input))
            .collect();
        files.dedup();
        files
    };
    if let Some(cycle) = find_cycle(&units) {
        let at = cycle.first().and_then(|from| {
            let unit = units
                .iter()
                .position(|u| format!("`{}`", u.path) == *from)?;
            let to = cycle.get(1)?.trim_matches('`');
            let word = to.rsplit("::").next()?;
            Some((unit, import_statement(&units.get(unit)?.text, word)?))
        });
        return Err(Box::new(LinkError {
            message: format!(
                "import cycle: {}; a module cannot import (directly or through others) a module that imports it",
                cycle.join(" imports ")
            ),
            at,
            wanted: None,
            mentioned: mentioned(),
            units,
        }));
    }
    let linked = match result {
        Ok(linked) => linked,
        Err(e) => {
            let mentioned = mentioned();
            let mut e = match wrong_import_instead(&e, &units, &sources) {
                Some(wrong) => wrong,
                None => link_error(e, units, &input.modules),
            };
            e.mentioned = mentioned;
            return Err(Box::new(e));
        }
    };
    let mut text = linked.syntax.to_string();
    let names = unmangle_structs(&mut text, &linked.syntax, &units);
    let pieces = align_all(&text, &units, &names);
    Ok(Linked {
        text,
        units,
        pieces,
    })
}

/// The modules read, the kernel first, each with its import chain.
fn units_of(read: &[(ModulePath, Unit, String)]) -> Vec<UnitInfo> {
    let mut units: Vec<UnitInfo> = read
        .iter()
        .map(|(path, unit, text)| UnitInfo {
            unit: unit.clone(),
            path: path.to_string(),
            text: text.clone(),
            chain: Vec::new(),
        })
        .collect();
    units.sort_by_key(|u| u.unit != Unit::Root);
    // Breadth first from the kernel: each module's chain is its importer's
    // chain and the importer.
    let edges = edges(&units);
    let mut seen = vec![false; units.len()];
    let mut queue = std::collections::VecDeque::from([0usize]);
    if let Some(s) = seen.get_mut(0) {
        *s = true;
    }
    while let Some(at) = queue.pop_front() {
        let Some(targets) = edges.get(at) else {
            continue;
        };
        let mut chain = units.get(at).map(|u| u.chain.clone()).unwrap_or_default();
        chain.push(units.get(at).map(|u| u.path.clone()).unwrap_or_default());
        for &t in targets {
            if let Some(s) = seen.get_mut(t)
                && !*s
            {
                *s = true;
                if let Some(u) = units.get_mut(t) {
                    u.chain = chain.clone();
                }
                queue.push_back(t);
            }
        }
    }
    units
}

/// For each unit, the units it imports from (by index).
fn edges(units: &[UnitInfo]) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> = units
        .iter()
        .enumerate()
        .map(|(i, u)| (u.path.as_str(), i))
        .collect();
    units
        .iter()
        .map(|u| {
            let Ok(here) = u.path.parse::<ModulePath>() else {
                return Vec::new();
            };
            let Ok(tu) = u.text.parse::<TranslationUnit>() else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for import in &tu.imports {
                let Some(path) = &import.path else { continue };
                let base = here.join_path(path);
                let mut found = Vec::new();
                collect_targets(&import.content, base, &mut found);
                for target in found {
                    if let Some(&i) = index.get(target.to_string().as_str())
                        && !out.contains(&i)
                    {
                        out.push(i);
                    }
                }
            }
            out
        })
        .collect()
}

/// The module paths an import names: the path before each item, and the
/// path with the item (the item may itself be a module).
fn collect_targets(content: &ImportContent, base: ModulePath, out: &mut Vec<ModulePath>) {
    match content {
        ImportContent::Item(item) => {
            out.push(base.clone());
            out.push(base.join([item.ident.to_string()]));
        }
        ImportContent::Collection(list) => {
            for import in list {
                let path = base.clone().join(import.path.iter().cloned());
                collect_targets(&import.content, path, out);
            }
        }
    }
}

/// A cycle among the modules' imports, as paths (first = last).
fn find_cycle(units: &[UnitInfo]) -> Option<Vec<String>> {
    let edges = edges(units);
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; units.len()];
    for start in 0..units.len() {
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if *next == 0 {
                if state.get(node) == Some(&2) {
                    stack.pop();
                    continue;
                }
                if let Some(s) = state.get_mut(node) {
                    *s = 1;
                }
            }
            let target = edges.get(node).and_then(|t| t.get(*next)).copied();
            *next += 1;
            match target {
                Some(t) if state.get(t) == Some(&1) => {
                    let from = stack.iter().position(|(n, _)| *n == t).unwrap_or(0);
                    let mut cycle: Vec<String> = stack
                        .get(from..)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|(n, _)| units.get(*n).map(|u| format!("`{}`", u.path)))
                        .collect();
                    cycle.push(units.get(t).map(|u| format!("`{}`", u.path))?);
                    return Some(cycle);
                }
                Some(t) if state.get(t) == Some(&0) => stack.push((t, 0)),
                Some(_) => {}
                None => {
                    if let Some(s) = state.get_mut(node) {
                        *s = 2;
                    }
                    stack.pop();
                }
            }
        }
    }
    None
}

/// The error of a failed link, placed in the module at fault when known.
fn link_error(e: wesl::Error, units: Vec<UnitInfo>, modules: &[(String, String)]) -> LinkError {
    let diag = wesl::Diagnostic::from(e);
    let unit_of = |path: &ModulePath| units.iter().position(|u| u.path == path.to_string());
    let mut at = None;
    let mut wanted = None;
    let message = match &*diag.error {
        wesl::Error::ImportError(wesl::ImportError::MissingDecl(path, item)) => {
            let candidates = unit_of(path)
                .and_then(|i| units.get(i))
                .map(|u| decl_names(&u.text))
                .unwrap_or_default();
            wanted = Some((item.clone(), candidates));
            at = importer_site(&diag, &units, item);
            format!("module `{path}` has no declaration `{item}`")
        }
        wesl::Error::ResolveError(
            ResolveError::FileNotFound(_, _) | ResolveError::ModuleNotFound(_, _),
        ) => {
            let (path, why) = match &*diag.error {
                wesl::Error::ResolveError(ResolveError::ModuleNotFound(p, why)) => {
                    (p.to_string(), why.clone())
                }
                wesl::Error::ResolveError(ResolveError::FileNotFound(file, _)) => {
                    (file.display().to_string(), String::new())
                }
                _ => (String::new(), String::new()),
            };
            let last = path
                .rsplit("::")
                .next()
                .unwrap_or_default()
                .trim_end_matches(".wesl")
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            at = importer_site(&diag, &units, &last).or_else(|| {
                // No `import`: an inline path (`package::rgn::hash(x)`).
                (0..units.len()).find_map(|u| Some((u, inline_path(&units.get(u)?.text, &last)?)))
            });
            if let Ok(p) = path.parse::<ModulePath>()
                && let [one] = p.components.as_slice()
            {
                let names = modules.iter().map(|(n, _)| n.clone());
                wanted = Some((one.clone(), names.collect()));
            }
            if why.is_empty() {
                format!(
                    "cannot find the module imported here: no graph module of that name and no file `{path}` (nor `.wgsl`)"
                )
            } else {
                format!("cannot find module `{path}`: {why}")
            }
        }
        other => {
            if let (Some(path), Some(span)) = (&diag.detail.module_path, &diag.detail.span) {
                at = unit_of(path).map(|i| (i, span.start..span.end));
            }
            match other {
                wesl::Error::ParseError(p) => {
                    let what = p.error.to_string();
                    // The parser's list of every token it expected is noise.
                    let what = what.split(", expected `").next().unwrap_or_default();
                    format!("syntax error: {what}")
                }
                other => other.to_string(),
            }
        }
    };
    LinkError {
        message,
        at,
        wanted,
        units,
        mentioned: Vec::new(),
    }
}

/// For a link that failed on a name used but declared nowhere, an import
/// that names nothing, when there is one: that import is the mistake (its
/// item misspelled, the use finds nothing), so it is reported alone.
fn wrong_import_instead(
    e: &wesl::Error,
    units: &[UnitInfo],
    sources: &Sources,
) -> Option<LinkError> {
    let undefined = match e {
        wesl::Error::ValidateError(v) => Some(v),
        wesl::Error::Error(d) => match &*d.error {
            wesl::Error::ValidateError(v) => Some(v),
            _ => None,
        },
        _ => None,
    };
    if !matches!(undefined, Some(wesl::ValidateError::UndefinedSymbol(_))) {
        return None;
    }
    // Modules are read lazily: one whose items are never reached was not.
    let text = |path: &ModulePath| {
        units
            .iter()
            .find(|u| u.path == path.to_string())
            .map(|u| u.text.clone())
            .or_else(|| sources.find(path).ok().map(|(_, t)| t))
    };
    wrong_import(units, &text)
}

/// The first `import` (the kernel's first, then its modules') whose item
/// its module does not declare and which is not a module either, as the
/// error an unknown item gets from the linker. `text` reads a module.
fn wrong_import(
    units: &[UnitInfo],
    text: &dyn Fn(&ModulePath) -> Option<String>,
) -> Option<LinkError> {
    for (at, unit) in units.iter().enumerate() {
        let (Ok(here), Ok(tu)) = (
            unit.path.parse::<ModulePath>(),
            unit.text.parse::<TranslationUnit>(),
        ) else {
            continue;
        };
        let mut items = Vec::new();
        for import in &tu.imports {
            let Some(path) = &import.path else { continue };
            import_items(&import.content, here.join_path(path), &mut items);
        }
        for (module, item) in items {
            let Some(target) = text(&module) else {
                continue;
            };
            let names = decl_names(&target);
            if names.contains(&item) || text(&module.clone().join([item.clone()])).is_some() {
                continue;
            }
            return Some(LinkError {
                message: format!("module `{module}` has no declaration `{item}`"),
                at: import_statement(&unit.text, &item).map(|r| (at, r)),
                wanted: Some((item, names)),
                units: units.to_vec(),
                mentioned: Vec::new(),
            });
        }
    }
    None
}

/// The `(module, item)` pairs an import names.
fn import_items(content: &ImportContent, base: ModulePath, out: &mut Vec<(ModulePath, String)>) {
    match content {
        ImportContent::Item(item) => out.push((base, item.ident.to_string())),
        ImportContent::Collection(list) => {
            for import in list {
                let path = base.clone().join(import.path.iter().cloned());
                import_items(&import.content, path, out);
            }
        }
    }
}

/// The files that the `import` statements of `text` name (every prefix of
/// each path that is a file), read or not.
fn mentioned_files(text: &str, input: &LinkInput) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut path: Option<Vec<String>> = None;
    for t in token_ranges(text) {
        let word = text.get(t).unwrap_or_default();
        match (&mut path, word) {
            (_, "import") => path = Some(Vec::new()),
            (Some(_), ";" | "{" | "}" | ",") => path = None,
            (Some(p), w) if w != ":" && w != "package" => {
                p.push(w.to_owned());
                let found = module_file(&input.base, p).or_else(|| {
                    let beside = input.beside.as_ref()?;
                    module_file(beside, p)
                });
                out.extend(found);
            }
            _ => {}
        }
    }
    out
}

/// The `import` statement naming `word` in the module that the diagnostic
/// names (else the kernel).
fn importer_site(
    diag: &wesl::Diagnostic<wesl::Error>,
    units: &[UnitInfo],
    word: &str,
) -> Option<(usize, Range<usize>)> {
    let named = diag
        .detail
        .module_path
        .as_ref()
        .and_then(|p| units.iter().position(|u| u.path == p.to_string()));
    named
        .into_iter()
        .chain(0..units.len())
        .find_map(|unit| Some((unit, import_statement(&units.get(unit)?.text, word)?)))
}

/// The bytes of `text` from the `import` keyword of the first import
/// statement that names `word` to that word.
pub fn import_statement(text: &str, word: &str) -> Option<Range<usize>> {
    let mut start = None;
    for t in token_ranges(text) {
        let s = text.get(t.clone()).unwrap_or_default();
        if s == "import" {
            start = Some(t.start);
        } else if s == ";" {
            start = None;
        } else if s == word
            && let Some(begin) = start
        {
            return Some(begin..t.end);
        }
    }
    None
}

/// The bytes of the first inline path of `text` (`a::b::c`, outside
/// comments) with `word` before a `::`.
fn inline_path(text: &str, word: &str) -> Option<Range<usize>> {
    let tokens = token_ranges(text);
    let at = |i: usize| tokens.get(i).and_then(|r| text.get(r.clone()));
    // `::` at token `i`: two adjacent colons.
    let colons = |i: usize| {
        at(i) == Some(":")
            && at(i + 1) == Some(":")
            && tokens.get(i).map(|r| r.end) == tokens.get(i + 1).map(|r| r.start)
    };
    let hit = (0..tokens.len()).find(|&i| at(i) == Some(word) && colons(i + 1))?;
    let mut first = hit;
    while first >= 3 && colons(first - 2) {
        first -= 3;
    }
    let mut last = hit;
    while colons(last + 1) && at(last + 3).is_some() {
        last += 3;
    }
    Some(tokens.get(first)?.start..tokens.get(last)?.end)
}

/// The names a module declares.
fn decl_names(text: &str) -> Vec<String> {
    text.parse::<TranslationUnit>()
        .map(|tu| {
            tu.global_declarations
                .iter()
                .filter_map(|d| decl_name(d))
                .collect()
        })
        .unwrap_or_default()
}

/// Gives imported structs their declared names back when no other
/// declaration of the linked module has that name (so a struct shared by
/// kernels generates one Rust type named as the user wrote it). Returns
/// each linked name's `(module path, declared name)`.
fn unmangle_structs(
    text: &mut String,
    syntax: &TranslationUnit,
    units: &[UnitInfo],
) -> HashMap<String, (String, String)> {
    let mut names = HashMap::new();
    let declared: Vec<String> = syntax
        .global_declarations
        .iter()
        .filter_map(|d| decl_name(d))
        .collect();
    for decl in &syntax.global_declarations {
        let Some(name) = decl_name(decl) else {
            continue;
        };
        let Some((path, item)) = EscapeMangler.unmangle(&name) else {
            continue;
        };
        let path = path.to_string();
        if !units.iter().any(|u| u.path == path) {
            continue;
        }
        let clashes = declared.iter().filter(|d| **d == item).count() > 0
            || names.values().any(|(_, i): &(String, String)| *i == item);
        if matches!(decl.node(), GlobalDeclaration::Struct(_)) && !clashes {
            *text = rename_word(text, &name, &item);
            names.insert(item.clone(), (path, item));
        } else {
            names.insert(name, (path, item));
        }
    }
    names
}

/// `text` with every whole-word `from` replaced by `to`.
fn rename_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for t in token_ranges(text) {
        if text.get(t.clone()) == Some(from) {
            out.push_str(text.get(last..t.start).unwrap_or_default());
            out.push_str(to);
            last = t.end;
        }
    }
    out.push_str(text.get(last..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::align::directives;
    use super::*;

    fn input(root: &str, modules: &[(&str, &str)]) -> LinkInput {
        LinkInput {
            root: root.into(),
            root_path: vec!["k".into()],
            modules: modules
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            base: PathBuf::from("/nonexistent"),
            beside: None,
            flags: vec![("fast".into(), true)],
        }
    }

    #[test]
    fn detects_wesl() {
        assert!(needs_link("import package::a::b;\nfn f() {}"));
        assert!(needs_link("@if(fast) const X = 1;"));
        assert!(!needs_link("// import package::a;\nfn important() {}"));
        assert!(!needs_link("fn f() { let import_x = 1; }"));
        assert!(needs_link(
            "fn f() -> u32 { return package::rng::hash(1u); }"
        ));
        assert!(needs_link("fn f() { super::a::g(); }"));
        assert!(!needs_link("// package::rng::hash\nfn f() {}"));
        assert!(!needs_link("/* a::b */ fn f(x: u32) {}"));
        assert!(!needs_link("struct S { a: u32 }"));
    }

    #[test]
    fn maps_a_kept_directive_back() {
        let root = "@if(fast) enable f16;\n@if(slow) enable x;\n@compute @workgroup_size(1)\nfn main() {}\n";
        let linked = link_here(&input(root, &[])).unwrap();
        let at = linked.text.find("f16").unwrap();
        let (unit, range) = linked.unlink(at..at + 3).unwrap();
        assert_eq!(unit, 0);
        assert_eq!(range.start, root.find("f16").unwrap(), "{}", linked.text);
        assert_eq!(&root[range], "f16");
        assert_eq!(directives(root).len(), 2);
        assert!(directives("@diagnostic(off, x) fn f() {}").is_empty());
    }

    #[test]
    fn places_an_inline_path_that_names_nothing() {
        let root = "@compute @workgroup_size(1)\nfn main() { let x = package::rgn::hash(1u); let m = f32::MAX; }\n";
        let e = link_here(&input(
            root,
            &[("rng", "fn hash(x: u32) -> u32 { return x; }")],
        ))
        .unwrap_err();
        assert!(e.message.contains("`package::rgn`"), "{}", e.message);
        assert_eq!(
            e.at.map(|(u, r)| (u, &root[r])),
            Some((0, "package::rgn::hash"))
        );
        assert_eq!(e.wanted.unwrap().1, vec!["rng".to_string()]);
        let root = "@compute @workgroup_size(1)\nfn main() { let m = f32::MAX; }\n";
        let e = link_here(&input(root, &[])).unwrap_err();
        assert!(
            e.message.contains("WGSL itself has no `::`"),
            "{}",
            e.message
        );
        assert_eq!(e.at.map(|(u, r)| (u, &root[r])), Some((0, "f32::MAX")));
        assert_eq!(
            inline_path("// a::b\nx + a::b::c(1)", "b").map(|r| r.start),
            Some(12)
        );
    }

    #[test]
    fn links_an_inline_path_without_import() {
        let root =
            "@compute @workgroup_size(64)\nfn main() {\n    let x = package::rng::hash(1u);\n}\n";
        let rng = "fn hash(x: u32) -> u32 {\n    return x * 3u;\n}\n";
        let linked = link_here(&input(root, &[("rng", rng)])).unwrap();
        assert!(
            linked.text.contains("fn package_rng_hash("),
            "{}",
            linked.text
        );
        assert!(!linked.text.contains("::"), "{}", linked.text);
        let at = linked.text.find("3u").unwrap();
        let (unit, range) = linked.unlink(at..at + 2).unwrap();
        assert_eq!(linked.units[unit].unit, Unit::Graph(0));
        assert_eq!(&rng[range], "3u");
    }

    #[test]
    fn links_and_maps_back() {
        let root = "import package::rng::hash;\n@compute @workgroup_size(64)\nfn main() {\n    let x = hash(1u);\n}\n";
        let rng = "struct P { a: u32 }\nfn hash(x: u32) -> u32 {\n    return x * 3u;\n}\n";
        let linked = link_here(&input(root, &[("rng", rng)])).unwrap();
        assert!(linked.text.contains("package_rng_hash"), "{}", linked.text);
        let at = linked.text.find("3u").unwrap();
        let (unit, range) = linked.unlink(at..at + 2).unwrap();
        assert_eq!(linked.units[unit].unit, Unit::Graph(0));
        assert_eq!(&rng[range], "3u");
        let at = linked.text.find("1u").unwrap();
        let (unit, range) = linked.unlink(at..at + 2).unwrap();
        assert_eq!(unit, 0);
        assert_eq!(&root[range], "1u");
    }

    #[test]
    fn reports_cycles_and_missing_items() {
        let root = "import package::a::f;\n@compute @workgroup_size(1)\nfn main() { f(); }\n";
        let a = "import package::b::g;\nfn f() { g(); }\nfn h() {}\n";
        let b = "import package::a::h;\nfn g() { h(); }\n";
        let e = link_here(&input(root, &[("a", a), ("b", b)])).unwrap_err();
        assert!(e.message.contains("import cycle"), "{}", e.message);
        let root = "import package::a::hh;\n@compute @workgroup_size(1)\nfn main() { hh(); }\n";
        let e = link_here(&input(root, &[("a", "fn h() {}")])).unwrap_err();
        assert!(e.message.contains("no declaration `hh`"), "{}", e.message);
        assert_eq!(e.wanted.unwrap().1, vec!["h".to_string()]);
    }

    #[test]
    fn reports_a_wrong_import_not_the_use_it_orphans() {
        let root = "import super::rng::{K, pcgg};\n@compute @workgroup_size(1)\nfn main() { let x = pcg(K); }\n";
        let rng = "const K = 1u;\nfn pcg(x: u32) -> u32 { return x; }\n";
        let e = link_here(&input(root, &[("rng", rng)])).unwrap_err();
        assert_eq!(e.message, "module `package::rng` has no declaration `pcgg`");
        let (unit, range) = e.at.clone().unwrap();
        assert_eq!(unit, 0);
        assert!(
            root[range.clone()].starts_with("import") && root[range].ends_with("pcgg"),
            "{e:?}"
        );
        let (want, names) = e.wanted.unwrap();
        assert_eq!(
            (want.as_str(), names),
            ("pcgg", vec!["K".into(), "pcg".into()])
        );
        // The module is never reached otherwise (so never read by WESL).
        let root = "import super::rng::pcgg;\n@compute @workgroup_size(1)\nfn main() { let x = pcg(1u); }\n";
        let e = link_here(&input(root, &[("rng", rng)])).unwrap_err();
        assert_eq!(e.message, "module `package::rng` has no declaration `pcgg`");
        assert_eq!(
            e.at.map(|(u, r)| (u, &root[r])),
            Some((0, "import super::rng::pcgg"))
        );
        // A use of a name declared nowhere, with right imports: that use.
        let root = "import package::rng::pcg;\n@compute @workgroup_size(1)\nfn main() { let x = pgc(1u); }\n";
        let e = link_here(&input(root, &[("rng", rng)])).unwrap_err();
        assert!(e.message.contains("`pgc`"), "{}", e.message);
        assert_eq!(e.at.map(|(u, r)| (u, &root[r])), Some((0, "pgc(1u)")));
    }
}
