//! The house rules of issue 17, checked on every library crate of the
//! workspace (every folder with a `Cargo.toml` and a `src/`), from the
//! source text alone:
//!
//! - no import cycle between the files of a crate: file A points at file B
//!   when A names an item that B defines through `crate::…`, `super::…` or
//!   `self::…` (in a `use` or inline), or through `use child::…` into one of
//!   its own child modules; `pub use` re-exports are followed to the file
//!   that defines the item, and `mod x;` declarations are not imports;
//! - no function longer than 120 lines, from `fn` to its closing brace;
//! - no file longer than 900 lines (lines as an editor numbers them: a
//!   final newline does not start another line).
//!
//! Comments and string and character literals are ignored. Test code is not
//! counted: `#[cfg(test)]` items, and files reachable only through a
//! `#[cfg(test)] mod x;`. Nothing is built, so the check takes milliseconds.
//!
//! `VYRE_HOUSE_ROOT=/some/checkout cargo test --test repo house` checks another
//! tree instead of this one.

mod check;
mod krate;
mod lex;

mod cases;

use std::path::{Path, PathBuf};

use check::Limits;

/// The limits issue 17 sets.
const LIMITS: Limits = Limits {
    max_fn: 120,
    max_file: 900,
};

/// The workspace members named in the `Cargo.toml` at `root` (plain names
/// only; glob patterns are left out).
fn workspace_members(root: &Path) -> Vec<String> {
    let Ok(manifest) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty() && !m.contains('*'))
        .collect()
}

#[test]
fn workspace_keeps_the_house_rules() {
    let root = std::env::var_os("VYRE_HOUSE_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let findings = check::check(&root, LIMITS)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()));
    let checked: Vec<&str> = findings.crates.iter().map(|c| c.name.as_str()).collect();
    for member in workspace_members(&root) {
        assert!(
            checked.contains(&member.as_str()),
            "workspace member {member} was not checked (checked: {checked:?}); \
             does it still have a Cargo.toml and a src/ folder?"
        );
    }
    assert!(
        !checked.is_empty(),
        "no crate found below {}",
        root.display()
    );
    assert!(findings.is_clean(), "{}", findings.report());
    println!("{}", findings.summary());
}
