//! One crate as the house check sees it: its files as modules, what each
//! file defines and re-exports, what it names, and the import arrows
//! between files that follow from that.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::Path;

use super::lex::{self, Kind, Tok};

/// Keywords that introduce a named item (`macro_rules!` is handled apart).
const ITEM_KEYWORDS: &[&str] = &[
    "struct", "enum", "fn", "trait", "type", "const", "static", "union",
];

/// One path of a `use` tree, with its alias.
#[derive(Clone, Debug)]
pub struct UsePath {
    pub segs: Vec<String>,
    pub alias: Option<String>,
    pub glob: bool,
}

/// Where a file first names another: the line and the path it wrote.
#[derive(Clone, Debug)]
pub struct Site {
    pub line: usize,
    pub path: String,
}

/// A source file of a crate.
pub struct File {
    /// Path relative to the checked root, with `/` separators.
    pub rel: String,
    /// Module path: `[]` for `lib.rs`, `["a", "b"]` for `a/b.rs` or `a/b/mod.rs`.
    pub module: Vec<String>,
    /// Source with comments, literal contents and test items blanked.
    pub code: Vec<u8>,
    pub toks: Vec<Tok>,
    /// Byte offsets of the newlines, for line numbers.
    newlines: Vec<usize>,
    /// Lines of the file (a last line without a newline counts).
    pub lines: usize,
    /// How many of them are inside `#[cfg(test)]` items.
    pub test_lines: usize,
    pub tests: lex::TestItems,
    names: BTreeSet<String>,
    reexports: BTreeMap<String, Vec<String>>,
    /// Every `use` path (line of its `use`, the path).
    uses: Vec<(usize, UsePath)>,
}

impl File {
    fn new(rel: String, module: Vec<String>, src: &str) -> File {
        let stripped = lex::strip(src);
        let all = lex::tokens(&stripped);
        let tests = lex::test_items(&stripped, &all);
        let newlines: Vec<usize> = stripped
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .collect();
        let lines =
            newlines.len() + usize::from(!stripped.is_empty() && stripped.last() != Some(&b'\n'));
        let test_lines = tests
            .ranges
            .iter()
            .map(|&(a, b)| newlines_between(&newlines, a, b) + 1)
            .sum();
        let code = lex::without(&stripped, &tests.ranges);
        let toks = lex::tokens(&code);
        let mut file = File {
            rel,
            module,
            code,
            toks,
            newlines,
            lines,
            test_lines,
            tests,
            names: BTreeSet::new(),
            reexports: BTreeMap::new(),
            uses: Vec::new(),
        };
        file.scan_items();
        file
    }

    /// 1-based line of byte `at`.
    pub fn line_of(&self, at: usize) -> usize {
        self.newlines.partition_point(|&n| n < at) + 1
    }

    fn word(&self, k: usize) -> &str {
        self.toks.get(k).map_or("", |t| lex::text(&self.code, t))
    }

    fn punct(&self, k: usize, p: u8) -> bool {
        lex::is_punct(&self.toks, &self.code, k, p)
    }

    /// Fills `names`, `uses` and `reexports`.
    fn scan_items(&mut self) {
        for k in 0..self.toks.len() {
            if self.toks[k].kind != Kind::Ident {
                continue;
            }
            let word = self.word(k);
            if ITEM_KEYWORDS.contains(&word) {
                if let Some(name) = self.name_at(k + 1) {
                    self.names.insert(name);
                }
            } else if word == "macro_rules" && self.punct(k + 1, b'!') {
                if let Some(name) = self.name_at(k + 2) {
                    self.names.insert(name);
                }
            } else if word == "use" {
                let line = self.line_of(self.toks[k].start);
                let public = self.is_public_before(k);
                let mut paths = Vec::new();
                let mut pos = k + 1;
                self.parse_tree(&mut pos, Vec::new(), &mut paths);
                for path in paths {
                    if public {
                        self.add_reexport(&path);
                    }
                    self.uses.push((line, path));
                }
            }
        }
    }

    /// The identifier at token `k` when it can name an item.
    fn name_at(&self, k: usize) -> Option<String> {
        let t = self.toks.get(k)?;
        let first = self.code[t.start];
        let is_name = t.kind == Kind::Ident
            && (first.is_ascii_alphabetic() || first == b'_' || first >= 0x80);
        is_name.then(|| lex::text(&self.code, t).to_owned())
    }

    /// Whether the `use` at token `k` is `pub use` or `pub(...) use`.
    fn is_public_before(&self, k: usize) -> bool {
        if k >= 1 && self.word(k - 1) == "pub" {
            return true;
        }
        if k >= 1 && self.punct(k - 1, b')') {
            let mut j = k - 1;
            while j > 0 && !self.punct(j, b'(') {
                j -= 1;
            }
            return j >= 1 && self.word(j - 1) == "pub";
        }
        false
    }

    /// Parses the use tree at token `pos` (moving `pos` past it), its paths
    /// continuing `segs`.
    fn parse_tree(&self, pos: &mut usize, mut segs: Vec<String>, out: &mut Vec<UsePath>) {
        loop {
            let Some(t) = self.toks.get(*pos) else { return };
            if t.kind == Kind::Ident {
                segs.push(self.word(*pos).to_owned());
                *pos += 1;
                if self.punct(*pos, b':') && self.punct(*pos + 1, b':') {
                    *pos += 2;
                    continue;
                }
                let mut alias = None;
                if self.word(*pos) == "as" {
                    alias = Some(self.word(*pos + 1).to_owned());
                    *pos += 2;
                }
                if segs.len() > 1 && segs.last().is_some_and(|s| s == "self") {
                    segs.pop();
                }
                out.push(UsePath {
                    segs,
                    alias,
                    glob: false,
                });
                return;
            } else if self.punct(*pos, b':') && self.punct(*pos + 1, b':') {
                *pos += 2;
            } else if self.punct(*pos, b'*') {
                *pos += 1;
                out.push(UsePath {
                    segs,
                    alias: None,
                    glob: true,
                });
                return;
            } else if self.punct(*pos, b'{') {
                *pos += 1;
                while *pos < self.toks.len() && !self.punct(*pos, b'}') {
                    let before = *pos;
                    self.parse_tree(pos, segs.clone(), out);
                    if self.punct(*pos, b',') || *pos == before {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            } else {
                return;
            }
        }
    }

    /// Records what `pub use path` makes this module export. Globs are not
    /// followed, nor `pub use crate::x;`, which in the crate root would
    /// name itself.
    fn add_reexport(&mut self, path: &UsePath) {
        let Some(last) = path.segs.last() else { return };
        let names_itself = path.segs.len() == 2 && path.segs[0] == "crate";
        if let Some(alias) = &path.alias {
            self.reexports
                .entry(alias.clone())
                .or_insert_with(|| path.segs.clone());
        } else if !path.glob && !names_itself {
            self.reexports
                .entry(last.clone())
                .or_insert_with(|| path.segs.clone());
        }
    }

    /// Paths written inline as `crate::a::b`, `super::a` or `self::a`: the
    /// byte where each starts and its segments.
    fn inline_paths(&self) -> Vec<(usize, Vec<String>)> {
        let mut found = Vec::new();
        for k in 0..self.toks.len() {
            let t = self.toks[k];
            if !matches!(self.word(k), "crate" | "super" | "self") || t.kind != Kind::Ident {
                continue;
            }
            let before = t.start.checked_sub(1).map(|i| self.code[i]);
            if before.is_some_and(|b| lex::is_ident(b) || b == b':') {
                continue;
            }
            let mut segs = vec![self.word(k).to_owned()];
            let mut j = k + 1;
            while self.punct(j, b':')
                && self.punct(j + 1, b':')
                && self.toks.get(j + 2).is_some_and(|n| n.kind == Kind::Ident)
                && self.toks[j].start == self.toks[j - 1].end
                && self.toks[j + 1].start == self.toks[j].end
                && self.toks[j + 2].start == self.toks[j + 1].end
            {
                segs.push(self.word(j + 2).to_owned());
                j += 3;
            }
            if segs.len() > 1 {
                found.push((t.start, segs));
            }
        }
        found
    }
}

/// Newlines strictly inside the byte range `a..=b`.
fn newlines_between(newlines: &[usize], a: usize, b: usize) -> usize {
    newlines.partition_point(|&n| n <= b) - newlines.partition_point(|&n| n < a)
}

/// A crate: its files, which of them are test-only, and lookups.
pub struct Crate {
    /// Its folder relative to the checked root (`.` for the root itself).
    pub name: String,
    pub files: Vec<File>,
    /// Files reachable only through `#[cfg(test)] mod x;` (or `#![cfg(test)]`).
    pub test_only: Vec<bool>,
    by_module: HashMap<Vec<String>, usize>,
}

impl Crate {
    /// Reads every `.rs` file under `dir/src`.
    pub fn load(root: &Path, dir: &Path) -> io::Result<Crate> {
        let src = dir.join("src");
        let mut paths = Vec::new();
        collect_rs(&src, &mut paths)?;
        let mut files = Vec::new();
        for path in paths {
            let bytes = fs::read(&path)?;
            let text = String::from_utf8_lossy(&bytes);
            let rel = relative(root, &path);
            files.push(File::new(rel, module_of(&src, &path), &text));
        }
        let name = match relative(root, dir) {
            r if r.is_empty() => ".".to_owned(),
            r => r,
        };
        Ok(Crate::from_files(name, files))
    }

    fn from_files(name: String, files: Vec<File>) -> Crate {
        let mut by_module = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            by_module.entry(f.module.clone()).or_insert(i);
        }
        let mut roots = Vec::new();
        for f in &files {
            if f.tests.whole_file {
                roots.push(f.module.clone());
            }
            for m in &f.tests.mods {
                roots.push([f.module.clone(), vec![m.clone()]].concat());
            }
        }
        let test_only = files
            .iter()
            .map(|f| roots.iter().any(|r| f.module.starts_with(r)))
            .collect();
        Crate {
            name,
            files,
            test_only,
            by_module,
        }
    }

    fn child(&self, module: &[String], seg: &str) -> Option<Vec<String>> {
        let mut m = module.to_vec();
        m.push(seg.to_owned());
        self.by_module.contains_key(&m).then_some(m)
    }

    /// The module (file) defining the item that `path` names inside `from`:
    /// the deepest file the path walks into, or, for a name that file
    /// re-exports, the file the re-export leads to.
    fn resolve(&self, from: &[String], path: &[String], depth: usize) -> Option<Vec<String>> {
        let first = path.first()?;
        if depth > 8 {
            return None;
        }
        let (mut cur, rest) = match first.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (from.to_vec(), &path[1..]),
            "super" => (from.to_vec(), path),
            _ => return None,
        };
        for seg in rest {
            if seg == "super" {
                cur.pop();
                continue;
            }
            if let Some(m) = self.child(&cur, seg) {
                cur = m;
                continue;
            }
            let Some(&file) = self.by_module.get(&cur) else {
                return Some(cur);
            };
            let f = &self.files[file];
            if f.names.contains(seg) {
                return Some(cur);
            }
            if let Some(target) = f.reexports.get(seg) {
                let target = match target[0].as_str() {
                    "crate" | "self" | "super" => target.clone(),
                    _ => [vec!["self".to_owned()], target.clone()].concat(),
                };
                return self.resolve(&cur, &target, depth + 1).or(Some(cur));
            }
            return Some(cur);
        }
        Some(cur)
    }

    /// The file index that `path`, named in file `from`, points at.
    fn target(&self, from: usize, path: &[String]) -> Option<usize> {
        let module = &self.files[from].module;
        let path = match path.first().map(String::as_str) {
            Some("crate" | "self" | "super") => path.to_vec(),
            Some(first) if self.child(module, first).is_some() => {
                [vec!["self".to_owned()], path.to_vec()].concat()
            }
            _ => return None,
        };
        let to = *self.by_module.get(&self.resolve(module, &path, 0)?)?;
        (to != from).then_some(to)
    }

    /// Import arrows between the files that are not test-only: for each
    /// file, the files it names items of, with the first place it does.
    pub fn arrows(&self) -> BTreeMap<usize, BTreeMap<usize, Site>> {
        let mut arrows: BTreeMap<usize, BTreeMap<usize, Site>> = BTreeMap::new();
        for (i, f) in self.files.iter().enumerate() {
            if self.test_only[i] {
                continue;
            }
            let mut add = |path: &[String], line: usize| {
                if let Some(to) = self.target(i, path) {
                    let site = Site {
                        line,
                        path: path.join("::"),
                    };
                    let first = arrows
                        .entry(i)
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| site.clone());
                    if site.line < first.line {
                        *first = site;
                    }
                }
            };
            for (line, u) in &f.uses {
                add(&u.segs, *line);
            }
            for (at, segs) in f.inline_paths() {
                add(&segs, f.line_of(at));
            }
        }
        arrows
    }
}

/// Every `.rs` file below `dir`, sorted.
fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `path` relative to `root`, with `/` separators.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The module path of the file at `path` under the crate's `src`.
fn module_of(src: &Path, path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match segs.last().map(String::as_str) {
        Some("lib" | "main") if segs.len() == 1 => segs.clear(),
        Some("mod") => {
            segs.pop();
        }
        _ => {}
    }
    segs
}
