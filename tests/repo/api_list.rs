//! `docs/api.md`'s "The public API" is the one list of what `vyre-graph`
//! exports: this test reads the exports from the source text and fails
//! when they and the list between the page's `public-api` markers differ.
//!
//! The exports: every `pub use` and `pub` item at the top level of
//! `vyre-graph/src/lib.rs`, and, for each `pub mod` (or module re-exported
//! with `pub use`), its own `pub use`s and `pub` items as `module::Name`,
//! down through its `pub mod`s. Items under `#[doc(hidden)]` (the
//! `__private` module `graph!`'s expansion names) are not the API and are
//! skipped. A module reachable on two paths (`grid` and `spec::grid`) has
//! its items listed once, under the first. Nothing is built: the check
//! reads text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `src` with comments and the contents of string literals blanked, so
/// that braces and `pub` in them count for nothing.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(if b[i] == b'\n' { '\n' } else { ' ' });
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            out.push('"');
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && b[i + 2] == b'\'' {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// One top-level statement that starts with `pub ` (not `pub(crate)`):
/// its text up to its `;` or `{`, and whether `#[doc(hidden)]` is on it.
struct Statement {
    text: String,
    hidden: bool,
}

/// The top-level `pub` statements of a file's stripped text.
fn statements(code: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut attributes = String::new();
    let mut current: Option<String> = None;
    for line in code.lines() {
        let trimmed = line.trim_start();
        if let Some(text) = current.as_mut() {
            text.push(' ');
            text.push_str(trimmed);
        } else if depth == 0 && trimmed.starts_with("pub ") {
            current = Some(trimmed.to_string());
        } else if depth == 0 && trimmed.starts_with("#[") {
            attributes.push_str(trimmed);
        } else if depth == 0 && !trimmed.is_empty() {
            attributes.clear();
        }
        let mut in_use = false;
        if let Some(text) = &current {
            // A `pub use a::{b, c};` ends at its `;` (its braces balance,
            // so its lines are not counted), an item at its first `{` or
            // `;` or `(`.
            let is_use = text.starts_with("pub use ");
            in_use = is_use;
            let end = if is_use {
                text.find(';')
            } else {
                text.find(['{', ';', '('])
            };
            if let Some(end) = end {
                out.push(Statement {
                    text: text[..end].to_string(),
                    hidden: attributes.contains("doc(hidden)"),
                });
                attributes.clear();
                current = None;
            } else {
                continue;
            }
        }
        if in_use {
            continue;
        }
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
        }
    }
    out
}

/// The names a `pub use` body brings in, each with the path it names:
/// `a::{b, c::d as e}` gives `(b, a::b)` and `(e, a::c::d)`.
fn use_names(prefix: &str, body: &str, out: &mut Vec<(String, String)>) {
    let body = body.trim();
    if let Some(open) = body.find('{') {
        let head = format!("{prefix}{}", &body[..open]);
        let inner = &body[open + 1..body.rfind('}').expect("a closed use list")];
        let mut level = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => level += 1,
                '}' => level -= 1,
                ',' if level == 0 => {
                    use_names(&head, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_names(&head, &inner[start..], out);
    } else if !body.is_empty() {
        let path = format!("{prefix}{body}");
        let (path, name) = match path.split_once(" as ") {
            Some((path, alias)) => (path.trim().to_string(), alias.trim().to_string()),
            None => {
                let name = path.rsplit("::").next().unwrap_or(&path).trim().to_string();
                (path.trim().to_string(), name)
            }
        };
        out.push((name, path));
    }
}

/// The file of module `name` declared in `file`.
fn module_file(file: &Path, name: &str) -> Option<PathBuf> {
    let stem = file.file_stem()?.to_str()?;
    let dir = file.parent()?;
    let dir = if stem == "lib" || stem == "mod" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

/// The file a crate path (`spec::grid`) names, if it is a module.
fn path_file(src: &Path, path: &str) -> Option<PathBuf> {
    let path = path.trim_start_matches("crate::").replace("::", "/");
    [
        src.join(format!("{path}.rs")),
        src.join(&path).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

/// Adds the exports of module file `file`, each as `prefix` + name.
fn exports(
    src: &Path,
    file: &Path,
    prefix: &str,
    seen: &mut Vec<PathBuf>,
    out: &mut BTreeSet<String>,
) {
    seen.push(file.to_path_buf());
    let text = std::fs::read_to_string(file).expect("a module file of vyre-graph");
    let mut modules = Vec::new();
    for s in statements(&strip(&text)) {
        if s.hidden {
            continue;
        }
        let words: Vec<&str> = s.text.split_whitespace().collect();
        if let Some(body) = s.text.strip_prefix("pub use ") {
            let mut names = Vec::new();
            use_names("", body, &mut names);
            for (name, path) in names {
                out.insert(format!("{prefix}{name}"));
                // A re-exported module of this crate: walk it as `name::`.
                if prefix.is_empty()
                    && let Some(f) = path_file(src, &path)
                {
                    modules.push((name, f));
                }
            }
        } else if words.get(1) == Some(&"mod") {
            let name = words[2].to_string();
            out.insert(format!("{prefix}{name}"));
            if let Some(f) = module_file(file, &name) {
                modules.push((name, f));
            }
        } else {
            let name = words
                .iter()
                .skip_while(|w| {
                    ![
                        "fn", "struct", "enum", "type", "trait", "const", "static", "union",
                    ]
                    .contains(w)
                })
                .nth(1)
                .map(|w| w.trim_end_matches(':').trim_end_matches('<').to_string());
            if let Some(name) = name {
                let name = name.split(['<', ':']).next().unwrap_or(&name).to_string();
                out.insert(format!("{prefix}{name}"));
            }
        }
    }
    for (name, f) in modules {
        if !seen.contains(&f) {
            exports(src, &f, &format!("{prefix}{name}::"), seen, out);
        }
    }
}

/// The names listed between `docs/api.md`'s markers: the first
/// backquoted word of each `- ` line.
fn listed(page: &str) -> BTreeSet<String> {
    let start = page
        .find("<!-- public-api:start -->")
        .expect("docs/api.md keeps its `<!-- public-api:start -->` marker");
    let end = page
        .find("<!-- public-api:end -->")
        .expect("docs/api.md keeps its `<!-- public-api:end -->` marker");
    page[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_public_api_is_the_list_in_docs_api_md() {
    let src = root().join("vyre-graph/src");
    let mut exported = BTreeSet::new();
    exports(
        &src,
        &src.join("lib.rs"),
        "",
        &mut Vec::new(),
        &mut exported,
    );
    let page = std::fs::read_to_string(root().join("docs/api.md")).expect("docs/api.md");
    let listed = listed(&page);
    let missing: Vec<_> = exported.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&exported).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "vyre-graph's public API and the list in docs/api.md (\"The public API\", between \
         the public-api markers) differ.\n\
         exported but not listed: {missing:?}\n\
         listed but not exported: {extra:?}\n\
         Fix: for a new export that users need, add a line \"- `name`: what it is for\" \
         to that list (`module::Name` for an item of a public module); for one only the \
         crate needs, make it `pub(crate)`; for one only graph!'s expansion needs, move it \
         to `__private` (hidden). For a removed export, delete its line."
    );
    // The list's own sanity: the names every user meets are there.
    for name in ["Graph", "Gpu", "graph", "BackendError", "spec::GraphSpec"] {
        assert!(exported.contains(name), "{name} is exported: {exported:?}");
    }
}
