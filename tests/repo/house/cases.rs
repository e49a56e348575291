//! The check on small synthetic crates written to a temporary folder. Each
//! case that expects nothing also has a twin that expects a finding, so a
//! check that finds nothing at all fails here.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::check::{self, Findings, Limits};
use super::krate::Crate;
use super::lex;

const LIMITS: Limits = Limits {
    max_fn: 120,
    max_file: 900,
};

/// A crate `k` written below a fresh temporary folder, removed on drop.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    fn new(files: &[(&str, &str)]) -> Fixture {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("vyre-house-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let krate = root.join("k");
        fs::create_dir_all(krate.join("src")).expect("temp folder");
        fs::write(krate.join("Cargo.toml"), "[package]\nname = \"k\"\n").expect("Cargo.toml");
        for (path, text) in files {
            let path = krate.join("src").join(path);
            fs::create_dir_all(path.parent().expect("a parent")).expect("folder");
            fs::write(path, text).expect("source file");
        }
        Fixture { root }
    }

    fn findings(&self) -> Findings {
        check::check(&self.root, LIMITS).expect("readable fixture")
    }

    /// The cycles found, each as its files (relative to `src/`).
    fn cycles(&self) -> Vec<Vec<String>> {
        let findings = self.findings();
        assert_eq!(findings.crates.len(), 1, "one crate expected");
        let short = |f: &String| f.trim_start_matches("k/src/").to_owned();
        findings.crates[0]
            .cycles
            .iter()
            .map(|c| c.files.iter().map(short).collect())
            .collect()
    }

    /// The arrows among all files, as `from -> to` (relative to `src/`).
    fn arrows(&self) -> Vec<String> {
        let krate = Crate::load(&self.root, &self.root.join("k")).expect("readable fixture");
        let name = |i: usize| krate.files[i].rel.trim_start_matches("k/src/").to_owned();
        let mut out = Vec::new();
        for (from, tos) in krate.arrows() {
            for to in tos.keys() {
                out.push(format!("{} -> {}", name(from), name(*to)));
            }
        }
        out
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn cycle(files: &[&str]) -> Vec<Vec<String>> {
    vec![files.iter().map(|s| s.to_string()).collect()]
}

/// A function `name` of exactly `lines` lines.
fn function(name: &str, lines: usize) -> String {
    format!(
        "pub fn {name}() {{\n{}}}\n",
        "    let _ = 1;\n".repeat(lines - 2)
    )
}

const LIB_AB: &str = "mod a;\nmod b;\n";

#[test]
fn cycle_through_crate_paths() {
    let fx = Fixture::new(&[
        ("lib.rs", LIB_AB),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn make() -> crate::a::A { crate::a::A(B) }\n",
        ),
    ]);
    assert_eq!(fx.cycles(), cycle(&["a.rs", "b.rs"]));
    let report = fx.findings().report();
    for line in [
        "import cycle in k among 2 files: src/a.rs, src/b.rs",
        "files that import each other directly: src/a.rs <-> src/b.rs",
        "src/a.rs -> src/b.rs   (line 1: crate::b::B)",
        "src/b.rs -> src/a.rs   (line 2: crate::a::A)",
    ] {
        assert!(report.contains(line), "{line:?} missing from:\n{report}");
    }
    // A use tree whose root is a group.
    let grouped = Fixture::new(&[
        ("lib.rs", LIB_AB),
        ("a.rs", "use {crate::b::B, std::fmt};\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn make() -> crate::a::A { crate::a::A(B) }\n",
        ),
    ]);
    assert_eq!(grouped.cycles(), cycle(&["a.rs", "b.rs"]));
}

#[test]
fn cycle_through_super() {
    let fx = Fixture::new(&[
        ("lib.rs", "mod m;\n"),
        ("m.rs", "mod x;\nmod y;\n"),
        (
            "m/x.rs",
            "use super::y::Y;\npub struct X;\npub fn f(_: Y) {}\n",
        ),
        ("m/y.rs", "pub struct Y;\npub fn g(_: super::x::X) {}\n"),
    ]);
    assert_eq!(fx.cycles(), cycle(&["m/x.rs", "m/y.rs"]));
}

#[test]
fn cycle_through_reexports_is_followed_to_the_defining_file() {
    let fx = Fixture::new(&[
        (
            "lib.rs",
            "mod a;\nmod b;\npub use a::A;\npub use b::B as Bee;\n",
        ),
        ("a.rs", "use crate::Bee;\npub struct A(Bee);\n"),
        ("b.rs", "pub struct B;\npub fn f(_: &crate::A) {}\n"),
    ]);
    // lib.rs points at both, but nothing points back at lib.rs.
    assert_eq!(fx.cycles(), cycle(&["a.rs", "b.rs"]));
    assert!(fx.arrows().contains(&"lib.rs -> a.rs".to_owned()));
}

#[test]
fn cycle_between_mod_rs_and_its_child() {
    let with_self = Fixture::new(&[
        ("lib.rs", "mod p;\n"),
        ("p/mod.rs", "mod c;\nuse self::c::C;\npub struct P(C);\n"),
        (
            "p/c.rs",
            "use super::P;\npub struct C;\npub fn f(_: P) {}\n",
        ),
    ]);
    assert_eq!(with_self.cycles(), cycle(&["p/c.rs", "p/mod.rs"]));
    // `use c::C;` is a path into a child module too (uniform paths).
    let uniform = Fixture::new(&[
        ("lib.rs", "mod p;\n"),
        (
            "p/mod.rs",
            "mod c;\nuse c::{C, helper as h};\npub struct P(C);\n",
        ),
        (
            "p/c.rs",
            "use super::P;\npub struct C;\npub fn helper(_: P) {}\n",
        ),
    ]);
    assert_eq!(uniform.cycles(), cycle(&["p/c.rs", "p/mod.rs"]));
}

#[test]
fn one_way_imports_and_mod_declarations_are_no_cycle() {
    let fx = Fixture::new(&[
        ("lib.rs", "mod a;\nmod b;\nmod p;\npub use a::A;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn f() -> std::vec::Vec<u8> { Vec::new() }\n",
        ),
        // p declares its child c, and c uses p: one arrow, c -> p.
        ("p.rs", "mod c;\npub struct P;\n"),
        ("p/c.rs", "use super::P;\npub fn f(_: P) {}\n"),
    ]);
    assert_eq!(fx.cycles(), Vec::<Vec<String>>::new());
    assert_eq!(
        fx.arrows(),
        ["a.rs -> b.rs", "lib.rs -> a.rs", "p/c.rs -> p.rs"]
    );
}

#[test]
fn long_functions_are_measured_from_fn_to_the_closing_brace() {
    let body = [
        "pub trait T {\n    fn declared(&self);\n}\n".to_owned(),
        function("fits", 120),
        function("too_long", 121),
        // A `;` inside the signature does not hide the body.
        format!(
            "pub fn array(x: [u8; 4]) -> u8 {{\n{}    x[0]\n}}\n",
            "    let _ = 1;\n".repeat(125)
        ),
        // Nor does a brace inside the parameters.
        format!(
            "pub fn pattern(P {{ x }}: P) -> u8 {{\n{}    x\n}}\n",
            "    let _ = 1;\n".repeat(125)
        ),
    ]
    .concat();
    let fx = Fixture::new(&[("lib.rs", &body)]);
    let findings = fx.findings();
    let found: Vec<(&str, usize, usize)> = findings.crates[0]
        .long_fns
        .iter()
        .map(|f| (f.name.as_str(), f.lines, f.line))
        .collect();
    assert_eq!(
        found,
        [
            ("array", 128, 245),
            ("pattern", 128, 373),
            ("too_long", 121, 124)
        ]
    );
    assert!(
        findings.report().contains("split `fn too_long` (121 lines) in k/src/lib.rs:124 into functions of at most 120 lines"),
        "{}",
        findings.report()
    );
}

#[test]
fn long_files_are_counted_without_test_code() {
    let lines = |n: usize| "pub const X: u8 = 0;\n".repeat(n);
    let tests = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n",
        "    const Y: u8 = 1;\n".repeat(57)
    );
    let fx = Fixture::new(&[
        (
            "lib.rs",
            "mod fits;\nmod over;\nmod with_tests;\nmod no_newline;\n",
        ),
        ("fits.rs", &lines(900)),
        ("over.rs", &lines(901)),
        // 890 lines of code and a 60-line test module: 950 lines in all.
        ("with_tests.rs", &format!("{}{tests}", lines(890))),
        ("no_newline.rs", lines(901).trim_end()),
    ]);
    let findings = fx.findings();
    let found: Vec<(&str, usize)> = findings.crates[0]
        .long_files
        .iter()
        .map(|f| (f.file.as_str(), f.lines))
        .collect();
    assert_eq!(
        found,
        [("k/src/no_newline.rs", 901), ("k/src/over.rs", 901)]
    );
    assert!(
        findings
            .report()
            .contains("split k/src/over.rs (901 lines, test code not counted)")
    );
}

#[test]
fn test_code_is_not_counted() {
    // Each way of gating the only arrow from a.rs to b.rs, and each way of
    // gating a long function; ungated, each has its cycle or finding.
    let arrows = [
        "{attr}\nmod tests {\n    use crate::b::B;\n}\n",
        "{attr}\nuse crate::b::B;\n",
        "{attr}\n#[allow(dead_code)]\npub fn f(_: crate::b::B) {}\n",
        "{attr}\nimpl A {\n    pub fn f(_: crate::b::B) {}\n}\n",
        "{attr}\nconst C: usize = { 1 } + std::mem::size_of::<crate::b::B>();\n",
    ];
    for arrow in arrows {
        let files = |attr: &str| {
            let a = format!("pub struct A;\n{}", arrow.replace("{attr}", attr));
            Fixture::new(&[
                ("lib.rs", LIB_AB),
                ("a.rs", &a),
                ("b.rs", "pub struct B(crate::a::A);\n"),
            ])
        };
        assert_eq!(
            files("#[cfg(test)]").cycles(),
            Vec::<Vec<String>>::new(),
            "{arrow}"
        );
        assert_eq!(
            files("#[cfg(not(test))]").cycles(),
            cycle(&["a.rs", "b.rs"]),
            "{arrow}"
        );
    }
    let long = function("long", 130);
    let gated = |attr: &str| {
        let lib = format!("mod a;\nmod b;\n{attr}\n#[allow(dead_code)]\nmod t;\n");
        let c = format!("{attr}\n#[allow(dead_code)]\n{long}");
        let t = format!("use crate::a::A;\n{long}");
        let fx = Fixture::new(&[
            ("lib.rs", &lib),
            ("a.rs", "pub struct A;\n"),
            ("c.rs", &c),
            ("t.rs", &t),
            ("t/u.rs", &long),
        ]);
        let findings = fx.findings();
        findings.crates[0]
            .long_fns
            .iter()
            .map(|f| f.file.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(gated("#[cfg(test)]"), Vec::<String>::new());
    assert_eq!(
        gated("#[cfg(not(test))]"),
        ["k/src/c.rs", "k/src/t.rs", "k/src/t/u.rs"]
    );
}

#[test]
fn comments_and_strings_name_nothing() {
    let a = |mention: &str| {
        format!(
            "//! Uses crate::b::B in a doc comment.\n\
             /* crate::b::B /* nested */ crate::b::B */\n\
             pub struct A;\n\
             pub fn text<'a>(x: &'a str) -> [&'a str; 4] {{\n    \
                 let _quote = '\"';\n    \
                 [x, \"crate::b::B\", r#\"use crate::b::B; \"#, \"\\\" crate::b::B\"]\n\
             }}\n\
             {mention}\n"
        )
    };
    let quiet = a("// pub fn f(_: crate::b::B) {}");
    let fx = Fixture::new(&[
        ("lib.rs", LIB_AB),
        ("a.rs", &quiet),
        ("b.rs", "pub struct B(crate::a::A);\n"),
    ]);
    assert_eq!(fx.arrows(), ["b.rs -> a.rs"]);
    // The same file with one real mention has its arrow.
    let real = a("pub fn f(_: crate::b::B) {}");
    let fx = Fixture::new(&[
        ("lib.rs", LIB_AB),
        ("a.rs", &real),
        ("b.rs", "pub struct B(crate::a::A);\n"),
    ]);
    assert_eq!(fx.cycles(), cycle(&["a.rs", "b.rs"]));
}

#[test]
fn stripping_keeps_offsets_and_lines() {
    let src = "let c = '{'; // }\nlet s = \"}\\\"{\"; let l: &'static str = r##\"\"#}\"##;\n/* { */ let b = b'\\''; let q = '\\\"'; let after = 1;";
    let out = lex::strip(src);
    assert_eq!(out.len(), src.len());
    let text = String::from_utf8(out).expect("ASCII stays ASCII");
    assert_eq!(text.lines().count(), src.lines().count());
    assert!(!text.contains('{') && !text.contains('}'), "{text}");
    assert!(text.contains("&'static str"), "{text}");
    assert!(text.contains("let after = 1;"), "{text}");
}
