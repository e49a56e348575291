//! The three rules over every crate below a root, and the findings as text
//! that says how to fix each one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::krate::{Crate, File, Site};
use super::lex::{self, Kind};

/// The limits, in lines.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest allowed function, from `fn` to its closing brace.
    pub max_fn: usize,
    /// Longest allowed file, not counting lines of test items.
    pub max_file: usize,
}

/// Files that import each other in a ring, and the arrows among them.
#[derive(Debug)]
pub struct Cycle {
    pub files: Vec<String>,
    /// (from, to, where `from` first names `to`).
    pub arrows: Vec<(String, String, Site)>,
}

/// A function over the limit.
#[derive(Debug)]
pub struct LongFn {
    pub file: String,
    pub line: usize,
    pub name: String,
    pub lines: usize,
}

/// A file over the limit.
#[derive(Debug)]
pub struct LongFile {
    pub file: String,
    pub lines: usize,
}

/// What the check found in one crate.
#[derive(Debug)]
pub struct CrateFindings {
    pub name: String,
    pub files: usize,
    pub cycles: Vec<Cycle>,
    pub long_fns: Vec<LongFn>,
    pub long_files: Vec<LongFile>,
}

/// What the check found below a root.
#[derive(Debug)]
pub struct Findings {
    pub limits: Limits,
    pub crates: Vec<CrateFindings>,
}

/// Checks every crate (a folder with a `Cargo.toml` and a `src/`) below `root`.
pub fn check(root: &Path, limits: Limits) -> io::Result<Findings> {
    let mut dirs = Vec::new();
    find_crates(root, &mut dirs)?;
    let mut crates = Vec::new();
    for dir in dirs {
        let krate = Crate::load(root, &dir)?;
        crates.push(check_crate(&krate, limits));
    }
    Ok(Findings { limits, crates })
}

/// Folders below `root` (itself included) holding a `Cargo.toml` and a
/// `src/`, sorted; build output, VCS and hidden folders are skipped.
fn find_crates(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
        out.push(dir.to_path_buf());
    }
    let mut subdirs: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<Vec<_>>>()?
        .into_iter()
        .filter(|p| p.is_dir())
        .filter(|p| {
            let name = p
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            !(name == "target" || name == "node_modules" || name.starts_with('.'))
        })
        .collect();
    subdirs.sort();
    for sub in subdirs {
        find_crates(&sub, out)?;
    }
    Ok(())
}

/// The findings of one crate.
pub fn check_crate(krate: &Crate, limits: Limits) -> CrateFindings {
    let arrows = krate.arrows();
    let rel = |i: usize| krate.files[i].rel.clone();
    let cycles = components(krate.files.len(), &arrows)
        .into_iter()
        .map(|comp| {
            let mut files: Vec<String> = comp.iter().map(|&i| rel(i)).collect();
            files.sort();
            let mut among = Vec::new();
            for &a in &comp {
                for (&b, site) in arrows.get(&a).into_iter().flatten() {
                    if comp.contains(&b) {
                        among.push((rel(a), rel(b), site.clone()));
                    }
                }
            }
            among.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
            Cycle {
                files,
                arrows: among,
            }
        })
        .collect();
    let mut long_fns = Vec::new();
    let mut long_files = Vec::new();
    for (i, f) in krate.files.iter().enumerate() {
        if krate.test_only[i] {
            continue;
        }
        let lines = f.lines - f.test_lines;
        if lines > limits.max_file {
            long_files.push(LongFile {
                file: f.rel.clone(),
                lines,
            });
        }
        long_fns.extend(functions(f).into_iter().filter(|g| g.lines > limits.max_fn));
    }
    long_fns.sort_by(|a, b| {
        b.lines
            .cmp(&a.lines)
            .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
    });
    long_files.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.file.cmp(&b.file)));
    CrateFindings {
        name: krate.name.clone(),
        files: krate.files.len(),
        cycles,
        long_fns,
        long_files,
    }
}

/// Every function with a body outside test code, with its length in lines
/// from the `fn` keyword to the closing brace.
pub fn functions(f: &File) -> Vec<LongFn> {
    let mut found = Vec::new();
    let (toks, code) = (&f.toks, &f.code);
    for k in 0..toks.len() {
        if !lex::is_word(toks, code, k, "fn") {
            continue;
        }
        let Some(name) = toks.get(k + 1).filter(|t| t.kind == Kind::Ident) else {
            continue;
        };
        let name = lex::text(code, name);
        if !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            continue;
        }
        let mut depth = 0usize;
        let mut body = None;
        for t in &toks[k + 2..] {
            if t.kind != Kind::Punct {
                continue;
            }
            match code[t.start] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth = depth.saturating_sub(1),
                b'{' if depth == 0 => {
                    body = Some(t.start);
                    break;
                }
                b';' | b'}' if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let close = lex::match_brace(code, open);
        let line = f.line_of(toks[k].start);
        let lines = f.line_of(close) - line + 1;
        found.push(LongFn {
            file: f.rel.clone(),
            line,
            name: name.to_owned(),
            lines,
        });
    }
    found
}

/// Strongly connected components of more than one node (Tarjan), each
/// sorted, in a fixed order.
fn components(n: usize, arrows: &BTreeMap<usize, BTreeMap<usize, Site>>) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        arrows: &'a BTreeMap<usize, BTreeMap<usize, Site>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            let targets: Vec<usize> = self
                .arrows
                .get(&v)
                .map_or(Vec::new(), |m| m.keys().copied().collect());
            for w in targets {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort_unstable();
                    self.found.push(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        arrows,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.found.sort();
    t.found
}

impl Findings {
    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.crates
            .iter()
            .all(|c| c.cycles.is_empty() && c.long_fns.is_empty() && c.long_files.is_empty())
    }

    fn totals(&self) -> (usize, usize, usize, usize) {
        let sum = |f: fn(&CrateFindings) -> usize| self.crates.iter().map(f).sum::<usize>();
        (
            sum(|c| c.files),
            sum(|c| c.cycles.len()),
            sum(|c| c.long_fns.len()),
            sum(|c| c.long_files.len()),
        )
    }

    /// One line: what was checked and what was found.
    pub fn summary(&self) -> String {
        let (files, cycles, fns, long_files) = self.totals();
        let names: Vec<&str> = self.crates.iter().map(|c| c.name.as_str()).collect();
        format!(
            "house: {} crates ({}), {files} files: {cycles} import cycles, {fns} functions over {} lines, \
             {long_files} files over {} lines (test code not counted)",
            self.crates.len(),
            names.join(", "),
            self.limits.max_fn,
            self.limits.max_file,
        )
    }

    /// Every finding, each with how to fix it.
    pub fn report(&self) -> String {
        let Limits { max_fn, max_file } = self.limits;
        let mut out = self.summary();
        for c in &self.crates {
            for cycle in &c.cycles {
                write_cycle(&mut out, &c.name, cycle);
            }
        }
        for c in &self.crates {
            for f in &c.long_fns {
                let _ = write!(
                    out,
                    "\nsplit `fn {}` ({} lines) in {}:{} into functions of at most {max_fn} lines",
                    f.name, f.lines, f.file, f.line
                );
            }
            for f in &c.long_files {
                let _ = write!(
                    out,
                    "\nsplit {} ({} lines, test code not counted) into modules of at most {max_file} lines",
                    f.file, f.lines
                );
            }
        }
        out
    }
}

/// One cycle, with how to break it: its files, the pairs that import each
/// other directly (the first candidates), and every arrow with its first
/// place.
fn write_cycle(out: &mut String, krate: &str, cycle: &Cycle) {
    let prefix = format!("{krate}/");
    let short = |file: &str| file.strip_prefix(&prefix).unwrap_or(file).to_owned();
    let files: Vec<String> = cycle.files.iter().map(|f| short(f)).collect();
    let _ = write!(
        out,
        "\nimport cycle in {krate} among {} files: {}\n  break it by making its arrows point one way: move what \
         both ends of an arrow need into a module below them both, or pass it in",
        files.len(),
        files.join(", ")
    );
    let mutual: Vec<String> = cycle
        .arrows
        .iter()
        .filter(|(a, b, _)| a < b && cycle.arrows.iter().any(|(x, y, _)| x == b && y == a))
        .map(|(a, b, _)| format!("{} <-> {}", short(a), short(b)))
        .collect();
    if !mutual.is_empty() {
        let _ = write!(
            out,
            "\n  files that import each other directly: {}",
            mutual.join(", ")
        );
    }
    let _ = write!(
        out,
        "\n  arrows (a file naming items of another, first place shown):"
    );
    for (from, to, site) in &cycle.arrows {
        let _ = write!(
            out,
            "\n    {} -> {}   (line {}: {})",
            short(from),
            short(to),
            site.line,
            site.path
        );
    }
}
