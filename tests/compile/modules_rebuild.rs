//! Editing a file that a kernel imports rebuilds the crate whose `graph!`
//! imports it, and only that crate: `graph!` tracks every file a link
//! reads (an unused `include_str!` in the expansion), as it does `file`
//! kernels. Runs Cargo on this workspace's radix sort example, whose
//! kernels import `examples/kernels/radix_sort/digits.wesl`.

use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

/// Builds `example` and returns Cargo's messages.
fn build(example: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--example", example])
        .env("CARGO_TERM_COLOR", "never")
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .expect("run cargo");
    let messages = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "cargo build --example {example}:\n{messages}"
    );
    messages
}

#[test]
fn touching_an_imported_file_recompiles_the_crate_that_imports_it() {
    let imported =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kernels/radix_sort/digits.wesl");
    let recompiled = |m: &str| m.contains("Compiling vyre-workspace");
    build("radix_sort");
    build("quickstart");
    assert!(!recompiled(&build("radix_sort")), "fresh after a build");
    std::fs::File::options()
        .write(true)
        .open(&imported)
        .expect("open digits.wesl")
        .set_modified(SystemTime::now())
        .expect("touch digits.wesl");
    assert!(
        recompiled(&build("radix_sort")),
        "touching the imported file recompiles the example that imports it"
    );
    assert!(
        !recompiled(&build("quickstart")),
        "an example that does not import it stays fresh"
    );
}
