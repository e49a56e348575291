//! Compile-time UI tests of `graph!`: every check of the macro has a
//! `fail/` case whose `.stderr` is the exact diagnostic a user sees, and
//! `pass/` shows every supported form compiles. Regenerate the expected
//! output with `TRYBUILD=overwrite cargo test --features slow-tests --test compile ui::`, then read it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
