//! The naga thread makes plain data only (`check/worker.rs`): the compiler's
//! proc-macro API panics off the macro's thread, and unit tests cannot see
//! that (they run `proc_macro2`'s fallback, which works anywhere). So these
//! tests read the source: the files the worker reaches name no
//! `proc_macro`, `proc_macro2`, `syn` or `quote` item, reach no other file
//! of the crate, and no other file adds methods to their types. The real
//! compiler runs the same paths in `tests/compile/compile_many.rs`.

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

/// Everything the `vyre-naga` thread can run, as files of `src/`.
const WORKER_FILES: &[&str] = &[
    "check/worker.rs",
    "check/link.rs",
    "check/link/align.rs",
    "check/link/names.rs",
    "model/lex.rs",
    "model/link.rs",
    "check/partial.rs",
    "check/convert.rs",
    "diag/naga_errors.rs",
    "diag/naga_validation.rs",
    "diag/naga_words.rs",
    "model/rust_types.rs",
    "model/features.rs",
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The file of `src/` that module path `path` (after `crate::`) names: the
/// longest prefix that is a file (`a/b.rs` or `a/b/mod.rs`), as the path
/// written so far (`diag/naga_errors.rs`, `model/mod.rs`); `None` when not
/// even the first segment is one.
fn module_file(path: &[String]) -> Option<String> {
    let src = src_dir();
    (1..=path.len()).rev().find_map(|n| {
        let dir = path.get(..n)?.join("/");
        [format!("{dir}.rs"), format!("{dir}/mod.rs")]
            .into_iter()
            .find(|f| src.join(f).is_file())
    })
}

/// Names that make or need the compiler's proc-macro bridge.
const FORBIDDEN: &[&str] = &[
    "proc_macro",
    "proc_macro2",
    "syn",
    "quote",
    "quote_spanned",
    "format_ident",
    "parse_quote",
    "Span",
    "TokenStream",
    "TokenTree",
    "Ident",
    "Literal",
    "LitStr",
];

fn is_test_item(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.to_token_stream().to_string().contains("test"))
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Problems in one worker file's non-test items: a forbidden name, a path
/// into a file outside [`WORKER_FILES`] (a `mod.rs` that re-exports a
/// worker file's items counts as outside: name the worker file itself), or
/// `super::`.
fn worker_file_problems(name: &str, text: &str) -> Vec<String> {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{name} parses: {e}"));
    let mut problems = Vec::new();
    for item in file.items.iter().filter(|i| !is_test_item(item_attrs(i))) {
        scan(name, item.to_token_stream(), &mut problems);
    }
    problems
}

fn scan(file: &str, tokens: TokenStream, problems: &mut Vec<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => scan(file, g.stream(), problems),
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                if FORBIDDEN.contains(&word.as_str()) {
                    problems.push(format!("{file} names `{word}`"));
                }
                if word == "super" {
                    problems.push(format!("{file} reaches `super::`"));
                }
                // `crate :: path`: the file it names must be a worker file.
                if word == "crate" {
                    for path in paths_after(trees.get(i + 1..).unwrap_or_default()) {
                        match module_file(&path) {
                            Some(f) if WORKER_FILES.contains(&f.as_str()) => {}
                            Some(f) => {
                                let module = f.trim_end_matches(".rs").trim_end_matches("/mod");
                                problems.push(format!(
                                    "{file} reaches `crate::{}`",
                                    module.replace('/', "::")
                                ));
                            }
                            None => problems.push(format!(
                                "{file} reaches `crate::{}`",
                                path.first().map_or("", String::as_str)
                            )),
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The module paths after `crate` (`trees` starts at the `::`): `a::b`
/// in `crate::a::b::Item`, each path of `crate::{a::b, c}`.
fn paths_after(trees: &[TokenTree]) -> Vec<Vec<String>> {
    let mut prefix = Vec::new();
    let mut rest = trees;
    loop {
        match rest {
            [TokenTree::Punct(a), TokenTree::Punct(b), next, ..]
                if a.as_char() == ':' && b.as_char() == ':' =>
            {
                match next {
                    TokenTree::Ident(i) => {
                        prefix.push(i.to_string());
                        rest = rest.get(3..).unwrap_or_default();
                    }
                    TokenTree::Group(g) => {
                        let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                        return inner
                            .split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                            .flat_map(|part| {
                                let (first, tail) = match part {
                                    [TokenTree::Ident(i), tail @ ..] => (i.to_string(), tail),
                                    _ => return Vec::new(),
                                };
                                let mut subs = paths_after(tail);
                                if subs.is_empty() {
                                    subs.push(Vec::new());
                                }
                                subs.into_iter()
                                    .map(|sub| {
                                        let mut p = prefix.clone();
                                        p.push(first.clone());
                                        p.extend(sub);
                                        p
                                    })
                                    .collect()
                            })
                            .collect();
                    }
                    _ => break,
                }
            }
            _ => break,
        }
    }
    if prefix.is_empty() {
        Vec::new()
    } else {
        vec![prefix]
    }
}

/// Types declared in the worker files.
fn worker_types(src: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for name in WORKER_FILES {
        let text = std::fs::read_to_string(src.join(name)).expect("worker file");
        let file = syn::parse_file(&text).expect("worker file parses");
        for item in &file.items {
            match item {
                syn::Item::Struct(s) => names.push(s.ident.to_string()),
                syn::Item::Enum(e) => names.push(e.ident.to_string()),
                _ => {}
            }
        }
    }
    names
}

/// `impl` blocks (inherent or of a trait) for `types` among `items`.
fn impls_of(items: &[syn::Item], types: &[String], out: &mut Vec<String>) {
    for item in items {
        match item {
            syn::Item::Impl(i) => {
                if let syn::Type::Path(p) = &*i.self_ty
                    && let Some(last) = p.path.segments.last()
                    && types.contains(&last.ident.to_string())
                {
                    out.push(last.ident.to_string());
                }
            }
            syn::Item::Mod(m) if !is_test_item(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    impls_of(inner, types, out);
                }
            }
            _ => {}
        }
    }
}

/// Every library file of `src/` (not the unit tests under `src/tests/`),
/// relative to `src/`.
fn library_files(dir: &Path, out: &mut Vec<String>) {
    let src = src_dir();
    for entry in std::fs::read_dir(dir).expect("src dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path != src.join("tests") {
                library_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(&src).expect("under src");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn worker_files_make_no_spans_idents_or_tokens() {
    let src = src_dir();
    let mut problems = Vec::new();
    for name in WORKER_FILES {
        let text = std::fs::read_to_string(src.join(name)).expect("worker file");
        problems.extend(worker_file_problems(name, &text));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_other_file_adds_methods_to_worker_types() {
    let src = src_dir();
    let types = worker_types(&src);
    assert!(types.iter().any(|t| t == "Converter"), "{types:?}");
    let mut files = Vec::new();
    library_files(&src, &mut files);
    assert!(files.len() > WORKER_FILES.len(), "{files:?}");
    let mut found = Vec::new();
    for name in files.iter().filter(|f| !WORKER_FILES.contains(&f.as_str())) {
        let text = std::fs::read_to_string(src.join(name)).expect("source file");
        let file = syn::parse_file(&text).expect("source parses");
        let mut here = Vec::new();
        impls_of(&file.items, &types, &mut here);
        found.extend(here.into_iter().map(|t| format!("{name}: impl for {t}")));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The check finds what it looks for, and spares test modules.
#[test]
fn the_worker_check_catches_proc_macro_use() {
    let bad = "use proc_macro2::Span;\nuse crate::{model::source::LoadedKernel, model::RustTy};\nfn f() { let _ = crate::diag::list(&[]); }\nfn g() -> bool { super::x() }\nfn h() { crate::nowhere::x() }\n#[cfg(test)]\nmod tests { use syn::Ident; }\n";
    let problems = worker_file_problems("bad.rs", bad);
    for expected in [
        "bad.rs names `proc_macro2`",
        "bad.rs names `Span`",
        "bad.rs reaches `crate::diag`",
        "bad.rs reaches `crate::model::source`",
        // A worker type through a `mod.rs` re-export: name the worker file.
        "bad.rs reaches `crate::model`",
        "bad.rs reaches `crate::nowhere`",
        "bad.rs reaches `super::`",
    ] {
        assert!(
            problems.iter().any(|p| p == expected),
            "{expected}: {problems:?}"
        );
    }
    assert!(
        !problems
            .iter()
            .any(|p| p.contains("`syn`") || p.contains("Ident")),
        "{problems:?}"
    );
    let good = "use naga::Module;\nuse crate::{model::rust_types::{Prim, RustTy}, diag::naga_errors::Rewritten};\nfn f(m: &Module) -> usize { m.types.len() }\n";
    assert_eq!(worker_file_problems("good.rs", good), Vec::<String>::new());
}
