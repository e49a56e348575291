//! The CI set of the differential run: every case of this build (seeds
//! `1..CI_SEEDS` of `build.rs` and the reduced failures of
//! `regressions.txt`), in every mode at every size, against the oracle and
//! the unfused graph. A failure prints the case, the mode, the size, the
//! first differing element and the graph.

#[test]
fn every_case_matches_the_oracle_in_every_mode() {
    let gpu = match vyre_graph::Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => panic!("no GPU for the differential run: {e}"),
    };
    let mut ctx = vyre_diff::Ctx::new(gpu);
    vyre_diff::check_all(&mut ctx);
    if ctx.skipped > 0 {
        // Only on GL, and said: see `Case::signed_rem`.
        eprintln!(
            "{} cases with a remainder of i32s not compared on GL (naga 30's GLSL writer leaves `%` to GLSL, undefined for a negative operand)",
            ctx.skipped
        );
    }
    assert!(
        ctx.graphs + ctx.skipped >= vyre_diff::CASES.len(),
        "every case ran"
    );
    assert!(
        ctx.graphs * 2 > vyre_diff::CASES.len(),
        "most cases are compared: {} of {}",
        ctx.graphs,
        vyre_diff::CASES.len()
    );
    assert!(
        ctx.runs > 10 * ctx.graphs,
        "every mode ran: {} runs",
        ctx.runs
    );
    if !ctx.failures.is_empty() {
        let mut shown = std::collections::HashSet::new();
        for f in &ctx.failures {
            eprintln!("FAIL {f}");
            if shown.insert(f.case) {
                eprintln!("--- graph of case {} ---\n{}---", f.case, f.source);
            }
        }
        panic!(
            "{} differences in {} cases; reduce one with `python3 vyre-diff/shrink.py CASE`",
            ctx.failures.len(),
            shown.len()
        );
    }
}
