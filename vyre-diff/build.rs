//! Writes the cases of this build to `$OUT_DIR/cases.rs`: one module per
//! case (both graphs, the oracle, the typed call) and `CASES`.
//!
//! Which cases: `VYRE_DIFF_CASES` (case names, e.g. `17 18/d0 s19`,
//! separated by spaces or commas), else `VYRE_DIFF_SEEDS` (`A..B`, seeds A
//! up to B exclusive), else the CI set: seeds `1..CI_SEEDS`. The reduced
//! failures kept in `regressions/` (each a module as this script wrote it,
//! frozen, so a later change of the generator cannot change it) and the
//! case names listed in `regressions.txt` are always added. Each case's
//! module is also written alone to `$OUT_DIR/cases/`, where `shrink.py`
//! takes a reduced case from.

#[path = "src/grammar/mod.rs"]
mod grammar;

use std::fmt::Write;

/// Seeds of the CI set: `1..CI_SEEDS`.
const CI_SEEDS: u64 = 60;

fn main() {
    println!("cargo:rerun-if-env-changed=VYRE_DIFF_CASES");
    println!("cargo:rerun-if-env-changed=VYRE_DIFF_SEEDS");
    println!("cargo:rerun-if-changed=src/grammar");
    println!("cargo:rerun-if-changed=regressions.txt");
    println!("cargo:rerun-if-changed=regressions");
    let mut names: Vec<String> = match (
        std::env::var("VYRE_DIFF_CASES"),
        std::env::var("VYRE_DIFF_SEEDS"),
    ) {
        (Ok(cases), _) => cases
            .split([' ', ',', '\n'])
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        (_, Ok(range)) => {
            let (a, b) = range.split_once("..").expect("VYRE_DIFF_SEEDS is A..B");
            let (a, b): (u64, u64) = (a.parse().expect("A"), b.parse().expect("B"));
            (a..b).map(|s| s.to_string()).collect()
        }
        _ => (1..CI_SEEDS).map(|s| s.to_string()).collect(),
    };
    let regressions = std::fs::read_to_string("regressions.txt").unwrap_or_default();
    for line in regressions.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if !line.is_empty() && !names.iter().any(|n| n == line) {
            names.push(line.to_owned());
        }
    }
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::create_dir_all(format!("{dir}/cases")).expect("cases folder");
    let mut out = String::new();
    let mut checks = Vec::new();
    let mut candidates = Vec::new();
    let mut frozen: Vec<_> = std::fs::read_dir("regressions")
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    frozen.sort();
    for path in frozen
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a file name");
        out.push_str(&format!(
            "#[path = {:?}]\npub mod {stem};\n",
            std::fs::canonicalize(path).expect("path")
        ));
        checks.push(format!("{stem}::check"));
    }
    for name in &names {
        let graph = grammar::edit::case(name).unwrap_or_else(|e| panic!("{e}"));
        let module: String = format!("case_{name}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let file = format!("{dir}/cases/{module}.rs");
        std::fs::write(&file, grammar::oracle::file(&graph)).expect("write a case");
        out.push_str(&format!("#[path = {file:?}]\npub mod {module};\n"));
        checks.push(format!("{module}::check"));
        let edits = grammar::edit::candidates(&graph);
        candidates.push(format!("({name:?}, &{edits:?})"));
    }
    let _ = writeln!(
        out,
        "/// Every case of this build.\npub const CASES: &[fn(&mut Ctx)] = &[{}];",
        checks.join(", ")
    );
    let _ = writeln!(
        out,
        "/// Each case's name and the single edits that shrink it.\npub const CANDIDATES: &[(&str, &[&str])] = &[{}];",
        candidates.join(", ")
    );
    std::fs::write(format!("{dir}/cases.rs"), out).expect("write cases.rs");
}
