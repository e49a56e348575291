//! Writes the cases of this build to `$OUT_DIR/cases.rs`: one module per
//! case (both graphs, the oracle, the typed call) and `CASES`.
//!
//! Which cases: `VYRE_DIFF_CASES` (case names, e.g. `17 18/d0 s19`,
//! separated by spaces or commas), else `VYRE_DIFF_SEEDS` (`A..B`, seeds A
//! up to B exclusive), else the CI set: seeds `1..CI_SEEDS`. The reduced
//! failures listed in `regressions.txt` are always added.

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
    let mut out = String::new();
    let mut checks = Vec::new();
    let mut candidates = Vec::new();
    for name in &names {
        let graph = grammar::edit::case(name).unwrap_or_else(|e| panic!("{e}"));
        let module: String = format!("case_{name}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        out.push_str(&grammar::oracle::module(&graph, &module));
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
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{dir}/cases.rs"), out).expect("write cases.rs");
}
