//! Fuzzing: every `graph! { ... }` invocation of the repository's examples,
//! tests (UI tests included) and doc examples, mutated at random and run
//! through the front end. Seeded and reproducible: mutant `i` of seed `s`
//! is always the same input, whatever the mutant count.
//!
//! * `VYRE_FUZZ_SEED` (decimal or `0x` hex) changes the seed,
//!   `VYRE_FUZZ_MUTANTS` the number of mutants, `VYRE_FUZZ_FIRST` the index
//!   of the first one (to replay one reported mutant:
//!   `VYRE_FUZZ_SEED=s VYRE_FUZZ_FIRST=i VYRE_FUZZ_MUTANTS=1`).
//! * A mutant fails the test when the front end panics, when its output is
//!   empty or not valid Rust items, or when it is slow: slower than
//!   [`SLOW_FACTOR`] times the expansion of the largest graph the macro
//!   accepts ([`reference`]), timed in this process just before the mutants
//!   and again, with the mutant itself, when a mutant passes the limit (so
//!   a loaded machine slows both sides alike). A watchdog thread reports
//!   mutants that never finish ([`HANG_FACTOR`] limits).
//!
//! `file "..."` kernels: the macro looks a relative path up in
//! `CARGO_MANIFEST_DIR` (here `vyre-macros`, not the crate the invocation
//! comes from), then beside the invoking source file (which parsed strings
//! do not have). So that they load, the corpus rewrites every `file` path
//! that exists relative to the invocation's crate or to its source file into
//! an absolute path; the one that exists nowhere (`file_not_found.rs`) stays
//! as written and fails to load, as it should.

use std::panic::{self, AssertUnwindSafe, PanicHookInfo, catch_unwind};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream, TokenTree};

/// Mutants per run by default: the whole test takes about 25 s in a debug
/// build on a 2-core machine.
const DEFAULT_MUTANTS: usize = 8000;
/// The fixed default seed, so CI runs are reproducible.
const DEFAULT_SEED: u64 = 0x5EED_F00D_0000_0007;
/// A mutant slower than this many expansions of [`reference`] is a defect
/// (e.g. an unbounded unroll, or work quadratic in the graph's size).
const SLOW_FACTOR: u32 = 4;
/// The watchdog reports a mutant still running after this many limits.
const HANG_FACTOR: u32 = 5;
/// The corpus must hold at least this many invocations.
const MIN_CORPUS: usize = 20;

/// Numbers a mutation puts in place of a number (token or WGSL text).
/// `-1` is two tokens; `0x` is not a valid Rust literal, so in token form it
/// is only used where proc-macro2 accepts it (see [`extreme_tokens`]).
const EXTREME: &[&str] = &[
    "0",
    "1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "1e308",
    "0x",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "340282366920938463463374607431768211456",
    "0.0",
    "1e-45",
    "255u8",
    "4294967296u32",
    // The macro's own limits: nodes, workgroup sizes, buffers per kernel.
    "4095",
    "4096",
    "4097",
    "256",
    "257",
    "64",
    "65",
    "8",
    "12",
];

/// Snippets inserted into string-literal kernels.
const WGSL_SNIPPETS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ";",
    ",",
    ":",
    "@",
    "=",
    "&",
    "*",
    "\n",
    " ",
    "//",
    "/*",
    "*/",
    "\\",
    "\"",
    "\0",
    "é",
    "🦀",
    "fn",
    "var",
    "let",
    "const",
    "override",
    "struct",
    "return",
    "loop",
    "for",
    "if",
    "else",
    "array<f32>",
    "array<u32, 4>",
    "vec3<u32>",
    "atomic<u32>",
    "mat3x3<f32>",
    "f16",
    "bool",
    "f64",
    "@compute",
    "@workgroup_size(",
    "@group(0)",
    "@binding(0)",
    "@builtin(global_invocation_id)",
    "var<storage, read_write>",
    "var<uniform>",
    "var<workgroup>",
    "workgroupBarrier()",
    "arrayLength(&",
    "enable f16;",
    "diagnostic(off, derivative_uniformity);",
    "texture_2d<f32>",
    "texture_2d<u32>",
    "texture_2d_array<f32>",
    "texture_storage_2d<rgba8unorm, write>",
    "texture_storage_2d<r32float, read_write>",
    "texture_storage_2d<rgba8uint, read>",
    "sampler",
    "sampler_comparison",
    "textureStore(",
    "textureLoad(",
    "textureSampleLevel(",
    "textureDimensions(",
];

// ---------------------------------------------------------------------------
// PRNG

/// SplitMix64: small, fast, good enough to fuzz with.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n == 0`).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// The generator of mutant `index`: independent of every other mutant.
fn mutant_rng(seed: u64, index: usize) -> Rng {
    let mut mix = Rng::new(seed ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    Rng::new(mix.next())
}

// ---------------------------------------------------------------------------
// Corpus

/// One `graph!` invocation found on disk.
struct Invocation {
    /// `path/relative/to/repo.rs#k` (the k-th invocation of the file).
    origin: String,
    /// The body (file paths made absolute), with the spans (lines and
    /// columns) of the file it is in.
    body: TokenStream,
    /// Whether the unmutated body must expand without errors.
    expect_ok: bool,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, sorted (reproducible order).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The bodies of every `graph! { ... }` in `ts`, at any depth.
fn find_invocations(ts: TokenStream, out: &mut Vec<TokenStream>) {
    let trees: Vec<TokenTree> = ts.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        if let (TokenTree::Ident(id), Some(TokenTree::Punct(bang)), Some(TokenTree::Group(g))) =
            (tree, trees.get(i + 1), trees.get(i + 2))
            && id == "graph"
            && bang.as_char() == '!'
            && g.delimiter() == Delimiter::Brace
            // A `macro_rules!` template (`$($body)*`) is not a graph.
            && !g
                .stream()
                .into_iter()
                .any(|t| matches!(&t, TokenTree::Punct(p) if p.as_char() == '$'))
        {
            out.push(g.stream());
        }
        if let TokenTree::Group(g) = tree {
            find_invocations(g.stream(), out);
        }
    }
}

/// Rewrites `file "p"` paths that exist relative to `bases` to absolute.
fn absolutize_files(ts: TokenStream, bases: &[&Path]) -> TokenStream {
    let trees: Vec<TokenTree> = ts.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut after_file = false;
    for tree in trees {
        let next = match tree {
            TokenTree::Group(g) => {
                let mut new = Group::new(g.delimiter(), absolutize_files(g.stream(), bases));
                new.set_span(g.span());
                TokenTree::Group(new)
            }
            TokenTree::Literal(lit) if after_file => {
                let tree = TokenTree::Literal(lit.clone());
                match syn::parse2::<syn::LitStr>(tree.clone().into()) {
                    Ok(s) => match bases
                        .iter()
                        .map(|b| b.join(s.value()))
                        .find(|p| p.exists())
                        .and_then(|p| p.canonicalize().ok())
                    {
                        Some(abs) => {
                            let mut new = Literal::string(&abs.display().to_string());
                            new.set_span(lit.span());
                            TokenTree::Literal(new)
                        }
                        None => tree,
                    },
                    Err(_) => tree,
                }
            }
            other => other,
        };
        after_file = matches!(&next, TokenTree::Ident(i) if i == "file");
        out.push(next);
    }
    out.into_iter().collect()
}

/// The code blocks of the `//!` and `///` comments of `text`.
fn doc_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim_start();
        let Some(doc) = line
            .strip_prefix("//!")
            .or_else(|| line.strip_prefix("///"))
        else {
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if doc.trim_start().starts_with("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some(String::new()),
            }
        } else if let Some(block) = &mut current {
            // Hidden doctest lines (`# ...`) are Rust too.
            block.push_str(doc.strip_prefix("# ").unwrap_or(doc));
            block.push('\n');
        }
    }
    blocks
}

fn corpus() -> Vec<Invocation> {
    let root = repo_root();
    let mut sources: Vec<(PathBuf, PathBuf, String)> = Vec::new(); // (file, crate dir, text)
    for krate in [".", "vyre-graph", "vyre-macros", "vyre-analysis"] {
        let crate_dir = root.join(krate);
        for dir in ["examples", "tests"] {
            let mut files = Vec::new();
            rust_files(&crate_dir.join(dir), &mut files);
            for file in files {
                let text = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
                sources.push((file, crate_dir.clone(), text));
            }
        }
    }
    let mut invocations = Vec::new();
    let mut add = |file: &Path, crate_dir: &Path, text: &str, expect_ok: bool| {
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        // Not every doc block is Rust; every source file is.
        let Ok(ts) = TokenStream::from_str(text) else {
            assert!(!expect_ok, "{shown} does not tokenize");
            return;
        };
        let mut bodies = Vec::new();
        find_invocations(ts, &mut bodies);
        let dir = file.parent().unwrap_or(&root).to_path_buf();
        for (k, body) in bodies.into_iter().enumerate() {
            let body = absolutize_files(body, &[crate_dir, &dir]);
            invocations.push(Invocation {
                origin: format!("{shown}#{k}"),
                body,
                expect_ok,
            });
        }
    };
    for (file, crate_dir, text) in &sources {
        let expect_ok = !file.components().any(|c| c.as_os_str() == "fail");
        add(file, crate_dir, text, expect_ok);
    }
    // The doc examples (the `vyre-macros` grammar block is not a valid graph).
    for (krate, file) in [("vyre-graph", "src/lib.rs"), ("vyre-macros", "src/lib.rs")] {
        let crate_dir = root.join(krate);
        let path = crate_dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for block in doc_blocks(&text) {
            add(&path, &crate_dir, &block, false);
        }
    }
    invocations
}

// ---------------------------------------------------------------------------
// Mutable token trees

#[derive(Clone)]
enum Node {
    Leaf(TokenTree),
    Group(Delimiter, Span, Vec<Node>),
}

fn to_nodes(ts: TokenStream) -> Vec<Node> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Node::Group(g.delimiter(), g.span(), to_nodes(g.stream())),
            leaf => Node::Leaf(leaf),
        })
        .collect()
}

fn to_stream(nodes: &[Node]) -> TokenStream {
    nodes
        .iter()
        .map(|n| match n {
            Node::Leaf(t) => t.clone(),
            Node::Group(d, span, inner) => {
                let mut g = Group::new(*d, to_stream(inner));
                g.set_span(*span);
                TokenTree::Group(g)
            }
        })
        .collect()
}

/// Paths (child indices from the root) of every node, in preorder.
fn paths(nodes: &[Node], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, n) in nodes.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        if let Node::Group(_, _, inner) = n {
            paths(inner, prefix, out);
        }
        prefix.pop();
    }
}

/// The children of the group at `path` (the root for an empty path).
fn children_mut<'a>(nodes: &'a mut Vec<Node>, path: &[usize]) -> &'a mut Vec<Node> {
    match path.split_first() {
        None => nodes,
        Some((first, rest)) => match &mut nodes[*first] {
            Node::Group(_, _, inner) => children_mut(inner, rest),
            Node::Leaf(_) => unreachable!("path through a leaf"),
        },
    }
}

fn node_at<'a>(nodes: &'a [Node], path: &[usize]) -> &'a Node {
    let (first, rest) = path.split_first().expect("non-empty path");
    match (&nodes[*first], rest.is_empty()) {
        (n, true) => n,
        (Node::Group(_, _, inner), false) => node_at(inner, rest),
        (Node::Leaf(_), false) => unreachable!("path through a leaf"),
    }
}

fn is_number(n: &Node) -> bool {
    matches!(n, Node::Leaf(TokenTree::Literal(l)) if l.to_string().starts_with(|c: char| c.is_ascii_digit()))
}

fn string_value(n: &Node) -> Option<(String, Span)> {
    let Node::Leaf(TokenTree::Literal(l)) = n else {
        return None;
    };
    let s = syn::parse2::<syn::LitStr>(TokenTree::Literal(l.clone()).into()).ok()?;
    Some((s.value(), l.span()))
}

/// The extreme numbers that are valid token streams.
fn extreme_tokens() -> Vec<Vec<Node>> {
    EXTREME
        .iter()
        .filter_map(|s| TokenStream::from_str(s).ok())
        .map(to_nodes)
        .collect()
}

/// Material for replacements, from the whole corpus.
struct Pool {
    leaves: Vec<TokenTree>,
    idents: Vec<TokenTree>,
    literals: Vec<TokenTree>,
    subtrees: Vec<Node>,
    strings: Vec<String>,
    extremes: Vec<Vec<Node>>,
}

impl Pool {
    fn new(corpus: &[Vec<Node>]) -> Self {
        let mut pool = Pool {
            leaves: Vec::new(),
            idents: Vec::new(),
            literals: Vec::new(),
            subtrees: Vec::new(),
            strings: Vec::new(),
            extremes: extreme_tokens(),
        };
        fn walk(nodes: &[Node], pool: &mut Pool) {
            for n in nodes {
                match n {
                    Node::Leaf(t) => {
                        pool.leaves.push(t.clone());
                        match t {
                            TokenTree::Ident(_) => pool.idents.push(t.clone()),
                            TokenTree::Literal(_) => pool.literals.push(t.clone()),
                            _ => {}
                        }
                        if let Some((s, _)) = string_value(n) {
                            pool.strings.push(s);
                        }
                    }
                    Node::Group(_, _, inner) => {
                        pool.subtrees.push(n.clone());
                        walk(inner, pool);
                    }
                }
            }
        }
        for nodes in corpus {
            walk(nodes, &mut pool);
        }
        pool
    }
}

/// Applies one random mutation of one of `kinds` (all when empty) to a
/// node strictly inside the group at `scope` (anywhere for an empty scope);
/// returns its name.
fn mutate(
    tree: &mut Vec<Node>,
    rng: &mut Rng,
    pool: &Pool,
    scope: &[usize],
    kinds: &[usize],
) -> &'static str {
    let mut all = Vec::new();
    paths(tree, &mut Vec::new(), &mut all);
    all.retain(|p| p.len() > scope.len() && p.starts_with(scope));
    let kind = match rng.pick(kinds) {
        Some(k) => *k,
        None => rng.below(16),
    };
    // Mutations aimed at a kind of node pick among those nodes only.
    let wanted: fn(&Node) -> bool = match kind {
        6 => is_number,
        7 => |n| matches!(n, Node::Group(..)),
        8 | 9 => |n| string_value(n).is_some(),
        14 => |n| matches!(n, Node::Leaf(TokenTree::Ident(_))),
        15 => |n| matches!(n, Node::Leaf(TokenTree::Literal(_))),
        _ => |_| true,
    };
    let targets: Vec<&Vec<usize>> = all.iter().filter(|p| wanted(node_at(tree, p))).collect();
    let Some(path) = rng.pick(&targets).map(|p| (*p).clone()) else {
        // Nothing to aim at: insert a random token in the scope.
        let siblings = children_mut(tree, scope);
        let at = rng.below(siblings.len() + 1);
        if let Some(t) = rng.pick(&pool.leaves) {
            siblings.insert(at, Node::Leaf(t.clone()));
        }
        return "insert";
    };
    let (index, parent) = path.split_last().expect("non-empty path");
    let index = *index;
    let siblings = children_mut(tree, parent);
    match kind {
        0 => {
            siblings.remove(index);
            "delete"
        }
        1 => {
            let n = siblings[index].clone();
            siblings.insert(index, n);
            "duplicate"
        }
        2 => {
            let other = rng.below(siblings.len());
            siblings.swap(index, other);
            "swap"
        }
        3 => {
            if let Some(t) = rng.pick(&pool.leaves) {
                siblings[index] = Node::Leaf(t.clone());
            }
            "replace"
        }
        4 => {
            if let Some(t) = rng.pick(&pool.leaves) {
                siblings.insert(index, Node::Leaf(t.clone()));
            }
            "insert"
        }
        5 => {
            if let Some(t) = rng.pick(&pool.subtrees) {
                siblings[index] = t.clone();
            }
            "transplant"
        }
        6 => {
            if let Some(number) = rng.pick(&pool.extremes) {
                siblings.splice(index..=index, number.iter().cloned());
            }
            "extreme number"
        }
        7 => {
            let Node::Group(_, _, inner) = siblings[index].clone() else {
                unreachable!("aimed at groups")
            };
            siblings.splice(index..=index, inner);
            "unwrap"
        }
        8 | 9 => {
            mutate_literal(&mut siblings[index], rng, pool);
            "string literal"
        }
        10 => {
            let end = (index + 1 + rng.below(3)).min(siblings.len());
            let wrapped: Vec<Node> = siblings.drain(index..end).collect();
            let delimiter = *rng
                .pick(&[
                    Delimiter::Parenthesis,
                    Delimiter::Brace,
                    Delimiter::Bracket,
                    Delimiter::None,
                ])
                .expect("non-empty");
            siblings.insert(index, Node::Group(delimiter, Span::call_site(), wrapped));
            "wrap"
        }
        11 => {
            siblings.truncate(index);
            "truncate"
        }
        14 | 15 => {
            // Same kind of token: the syntax often survives, the meaning not.
            let same = if kind == 14 {
                &pool.idents
            } else {
                &pool.literals
            };
            if let Some(t) = rng.pick(same) {
                siblings[index] = Node::Leaf(t.clone());
            }
            "replace alike"
        }
        _ => {
            // Delete a run of siblings.
            let end = (index + 1 + rng.below(8)).min(siblings.len());
            siblings.drain(index..end);
            "delete run"
        }
    }
}

/// Replaces a string literal by one whose text has 1 to 3 random edits.
fn mutate_literal(node: &mut Node, rng: &mut Rng, pool: &Pool) {
    let (mut text, span) = string_value(node).expect("a string literal");
    for _ in 0..=rng.below(3) {
        text = mutate_text(&text, rng, pool);
    }
    let mut lit = Literal::string(&text);
    lit.set_span(span);
    *node = Node::Leaf(TokenTree::Literal(lit));
}

/// Paths of the kernels' WGSL: the `{ ... }` of `kernel k = wgsl { ... }`
/// and the literal of `kernel k = "..."` (top-level items only).
fn kernel_sources(tree: &[Node]) -> Vec<Vec<usize>> {
    let is_ident = |i: usize, name: &str| matches!(tree.get(i), Some(Node::Leaf(TokenTree::Ident(id))) if id == name);
    let mut out = Vec::new();
    for i in 0..tree.len() {
        if !is_ident(i, "kernel") {
            continue;
        }
        if is_ident(i + 3, "wgsl") && matches!(tree.get(i + 4), Some(Node::Group(..))) {
            out.push(vec![i + 4]);
        } else if tree.get(i + 3).is_some_and(|n| string_value(n).is_some()) {
            out.push(vec![i + 3]);
        }
    }
    out
}

/// One random edit of a string literal's text (on characters, so UTF-8
/// stays valid).
fn mutate_text(text: &str, rng: &mut Rng, pool: &Pool) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let len = chars.len();
    let at = rng.below(len + 1);
    let run = (1 + rng.below(16)).min(len - at);
    match rng.below(7) {
        0 => {
            chars.drain(at..at + run);
        }
        1 => {
            let copy: Vec<char> = chars[at..at + run].to_vec();
            chars.splice(at..at, copy);
        }
        2 => {
            let snippet = rng.pick(WGSL_SNIPPETS).expect("non-empty");
            chars.splice(at..at, snippet.chars());
        }
        3 => {
            // A number of the text (or any place) becomes an extreme one.
            let digits: Vec<usize> = (0..len).filter(|&i| chars[i].is_ascii_digit()).collect();
            let start = rng.pick(&digits).copied().unwrap_or(at);
            let mut end = start;
            while end < len && (chars[end].is_ascii_alphanumeric() || chars[end] == '.') {
                end += 1;
            }
            let number = rng.pick(EXTREME).expect("non-empty");
            chars.splice(start..end, number.chars());
        }
        4 => chars.truncate(at),
        5 => {
            // Splice in a piece of another literal of the corpus.
            if let Some(other) = rng.pick(&pool.strings) {
                let other: Vec<char> = other.chars().collect();
                let from = rng.below(other.len() + 1);
                let to = (from + 1 + rng.below(64)).min(other.len());
                chars.splice(at..at + run, other[from..to].iter().copied());
            }
        }
        _ => {
            // Swap two lines.
            let mut lines: Vec<&str> = text.split('\n').collect();
            let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(a, b);
            return lines.join("\n");
        }
    }
    chars.into_iter().collect()
}

// ---------------------------------------------------------------------------
// The run

/// A panic hook.
type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync>;

/// Index, start, source, mutations and text of the mutant being run.
type Running = (usize, Instant, String, String, String);

/// The mutant being run, for the watchdog.
#[derive(Default)]
struct Current {
    running: Option<Running>,
    panic_message: Option<String>,
    /// The time limit per mutant, once calibrated.
    limit: Option<Duration>,
}

/// The largest graph the macro accepts, of the cheapest kind to write: one
/// element-wise node repeated [`crate::analyse::limits::MAX_NODES`] times (so it
/// unrolls, fuses into groups and expands every node).
fn reference() -> TokenStream {
    let text = format!(
        "pub struct Reference;
         kernel copy = wgsl {{
             @group(0) @binding(0) var<storage, read> src: array<f32>;
             @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
             @compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
                 if g.x < arrayLength(&dst) {{ dst[g.x] = src[g.x]; }}
             }}
         }};
         input x[n];
         output y[n];
         repeat {} as i {{ node copy(src: x, dst: y) over n; }}",
        crate::analyse::limits::MAX_NODES
    );
    super::tokens(&text)
}

/// How long expanding `input` takes now, and its output (`None` when the
/// front end panicked).
fn timed(input: &TokenStream) -> (Duration, Option<TokenStream>) {
    let start = Instant::now();
    let out = catch_unwind(AssertUnwindSafe(|| crate::front_end(input.clone()))).ok();
    (start.elapsed(), out)
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

fn report(
    seed: u64,
    index: usize,
    origin: &str,
    what: &str,
    mutations: &str,
    text: &str,
) -> String {
    format!(
        "{what}\n  seed {seed:#x}, mutant {index} (replay: VYRE_FUZZ_SEED={seed:#x} VYRE_FUZZ_FIRST={index} VYRE_FUZZ_MUTANTS=1)\n  source: {origin}\n  mutations: {mutations}\n  input: graph! {{ {text} }}"
    )
}

/// Runs mutants `first..first + count` on the current thread; returns the
/// failures and how many mutants ran.
fn fuzz(seed: u64, first: usize, count: usize, current: &Mutex<Current>) -> (Vec<String>, usize) {
    let corpus = corpus();
    assert!(
        corpus.len() >= MIN_CORPUS,
        "only {} graph! invocations found under {}",
        corpus.len(),
        repo_root().display()
    );
    let trees: Vec<Vec<Node>> = corpus
        .iter()
        .map(|inv| to_nodes(inv.body.clone()))
        .collect();
    let pool = Pool::new(&trees);
    let mut failures = Vec::new();

    // The unmutated corpus: checks the harness (files load, bodies parse).
    for (inv, tree) in corpus.iter().zip(&trees) {
        let Ok(out) = catch_unwind(AssertUnwindSafe(|| crate::front_end(to_stream(tree)))) else {
            let message = current.lock().expect("lock").panic_message.take();
            failures.push(format!("{} panics unmutated: {message:?}", inv.origin));
            continue;
        };
        let errors = super::compile_errors(&out);
        if inv.expect_ok && !errors.is_empty() {
            failures.push(format!(
                "{} does not expand unmutated:\n{}",
                inv.origin,
                errors.join("\n")
            ));
        }
    }
    // The limit: the faster of two expansions of the reference graph.
    let reference = reference();
    let (once, out) = timed(&reference);
    let errors = out.as_ref().map(super::compile_errors);
    assert_eq!(errors, Some(Vec::new()), "the reference graph fails");
    let mut limit = once.min(timed(&reference).0) * SLOW_FACTOR;
    current.lock().expect("lock").limit = Some(limit);
    eprintln!(
        "fuzz: {} graph! invocations ({} expected to expand), {} tokens to draw from; seed {seed:#x}, mutants {first}..{}; limit {limit:.2?} per mutant",
        corpus.len(),
        corpus.iter().filter(|i| i.expect_ok).count(),
        pool.leaves.len(),
        first + count
    );

    // `VYRE_FUZZ_STATS=1`: how far mutants get (by their first message).
    let stats = std::env::var_os("VYRE_FUZZ_STATS").is_some();
    let mut outcomes: std::collections::HashMap<String, usize> = Default::default();
    let mut ran = 0;
    for index in first..first + count {
        let mut rng = mutant_rng(seed, index);
        let which = rng.below(trees.len());
        let mut tree = trees[which].clone();
        let mut mutations = Vec::new();
        let sources = kernel_sources(&tree);
        match rng.below(10) {
            // Mutations anywhere: mostly stop at the graph's grammar.
            0..4 => {
                for _ in 0..1 + rng.below(4) {
                    mutations.push(mutate(&mut tree, &mut rng, &pool, &[], &[]));
                }
            }
            // Only inside one kernel's WGSL: the graph still parses, so
            // validation, reflection and analysis see the broken kernel.
            4..7 if !sources.is_empty() => {
                let scope = rng.pick(&sources).expect("non-empty").clone();
                for _ in 0..1 + rng.below(3) {
                    if matches!(node_at(&tree, &scope), Node::Group(..)) {
                        let kinds: &[usize] = if rng.below(2) == 0 { &[] } else { &[6, 14, 15] };
                        mutations.push(mutate(&mut tree, &mut rng, &pool, &scope, kinds));
                    } else {
                        let (index, parent) = scope.split_last().expect("non-empty");
                        mutate_literal(
                            &mut children_mut(&mut tree, parent)[*index],
                            &mut rng,
                            &pool,
                        );
                        mutations.push("kernel literal");
                    }
                }
            }
            // One small edit anywhere: an extreme number, a replaced,
            // duplicated or deleted token.
            _ => {
                mutations.push(mutate(&mut tree, &mut rng, &pool, &[], &[6, 6, 6, 3, 1, 0]));
            }
        }
        let mutations = mutations.join(", ");
        let input = to_stream(&tree);
        let text = input.to_string();
        let origin = &corpus[which].origin;
        current.lock().expect("lock").running = Some((
            index,
            Instant::now(),
            origin.clone(),
            mutations.clone(),
            text.clone(),
        ));
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| crate::front_end(input)));
        let took = start.elapsed();
        let panic_message = {
            let mut c = current.lock().expect("lock");
            c.running = None;
            c.panic_message.take()
        };
        ran += 1;
        let problem = match result {
            Err(_) => Some(format!(
                "PANIC: {}",
                panic_message.unwrap_or_else(|| "(no message)".into())
            )),
            Ok(out) if out.is_empty() => Some("EMPTY: neither tokens nor a compile_error!".into()),
            Ok(out) => match syn::parse2::<syn::File>(out.clone()) {
                Err(e) => Some(format!(
                    "INVALID: the output is not Rust items ({e}): {out}"
                )),
                Ok(_) => {
                    if stats {
                        *outcomes.entry(outcome(&out)).or_default() += 1;
                    }
                    None
                }
            },
        };
        let problem = problem.or_else(|| {
            if took <= limit {
                return None;
            }
            // Time both again, now: a load that slowed the mutant slows
            // the reference too.
            let now = timed(&reference).0 * SLOW_FACTOR;
            let again = timed(&to_stream(&tree)).0;
            limit = limit.max(now);
            current.lock().expect("lock").limit = Some(limit);
            (again > now).then(|| {
                format!("SLOW: took {took:.2?}, again {again:.2?}; limit {now:.2?} ({SLOW_FACTOR} times the reference graph's expansion, timed just now)")
            })
        });
        if let Some(problem) = problem {
            failures.push(report(seed, index, origin, &problem, &mutations, &text));
        }
    }
    let mut outcomes: Vec<(String, usize)> = outcomes.into_iter().collect();
    outcomes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (what, n) in outcomes {
        eprintln!("fuzz: {n:6} {what}");
    }
    (failures, ran)
}

/// A mutant's outcome for the statistics: `expanded`, or its first error
/// message cut short, digits and kernel names blurred.
fn outcome(out: &TokenStream) -> String {
    let errors = super::compile_errors(out);
    let Some(first) = errors.first() else {
        return "expanded".into();
    };
    let mut short: String = first
        .chars()
        .take(48)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    if let Some(start) = short.find("in kernel `") {
        short.truncate(start + "in kernel".len());
    }
    short
}

#[test]
fn mutants_of_every_graph_invocation_never_panic_or_hang() {
    let seed = env_number("VYRE_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let count = env_number("VYRE_FUZZ_MUTANTS").map_or(DEFAULT_MUTANTS, |n| n as usize);
    let first = env_number("VYRE_FUZZ_FIRST").unwrap_or(0) as usize;

    // Panics of the fuzz thread are recorded, not printed; other threads'
    // panics (other tests) go to the previous hook as before.
    let current = Arc::new(Mutex::new(Current::default()));
    let previous: Arc<Hook> = Arc::new(panic::take_hook());
    {
        let current = Arc::clone(&current);
        let previous = Arc::clone(&previous);
        panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some("vyre-fuzz") {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                // The watchdog holds the lock only briefly; the fuzz thread
                // never panics while holding it.
                let mut c = current.lock().unwrap_or_else(|e| e.into_inner());
                c.panic_message = Some(format!("{message}{at}"));
            } else {
                previous(info);
            }
        }));
    }
    let restore = move || {
        let _ = panic::take_hook();
        let previous = Arc::clone(&previous);
        panic::set_hook(Box::new(move |info| previous(info)));
    };

    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let handle = {
        let current = Arc::clone(&current);
        let done = Arc::clone(&done);
        std::thread::Builder::new()
            .name("vyre-fuzz".into())
            // naga and syn recurse; tests run unoptimised.
            .stack_size(256 << 20)
            .spawn(move || {
                let result = catch_unwind(AssertUnwindSafe(|| fuzz(seed, first, count, &current)));
                done.store(true, Ordering::SeqCst);
                result
            })
            .expect("spawn")
    };
    // Watchdog: a mutant that never finishes is reported from here (its
    // thread is left running; the test process ends with the test run).
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        let hung = {
            let c = current.lock().unwrap_or_else(|e| e.into_inner());
            let hang = c.limit.map(|l| l * HANG_FACTOR);
            c.running
                .as_ref()
                .zip(hang)
                .filter(|((_, start, ..), hang)| start.elapsed() > *hang)
                .map(|((index, _, origin, mutations, text), hang)| {
                    let what = format!("HANG: still running after {hang:.1?}");
                    report(seed, *index, origin, &what, mutations, text)
                })
        };
        if let Some(hung) = hung {
            restore();
            panic!("{hung}");
        }
    }
    let result = handle.join();
    restore();
    let (failures, ran) = match result {
        Ok(Ok(r)) => r,
        Ok(Err(_)) | Err(_) => {
            let message = current
                .lock()
                .map(|c| c.panic_message.clone())
                .ok()
                .flatten();
            panic!("the fuzz harness itself panicked: {message:?}");
        }
    };
    eprintln!(
        "fuzz: {ran} mutants in {:.1?}, {} failures",
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} mutants failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
