//! One error per mistake: every single-mistake case under `tests/ui/fail/`
//! has exactly one `error` headline in its `.stderr` (notes live inside
//! their error; no cascade into user code). Reads the files; compiles
//! nothing.

use std::fs;
use std::path::Path;

/// Cases that contain several mistakes on purpose.
const SEVERAL: &[&str] = &[
    "many_errors",
    "many_graph_errors",
    "syntax_size_n_times_n",
    "sampler_misuse",
    "texture_bound_to_buffer",
    "texture_declarations",
    "texture_sizes",
];

#[test]
fn one_error_per_single_mistake_case() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    let mut checked = 0;
    let mut wrong = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .expect("tests/ui/fail")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "stderr"))
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if SEVERAL.contains(&name.as_str()) {
            continue;
        }
        let text = fs::read_to_string(&path).expect("readable .stderr");
        let headlines = text
            .lines()
            .filter(|l| l.starts_with("error:") || l.starts_with("error["))
            .count();
        if headlines != 1 {
            wrong.push(format!("{name}: {headlines} error headlines"));
        }
        checked += 1;
    }
    assert!(
        checked > 30,
        "only {checked} cases found in {}",
        dir.display()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
